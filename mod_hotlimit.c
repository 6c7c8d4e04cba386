/*
 * mod_hotlimit.c - the module record, its directives and configuration
 * merging, and hook registration.
 *
 * Merge rules (per directory): a scope's HotLimitQuota replaces its
 * parent's; HotLimitEngine, HotLimitDryRun, HotLimitHeaders,
 * HotLimitRouteFrom and the other per-directory settings are inherited
 * unless set again. Every per-directory record holds final values: a
 * fresh one starts from the defaults, and a merge takes what the child
 * sets (hl_dir_conf_t.set) and the parent's values for the rest, so the
 * use sites read the fields as they are. Per server: every field
 * is inherited from the main server unless the virtual host sets it;
 * HotLimitSlots, HotLimitPersist, HotLimitStore and the quota table
 * directives are read from the main server only.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "httpd.h"
#include "http_config.h"
#include "http_core.h"
#include "http_log.h"
#include "http_request.h"
#include "http_protocol.h"
#include "apr_lib.h"
#include "apr_strings.h"
#include "apr_file_io.h"
#include "apr_optional.h"
#include "apr_optional_hooks.h"
#include "mod_status.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_access.h"
#include "mod_hotlimit_ban_gate.h"
#include "mod_hotlimit_body.h"
#include "mod_hotlimit_device.h"
#include "mod_hotlimit_conc.h"
#include "mod_hotlimit_spool.h"
#include "mod_hotlimit_wait.h"
#include "mod_hotlimit_expr.h"
#include "mod_hotlimit_merge_memo.h"
#include "mod_hotlimit_usage.h"
#include "mod_hotlimit_modstatus.h"
#include "hl_reserve.h"
#include "mod_hotlimit_stores.h"
#include "mod_hotlimit_refusal_log.h"
#include "mod_hotlimit_names.h"
#include "mod_hotlimit_fleet.h"
#include "mod_hotlimit_status.h"
#include "mod_hotlimit_store_shm.h"
#include "mod_hotlimit_table.h"
#include "mod_hotlimit_upgrade.h"
#include "hl_render.h"
#include "hl_table.h"
#include "hl_json_path.h"
#include "hl_slotkey.h"

/* ---- configuration records ------------------------------------------- */

/* Returns a fresh per-directory record holding the defaults, nothing set
 * (the server's own record is one: a request outside every section reads
 * it unmerged); owned by p. */
static void *create_dir_conf(apr_pool_t *p, char *dir)
{
    hl_dir_conf_t *c = apr_pcalloc(p, sizeof(*c));
    (void)dir;
    hl_merge_memo_init(c, p);
    c->engine = 1;
    c->dry_run = 0;
    c->headers = HL_HEADERS_DRAFT;
    c->route_from = HL_ROUTE_FROM_PATH;
    c->body_limit = HL_DEFAULT_BODY_LIMIT;
    c->error_format = HL_ERROR_FORMAT_AUTO;
    c->log_refusals = HL_LOG_REFUSALS_FIRST;
    c->status = 0;
    c->body_overflow = HL_BODY_OVERFLOW_REFUSE;
    c->prompt_estimate = HL_PROMPT_ESTIMATE_DEFAULT;
    return c;
}

/* The child's value of field where it sets it (bit), else the parent's. */
#define MERGE_SET(field, bit) ((add->set & (bit)) ? add->field : base->field)

/* Returns 1 if c sets nothing (every field default or inherited). */
static int dir_conf_empty(const hl_dir_conf_t *c)
{
    return c->set == 0 && c->nquotas == 0 && c->device_name == NULL
           && !c->conc;
}

/* merge_dir_conf when no merge is kept. Not inlined on purpose: its frame
 * would cost every merge of every request, which mostly finds one kept. */
static __attribute__((noinline)) void *merge_anew(apr_pool_t *p,
                                                  void *basev, void *addv)
{
    const hl_dir_conf_t *base = basev, *add = addv, *quotas;
    hl_dir_conf_t *c;

    if (dir_conf_empty(base))
        return addv;
    if (dir_conf_empty(add))
        return basev;
    c = apr_pcalloc(p, sizeof(*c));
    hl_merge_memo_init(c, p);

    c->set = base->set | add->set;
    c->engine = MERGE_SET(engine, HL_DIR_SET_ENGINE);
    c->dry_run = MERGE_SET(dry_run, HL_DIR_SET_DRY_RUN);
    c->headers = MERGE_SET(headers, HL_DIR_SET_HEADERS);
    c->route_from = MERGE_SET(route_from, HL_DIR_SET_ROUTE_FROM);
    c->route_arg = MERGE_SET(route_arg, HL_DIR_SET_ROUTE_FROM);
    c->body_limit = MERGE_SET(body_limit, HL_DIR_SET_BODY_LIMIT);
    c->error_format = MERGE_SET(error_format, HL_DIR_SET_ERROR_FORMAT);
    c->body_overflow = MERGE_SET(body_overflow, HL_DIR_SET_BODY_OVERFLOW);
    c->prompt_estimate = MERGE_SET(prompt_estimate, HL_DIR_SET_PROMPT_ESTIMATE);
    quotas = add->nquotas > 0 ? add : base;   /* the nearest lines, whole */
    c->nquotas = quotas->nquotas;
    memcpy(c->quotas, quotas->quotas, sizeof(c->quotas));
    c->log_refusals = MERGE_SET(log_refusals, HL_DIR_SET_LOG_REFUSALS);
    c->status = MERGE_SET(status, HL_DIR_SET_STATUS);
    /* Device cookies: the nearest section that names one. */
    c->device_name = add->device_name ? add->device_name : base->device_name;
    c->device_max_age = add->device_name ? add->device_max_age
                                         : base->device_max_age;
    c->conc = add->conc ? add->conc : base->conc;   /* HotLimitConcurrency */
    return (void *)hl_merge_memo_keep(base, add, c);
}

/* Returns the merge of parent `basev` and child `addv`, owned by p. Records
 * never change once configured: two are merged once per process (what most
 * requests find); a side that sets nothing leaves the other as the merge. */
static void *merge_dir_conf(apr_pool_t *p, void *basev, void *addv)
{
    const hl_dir_conf_t *kept = hl_merge_memo_find(basev, addv);

    return kept ? (void *)kept : merge_anew(p, basev, addv);
}

/* Returns a fresh per-server record, all fields unset; owned by p. */
static void *create_server_conf(apr_pool_t *p, server_rec *s)
{
    hl_server_conf_t *c = apr_pcalloc(p, sizeof(*c));
    (void)s;
    c->slots = HL_UNSET;
    c->persist = HL_UNSET;
    c->ipv6_prefix = HL_UNSET;
    c->reload_interval = HL_UNSET;
    c->fetch_timeout = HL_UNSET;
    c->table_failure = HL_FAIL_UNSET;
    c->store_timeout = HL_UNSET;
    c->store_lease = HL_UNSET;
    c->quotas = apr_array_make(p, 4, sizeof(const hl_dir_quota_t *));
    return c;
}

#define MERGE_INT(field) (add->field != HL_UNSET ? add->field : base->field)

/* Returns the merge of the main server `basev` and a virtual host `addv`. */
static void *merge_server_conf(apr_pool_t *p, void *basev, void *addv)
{
    const hl_server_conf_t *base = basev, *add = addv;
    hl_server_conf_t *c = apr_pcalloc(p, sizeof(*c));

    c->slots = base->slots;            /* main server only */
    c->persist = base->persist;
    c->store = base->store;
    c->store_conf = base->store_conf;
    c->store_timeout = base->store_timeout;
    c->store_lease = base->store_lease;
    c->store_failure = base->store_failure;
    c->table_source = base->table_source;
    c->reload_interval = base->reload_interval;
    c->fetch_timeout = base->fetch_timeout;
    c->table_failure = base->table_failure;
    c->ipv6_prefix = MERGE_INT(ipv6_prefix);
    c->exempt = add->exempt ? add->exempt : base->exempt;
    c->error_template = add->error_template ? add->error_template
                                            : base->error_template;
    c->quotas = add->quotas;           /* each server lists its own */
    c->ban = add->ban ? add->ban : base->ban;
    c->ban_where = add->ban ? add->ban_where : base->ban_where;
    c->body_memory = add->body_memory ? add->body_memory : base->body_memory;
    /* Device cookies: a vhost's own HotLimitSecretFile, else the main's. */
    c->device_secret = add->device_secret ? add->device_secret
                                          : base->device_secret;
    c->device_secret_len = add->device_secret ? add->device_secret_len
                                              : base->device_secret_len;
    c->status_names = add->status_names ? add->status_names
                                        : base->status_names;
    return c;
}

/* ---- directive handlers: each returns NULL, or an error message naming
 *      the directive and the bad token (allocated from cmd->pool) ------- */

/* Returns the record of the main server or vhost being configured. */
static hl_server_conf_t *server_conf(cmd_parms *cmd)
{
    return ap_get_module_config(cmd->server->module_config, &hotlimit_module);
}

/* Parses a positive integer in [min, max]; returns NULL or an error. */
static const char *parse_int(cmd_parms *cmd, const char *arg, long min,
                             long max, int *out)
{
    char *end;
    long v;

    if (!arg[0] || !apr_isdigit(arg[0]))
        goto bad;
    v = strtol(arg, &end, 10);
    if (*end || v < min || v > max)
        goto bad;
    *out = (int)v;
    return NULL;
bad:
    return apr_psprintf(cmd->pool, "%s: bad value '%s' (a whole number from "
                        "%ld to %ld)", cmd->cmd->name, arg, min, max);
}

/*
 * Returns what a HotLimitQuota's counters are named after (allocated from
 * cmd->pool): a <Location> or <LocationMatch> is its path, so the sections
 * of one URL path share the counter they mean to. Any other section's
 * path does not identify it (<If> is "*If", <Files> is only the file name,
 * the same in every directory), so its file and line are added as a
 * hash: "index.php#1f2e3d4c". A section keeps its counters across
 * restarts as long as the lines above it do not move.
 */
static const char *section_scope(cmd_parms *cmd, int url_scope)
{
    const char *path = cmd->path ? cmd->path : "/";
    const char *where;

    if (url_scope || !cmd->directive || !cmd->directive->filename)
        return apr_pstrdup(cmd->pool, path);
    where = apr_psprintf(cmd->temp_pool, "%s:%d:%s",
                         cmd->directive->filename, cmd->directive->line_num,
                         path);
    return apr_psprintf(cmd->pool, "%s#%08x", path,
                        (unsigned)(hl_hash64(where, strlen(where), 0)
                                   & 0xffffffffu));
}

static const char *set_quota(cmd_parms *cmd, void *dconf, int argc,
                             char *const argv[])
{
    hl_dir_conf_t *d = dconf;
    hl_dir_quota_t *dq = apr_pcalloc(cmd->pool, sizeof(*dq));
    hl_policy_view_t views[HL_MAX_WINDOWS];
    char err[HL_ERR_MAX];
    int i;

    if (argc < 1)
        return apr_psprintf(cmd->pool, "%s: needs at least one COUNT/WINDOW, "
                            "e.g. 5/1m", cmd->cmd->name);
    if (d->nquotas >= HL_DIR_QUOTAS_MAX)
        return apr_psprintf(cmd->pool, "%s: '%s' would be line %d of one "
                            "section: at most %d (each line may hold several "
                            "windows)", cmd->cmd->name, argv[0],
                            HL_DIR_QUOTAS_MAX + 1, HL_DIR_QUOTAS_MAX);
    if (hl_quota_parse_args(&dq->quota, argc, (const char *const *)argv,
                            err, sizeof(err)) != 0)
        return apr_psprintf(cmd->pool, "%s: %s", cmd->cmd->name, err);
    if (hl_quota_after_response(&dq->quota) && !dq->quota.reserve)
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, cmd->server,
                     "HL01650: %s with cost= but no reserve= (%s:%d): "
                     "concurrent requests can spend more than the budget "
                     "(each is charged after its response), and an answer "
                     "whose cost cannot be read (no or an invalid cost "
                     "header, an unreadable usage) is charged 1; add "
                     "reserve=N or reserve=max_tokens",
                     cmd->cmd->name,
                     cmd->directive ? cmd->directive->filename : "?",
                     cmd->directive ? cmd->directive->line_num : 0);
    /* Only a URL scope may be shown to clients; a directory path would
     * reveal the server's file system. */
    dq->url_scope = cmd->directive && cmd->directive->parent
                    && !strncasecmp(cmd->directive->parent->directive,
                                    "<Location", 9);
    dq->scope = section_scope(cmd, dq->url_scope);
    dq->spec = "";
    for (i = 0; i < argc; ++i)
        dq->spec = apr_pstrcat(cmd->pool, dq->spec, i ? " " : "", argv[i], NULL);
    /* A second or third line in the section counts apart: its own
     * counters (even with the same by=) and statistics. */
    dq->count_scope = d->nquotas == 0 ? dq->scope
                      : apr_psprintf(cmd->pool, "%s#%d", dq->scope,
                                     d->nquotas + 1);
    dq->scope_len = strlen(dq->count_scope);
    dq->scope_hash = hl_table_route_hash(dq->count_scope, dq->scope_len);
    dq->main_cls = hl_limiter_class_of(HL_ORIGIN_DIRECTIVE, 0, dq->scope_hash);
    dq->main_stats_hash = hl_limiter_class_of(0, 0, dq->scope_hash);
    /* A key is tag + scope + separator + client (hl_slotkey_encode): with
     * the main server's empty tag and no client, what every key of this
     * quota there starts with. */
    dq->main_key_prefix_len = hl_slotkey_encode(NULL, 0, "", 0,
                                                dq->count_scope, dq->scope_len,
                                                "", 0);
    dq->main_key_prefix = apr_palloc(cmd->pool, dq->main_key_prefix_len + 1);
    hl_slotkey_encode((char *)dq->main_key_prefix, dq->main_key_prefix_len + 1,
                      "", 0, dq->count_scope, dq->scope_len, "", 0);
    /* What the headers and the environment say of this quota never
     * changes: render it once. */
    hl_render_quota_views(cmd->pool, &dq->quota, NULL, views);
    for (i = 0; i < dq->quota.nwindows; ++i) {
        dq->names[i] = views[i].name;
        dq->limits[i] = hl_render_count(cmd->pool, views[i].limit);
        dq->rl_prefix[i] = hl_render_ratelimit_prefix(cmd->pool, dq->names[i]);
        dq->rl_prefix_len[i] = strlen(dq->rl_prefix[i]);
    }
    dq->policy_header = hl_render_policy_header(cmd->pool, views,
                                                dq->quota.nwindows);
    d->quotas[d->nquotas++] = dq;
    dq->where = cmd->directive
                ? apr_psprintf(cmd->pool, "%s:%d", cmd->directive->filename,
                               cmd->directive->line_num) : "";
    /* Listed on the status page from the start; a .htaccess line is read
     * per request, from the request's pool, and is not. */
    dq->lasting = cmd->pool == cmd->server->process->pconf;
    if (dq->lasting)
        APR_ARRAY_PUSH(server_conf(cmd)->quotas, const hl_dir_quota_t *) = dq;
    return NULL;
}

/* HotLimitConcurrency N [by=KEY] [norm=HOW] (mod_hotlimit_conc.c): named
 * after its section as HotLimitQuota is. */
static const char *set_concurrency(cmd_parms *cmd, void *dconf, int argc,
                                   char *const argv[])
{
    int url_scope = cmd->directive && cmd->directive->parent
                    && !strncasecmp(cmd->directive->parent->directive,
                                    "<Location", 9);

    return hl_conc_configure(cmd, dconf, section_scope(cmd, url_scope),
                             url_scope, argc, (const char *const *)argv);
}

static const char *set_engine(cmd_parms *cmd, void *dconf, int on)
{
    (void)cmd;
    ((hl_dir_conf_t *)dconf)->engine = on;
    ((hl_dir_conf_t *)dconf)->set |= HL_DIR_SET_ENGINE;
    return NULL;
}

static const char *set_dry_run(cmd_parms *cmd, void *dconf, int on)
{
    (void)cmd;
    ((hl_dir_conf_t *)dconf)->dry_run = on;
    ((hl_dir_conf_t *)dconf)->set |= HL_DIR_SET_DRY_RUN;
    return NULL;
}

/* HotLimitHeaders On|Off|FORMAT...: Off alone, else On (= draft) or one
 * or more of draft, openai, anthropic (HL_HEADERS_* bits). */
static const char *set_headers(cmd_parms *cmd, void *dconf, int argc,
                               char *const argv[])
{
    static const struct { const char *name; unsigned bits; } formats[] = {
        { "on", HL_HEADERS_DRAFT }, { "draft", HL_HEADERS_DRAFT },
        { "openai", HL_HEADERS_OPENAI }, { "anthropic", HL_HEADERS_ANTHROPIC },
    };
    unsigned bits = 0;
    int i;
    size_t k;

    if (argc == 0)
        return apr_psprintf(cmd->pool, "%s: give On, Off or one or more of "
                            "draft, openai, anthropic", cmd->cmd->name);
    for (i = 0; i < argc; ++i) {
        if (argc == 1 && !strcasecmp(argv[i], "off"))
            break;                                  /* bits 0 */
        for (k = 0; k < sizeof(formats) / sizeof(formats[0]); ++k)
            if (!strcasecmp(argv[i], formats[k].name))
                break;
        if (k == sizeof(formats) / sizeof(formats[0]))
            return apr_psprintf(cmd->pool, "%s: '%s' is not On, Off, draft, "
                                "openai or anthropic (Off stands alone)",
                                cmd->cmd->name, argv[i]);
        bits |= formats[k].bits;
    }
    ((hl_dir_conf_t *)dconf)->headers = (int)bits;
    ((hl_dir_conf_t *)dconf)->set |= HL_DIR_SET_HEADERS;
    return NULL;
}

static const char *set_error_format(cmd_parms *cmd, void *dconf, const char *arg)
{
    static const char *const names[] = { "auto", "html", "json", "problem",
                                         "openai", "anthropic", NULL };
    int i;

    for (i = 0; names[i]; ++i)
        if (!strcasecmp(arg, names[i])) {
            ((hl_dir_conf_t *)dconf)->error_format = i;   /* hl_error_format_t */
            ((hl_dir_conf_t *)dconf)->set |= HL_DIR_SET_ERROR_FORMAT;
            return NULL;
        }
    return apr_psprintf(cmd->pool, "%s: '%s' is not auto, html, json, problem, "
                        "openai or anthropic",
                        cmd->directive->directive, arg);
}

static const char *set_route_from(cmd_parms *cmd, void *dconf, const char *arg)
{
    hl_dir_conf_t *d = dconf;

    if (!strcmp(arg, "path"))
        d->route_from = HL_ROUTE_FROM_PATH;
    else if (!strcmp(arg, "path-info"))
        d->route_from = HL_ROUTE_FROM_PATH_INFO;
    else if (!strncmp(arg, "query:", 6) && arg[6]) {
        d->route_from = HL_ROUTE_FROM_QUERY;
        d->route_arg = apr_pstrdup(cmd->pool, arg + 6);
    }
    else if (!strncmp(arg, "param:", 6) && arg[6]) {
        d->route_from = HL_ROUTE_FROM_PARAM;
        d->route_arg = apr_pstrdup(cmd->pool, arg + 6);
    }
    else if (!strncmp(arg, "json:", 5) && hl_json_path_check(arg + 5) == 0) {
        d->route_from = HL_ROUTE_FROM_JSON;    /* issue 20: JSON bodies */
        d->route_arg = apr_pstrdup(cmd->pool, arg + 5);
    }
    else
        return apr_psprintf(cmd->pool, "%s: bad value '%s' (use path, "
                            "query:NAME, param:NAME, json:PATH or path-info; "
                            "a JSON path is 1 to %d letters, digits, '_' or "
                            "'-', with dots between names)",
                            cmd->cmd->name, arg, HL_JSON_PATH_MAX);
    d->set |= HL_DIR_SET_ROUTE_FROM;
    return NULL;
}

/* Parses BYTES: a number, or with K or M (1024, 1024 * 1024), from min
 * to 64 MiB. Returns NULL with *out set, or an error message. */
static const char *parse_bytes(cmd_parms *cmd, const char *arg, long min,
                               long *out)
{
    char *end;
    apr_int64_t v, unit = 1;

    errno = 0;
    v = apr_strtoi64(arg, &end, 10);
    if (end != arg && (*end == 'K' || *end == 'k') && end[1] == '\0')
        unit = 1024, end++;
    else if (end != arg && (*end == 'M' || *end == 'm') && end[1] == '\0')
        unit = 1024 * 1024, end++;
    if (v >= 0 && v <= 67108864 / unit)
        v *= unit;
    else
        v = -1;                  /* out of range, never multiplied */
    if (end == arg || *end || errno == ERANGE || v < min || v > 67108864)
        return apr_psprintf(cmd->pool, "%s: bad value '%s' (a number of "
                            "bytes from %ld to 67108864, or with K or M)",
                            cmd->cmd->name, arg, min);
    *out = (long)v;
    return NULL;
}

/* HotLimitBodyLimit BYTES: 0 (never read a body) up to 64 MiB. */
static const char *set_body_limit(cmd_parms *cmd, void *dconf, const char *arg)
{
    hl_dir_conf_t *dc = dconf;
    const char *err = parse_bytes(cmd, arg, 0, &dc->body_limit);

    if (!err)
        dc->set |= HL_DIR_SET_BODY_LIMIT;
    return err;
}

/* A whole-number server directive: where it is stored and its range. */
typedef struct {
    apr_size_t offset;       /* of the int in hl_server_conf_t */
    long       min, max;
    int        global_only;  /* main server only */
} hl_int_directive_t;

static hl_int_directive_t slots_directive = {
    APR_OFFSETOF(hl_server_conf_t, slots), 64, 16 * 1024 * 1024, 1 };
static hl_int_directive_t reload_interval_directive = {
    APR_OFFSETOF(hl_server_conf_t, reload_interval), 1, 86400, 1 };
static hl_int_directive_t fetch_timeout_directive = {
    APR_OFFSETOF(hl_server_conf_t, fetch_timeout), 1, 300, 1 };
static hl_int_directive_t store_timeout_directive = {
    APR_OFFSETOF(hl_server_conf_t, store_timeout), 1, 60000, 1 };
static hl_int_directive_t store_lease_directive = {
    APR_OFFSETOF(hl_server_conf_t, store_lease), 0, 10000, 1 };
static hl_int_directive_t ipv6_prefix_directive = {
    APR_OFFSETOF(hl_server_conf_t, ipv6_prefix), 1, 128, 0 };

/* Sets the integer field cmd->info describes. */
static const char *set_server_int(cmd_parms *cmd, void *dconf, const char *arg)
{
    const hl_int_directive_t *d = cmd->info;
    const char *err = d->global_only ? ap_check_cmd_context(cmd, GLOBAL_ONLY)
                                     : NULL;
    (void)dconf;
    if (err)
        return err;
    return parse_int(cmd, arg, d->min, d->max,
                     (int *)(void *)((char *)server_conf(cmd) + d->offset));
}

static const char *set_persist(cmd_parms *cmd, void *dconf, int on)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);
    (void)dconf;
    if (err)
        return err;
    server_conf(cmd)->persist = on;
    return NULL;
}

static const char *add_exempt(cmd_parms *cmd, void *dconf, const char *arg)
{
    hl_server_conf_t *sc = server_conf(cmd);
    hl_cidr_t *c;
    (void)dconf;

    if (!sc->exempt)
        sc->exempt = apr_array_make(cmd->pool, 4, sizeof(hl_cidr_t));
    c = apr_array_push(sc->exempt);
    if (hl_cidr_parse(arg, c) != 0)
        return apr_psprintf(cmd->pool, "%s: bad address or CIDR block '%s'",
                            cmd->cmd->name, arg);
    return NULL;
}

static const char *set_error_template(cmd_parms *cmd, void *dconf,
                                      const char *arg)
{
    const char *path = ap_server_root_relative(cmd->pool, arg);
    apr_file_t *f;
    apr_finfo_t fi;
    apr_size_t n;
    char *buf;
    apr_status_t rv;
    (void)dconf;

    if (!path)
        return apr_psprintf(cmd->pool, "%s: bad path '%s'", cmd->cmd->name, arg);
    rv = apr_file_open(&f, path, APR_FOPEN_READ, APR_OS_DEFAULT, cmd->temp_pool);
    if (rv == APR_SUCCESS)
        rv = apr_file_info_get(&fi, APR_FINFO_SIZE, f);
    if (rv == APR_SUCCESS && fi.size > 1024 * 1024)
        rv = APR_EGENERAL;
    if (rv != APR_SUCCESS)
        return apr_psprintf(cmd->pool, "%s: cannot read '%s' (missing, or "
                            "larger than 1 MiB)", cmd->cmd->name, path);
    n = (apr_size_t)fi.size;
    buf = apr_palloc(cmd->pool, n + 1);
    rv = apr_file_read_full(f, buf, n, &n);
    apr_file_close(f);
    if (rv != APR_SUCCESS && rv != APR_EOF)
        return apr_psprintf(cmd->pool, "%s: cannot read '%s'",
                            cmd->cmd->name, path);
    buf[n] = '\0';
    server_conf(cmd)->error_template = buf;
    return NULL;
}

static const char *set_store(cmd_parms *cmd, void *dconf, const char *arg)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY), *why;
    (void)dconf;
    if (err)
        return err;
    why = hl_stores_parse(cmd->pool, arg, &server_conf(cmd)->store,
                          &server_conf(cmd)->store_conf);
    if (why)
        return apr_psprintf(cmd->pool, "%s: bad store '%s': %s",
                            cmd->cmd->name, arg, why);
    return NULL;
}

static const char *set_store_failure(cmd_parms *cmd, void *dconf, const char *arg)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);
    (void)dconf;
    if (err)
        return err;
    if (!strcmp(arg, "local"))
        server_conf(cmd)->store_failure = HL_STORE_FAIL_LOCAL;
    else if (!strcmp(arg, "open"))
        server_conf(cmd)->store_failure = HL_STORE_FAIL_OPEN;
    else if (!strcmp(arg, "closed"))
        server_conf(cmd)->store_failure = HL_STORE_FAIL_CLOSED;
    else
        return apr_psprintf(cmd->pool, "%s: bad value '%s' (use local, open "
                            "or closed)", cmd->cmd->name, arg);
    return NULL;
}

static const char *set_quota_table(cmd_parms *cmd, void *dconf, const char *arg)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);
    (void)dconf;
    if (err)
        return err;
    if (!*arg || strlen(arg) >= HL_TEXT_MAX)
        return apr_psprintf(cmd->pool, "%s: bad path or URL '%s'",
                            cmd->cmd->name, arg);
    if (!strncasecmp(arg, "http", 4) && !strstr(arg, "://"))
        return apr_psprintf(cmd->pool, "%s: bad URL '%s'", cmd->cmd->name, arg);
    if (strstr(arg, "://") && strncasecmp(arg, "http://", 7)
        && strncasecmp(arg, "https://", 8))
        return apr_psprintf(cmd->pool, "%s: unsupported URL scheme in '%s' "
                            "(use a file path, http:// or https://)",
                            cmd->cmd->name, arg);
    server_conf(cmd)->table_source = arg;
    return NULL;
}

/* HotLimitBan AFTER/WITHIN DURATION: the server's escalation. */
static const char *set_ban(cmd_parms *cmd, void *dconf, const char *rate,
                           const char *duration)
{
    hl_ban_t *b = apr_palloc(cmd->pool, sizeof(*b));
    char err[HL_ERR_MAX];
    (void)dconf;

    if (hl_ban_parse(b, rate, duration, err, sizeof(err)) != 0)
        return apr_psprintf(cmd->pool, "%s: %s", cmd->cmd->name, err);
    server_conf(cmd)->ban = b;
    server_conf(cmd)->ban_where = cmd->directive
        ? apr_psprintf(cmd->pool, "%s:%d", cmd->directive->filename,
                       cmd->directive->line_num) : "HotLimitBan";
    return NULL;
}

static const char *set_table_failure(cmd_parms *cmd, void *dconf, const char *arg)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);
    (void)dconf;
    if (err)
        return err;
    if (!strcmp(arg, "open"))
        server_conf(cmd)->table_failure = HL_FAIL_OPEN;
    else if (!strcmp(arg, "last-good"))
        server_conf(cmd)->table_failure = HL_FAIL_LAST_GOOD;
    else
        return apr_psprintf(cmd->pool, "%s: bad value '%s' (use open or "
                            "last-good)", cmd->cmd->name, arg);
    return NULL;
}

/* Request bodies (mod_hotlimit_body.c). */

/* HotLimitPromptEstimate BYTES_PER_TOKEN: 1 to 1024. Returns NULL, or an
 * error naming the directive and the value. */
static const char *set_prompt_estimate(cmd_parms *cmd, void *dconf,
                                       const char *arg)
{
    hl_dir_conf_t *dc = dconf;
    char *end;
    apr_int64_t v;

    errno = 0;
    v = apr_strtoi64(arg, &end, 10);
    if (end == arg || *end || errno == ERANGE || v < 1 || v > 1024)
        return apr_psprintf(cmd->pool, "%s: bad value '%s' (a whole number "
                            "of request body bytes per prompt token, from 1 "
                            "to 1024)", cmd->cmd->name, arg);
    dc->prompt_estimate = (int)v;
    dc->set |= HL_DIR_SET_PROMPT_ESTIMATE;
    return NULL;
}

/* HotLimitBodyMemory BYTES: 4K up to 64 MiB. */
static const char *set_body_memory(cmd_parms *cmd, void *dconf, const char *arg)
{
    (void)dconf;
    return parse_bytes(cmd, arg, 4096, &server_conf(cmd)->body_memory);
}

/* HotLimitBodyOverflow refuse|path. */
static const char *set_body_overflow(cmd_parms *cmd, void *dconf, const char *arg)
{
    hl_dir_conf_t *dc = dconf;

    if (!strcasecmp(arg, "refuse"))
        dc->body_overflow = HL_BODY_OVERFLOW_REFUSE;
    else if (!strcasecmp(arg, "path"))
        dc->body_overflow = HL_BODY_OVERFLOW_PATH;
    else
        return apr_psprintf(cmd->pool, "%s: bad value '%s' (use refuse or "
                            "path)", cmd->cmd->name, arg);
    dc->set |= HL_DIR_SET_BODY_OVERFLOW;
    return NULL;
}

static const command_rec hotlimit_cmds[] = {
    AP_INIT_FLAG("HotLimitEngine", set_engine, NULL, RSRC_CONF | ACCESS_CONF | OR_LIMIT,
                 "On|Off: Off exempts this scope from every limit"),
    AP_INIT_TAKE_ARGV("HotLimitQuota", set_quota, NULL, ACCESS_CONF | OR_LIMIT,
                      "COUNT/WINDOW [COUNT/WINDOW...] [by=KEY] [algo=ALGO] "
                      "[burst=N] [count=WHAT] [cost=1|header:NAME|usage] "
                      "[reserve=N|max_tokens[:DEFAULT]]"),
    AP_INIT_FLAG("HotLimitDryRun", set_dry_run, NULL, RSRC_CONF | ACCESS_CONF | OR_LIMIT,
                 "On|Off: count and log, but never reject"),
    AP_INIT_TAKE_ARGV("HotLimitHeaders", set_headers, NULL,
                      RSRC_CONF | ACCESS_CONF | OR_LIMIT,
                      "On|Off|FORMAT...: rate-limit headers, FORMAT one or "
                      "more of draft (RateLimit-Policy, RateLimit; = On), "
                      "openai (x-ratelimit-*), anthropic (anthropic-ratelimit-*)"),
    AP_INIT_TAKE1("HotLimitErrorFormat", set_error_format, NULL,
                  RSRC_CONF | ACCESS_CONF | OR_LIMIT,
                  "auto|html|json|problem|openai|anthropic: the 429 body by "
                  "Accept, or always this form"),
    AP_INIT_TAKE1("HotLimitRouteFrom", set_route_from, NULL, RSRC_CONF | ACCESS_CONF | OR_LIMIT,
                  "path|query:NAME|param:NAME|path-info: where the route "
                  "comes from"),
    AP_INIT_TAKE1("HotLimitBodyLimit", set_body_limit, NULL, RSRC_CONF | ACCESS_CONF | OR_LIMIT,
                  "the most bytes of a request body read for param: (default 8M)"),
    AP_INIT_TAKE1("HotLimitSlots", set_server_int, &slots_directive, RSRC_CONF,
                  "capacity of the shared counter table (default "
                  APR_STRINGIFY(HL_DEFAULT_SLOTS) ")"),
    AP_INIT_FLAG("HotLimitPersist", set_persist, NULL, RSRC_CONF,
                 "On|Off: keep counters across a full stop/start"),
    AP_INIT_TAKE1("HotLimitIPv6Prefix", set_server_int, &ipv6_prefix_directive, RSRC_CONF,
                  "bits of an IPv6 address that identify one client (default "
                  APR_STRINGIFY(HL_DEFAULT_V6_PREFIX) ")"),
    AP_INIT_ITERATE("HotLimitExempt", add_exempt, NULL, RSRC_CONF,
                    "client addresses or CIDR blocks never limited"),
    AP_INIT_TAKE1("HotLimitErrorTemplate", set_error_template, NULL, RSRC_CONF,
                  "HTML template file for the 429 page"),
    AP_INIT_TAKE1("HotLimitStore", set_store, NULL, RSRC_CONF,
                  "shm | redis://[USER:PASSWORD@]HOST:PORT[/DB][?prefix=P] | "
                  "unix:/PATH | redis-sentinel://[USER:PASSWORD@]MASTER@"
                  "HOST:PORT[,HOST:PORT...][/DB]: where counters live"),
    AP_INIT_TAKE1("HotLimitStoreTimeout", set_server_int, &store_timeout_directive,
                  RSRC_CONF, "the longest a request waits for a remote store, ms "
                  "(default " APR_STRINGIFY(HL_DEFAULT_STORE_TIMEOUT) ")"),
    AP_INIT_TAKE1("HotLimitStoreLease", set_server_int, &store_lease_directive,
                  RSRC_CONF, "the most requests of one hot key a child may admit "
                  "per Redis round trip (0, the default: every decision asks Redis)"),
    AP_INIT_TAKE1("HotLimitStoreFailure", set_store_failure, NULL, RSRC_CONF,
                  "local|open|closed: what decides while a remote store cannot"),
    AP_INIT_TAKE1("HotLimitQuotaTable", set_quota_table, NULL, RSRC_CONF,
                  "JSON quota table: a file path or an http(s) URL"),
    AP_INIT_TAKE1("HotLimitReloadInterval", set_server_int, &reload_interval_directive, RSRC_CONF,
                  "seconds between quota table reloads (default "
                  APR_STRINGIFY(HL_DEFAULT_RELOAD_INTERVAL) ")"),
    AP_INIT_TAKE1("HotLimitFetchTimeout", set_server_int, &fetch_timeout_directive, RSRC_CONF,
                  "whole-transfer timeout of a table fetch in seconds (default "
                  APR_STRINGIFY(HL_DEFAULT_FETCH_TIMEOUT) ")"),
    AP_INIT_TAKE2("HotLimitBan", set_ban, NULL, RSRC_CONF,
                  "AFTER/WITHIN DURATION: a client refused AFTER times within "
                  "WITHIN is banned from the server for DURATION"),
    AP_INIT_TAKE1("HotLimitTableFailure", set_table_failure, NULL, RSRC_CONF,
                  "last-good|open: what a table that can't be loaded does "
                  "(default last-good: the last valid table stays)"),
    /* Log flood and status scope (issue 18). HotLimitStatus has no
     * override class: never from .htaccess. */
    AP_INIT_TAKE1("HotLimitLogRefusals", hl_refusal_log_set, NULL,
                  RSRC_CONF | ACCESS_CONF | OR_LIMIT,
                  "first|all|off: which refusals are logged (default first: "
                  "the first of each key per window, then a summary per key "
                  "every 10 s at most)"),
    AP_INIT_TAKE1("HotLimitLogRate", hl_refusal_log_rate_set, NULL, RSRC_CONF,
                  "under HotLimitLogRefusals first, the most full refusal "
                  "lines the whole server writes a second (1-100000, "
                  "default 10); the rest are summed every 10 s"),
    AP_INIT_FLAG("HotLimitStatus", hl_status_set, NULL, RSRC_CONF | ACCESS_CONF,
                 "On: the hotlimit-status handler answers in this scope, "
                 "which is never limited or banned (default Off: 404)"),
    AP_INIT_FLAG("HotLimitStatusNames", hl_names_set, NULL, RSRC_CONF,
                 "On (default): the status page and ?json name account keys "
                 "by the value the client sent (first 64 bytes, kept for "
                 "keys refused or at their limit); Off: hashes only"),
    /* Request bodies (mod_hotlimit_body.c): */
    AP_INIT_TAKE1("HotLimitBodyMemory", set_body_memory, NULL, RSRC_CONF,
                  "the most bytes of one request body held in memory; the "
                  "rest is spooled to a temporary file (default 64K)"),
    AP_INIT_TAKE1("HotLimitBodyOverflow", set_body_overflow, NULL,
                  RSRC_CONF | ACCESS_CONF | OR_LIMIT,
                  "refuse|path: a body over HotLimitBodyLimit gets 413 "
                  "(refuse, the default), or the parameter is read from the "
                  "query alone (path)"),
    AP_INIT_TAKE1("HotLimitSpoolLimit", hl_spool_set_limit, NULL, RSRC_CONF,
                  "the most bytes of request bodies the whole server spools "
                  "to disk at once; beyond it a body gets 503 (default 512M)"),
    AP_INIT_TAKE1("HotLimitPromptEstimate", set_prompt_estimate, NULL,
                  RSRC_CONF | ACCESS_CONF | OR_LIMIT,
                  "request body bytes per prompt token for reserve=max_tokens "
                  "(default 4; 1: one token per byte)"),
    /* Device cookies (mod_hotlimit_device.c) */
    AP_INIT_TAKE2("HotLimitDeviceCookie", hl_device_set_cookie, NULL,
                  RSRC_CONF | ACCESS_CONF | OR_LIMIT,
                  "NAME DURATION: a successful login earns a cookie that keeps "
                  "this browser out of the account's shared lockout"),
    AP_INIT_TAKE1("HotLimitSecretFile", hl_device_set_secret_file, NULL, RSRC_CONF,
                  "file holding the device cookies' HMAC key (32 bytes or more; "
                  "default: generated in DefaultRuntimeDir)"),
    /* HotLimitConcurrency (mod_hotlimit_conc.c) */
    AP_INIT_TAKE_ARGV("HotLimitConcurrency", set_concurrency, NULL,
                      ACCESS_CONF | OR_LIMIT,
                      "N [by=KEY] [norm=HOW] [queue=Q] [wait=DURATION]: at "
                      "most N requests of one key in flight at once in this "
                      "scope; up to Q more wait in line for a slot"),
    AP_INIT_TAKE1("HotLimitMaxWaiting", hl_wait_set_max, NULL, RSRC_CONF,
                  "the most requests the whole server holds at once for "
                  "queue= and delay= (default 10% of MaxRequestWorkers)"),
    { NULL }
};

/* ---- hooks ------------------------------------------------------------ */

static int hl_pre_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp)
{
    int rc;

    (void)plog;
    (void)ptemp;
    hl_wait_pre_config();       /* HotLimitMaxWaiting (issue 26) */
    rc = hl_store_shm_pre_config(pconf);
    return rc == OK ? hl_table_pre_config(pconf) : rc;
}

/*
 * Resolves, once, what the rest of the module would otherwise work out at
 * every use: each setting left unset takes its default (the one place the
 * defaults are applied), and the tag that keeps a virtual
 * host's counters apart ("host:port", "" for the main server), with its
 * hash. Allocates from pconf; never fails.
 */
static void resolve_servers(apr_pool_t *pconf, server_rec *main_server)
{
    server_rec *s;

    for (s = main_server; s; s = s->next) {
        hl_server_conf_t *sc = ap_get_module_config(s->module_config,
                                                    &hotlimit_module);
        sc->v6_prefix = sc->ipv6_prefix != HL_UNSET ? sc->ipv6_prefix
                                                    : HL_DEFAULT_V6_PREFIX;
        if (sc->slots == HL_UNSET)
            sc->slots = HL_DEFAULT_SLOTS;
        if (sc->persist == HL_UNSET)
            sc->persist = 1;
        if (sc->reload_interval == HL_UNSET)
            sc->reload_interval = HL_DEFAULT_RELOAD_INTERVAL;
        if (sc->fetch_timeout == HL_UNSET)
            sc->fetch_timeout = HL_DEFAULT_FETCH_TIMEOUT;
        if (sc->table_failure == HL_FAIL_UNSET)
            sc->table_failure = HL_FAIL_LAST_GOOD;
        if (sc->store_timeout == HL_UNSET)
            sc->store_timeout = HL_DEFAULT_STORE_TIMEOUT;
        if (sc->store_failure == HL_STORE_FAIL_UNSET)
            sc->store_failure = HL_STORE_FAIL_LOCAL;
        if (sc->store_lease == HL_UNSET)
            sc->store_lease = 0;
        if (s->is_virtual) {
            sc->tag = apr_psprintf(pconf, "%s:%u",
                                   s->server_hostname ? s->server_hostname : "",
                                   s->addrs ? (unsigned)s->addrs->host_port
                                            : (unsigned)s->port);
            sc->tag_len = strlen(sc->tag);
            sc->tag_hash = hl_table_route_hash(sc->tag, sc->tag_len) | 1;
        }
        else {
            sc->tag = "";
            sc->tag_len = 0;
            sc->tag_hash = 0;
        }
    }
}

static int hl_post_config(apr_pool_t *pconf, apr_pool_t *plog,
                          apr_pool_t *ptemp, server_rec *s)
{
    (void)plog;
    (void)ptemp;
    int rc;

    if (ap_state_query(AP_SQ_MAIN_STATE) == AP_SQ_MS_CREATE_PRE_CONFIG)
        return OK;
    resolve_servers(pconf, s);
    hl_upgrade_init();
    rc = hl_store_shm_post_config(pconf, s);
    if (rc == OK)
        rc = hl_stores_post_config(pconf, s);
    if (rc == OK)
        rc = hl_table_post_config(pconf, ptemp, s);
    if (rc == OK)
        rc = hl_device_post_config(pconf, s);
    if (rc == OK)
        rc = hl_conc_post_config(pconf, s);
    return rc;
}

/*
 * check_config: runs after the configuration is read, in `apachectl
 * configtest` as well as before every start and restart, so what would
 * make the start fail is reported here, before a reload takes a running
 * server down. Returns OK, or !OK after logging what is missing.
 */
static int hl_check_config(apr_pool_t *pconf, apr_pool_t *plog,
                           apr_pool_t *ptemp, server_rec *s)
{
    const hl_server_conf_t *sc = ap_get_module_config(s->module_config,
                                                      &hotlimit_module);
    hl_watchdog_fns_t watchdog;
    const char *why;
    int rc = OK;
    (void)pconf;
    (void)plog;

    if (!sc->table_source)
        return OK;
    if (!hl_table_slotmem()) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s,
                     "HL00010: " HL_TABLE_NEEDS_SLOTMEM);
        rc = !OK;
    }
    if (!hl_table_watchdog(&watchdog)) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s,
                     "HL00011: " HL_TABLE_NEEDS_WATCHDOG);
        rc = !OK;
    }
    /* An unreadable table fails the test, so `apachectl graceful` (which
     * tests first) refuses to restart; a real start goes on and applies
     * HotLimitTableFailure, as for a table that breaks later. */
    if (hl_table_check_source(ptemp, sc->table_source, &why) != APR_SUCCESS) {
        int testing = ap_state_query(AP_SQ_RUN_MODE) == AP_SQ_RM_CONFIG_TEST;
        ap_log_error(APLOG_MARK, testing ? APLOG_EMERG : APLOG_WARNING, 0, s,
                     "HL00012: HotLimitQuotaTable: %s", why);
        if (testing)
            rc = !OK;
    }
    return rc;
}

static void hl_child_init(apr_pool_t *pchild, server_rec *s)
{
    hl_store_shm_child_init(pchild, s);
    hl_table_child_init(pchild, s);
    hl_conc_child_init(pchild, s);
}

static void register_hooks(apr_pool_t *p)
{
    static const char *const after_remoteip[] = { "mod_remoteip.c", NULL };
    static const char *const before_watchdog[] = { "mod_watchdog.c", NULL };
    static const char *const after_dir[] = { "mod_dir.c", NULL };
    hl_stores_register(p);     /* HotLimitStore's providers, by scheme */
    ap_hook_pre_config(hl_pre_config, NULL, NULL, APR_HOOK_MIDDLE);
    /* The table reloader registers with mod_watchdog before its own
     * post_config starts the watchdog threads. */
    ap_hook_post_config(hl_post_config, NULL, before_watchdog, APR_HOOK_MIDDLE);
    ap_hook_check_config(hl_check_config, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_child_init(hl_child_init, NULL, NULL, APR_HOOK_MIDDLE);
    /* Before Require and authentication, so refused brute-force attempts
     * are counted too; mod_remoteip has set the client address already
     * (post_read_request). */
    ap_hook_check_access(hl_access_checker, after_remoteip, NULL,
                         APR_HOOK_MIDDLE, AP_AUTH_INTERNAL_PER_CONF);
    /* HotLimitConcurrency: a slot is taken before the quotas count, so a
     * request refused for it spends no quota. */
    ap_hook_check_access(hl_conc_check_access, after_remoteip, NULL,
                         APR_HOOK_MIDDLE - 1, AP_AUTH_INTERNAL_PER_CONF);
    ap_hook_fixups(hl_conc_fixups, after_dir, NULL, APR_HOOK_LAST);
    ap_hook_protocol_switch(hl_conc_protocol_switch, NULL, NULL,
                            APR_HOOK_FIRST);
    hl_conc_register();
    /* After mod_dir's DirectoryIndex fast redirect (a LAST fixup), so the
     * index file's quotas are decided too (and by=user quotas, now that
     * authentication has set REMOTE_USER). */
    ap_hook_fixups(hl_fixups, after_dir, NULL, APR_HOOK_LAST);
    ap_hook_log_transaction(hl_log_transaction, NULL, NULL, APR_HOOK_MIDDLE);
    hl_body_register();
    hl_spool_register();        /* HotLimitSpoolLimit (issue 25) */
    hl_body_set_ban_check(hl_ban_gate_banned);
    hl_refusal_log_register();
    hl_names_register();        /* HotLimitStatusNames (issue 27) */
    hl_fleet_register();        /* the cluster-wide view (issue 28) */
    hl_expr_register();
    hl_usage_register();        /* cost=usage (issue 19) */
    hl_device_register();
    ap_hook_handler(hl_status_handler, NULL, NULL, APR_HOOK_MIDDLE);
    /* The counters' start time, for uptime; a section in mod_status's
     * server-status when mod_status is loaded (optional hook). */
    ap_hook_post_config(hl_status_post_config, NULL, NULL, APR_HOOK_MIDDLE);
    APR_OPTIONAL_HOOK(ap, status_hook, hl_modstatus_hook, NULL, NULL,
                      APR_HOOK_MIDDLE);
}

AP_DECLARE_MODULE(hotlimit) = {
    STANDARD20_MODULE_STUFF,
    create_dir_conf,
    merge_dir_conf,
    create_server_conf,
    merge_server_conf,
    hotlimit_cmds,
    register_hooks,
    0                       /* flags: merge per-dir configs as usual */
};
