/*
 * hl_slotkey.h - the one definition of a counter's key text: how a slot
 * key encodes its origin, window, virtual host, scope and client, and the
 * functions that write and read it. Everything that takes a key apart
 * (the status page, the bans, the Redis script) follows this file.
 *
 * A slot key (HL_KEY_MAX bytes at most, not NUL-terminated in a slot):
 *
 *   byte HL_SLOTKEY_ORIGIN_AT   the origin: 'd' a HotLimitQuota line (and
 *                               a ban's counters), 't' a table rule
 *                               (hl_origin_t)
 *   byte HL_SLOTKEY_WINDOW_AT   the window of its quota: '0' + index
 *   from HL_SLOTKEY_PREFIX      the user-visible key (what the status page
 *                               shows and POST reset=KEY names):
 *
 *     TAG SCOPE '|' CLIENT
 *
 *   TAG     the virtual host's "host:port" (empty on the main server): no
 *           '|' and no '/', ending in ':' and one or more digits
 *           (HL_SLOTKEY_TAG_*). Text alone cannot tell a tag from a scope
 *           in general (a table route may look like one); it is decoded
 *           only before a ban's scopes, else the configured tags decide
 *           (mod_hotlimit_view.c).
 *   SCOPE   the counted scope (a Location, a table route, "ROUTE plan=P")
 *           or a ban's own scope, HL_SLOTKEY_BAN_SCOPE or
 *           HL_SLOTKEY_REJ_SCOPE. TAG SCOPE is the route's statistics
 *           name. It is read up to the first '|'.
 *   '|'     HL_SLOTKEY_SEP, the first one in the key.
 *   CLIENT  the client part (an address, a hashed account, a device key):
 *           everything after the first '|', which may hold more '|'.
 *
 * A slot key longer than HL_KEY_MAX is compacted (hl_key_compact): its
 * first HL_KEY_MAX - 17 bytes, '~' (HL_SLOTKEY_COMPACT_MARK) and 16 hex
 * digits; its client part is then cut short.
 *
 * The Redis script (hl_redis_script.lua, bans_set) cannot call C: it
 * matches a ban counter with the Lua patterns HL_SLOTKEY_BAN_LUA_MAIN and
 * HL_SLOTKEY_BAN_LUA_VHOST, the rule of hl_slotkey_is_ban_slot;
 * t/unit/test_slotkey_lua.sh checks that the script holds these patterns
 * and that it agrees with hl_slotkey_is_ban_slot on the keys listed in
 * t/unit/test_slotkey.c.
 *
 * Pure: no httpd, no allocation; the caller owns every buffer, and decoded
 * parts point into the key given.
 */
#ifndef HL_SLOTKEY_H
#define HL_SLOTKEY_H

#include <stddef.h>
#include <string.h>
#include "hl_slots.h"   /* HL_KEY_MAX */

#define HL_SLOTKEY_ORIGIN_AT  0     /* the origin byte */
#define HL_SLOTKEY_WINDOW_AT  1     /* the window digit */
#define HL_SLOTKEY_PREFIX     2     /* where the user-visible key starts */
#define HL_SLOTKEY_SEP        '|'   /* between SCOPE and CLIENT */
#define HL_SLOTKEY_TAG_PORT   ':'   /* a tag ends with ':' and digits */
#define HL_SLOTKEY_TAG_NOT    "|/"  /* bytes a tag never holds */
#define HL_SLOTKEY_COMPACT_MARK '~' /* before the hash of a compacted key */
#define HL_SLOTKEY_BAN_ORIGIN 'd'   /* a ban's counters' (HL_ORIGIN_DIRECTIVE) */
#define HL_SLOTKEY_BAN_SCOPE  "ban" /* a ban's counter: "ban|CLIENT" */
#define HL_SLOTKEY_REJ_SCOPE  "rej" /* its refusal counter */
/* hl_slotkey_is_ban_slot as the two Lua patterns the Redis script
 * (bans_set) matches a whole slot key with, after the Redis key prefix:
 * the main server's ban counter, and a virtual host's. */
#define HL_SLOTKEY_BAN_LUA_MAIN  "d0ban|"
#define HL_SLOTKEY_BAN_LUA_VHOST "d0[^|/]*:%d+ban|"

/* What a key is the counter of. */
typedef enum {
    HL_SLOTKEY_QUOTA = 0,   /* a quota's (a HotLimitQuota line, a rule) */
    HL_SLOTKEY_BAN,         /* a ban's: TAG "ban|" CLIENT */
    HL_SLOTKEY_REJ          /* a ban's refusal counter: TAG "rej|" CLIENT */
} hl_slotkey_kind_t;

/* A key taken apart; every pointer points into the key decoded. */
typedef struct {
    char        origin;      /* the origin byte; 0 for a user-visible key */
    int         window;      /* the window index 0..9; -1 when not a digit
                                or for a user-visible key */
    const char *key;         /* the user-visible key ... */
    size_t      key_len;     /* ... and its length */
    size_t      name_len;    /* TAG SCOPE: up to the first '|' */
    const char *client;      /* after the first '|' */
    size_t      client_len;  /* may be 0 ("scope|") */
    size_t      tag_len;     /* TAG's length for a ban's counters; 0 on
                                the main server and for quotas (unknown) */
    hl_slotkey_kind_t kind;
    int         compacted;   /* 1 if it ends as hl_key_compact leaves a
                                long key: the client part is cut */
} hl_slotkey_t;

/*
 * Makes a key fit in HL_KEY_MAX bytes: a short key (len <= HL_KEY_MAX) is
 * copied unchanged; a longer one becomes its first HL_KEY_MAX - 17 bytes,
 * HL_SLOTKEY_COMPACT_MARK and the 16 lowercase hex digits of hl_hash64 of
 * the whole key (HL_SEED_KEYS), exactly HL_KEY_MAX bytes, so long keys
 * sharing a prefix stay distinct. Writes into out (HL_KEY_MAX bytes; it
 * may overlap key) and returns the length. Never fails.
 */
size_t hl_key_compact(char out[HL_KEY_MAX], const char *key, size_t len);

/* hl_slotkey_slot for a key whose slot key does not fit HL_KEY_MAX
 * bytes: the whole compacted. Returns HL_KEY_MAX. Never fails. */
size_t hl_slotkey_slot_long(char out[HL_KEY_MAX], char origin, int window,
                            const char *key, size_t keylen);

/*
 * Writes the slot key of window `window` (0..9) of the user-visible key
 * (key, keylen bytes) under origin into out (HL_KEY_MAX bytes): origin,
 * window digit, then the key, compacted (hl_key_compact) when the whole
 * does not fit. Returns its length. Never fails. Inline: every request
 * writes one per window, and nearly every key fits as it is.
 */
static inline size_t hl_slotkey_slot(char out[HL_KEY_MAX], char origin,
                                     int window, const char *key,
                                     size_t keylen)
{
    if (keylen + HL_SLOTKEY_PREFIX > HL_KEY_MAX)
        return hl_slotkey_slot_long(out, origin, window, key, keylen);
    out[HL_SLOTKEY_ORIGIN_AT] = origin;
    out[HL_SLOTKEY_WINDOW_AT] = (char)('0' + window);
    memcpy(out + HL_SLOTKEY_PREFIX, key, keylen);
    return keylen + HL_SLOTKEY_PREFIX;
}

/*
 * Writes the user-visible key TAG SCOPE '|' CLIENT into out (size bytes)
 * and a NUL after it when it fits. Returns the key's length (without the
 * NUL) whether or not it fit: the caller allocates that plus 1 and calls
 * again (out may be NULL when size is 0). Never fails.
 */
size_t hl_slotkey_encode(char *out, size_t size, const char *tag,
                         size_t tag_len, const char *scope, size_t scope_len,
                         const char *client, size_t client_len);

/*
 * Decodes the user-visible key (key, len bytes) into *out. Returns 0, or
 * -1 when it has no '|' (a bare client address, as POST reset=ADDRESS
 * names one); *out is then zeroed but for key, key_len and window (-1).
 * An empty name ("|CLIENT") decodes. Reads only.
 */
int hl_slotkey_decode(const char *key, size_t len, hl_slotkey_t *out);

/*
 * Decodes a whole slot key (skey, len bytes: origin, window, user-visible
 * key) into *out. Returns 0, or -1 when it is too short to hold a
 * user-visible key (len <= HL_SLOTKEY_PREFIX: *out is zeroed, window -1)
 * or its user-visible key does not decode (origin and window are set).
 */
int hl_slotkey_decode_slot(const char *skey, size_t len, hl_slotkey_t *out);

/* Returns 1 if the user-visible key (key, len bytes) names no scope (it
 * holds no HL_SLOTKEY_SEP): a bare client address, as POST reset=ADDRESS
 * names one. Else 0. */
int hl_slotkey_is_bare(const char *key, size_t len);

/* Returns 1 if the slot key (skey, len bytes) is a ban's counter as the
 * Redis script lists it in its bans set (HL_SLOTKEY_BAN_LUA_*): origin
 * 'd', window 0, TAG "ban|", the client possibly empty. Else 0. */
int hl_slotkey_is_ban_slot(const char *skey, size_t len);

/* Returns 1 if the user-visible key (key, len bytes) is one of a ban's
 * counters (HL_SLOTKEY_BAN or HL_SLOTKEY_REJ) with a non-empty client,
 * else 0. */
int hl_slotkey_is_ban_counter(const char *key, size_t len);

#endif
