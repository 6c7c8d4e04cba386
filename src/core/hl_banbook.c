/*
 * hl_banbook.c - why each ban was started (see hl_banbook.h): a ring
 * indexed by the ban's number since start, written with atomic stores,
 * read by key hash.
 *
 * Memory: the caller owns the book (shared memory) and every buffer.
 */
#include <string.h>
#include "hl_banbook.h"
#include "hl_hash.h"

#define HL_BANBOOK_WRITING UINT64_MAX   /* an entry being written */
#define HL_SEED_BANBOOK    0x62616e626f6f6bULL   /* "banbook" */

/* Copies src (NUL-terminated, may be NULL) into dst of size n, cut to fit,
 * NUL-terminated. */
static void copy_text(char *dst, size_t n, const char *src)
{
    size_t len = src ? strnlen(src, n - 1) : 0;

    memcpy(dst, src ? src : "", len);
    dst[len] = '\0';
}

void hl_banbook_start(hl_banbook_t *b, const char *key, size_t len,
                      const char *line, const char *rule, int64_t since_ms)
{
    uint64_t n = __atomic_fetch_add(&b->started, 1, __ATOMIC_ACQ_REL);
    hl_banbook_entry_t *e = &b->e[n % HL_BANBOOK_MAX];
    size_t klen = len < HL_BANBOOK_KEY - 1 ? len : HL_BANBOOK_KEY - 1;

    __atomic_store_n(&e->stamp, HL_BANBOOK_WRITING, __ATOMIC_RELEASE);
    e->key_hash = hl_hash64(key, len, HL_SEED_BANBOOK);
    e->since_ms = since_ms;
    __atomic_store_n(&e->refusals, 0, __ATOMIC_RELAXED);
    memcpy(e->key, key, klen);
    e->key[klen] = '\0';
    copy_text(e->line, sizeof(e->line), line);
    copy_text(e->rule, sizeof(e->rule), rule);
    __atomic_store_n(&e->stamp, n + 1, __ATOMIC_RELEASE);
}

const hl_banbook_entry_t *hl_banbook_find(const hl_banbook_t *b,
                                          const char *key, size_t len)
{
    uint64_t h = hl_hash64(key, len, HL_SEED_BANBOOK), best = 0;
    const hl_banbook_entry_t *found = NULL;
    int i;

    for (i = 0; i < HL_BANBOOK_MAX; ++i) {
        const hl_banbook_entry_t *e = &b->e[i];
        uint64_t stamp = __atomic_load_n(&e->stamp, __ATOMIC_ACQUIRE);

        if (stamp == 0 || stamp == HL_BANBOOK_WRITING || stamp <= best
            || e->key_hash != h)
            continue;
        best = stamp;
        found = e;
    }
    return found;
}

int hl_banbook_refused(hl_banbook_t *b, const char *key, size_t len)
{
    hl_banbook_entry_t *e = (hl_banbook_entry_t *)hl_banbook_find(b, key, len);

    if (!e)
        return 0;
    __atomic_fetch_add(&e->refusals, 1, __ATOMIC_RELAXED);
    return 1;
}

uint64_t hl_banbook_total(const hl_banbook_t *b)
{
    return __atomic_load_n(&b->started, __ATOMIC_ACQUIRE);
}
