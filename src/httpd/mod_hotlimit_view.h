/*
 * mod_hotlimit_view.h - which counters a status page may show and reset:
 * the main server's page every one, a virtual host's page only its own
 * (their keys start with its "host:port" tag, hl_server_conf_t.tag).
 */
#ifndef MOD_HOTLIMIT_VIEW_H
#define MOD_HOTLIMIT_VIEW_H

#include "mod_hotlimit_conf.h"

/*
 * Returns 1 if the status page of server s may show and reset the counter
 * whose user-visible key (or statistics name) is key (len bytes): s is
 * the main server, or s is the virtual host whose tag is the longest
 * among the servers' tags that key starts with ("a:80" and "a:8080" are
 * told apart). Else 0. Reads only.
 */
int hl_view_owns(const server_rec *s, const char *key, size_t len);

#endif
