/*
 * mod_hotlimit_upgrade.c - a request that upgrades its connection to h2c
 * is counted once (see mod_hotlimit_upgrade.h).
 */
#include <string.h>

#include "httpd.h"
#include "http_config.h"
#include "http_protocol.h"
#include "apr_strings.h"

#include "mod_hotlimit_upgrade.h"
#include "hl_hash.h"

#define HL_UPGRADE_KEYS 8   /* keys one request is counted under, at most */

struct hl_upgrade_note {
    int      keepalives;                    /* c->keepalives of the request
                                               noted: one per request of
                                               the connection */
    int      n;
    uint64_t key_hash[HL_UPGRADE_KEYS];     /* of origin and key */
    int      claimed[HL_UPGRADE_KEYS];      /* 0, then 1 once claimed */
    int64_t  marks[HL_UPGRADE_KEYS][HL_MAX_WINDOWS];  /* where its units sit:
                                               the replay gives a
                                               count=failures|status unit
                                               back by them */
};

static int http2_loaded;

void hl_upgrade_init(void)
{
    http2_loaded = ap_find_linked_module("mod_http2.c") != NULL;
}

/* Returns the hash a note keeps for the key of item it. */
static uint64_t key_hash(const hl_decide_item_t *it)
{
    return hl_hash64(it->key, it->key_len, HL_SEED_KEYS + (uint64_t)it->origin);
}

/* Returns 1 if match m was counted when its request was admitted. */
static int counted_at_admission(const hl_match_t *m)
{
    return !m->counted_by_upgrade && !m->item.peek
           && !hl_quota_after_response(m->item.quota);
}

/* Returns 1 if r asks to upgrade its connection to h2c. */
static int asks_for_h2c(request_rec *r)
{
    const char *upgrade = apr_table_get(r->headers_in, "Upgrade");

    return upgrade && ap_find_token(r->pool, upgrade, "h2c");
}

void hl_upgrade_note(request_rec *r, hl_upgrade_note_t **slot,
                     const hl_match_t *m, int n)
{
    conn_rec *c = r->connection;
    hl_upgrade_note_t *note;
    int i, j;

    if (!http2_loaded || c->master || !asks_for_h2c(r))
        return;
    if (*slot == NULL)
        *slot = apr_pcalloc(c->pool, sizeof(**slot));
    note = *slot;
    /* httpd counts c->keepalives up with each response that keeps the
     * connection: an earlier request's note is stale (its keys were
     * served over HTTP/1.1). Internal redirects of r share its count. */
    if (note->keepalives != c->keepalives) {
        memset(note, 0, sizeof(*note));
        note->keepalives = c->keepalives;
    }
    for (i = 0; i < n && note->n < HL_UPGRADE_KEYS; ++i) {
        uint64_t h;

        if (!counted_at_admission(&m[i]))
            continue;
        h = key_hash(&m[i].item);
        for (j = 0; j < note->n && note->key_hash[j] != h; ++j)
            ;
        if (j == note->n) {
            memcpy(note->marks[note->n], m[i].item.decision.marks,
                   sizeof(note->marks[0]));
            note->key_hash[note->n++] = h;
        }
    }
}

int hl_upgrade_claim(const conn_rec *master, hl_upgrade_note_t *note,
                     hl_match_t *m, int n)
{
    int i, j, claimed = 0;

    /* Only the note of the request that upgraded: the master's last. The
     * 101 does not count up c->keepalives. */
    if (note == NULL || note->keepalives != master->keepalives)
        return 0;
    for (i = 0; i < n; ++i) {
        uint64_t h;

        if (!counted_at_admission(&m[i]))
            continue;
        h = key_hash(&m[i].item);
        for (j = 0; j < note->n; ++j) {
            int unclaimed = 0;

            if (note->key_hash[j] != h
                || !__atomic_compare_exchange_n(&note->claimed[j], &unclaimed, 1,
                                                0, __ATOMIC_ACQ_REL,
                                                __ATOMIC_ACQUIRE))
                continue;
            /* Decided for its headers: a peek never counts, a dry run
             * never refuses, and no statistics (the upgrading request
             * was counted in them). */
            m[i].counted_by_upgrade = 1;
            memcpy(m[i].upgrade_marks, note->marks[j],
                   sizeof(m[i].upgrade_marks));
            m[i].item.peek = 1;
            m[i].item.dry_run = 1;
            m[i].item.stats_name = NULL;
            ++claimed;
            break;
        }
    }
    return claimed;
}

int hl_upgrade_switched(const request_rec *r)
{
    return http2_loaded && r->status == HTTP_SWITCHING_PROTOCOLS
           && !strcmp(ap_get_protocol(r->connection), "h2c");
}

void hl_upgrade_settle(hl_match_t *m)
{
    hl_decision_t *d = &m->item.decision;
    int i;

    if (!m->counted_by_upgrade)
        return;
    /* The peek asked about one more request; this one is counted already:
     * what it leaves is one more, or 0 when the window is full now. */
    for (i = 0; i < d->nwindows && i < HL_MAX_WINDOWS; ++i) {
        hl_verdict_t *w = &d->windows[i];
        if (w->admit)
            w->remaining += 1;
        w->admit = 1;
        w->retry_ms = 0;
    }
    if (d->admit)
        d->remaining += 1;
    d->admit = 1;
    d->retry_after_s = 0;
    memcpy(d->marks, m->upgrade_marks, sizeof(d->marks));
}
