/*
 * mod_hotlimit_names.h - what mod_hotlimit_names.c offers the other glue
 * files: HotLimitStatusNames and its names book (hl_names.h) in shared
 * memory, filled by refusals and shown by the status page.
 */
#ifndef MOD_HOTLIMIT_NAMES_H
#define MOD_HOTLIMIT_NAMES_H

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_respond.h"

/* Directive handler of HotLimitStatusNames On|Off (server config, virtual
 * host: a vhost without it inherits the main server's). Returns NULL. */
const char *hl_names_set(cmd_parms *cmd, void *dconf, int on);

/* Registers the post_config hook that makes the book once per httpd
 * parent. */
void hl_names_register(void);

/*
 * Records the names behind the account keys of the n matches m of r that
 * refused it or are at their limit now (decision taken), when r's server
 * has HotLimitStatusNames On. Cheap: nothing for other keys, and a value
 * already in the book is not written again. Never fails, never logs.
 */
void hl_names_note(request_rec *r, const hl_match_t *m, int n);

/*
 * Returns the name behind the account key key (a counter key
 * "TAG SCOPE|CLIENT" or a client part) as text any writer may show
 * (hl_names_find; "..." appended when cut), allocated from p; NULL when
 * view's HotLimitStatusNames is Off, key is no account key, or the book
 * has no name for it.
 */
const char *hl_names_of(apr_pool_t *p, const server_rec *view,
                        const char *key);

#endif
