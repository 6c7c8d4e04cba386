/*
 * mod_hotlimit_redis_url.c - HotLimitStore's Redis address, redis://,
 * rediss:// or unix:, read into a hl_redis_conf_t (see
 * mod_hotlimit_redis_url.h).
 */
#include <string.h>
#include <stdlib.h>

#include "apr_strings.h"
#include "apr_lib.h"

#include "hl_redis_call.h"
#include "mod_hotlimit_redis.h"
#include "mod_hotlimit_redis_url.h"

/* Parses redis://, rediss:// (refused: no TLS in this hiredis) or unix:
 * into *out (a hl_redis_conf_t from p). Returns NULL, or what is wrong.
 * The provider's parse. */
const char *hl_redis_parse_url(apr_pool_t *p, const char *url, void **out)
{
    hl_redis_conf_t *c = apr_pcalloc(p, sizeof(*c));
    const char *rest, *at, *slash, *q, *colon;
    char *hostport;

    c->prefix = "hl:";
    if (!strncmp(url, "rediss://", 9))
        return "rediss:// (TLS) needs hiredis with SSL support, which Debian 12's "
               "hiredis 0.14 does not have: use redis:// over a trusted network, "
               "a unix: socket, or a TLS tunnel";
    if (!strncmp(url, "unix:", 5)) {
        rest = url + 5;
        q = strchr(rest, '?');
        c->socket = q ? apr_pstrmemdup(p, rest, (apr_size_t)(q - rest))
                      : apr_pstrdup(p, rest);
        if (!*c->socket || c->socket[0] != '/')
            return "unix: needs an absolute socket path";
    }
    else if (!strncmp(url, "redis://", 8)) {
        rest = url + 8;
        q = strchr(rest, '?');
        at = strchr(rest, '@');
        if (at && (!q || at < q)) {
            const char *cred = apr_pstrmemdup(p, rest, (apr_size_t)(at - rest));
            colon = strchr(cred, ':');
            if (colon) {
                c->user = colon > cred ? apr_pstrmemdup(p, cred, (apr_size_t)(colon - cred))
                                       : NULL;
                c->password = apr_pstrdup(p, colon + 1);
            }
            else
                c->password = cred;
            rest = at + 1;
        }
        slash = strchr(rest, '/');
        if (slash && q && slash > q)
            slash = NULL;
        hostport = apr_pstrmemdup(p, rest, (apr_size_t)((slash ? slash : q ? q : rest + strlen(rest)) - rest));
        colon = strrchr(hostport, ':');
        if (!colon || colon == hostport)
            return "redis:// needs HOST:PORT";
        c->host = apr_pstrmemdup(p, hostport, (apr_size_t)(colon - hostport));
        c->port = atoi(colon + 1);
        if (c->port <= 0 || c->port > 65535)
            return "bad port";
        if (slash) {
            char *end;
            long db = strtol(slash + 1, &end, 10);
            if (end == slash + 1 || (*end && *end != '?') || db < 0 || db > 65535)
                return "bad database number";
            c->db = (int)db;
        }
    }
    else
        return "use shm, redis://[USER:PASSWORD@]HOST:PORT[/DB][?prefix=P] or unix:/PATH";
    if (q) {
        /* Options: ?prefix=P, and for unix: also db=N, user=U, password=X,
         * joined by '&'. */
        char *opts = apr_pstrdup(p, q + 1), *opt, *last;
        for (opt = apr_strtok(opts, "&", &last); opt; opt = apr_strtok(NULL, "&", &last)) {
            if (!strncmp(opt, "prefix=", 7) && opt[7])
                c->prefix = opt + 7;
            else if (c->socket && !strncmp(opt, "db=", 3) && apr_isdigit(opt[3]))
                c->db = atoi(opt + 3);
            else if (c->socket && !strncmp(opt, "user=", 5) && opt[5])
                c->user = opt + 5;
            else if (c->socket && !strncmp(opt, "password=", 9) && opt[9])
                c->password = opt + 9;
            else
                return apr_psprintf(p, "unknown option '%s' (use prefix=P; "
                                    "unix: also db=N, user=U, password=X)", opt);
        }
    }
    if (strlen(c->prefix) > HL_REDIS_PREFIX_MAX
        || strpbrk(c->prefix, "{} \t\r\n"))
        return apr_psprintf(p, "prefix '%s': at most %d bytes, without braces "
                            "or spaces (every key's hash tag is {hl})",
                            c->prefix, HL_REDIS_PREFIX_MAX);
    *out = c;
    return NULL;
}

const char *hl_redis_parse_hostport(apr_pool_t *p, const char *token,
                                    const char **host, int *port)
{
    const char *colon = strrchr(token, ':');
    char *end;
    long n;

    if (!colon || colon == token)
        return apr_psprintf(p, "'%s': needs HOST:PORT", token);
    *host = apr_pstrmemdup(p, token, (apr_size_t)(colon - token));
    if ((*host)[0] == '[') {
        size_t len = strlen(*host);
        if (len < 3 || (*host)[len - 1] != ']')
            return apr_psprintf(p, "'%s': bad host", token);
        *host = apr_pstrmemdup(p, *host + 1, len - 2);
    }
    n = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || *end || n <= 0 || n > 65535)
        return apr_psprintf(p, "'%s': bad port", token);
    if (strpbrk(*host, " \t\r\n/@?{}"))
        return apr_psprintf(p, "'%s': bad host", token);
    *port = (int)n;
    return NULL;
}
