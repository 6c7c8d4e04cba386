/*
 * mod_hotlimit_cluster_conn.h - how redis-cluster:// reaches the masters:
 * the child's slot map (hl_cluster.h, fetched lazily from CLUSTER SLOTS
 * after fork), one connection per master per thread, the attempt loop of
 * one call (MOVED, ASK, TRYAGAIN, NOSCRIPT, CLUSTERDOWN), and a breaker
 * per master in shared memory, keyed by the hash of its host:port, so
 * that one child's timeout spares the others and a stalled master spares
 * the rest of the cluster.
 */
#ifndef MOD_HOTLIMIT_CLUSTER_CONN_H
#define MOD_HOTLIMIT_CLUSTER_CONN_H

#include <stdint.h>
#include <hiredis/hiredis.h>

#include "httpd.h"
#include "hl_cluster.h"

#define HL_CLUSTER_SEEDS_MAX 16

/* HotLimitStore redis-cluster://... once parsed. */
typedef struct {
    int         n_seeds;
    const char *seed_host[HL_CLUSTER_SEEDS_MAX];
    int         seed_port[HL_CLUSTER_SEEDS_MAX];
    const char *user;       /* ACL user, or NULL */
    const char *password;   /* or NULL: no AUTH */
    const char *prefix;     /* of every key, "hl:" (no '{') */
    const char *label;      /* "cluster host:port,..." for messages */
} hl_cluster_conf_t;

/* What the masters have done, in shared memory (the store's figures). */
typedef struct {
    uint64_t decisions;     /* calls a master answered */
    uint64_t fallbacks;     /* decisions (or parts) by HotLimitStoreFailure */
    uint64_t errors;        /* failed calls */
} hl_cluster_figures_t;

/* Sets the conf, the timeout (HotLimitStoreTimeout, ms) and the main
 * server (for logs) of this generation, and the breakers' shared memory
 * (made once per httpd from the process pool). Returns OK, or an HTTP
 * error after logging. */
int hl_cluster_conn_setup(const hl_cluster_conf_t *conf, int timeout_ms,
                          server_rec *s);

/* Returns HotLimitStoreTimeout (ms), which bounds every call. */
int hl_cluster_timeout_ms(void);

/* Returns the figures in shared memory (NULL before setup). */
hl_cluster_figures_t *hl_cluster_figures(void);

/* Writes the command of one call (eval: the script's text after
 * NOSCRIPT) and points *cmd at it (len bytes, owned by the builder).
 * Returns 0, or -1 when it cannot (out of memory). */
typedef int (*hl_cluster_build_fn)(void *arg, int eval, const char **cmd,
                                   size_t *len);

/*
 * Sends one call whose keys live in slot to the master serving it,
 * following the cluster's redirects (hl_cluster_attempt_*), never past
 * deadline (hl_mono_ms). Returns the reply (the caller frees it; it is
 * never a cluster error, but may be the script's own error), or NULL with
 * *why set (static) when the call must be decided by HotLimitStoreFailure:
 * the master's breaker is open (no wait), no master is known for the
 * slot, or the call failed (then recorded on that master's breaker).
 */
redisReply *hl_cluster_call(unsigned slot, hl_cluster_build_fn build,
                            void *arg, int64_t deadline, const char **why);

/* Sends argv[0 .. argc) (lengths argl), whose keys live in slot, as
 * hl_cluster_call does. Returns the reply (the caller frees it), or NULL
 * with *why set. */
redisReply *hl_cluster_command(unsigned slot, int argc, const char **argv,
                               const size_t *argl, int64_t deadline,
                               const char **why);

/*
 * Sends n commands (cmd[i], len[i] bytes of RESP) in one write to the
 * master serving slot and reads the n replies into replies[] (the caller
 * frees them), by deadline. No redirect is followed (the caller checks
 * the replies). Returns 0, or -1 with *why set (nothing to free; a
 * failure is recorded on the master's breaker).
 */
int hl_cluster_pipeline(unsigned slot, const char *const *cmd,
                        const size_t *len, int n, redisReply **replies,
                        int64_t deadline, const char **why);

/* Returns the master serving slot: its node index (stable while the map
 * lasts), or -1 when unknown (refreshing the map first when it is due). */
int hl_cluster_slot_node(unsigned slot, int64_t deadline);

/* Returns 1 when every known master's breaker is closed (the store is
 * "up"), else 0. Never fails. */
int hl_cluster_all_up(void);

#endif
