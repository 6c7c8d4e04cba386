/*
 * hl_redis_call.h - the Redis store's script call, both ways: the command
 * that asks the script (src/core/hl_redis_script.lua) to decide, count, refund
 * or settle items, written straight in the protocol's form (RESP: no
 * format strings, no allocation per argument), and the decisions read
 * back from the script's reply (one string of integers: hl_redis_call_parse).
 * The one owner of both, used by the store
 * (mod_hotlimit_redis.c) and by the test that runs the script beside the
 * shared-memory store (t/unit/test_store_side_by_side.c), so the test
 * sends what the store sends and reads what the store reads.
 *
 * Pure: no httpd, no hiredis (a reply is seen as the integers of its
 * elements), no APR. The call buffer is the caller's, so that a caller
 * may keep one per thread for its life.
 */
#ifndef HL_REDIS_CALL_H
#define HL_REDIS_CALL_H

#include <stddef.h>
#include <stdint.h>
#include "hl_decide.h"

/* The longest key prefix (?prefix=P), refused at configtest beyond. */
#define HL_REDIS_PREFIX_MAX 64
/* The longest hash tag inside the braces ("hl", or a Redis Cluster
 * bucket's "hl:1023.zzzz", hl_cluster_tags.h). */
#define HL_REDIS_TAG_MAX 15
/* Room for PREFIX{TAG}: and a slot key. */
#define HL_REDIS_KEY_MAX (HL_REDIS_PREFIX_MAX + HL_REDIS_TAG_MAX + 3 + HL_KEY_MAX)
/* Elements a decide reply has at most: admitted, lease granted, lease ms,
 * then six per window of every item. */
#define HL_REDIS_REPLY_MAX (3 + 6 * HL_DECIDE_MAX * HL_MAX_WINDOWS)

/* One script call being written. Zeroed to start; the buffer grows (it
 * carries the script's text for EVAL) and is kept from call to call; its
 * owner frees buf with free(). */
typedef struct {
    char  *buf;        /* the command is buf[start .. len) */
    size_t start, len, cap;
    int    argc;       /* arguments written */
} hl_redis_call_t;

/* What every call of one store names: its keys' prefix and its script. */
typedef struct {
    const char *prefix;    /* ?prefix=P; at most HL_REDIS_PREFIX_MAX bytes */
    const char *script;    /* the script's text, sent by EVAL */
    const char *sha;       /* its SHA1 in hex (40 bytes), sent by EVALSHA */
    const char *tag;       /* every key's hash tag, without braces (a
                              cluster bucket's, hl_cluster_tags.h); NULL:
                              "hl", as redis:// has always named keys */
} hl_redis_script_t;

/* Writes PREFIX{hl}: then n bytes of tail (a slot key, or "limited") into
 * out (HL_REDIS_KEY_MAX bytes). Returns the length, or 0 when prefix or
 * tail is too long (nothing useful written). */
size_t hl_redis_key(char *out, const char *prefix, const char *tail, size_t n);

/* Writes PREFIX{TAG}: then n bytes of tail into out (HL_REDIS_KEY_MAX
 * bytes); tag NULL is "hl" (hl_redis_key). Returns the length, or 0 when
 * prefix, tag or tail is too long. */
size_t hl_redis_key_tag(char *out, const char *prefix, const char *tag,
                        const char *tail, size_t n);

/*
 * Writes into c the script call of s over items[0 .. n) (mode "d"
 * decide, "c" count, "r" refund or "s" settle; "r" and "s" end with the
 * marks of the first item's decision, one per window), of cost, asking
 * for lease units; by EVAL (eval != 0: the script's text) or EVALSHA.
 * Returns 0 with the command in c->buf[c->start .. c->len), or -1 when
 * out of memory or a key is too long (no command; the buffer is kept).
 */
int hl_redis_call_build(hl_redis_call_t *c, const hl_redis_script_t *s,
                        int eval, hl_decide_item_t *const *items, int n,
                        const char *mode, uint32_t cost, uint32_t lease);

/*
 * Fills the decisions of items[0 .. n) from a decide reply whose nel
 * elements have the integers el[0 .. nel) (0 for an element that is not
 * an integer). Returns 1 if admitted, 0 if not, -1 when the reply does
 * not fit the items (the decisions are then partly written). Allocates
 * nothing; el stays the caller's.
 */
int hl_redis_call_read(const long long *el, size_t nel,
                       hl_decide_item_t *const *items, int n);

/*
 * Reads the integers of a decide or count reply, which the script sends
 * as one string (fewer reply objects than an array of integers: hiredis
 * allocates one per element): decimal integers, each but the first after
 * one space, nothing else. Writes them to el[0 .. max) and returns how
 * many, or -1 when the text is not that (an empty or stray character, a
 * number of more than 18 digits, more than max numbers). Allocates nothing.
 */
long hl_redis_call_parse(const char *s, size_t len, long long *el, size_t max);

#endif
