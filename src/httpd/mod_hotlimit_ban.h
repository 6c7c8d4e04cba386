/*
 * mod_hotlimit_ban.h - what mod_hotlimit_ban.c offers the other glue
 * files: the bans in force (HotLimitBan).
 */
#ifndef MOD_HOTLIMIT_BAN_H
#define MOD_HOTLIMIT_BAN_H

#include "mod_hotlimit_conf.h"

/* One ban in force. */
typedef struct {
    const char *key;       /* "ban|CLIENT", after "host:port" in a vhost:
                              POST reset=KEY lifts it */
    const char *client;    /* its CLIENT: points into key */
    const char *host;      /* its virtual host's "host:port", "" for the
                              main server's */
    int64_t     left_ms;   /* > 0 */
    /* Why (the ban book, hl_banbook.h, this server's or the one another
     * server sharing the Redis store published, mod_hotlimit_fleet.h;
     * unknown when that server no longer publishes, or newer bans pushed
     * it out): */
    const char *by;        /* who started it: "this server", "another
                              server", "" unknown */
    const char *line;      /* the HotLimitBan "FILE:LINE", "table"; "" */
    const char *rule;      /* the rule whose refusals banned; "" */
    int64_t     since_ms;  /* wall clock; 0: unknown */
    uint64_t    refusals;  /* requests refused while banned */
} hl_ban_entry_t;

/* Returns the bans in force at now_ms (hl_mono_ms) that the status page
 * of server view shows (hl_view_owns: all on the main server's), of
 * hl_ban_entry_t, newest first (those of unknown start last, most time
 * left first), allocated from p (empty without HotLimitBan). Never
 * NULL. */
apr_array_header_t *hl_ban_list(const server_rec *view, apr_pool_t *p,
                                int64_t now_ms);

/* Writes the ?json fields "bans":[{"key":...,"client":...,"host":...,
 * "left_s":N,"line":...,"rule":...,"since_ms":N,"refusals":N,"by":...},...] (the
 * bans listed by hl_ban_list, of hl_ban_entry_t) and "bans_total" (bans
 * started since the counters started) to r. */
void hl_ban_write_json(request_rec *r, const apr_array_header_t *bans);

/* Writes the ?metrics gauge hotlimit_bans_active (bans in force that the
 * page of server view shows) and the counter hotlimit_bans_total (bans
 * this server started since the counters started) to r. */
void hl_ban_write_metrics(request_rec *r, const server_rec *view);

/* Returns the bans this server started since the counters started (the
 * ban book's count; 0 before the store is set up). */
uint64_t hl_ban_total(void);

/* Lifts every ban in force of client address key `client` ("203.0.113.7")
 * that the status page of server view shows (in any virtual host from the
 * main server's page). Returns the counters removed (0: not banned), or
 * -1 when the store cannot answer. Scratch memory from p. */
int hl_ban_reset_client(const server_rec *view, apr_pool_t *p,
                        const char *client);

/* Returns the bans this server started since the counters started (the
 * ban book's count; 0 before the store is set up). */
uint64_t hl_ban_total(void);

/* Lifts every ban in force that the status page of server view shows
 * (POST lift=all). Returns the counters removed, or -1 when the store
 * cannot answer (some may be lifted). Scratch memory from p. */
int hl_ban_lift_all(const server_rec *view, apr_pool_t *p);

#endif
