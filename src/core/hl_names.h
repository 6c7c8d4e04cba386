/*
 * hl_names.h - the names book (HotLimitStatusNames): the values behind
 * the hashed account keys the status page lists ("p:8c2fedfcb891a4ad" is
 * "admin"), so that the page names the account under attack.
 *
 * A fixed table of integers and fixed-size byte arrays over a
 * caller-supplied block (anonymous shared memory: never persisted to
 * disk), found by open addressing over HL_NAMES_PROBES places from the
 * key's id. A new id that finds neither its entry nor a free one takes the
 * place of the oldest probed entry (the least recently recorded), so the
 * book holds at most HL_NAMES_ENTRIES names whatever a flood sends.
 *
 * Each entry keeps the id ("p:" and 16 hex digits, the client part of an
 * account key) and the first HL_NAMES_VALUE_MAX bytes of the value as the
 * client sent it (before norm= folding), as bytes: the writers escape it.
 *
 * Lock-free: a writer claims an entry by a compare-and-swap of its
 * sequence word from even to odd, writes it, then makes it even again
 * (a writer that loses the race does not record this time); a reader
 * copies an entry and keeps the copy only when the sequence word was the
 * same even number before and after. Pure: no httpd, no allocation.
 */
#ifndef HL_NAMES_H
#define HL_NAMES_H

#include <stddef.h>
#include <stdint.h>

#define HL_NAMES_ENTRIES   1024   /* names kept; a power of two */
#define HL_NAMES_PROBES    8      /* places an id may take */
#define HL_NAMES_ID_LEN    18     /* "p:" and 16 hex digits */
#define HL_NAMES_VALUE_MAX 64     /* bytes of a value kept */
#define HL_NAMES_MAGIC     0x484c4e4du   /* "HLNM" */

typedef struct {
    uint64_t seq;                   /* odd while being written */
    uint64_t stamp;                 /* book clock when last recorded; 0 free */
    char     id[HL_NAMES_ID_LEN];   /* not NUL-terminated */
    uint16_t len;                   /* bytes of value kept */
    uint16_t cut;                   /* 1: the value was longer */
    char     value[HL_NAMES_VALUE_MAX];
} hl_names_entry_t;

typedef struct {
    uint32_t magic;
    uint32_t pad;
    uint64_t clock;                 /* recordings so far */
    hl_names_entry_t entries[HL_NAMES_ENTRIES];
} hl_names_t;

/* Makes book (sizeof(hl_names_t) bytes) empty. Never fails. */
void hl_names_init(hl_names_t *book);

/*
 * Returns the offset in s (len bytes: a user-visible counter key
 * "TAG SCOPE|CLIENT", or a client part alone) of the id of an account key
 * (the client part after the last '|' starts with one of u h c e p j, a
 * ':' and 16 lowercase hex digits, then ends or goes on with '+', a device
 * cookie's key), or -1 when s holds none. Pure.
 */
long hl_names_id_at(const char *s, size_t len);

/*
 * Records value (vlen bytes as the client sent it; the first
 * HL_NAMES_VALUE_MAX are kept) as the name behind the id at the start of
 * client (hl_names_id_at must have found it at 0). An entry already
 * holding these bytes is only refreshed now and then (a flood of one
 * account writes little). Returns 1 if recorded or already there, 0 when
 * client holds no id, vlen is 0 or a writer raced it. Never blocks.
 */
int hl_names_record(hl_names_t *book, const char *client, size_t clen,
                    const char *value, size_t vlen);

/*
 * Copies into out (at least HL_NAMES_VALUE_MAX + 1 bytes) the name behind
 * the account id found in s (len bytes, as hl_names_id_at), NUL-terminated,
 * as text any writer may show: valid UTF-8 without control characters,
 * each other byte (a NUL, ESC, a cut or invalid sequence) shown as '?'
 * (HTML and JSON escaping are still the writers'), and sets
 * *cut to 1 when the value was longer than kept. Returns its length, or -1
 * when s holds no id or the book has no name for it. Pure.
 */
long hl_names_find(const hl_names_t *book, const char *s, size_t len,
                   char *out, int *cut);

#endif
