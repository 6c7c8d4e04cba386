/*
 * mod_hotlimit_merge_memo.h - the per-directory merge of a request made
 * once per process, not at every request.
 *
 * httpd merges the per-directory records of every section a request
 * walks (twice for a <Location>: before and after the directory walk),
 * each merge a fresh record from the request's pool. Records made at
 * configuration time never change and keep their address while the
 * configuration lives ("stable"), so the merge of two of them is the
 * same at every request: the first request keeps it (malloc'ed, freed
 * with the child's record), and later requests find it by the parent's
 * address. A kept merge is stable too, so a chain of sections is kept
 * link by link. Records made while serving (.htaccess) are never kept.
 */
#ifndef MOD_HOTLIMIT_MERGE_MEMO_H
#define MOD_HOTLIMIT_MERGE_MEMO_H

#include "httpd.h"
#include "mod_hotlimit_conf.h"

/* Marks c, just made from pool p, stable when httpd is reading its
 * configuration (not serving: an .htaccess record dies with its request
 * and its address is reused), and frees what c keeps when p goes. Cannot
 * fail. */
void hl_merge_memo_init(hl_dir_conf_t *c, apr_pool_t *p);

/* A merge kept: the parent it was made with, and the result. */
struct hl_merge_memo {
    const hl_dir_conf_t *base;
    hl_dir_conf_t        conf;
};

/* Returns the kept merge of parent base and child add, or NULL when none
 * is kept (either is not stable, or the merge was not made yet). Owned by
 * add. Inline: it runs at every merge of every request. */
static inline const hl_dir_conf_t *hl_merge_memo_find(const hl_dir_conf_t *base,
                                                      const hl_dir_conf_t *add)
{
    int i;

    if (!base->stable || !add->stable)
        return NULL;
    for (i = 0; i < HL_MERGE_MEMOS; ++i) {
        const struct hl_merge_memo *m = __atomic_load_n(&add->memo[i],
                                                        __ATOMIC_ACQUIRE);
        if (!m)
            return NULL;
        if (m->base == base)
            return &m->conf;
    }
    return NULL;
}

/* Keeps a copy of merged, the merge of base and add, in add when both are
 * stable and add has room (two parents). Returns the copy, or merged when
 * not kept (merged stays the caller's, from its pool). */
const hl_dir_conf_t *hl_merge_memo_keep(const hl_dir_conf_t *base,
                                        const hl_dir_conf_t *add,
                                        const hl_dir_conf_t *merged);

#endif
