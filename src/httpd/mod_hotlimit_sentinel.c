/*
 * mod_hotlimit_sentinel.c - HotLimitStore
 * redis-sentinel://[USER:PASSWORD@]MASTER@HOST:PORT[,HOST:PORT...][/DB]:
 * the Redis store's decisions, connections, breaker, fallback and
 * concurrency slots (mod_hotlimit_redis.c, mod_hotlimit_conc_redis.c),
 * the master's address found by asking the Sentinels listed.
 *
 * Every new connection of a child to the master (the first, and the one
 * after any failure: a dropped connection, a READONLY answer from a master
 * turned replica, a timeout) first asks the Sentinels, in turn, SENTINEL
 * get-master-addr-by-name MASTER, all of them within HotLimitStoreTimeout;
 * the first that answers names the master. A changed address is logged
 * once per child. While no Sentinel names a master, the round trip fails
 * and HotLimitStoreFailure decides, as for any Redis outage (the breaker
 * then spares the other children). USER:PASSWORD and DB are the master's.
 */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/time.h>

#include <hiredis/hiredis.h>

#include "httpd.h"
#include "http_config.h"
#include "http_log.h"
#include "apr_strings.h"
#include "apr_lib.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_sentinel.h"
#include "mod_hotlimit_redis.h"
#include "mod_hotlimit_redis_url.h"
#include "mod_hotlimit_conc_redis.h"
#include "hl_clock.h"

APLOG_USE_MODULE(hotlimit);

#define SCHEME "redis-sentinel://"

/* The Sentinels and the master's name. */
typedef struct {
    const char *master;
    int         n;
    const char *host[HL_SENTINEL_MAX];
    int         port[HL_SENTINEL_MAX];
} hl_sentinel_conf_t;

static server_rec *sserver;          /* for the log */

/* Per child, the leader's only (mod_hotlimit_redis_conn.c calls locate
 * with the connection): the master last found, and the Sentinel that
 * named it (asked first next time). */
static char last_host[256];
static int last_port;
static int first;

/* ---- configuration ------------------------------------------------------ */

/* Parses HOST:PORT (an IPv6 host in brackets) of token into c's Sentinel
 * number c->n. Returns NULL, or what is wrong (from p). */
static const char *parse_sentinel(apr_pool_t *p, hl_sentinel_conf_t *c,
                                  const char *token)
{
    const char *host, *why;
    int port;

    if ((why = hl_redis_parse_hostport(p, token, &host, &port)) != NULL)
        return apr_pstrcat(p, "Sentinel ", why, NULL);
    if (c->n == HL_SENTINEL_MAX)
        return apr_psprintf(p, "Sentinel '%s': at most %d Sentinels", token,
                            HL_SENTINEL_MAX);
    c->host[c->n] = host;
    c->port[c->n++] = port;
    return NULL;
}

/* Parses the credentials and the master's name (before the last '@' of
 * the authority, given as front, len bytes) into r and s. Returns NULL,
 * or what is wrong (from p). */
static const char *parse_master(apr_pool_t *p, hl_redis_conf_t *r,
                                hl_sentinel_conf_t *s, const char *front,
                                size_t len)
{
    char *cred = apr_pstrmemdup(p, front, len), *at = strrchr(cred, '@');
    char *colon, *m;

    s->master = at ? at + 1 : cred;
    if (!*s->master)
        return "no MASTER name before '@' (MASTER@HOST:PORT,...)";
    for (m = (char *)s->master; *m; ++m)
        if (!apr_isalnum(*m) && !strchr("._-", *m))
            return apr_psprintf(p, "master name '%s': letters, digits, "
                                "'.', '_' and '-' only", s->master);
    if (at) {
        *at = '\0';
        colon = strchr(cred, ':');
        if (colon) {
            *colon = '\0';
            r->user = *cred ? cred : NULL;
            r->password = colon + 1;
        }
        else
            r->password = cred;
    }
    return NULL;
}

static const char *sentinel_locate(const hl_redis_conf_t *c, int timeout_ms,
                                   char *host, size_t hostsz, int *port);

/* Parses redis-sentinel://[USER:PASSWORD@]MASTER@HOST:PORT[,HOST:PORT...][/DB]
 * into *out (a hl_redis_conf_t from p, locating the master through
 * Sentinel). Returns NULL, or what is wrong, naming the bad token. The
 * provider's parse. */
static const char *sentinel_parse(apr_pool_t *p, const char *url, void **out)
{
    hl_redis_conf_t *r = apr_pcalloc(p, sizeof(*r));
    hl_sentinel_conf_t *s = apr_pcalloc(p, sizeof(*s));
    const char *rest, *at, *slash, *why;
    char *list, *tok, *last;
    int i;

    if (strncmp(url, SCHEME, sizeof(SCHEME) - 1))
        return "use " SCHEME "[USER:PASSWORD@]MASTER@HOST:PORT[,HOST:PORT...][/DB]";
    rest = url + sizeof(SCHEME) - 1;
    if (strchr(rest, '?'))
        return apr_psprintf(p, "unknown option '%s' (no options after the "
                            "Sentinels)", strchr(rest, '?'));
    at = strrchr(rest, '@');
    if (!at)
        return "needs MASTER@HOST:PORT[,HOST:PORT...]";
    why = parse_master(p, r, s, rest, (size_t)(at - rest));
    if (why)
        return why;
    slash = strchr(at + 1, '/');
    list = slash ? apr_pstrmemdup(p, at + 1, (apr_size_t)(slash - at - 1))
                 : apr_pstrdup(p, at + 1);
    if (!*list)
        return "no Sentinel HOST:PORT after the master's name";
    for (tok = apr_strtok(list, ",", &last); tok; tok = apr_strtok(NULL, ",", &last))
        if ((why = parse_sentinel(p, s, tok)) != NULL)
            return why;
    if (slash) {
        char *end;
        long db = strtol(slash + 1, &end, 10);
        if (end == slash + 1 || *end || db < 0 || db > 65535)
            return apr_psprintf(p, "bad database number '%s'", slash + 1);
        r->db = (int)db;
    }
    r->prefix = "hl:";
    r->locate = sentinel_locate;
    r->locate_conf = s;
    r->label = apr_psprintf(p, "master %s (Sentinels %s:%d", s->master,
                            s->host[0], s->port[0]);
    for (i = 1; i < s->n; ++i)
        r->label = apr_psprintf(p, "%s,%s:%d", r->label, s->host[i], s->port[i]);
    r->label = apr_pstrcat(p, r->label, ")", NULL);
    *out = r;
    return NULL;
}

/* ---- finding the master --------------------------------------------------- */

/* Asks Sentinel i of s for the master's address within ms milliseconds.
 * Returns 1 with host (hostsz bytes) and *port filled, or 0. */
static int ask(const hl_sentinel_conf_t *s, int i, int ms, char *host,
               size_t hostsz, int *port)
{
    struct timeval tv;
    redisContext *cx;
    redisReply *reply;
    int ok = 0;

    tv.tv_sec = ms / 1000;
    tv.tv_usec = (ms % 1000) * 1000;
    cx = redisConnectWithTimeout(s->host[i], s->port[i], tv);
    if (!cx || cx->err) {
        if (cx)
            redisFree(cx);
        return 0;
    }
    redisSetTimeout(cx, tv);
    reply = redisCommand(cx, "SENTINEL get-master-addr-by-name %s", s->master);
    if (reply && reply->type == REDIS_REPLY_ARRAY && reply->elements == 2
        && reply->element[0]->type == REDIS_REPLY_STRING
        && reply->element[1]->type == REDIS_REPLY_STRING
        && reply->element[0]->len < hostsz) {
        *port = atoi(reply->element[1]->str);
        memcpy(host, reply->element[0]->str, reply->element[0]->len);
        host[reply->element[0]->len] = '\0';
        ok = *port > 0 && *port <= 65535 && *host;
    }
    if (reply)
        freeReplyObject(reply);
    redisFree(cx);
    return ok;
}

/* The configuration's locate (hl_redis_conf_t): asks the Sentinels in
 * turn, the one that answered last first, all within timeout_ms. Returns
 * NULL with host and *port set, or a static reason. Logs a master whose
 * address changed. */
static const char *sentinel_locate(const hl_redis_conf_t *c, int timeout_ms,
                                   char *host, size_t hostsz, int *port)
{
    const hl_sentinel_conf_t *s = c->locate_conf;
    int64_t deadline = hl_mono_ms() + timeout_ms;
    int k;

    for (k = 0; k < s->n; ++k) {
        int i = (first + k) % s->n;
        int64_t left = deadline - hl_mono_ms();

        if (left <= 0)
            break;
        if (!ask(s, i, (int)left, host, hostsz, port))
            continue;
        first = i;
        if (last_port && (last_port != *port || strcmp(last_host, host)))
            ap_log_error(APLOG_MARK, APLOG_NOTICE, 0, sserver,
                         "HL02801: Redis Sentinel: master %s moved from %s:%d "
                         "to %s:%d (a failover): counting there", s->master,
                         last_host, last_port, host, *port);
        apr_cpystrn(last_host, host, sizeof(last_host));
        last_port = *port;
        return NULL;
    }
    return "no Sentinel names the master";
}

/* The provider's post_config: the Redis store's, with this file's server
 * for the log. */
static int sentinel_post_config(apr_pool_t *pconf, server_rec *s, void *conf)
{
    sserver = s;
    return hl_redis_post_config(pconf, s, conf);
}

const hl_store_provider_t hl_sentinel_provider = {
    "redis-sentinel", sentinel_parse, sentinel_post_config, hl_redis_store,
    hl_conc_redis_take, hl_conc_redis_give
};
