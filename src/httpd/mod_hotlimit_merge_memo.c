/*
 * mod_hotlimit_merge_memo.c - the per-directory merge kept per process
 * (see mod_hotlimit_merge_memo.h).
 *
 * Each stable record has HL_MERGE_MEMOS slots, filled once each with
 * compare-and-swap (threads of one child may merge the same pair at
 * once: one copy wins, the others are freed) and read with an acquire
 * load; a slot is never emptied while its record lives.
 */
#include <stdlib.h>
#include <string.h>

#include "mod_hotlimit_merge_memo.h"
#include "http_core.h"

/* Frees memo m and what its record keeps in turn. */
static void memo_free(struct hl_merge_memo *m)
{
    int i;

    if (!m)
        return;
    for (i = 0; i < HL_MERGE_MEMOS; ++i)
        memo_free(m->conf.memo[i]);
    free(m);
}

/* Pool cleanup of a stable record: frees its kept merges. Returns
 * APR_SUCCESS. */
static apr_status_t record_cleanup(void *data)
{
    hl_dir_conf_t *c = data;
    int i;

    for (i = 0; i < HL_MERGE_MEMOS; ++i) {
        memo_free(c->memo[i]);
        c->memo[i] = NULL;
    }
    return APR_SUCCESS;
}

void hl_merge_memo_init(hl_dir_conf_t *c, apr_pool_t *p)
{
    c->stable = ap_state_query(AP_SQ_MAIN_STATE) != AP_SQ_MS_RUN_MPM;
    if (c->stable)
        apr_pool_cleanup_register(p, c, record_cleanup,
                                  apr_pool_cleanup_null);
}

const hl_dir_conf_t *hl_merge_memo_keep(const hl_dir_conf_t *base,
                                        const hl_dir_conf_t *add,
                                        const hl_dir_conf_t *merged)
{
    /* The slots are a cache beside add's settings, which stay as read. */
    hl_dir_conf_t *owner = (hl_dir_conf_t *)add;
    struct hl_merge_memo *m;
    int i;

    if (!base->stable || !add->stable || owner->memo[HL_MERGE_MEMOS - 1])
        return merged;
    m = malloc(sizeof(*m));
    if (!m)
        return merged;
    m->base = base;
    m->conf = *merged;
    m->conf.stable = 1;   /* lives as long as add, at one address */
    memset(m->conf.memo, 0, sizeof(m->conf.memo));
    for (i = 0; i < HL_MERGE_MEMOS; ++i) {
        struct hl_merge_memo *expected = NULL;

        if (__atomic_compare_exchange_n(&owner->memo[i], &expected, m, 0,
                                        __ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
            return &m->conf;
        if (expected->base == base) {   /* another thread kept it first */
            free(m);
            return &expected->conf;
        }
    }
    free(m);
    return merged;
}
