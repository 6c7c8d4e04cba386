/*
 * mod_hotlimit_upgrade.h - a request that upgrades its connection to
 * HTTP/2 (h2c) is counted once, not twice.
 *
 * mod_http2 serves such a request (Upgrade: h2c) by replaying it as
 * stream 1 of the new HTTP/2 session: a second request_rec, on a
 * secondary connection, that goes through every hook again. The HTTP/1.1
 * request is decided as usual (it may be refused, and then nothing is
 * upgraded); what it was counted under is noted on its connection, and
 * the replay finds the note and does not count those keys again. Each
 * noted key is claimed once, by a request of the same key, so a note
 * never pays for another route or another client.
 */
#ifndef MOD_HOTLIMIT_UPGRADE_H
#define MOD_HOTLIMIT_UPGRADE_H

#include "httpd.h"
#include "mod_hotlimit_match.h"

/* What an upgrading request was counted under (mod_hotlimit_upgrade.c). */
typedef struct hl_upgrade_note hl_upgrade_note_t;

/* Remembers whether mod_http2 is loaded (nothing to do without it). Called
 * from post_config. Cannot fail. */
void hl_upgrade_init(void);

/*
 * Notes in *slot (the connection's, NULL at first; allocated once from the
 * connection's pool, then reused) the keys of m[0 .. n) that were counted
 * when r, an HTTP/1.1 request asking for h2c on a connection that is no
 * HTTP/2 stream, was admitted (not the ones counted after the response).
 * A note of an earlier request of the connection is dropped first (told
 * apart by c->keepalives, which each kept-alive response counts up). Does
 * nothing without mod_http2 or when r does not ask for h2c. Cannot fail.
 */
void hl_upgrade_note(request_rec *r, hl_upgrade_note_t **slot,
                     const hl_match_t *m, int n);

/*
 * Claims, once each, the keys of note (master's, the master connection of
 * a request on an HTTP/2 secondary connection; NULL: no note) among
 * m[0 .. n), if the note is of the request that upgraded master, and
 * marks those matches counted_by_upgrade (checked for the headers only:
 * never counted, never refusing, not in the statistics). Safe against the
 * other streams of the connection claiming at the same time. Returns how
 * many were claimed. Cannot fail.
 */
int hl_upgrade_claim(const conn_rec *master, hl_upgrade_note_t *note,
                     hl_match_t *m, int n);

/* Turns the peek of a match m counted_by_upgrade (nothing for another
 * match) into the decision of the request that was counted: admitted,
 * with one more left than the peek said unless the window is full now.
 * Cannot fail. */
void hl_upgrade_settle(hl_match_t *m);

/* Returns 1 if r answered 101 and its connection now speaks h2c: its
 * response is the replay's, which counts after-response quotas itself. */
int hl_upgrade_switched(const request_rec *r);

#endif
