/*
 * mod_hotlimit_ban_gate.h - what mod_hotlimit_ban_gate.c offers the other
 * glue files: HotLimitBan in the request path, asked by the decision
 * (mod_hotlimit_access.c) and before a request body is read
 * (mod_hotlimit_body.c).
 */
#ifndef MOD_HOTLIMIT_BAN_GATE_H
#define MOD_HOTLIMIT_BAN_GATE_H

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_key.h"
#include "mod_hotlimit_match.h"
#include "mod_hotlimit_table.h"
#include "hl_ban.h"

/* Returns the ban in force for a request of server sc: the table's "ban"
 * (table: the request's hit, may be NULL), else HotLimitBan; NULL when
 * none, or when the table's kill switch or exempt list admits the request
 * untouched. Points into sc or table. Inline: asked at every request. */
static inline const hl_ban_t *hl_ban_gate_of(const hl_server_conf_t *sc,
                                             const hl_table_hit_t *table)
{
    if (table && (!table->enabled || table->exempt))
        return NULL;
    if (table && table->has_ban)
        return &table->ban;
    return sc->ban;
}

/* Fills *m (zeroed first) with the question "is the client cl of r
 * banned from r's server under ban b?": a look at the ban counter, which
 * counts nothing and creates no counter, to decide with the request's
 * quotas. The key comes from r->pool. Never fails. */
void hl_ban_gate_look(request_rec *r, const hl_server_conf_t *sc,
                      const hl_ban_t *b, const hl_client_t *cl,
                      hl_match_t *m);

/* Returns the 429 outcome (hl_respond_reject) for a request refused
 * because its client is banned (look m, decided, said so), with
 * Retry-After = the time the ban has left; counted among the ban's
 * refusals in the ban book. */
int hl_ban_gate_refuse(request_rec *r, const hl_match_t *m);

/* Counts the refusal of the request r, whose matches are m (n), toward
 * ban b of its server sc, when a quota keyed by the client address (not
 * in dry run) refused it: only such a refusal is the client's own doing
 * (a shared or account budget may be spent by someone else). The refusal
 * that takes the last room of AFTER/WITHIN starts the ban, logged once
 * (HL00102) and recorded in the ban book. Never fails: a store that cannot
 * answer counts nothing. */
void hl_ban_gate_note_refusal(request_rec *r, const hl_server_conf_t *sc,
                              const hl_ban_t *b, const hl_client_t *cl,
                              const hl_match_t *m, int n);

/* Returns 1 if the client of r is banned from r's server now (a look at
 * its ban counter that counts nothing), asked before a request body is
 * read (mod_hotlimit_body.c) so that a banned client's body never is; the
 * access checker refuses the request after. 0 otherwise: not banned, no
 * ban, exempt, HotLimitEngine Off, dry run, or the store cannot answer. */
int hl_ban_gate_banned(request_rec *r);

#endif
