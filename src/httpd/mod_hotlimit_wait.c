/*
 * mod_hotlimit_wait.c - a held request's sleep and HotLimitMaxWaiting: see
 * mod_hotlimit_wait.h.
 *
 * A held request holds its worker thread (prefork: its process) for as
 * long as it waits: README and the man page say so, and HotLimitMaxWaiting
 * bounds how many the whole server holds (default 10% of
 * MaxRequestWorkers, so that held requests never take every worker).
 */
#define _GNU_SOURCE 1          /* POLLRDHUP */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>

#include "httpd.h"
#include "http_config.h"
#include "http_connection.h"
#include "http_core.h"
#include "ap_mpm.h"
#include "apr_portable.h"
#include "apr_strings.h"
#include "apr_time.h"

#include "mod_hotlimit_wait.h"

#define HL_WAIT_LIMIT_MAX 1024     /* hl_wait.h's HL_WAIT_MAX */

static long max_waiting = -1;      /* -1: not set (10% of the workers) */

/* Returns r's client socket descriptor, or -1 (HTTP/2 stream, none). */
static int client_fd(request_rec *r)
{
    apr_socket_t *sock;
    apr_os_sock_t fd;

    if (r->connection->master)
        return -1;
    sock = ap_get_conn_socket(r->connection);
    if (!sock || apr_os_sock_get(&fd, sock) != APR_SUCCESS)
        return -1;
    return (int)fd;
}

int hl_wait_step(request_rec *r, int ms)
{
    struct pollfd p;
    int fd = client_fd(r), rc;

    if (r->connection->aborted)
        return 1;
    if (fd < 0) {
        apr_sleep(apr_time_from_msec(ms));
        return r->connection->aborted ? 1 : 0;
    }
    p.fd = fd;
    p.events = POLLRDHUP;
    p.revents = 0;
    rc = poll(&p, 1, ms);
    if (rc > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL))) {
        r->connection->aborted = 1;
        return 1;
    }
    return 0;
}

const char *hl_wait_set_max(cmd_parms *cmd, void *dconf, const char *arg)
{
    char *end;
    long v;
    (void)dconf;

    errno = 0;
    v = strtol(arg, &end, 10);
    if (end == arg || *end || errno || v < 0 || v > HL_WAIT_LIMIT_MAX)
        return apr_psprintf(cmd->pool, "%s: bad value '%s' (a whole number "
                            "from 0 to %d)", cmd->cmd->name, arg,
                            HL_WAIT_LIMIT_MAX);
    max_waiting = v;
    return NULL;
}

void hl_wait_pre_config(void)
{
    max_waiting = -1;
}

unsigned hl_wait_max(void)
{
    int daemons = 0, threads = 0;
    long n;

    if (max_waiting >= 0)
        return (unsigned)max_waiting;
    ap_mpm_query(AP_MPMQ_MAX_DAEMONS, &daemons);
    ap_mpm_query(AP_MPMQ_MAX_THREADS, &threads);
    n = (long)(daemons > 0 ? daemons : 1) * (threads > 0 ? threads : 1) / 10;
    return n < 1 ? 1 : n > HL_WAIT_LIMIT_MAX ? HL_WAIT_LIMIT_MAX : (unsigned)n;
}
