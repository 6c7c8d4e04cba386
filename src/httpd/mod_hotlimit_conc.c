/*
 * mod_hotlimit_conc.c - HotLimitConcurrency N [by=KEY] [norm=HOW]: at most
 * N requests of one key in flight at once in a scope (e.g. 2 LLM streams
 * per API key).
 *
 * Where the counts live. One shared-memory segment per parent process,
 * made at its first post_config from the process pool (not pconf), so it
 * outlives graceful restarts: old children finishing their requests and
 * new children count in the same table. It holds a process-shared robust
 * pthread mutex and the holders' table (hl_conc.h): one record per key
 * and holder process. A robust mutex, because a child may be killed at
 * any moment, even inside the few instructions the lock covers: the next
 * locker gets EOWNERDEAD and carries on.
 *
 * Taking and giving back. A slot is taken at the access checker (before
 * the quotas, so a refused request spends no quota; a key the client sends
 * -- param:, json:, header:, cookie: -- once the request body has been
 * received in full, hl_body_whole), for by=user at
 * fixups (REMOTE_USER is known there), once per scope per client request
 * (internal redirects and subrequests share it: noted on the client's
 * first request_rec's pool). It is given back by a cleanup on that pool,
 * which httpd runs whenever the request ends: response sent, client
 * gone, timeout, error; and sooner by an output filter when the
 * response's end (EOS) passes it, before its last bytes are written, so
 * a client that sends its next request once the answer has arrived
 * finds the slot free (the cleanup then has nothing left). A process that dies holding slots never runs it:
 * when a key is at its limit, its other holders are tested (kill(pid, 0),
 * then /proc/PID/stat: a zombie is dead, and a start time other than the
 * one recorded is a new process that reused the pid) and the dead ones'
 * slots are given back; the status handler reaps every dead holder.
 *
 * Waiting (queue=Q): a request that finds every slot of its key taken,
 * or others already in line for it, joins the key's line (hl_wait.h, in
 * the same segment, under the same lock) unless Q wait already or the
 * server holds HotLimitMaxWaiting; it then sleeps in small steps watching
 * its client socket, and takes a slot once it is first in line and one
 * is free. A client that goes away leaves the line (DONE, HL02651); one
 * that waited wait= is refused.
 *
 * Refused: 429 through hl_respond_reject, logged (HL01500; dry run
 * HL01501), with Retry-After the scope's moving estimate of how long a
 * slot is held, spread between refused clients (hl_conc_retry_after_s). Concurrency refusals never count toward
 * HotLimitBan. With the Redis store the slots stay per server (README).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "httpd.h"
#include "http_config.h"
#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"
#include "apr_shm.h"
#include "apr_strings.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_answer.h"
#include "mod_hotlimit_key.h"
#include "mod_hotlimit_body.h"
#include "mod_hotlimit_conc.h"
#include "mod_hotlimit_stores.h"
#include "mod_hotlimit_refusal_log.h"
#include "mod_hotlimit_respond.h"
#include "mod_hotlimit_table.h"
#include "hl_conc.h"
#include "hl_hash.h"
#include "hl_quota_by.h"
#include "hl_render.h"
#include "hl_wait.h"
#include "mod_hotlimit_wait.h"

APLOG_USE_MODULE(hotlimit);

#define HL_CONC_CAPACITY   4096     /* holder records (key x process) */
#define HL_CONC_TAKEN_MAX  4        /* scopes one client request holds */
#define HL_CONC_POOL_KEY   "hotlimit-conc-segment"
#define HL_CONC_NOTE_KEY   "hotlimit-conc-taken"
#define HL_CONC_WAIT_MS    30000    /* wait= by default */
#define HL_CONC_REAP_MS    1000     /* a waiter reaps dead ones this often */

/* The shared segment: the lock, then the table (its records 64-aligned). */
typedef struct {
    pthread_mutex_t mutex;
    char            pad[64 - sizeof(pthread_mutex_t) % 64];
} hl_conc_head_t;

static hl_conc_head_t  *head;      /* NULL: no segment (admit) */
static hl_conc_table_t *table;
static hl_wait_table_t *waits;    /* the requests held: queue= and delay= */
static hl_conc_holder_t me;        /* this process, set in child_init */

/* What one client request holds: the keys it took, one per scope; and
 * what the last look was at. */
typedef struct {
    int         n;
    uint64_t    keys[HL_CONC_TAKEN_MAX];
    struct hl_conc_release *rel[HL_CONC_TAKEN_MAX];  /* their cleanups */
    const void *conf;           /* per_dir_config last looked at */
    int         user_pending;   /* a by=user key waits for fixups */
    int         filtered;       /* the end-of-response filter is on */
} hl_conc_taken_t;

/* A slot to give back when its request's pool goes. */
typedef struct hl_conc_release {
    uint64_t              key;
    unsigned              scope;   /* its figures (how long slots are held) */
    int64_t               since;   /* when it was taken (monotonic ms) */
    const hl_store_provider_t *store;  /* the provider holding it too */
    hl_store_slot_t      *shared;  /* its slot in the shared store, or NULL */
} hl_conc_release_t;

/* 1 once this process has parsed a HotLimitConcurrency (the server
 * configuration before the fork, or an .htaccess during the directory
 * walk of the request it applies to): until then, and without a quota
 * table, a request has no slot to take and the hooks return at once. */
static int conc_directives;

static ap_filter_rec_t *end_filter_handle;

/* ---- configuration ------------------------------------------------------ */

/* Parses queue=Q into c. Returns 0, or -1 with a message in err. */
static int set_queue(hl_dir_conc_t *c, const char *v, char *err, size_t len)
{
    char *end;
    long q;

    errno = 0;
    q = strtol(v, &end, 10);
    if (errno || end == v || *end || q < 0 || q > HL_WAIT_MAX) {
        apr_snprintf(err, len, "bad queue '%s' (a whole number from 0 to %d)",
                     v, HL_WAIT_MAX);
        return -1;
    }
    c->queue = (uint32_t)q;
    return 0;
}

const char *hl_conc_configure(cmd_parms *cmd, void *dconf, const char *scope,
                              int url_scope, int argc, const char *const *argv)
{
    hl_dir_conf_t *d = dconf;
    hl_dir_conc_t *c = apr_pcalloc(cmd->pool, sizeof(*c));
    char err[HL_ERR_MAX], *end;
    long n;
    int i;

    if (argc < 1)
        return apr_psprintf(cmd->pool, "%s: needs N, the requests of one key "
                            "in flight at once, e.g. 2", cmd->cmd->name);
    errno = 0;
    n = strtol(argv[0], &end, 10);
    if (errno || end == argv[0] || *end || n < 1 || n > HL_CONC_LIMIT_MAX)
        return apr_psprintf(cmd->pool, "%s: bad value '%s' (a whole number "
                            "from 1 to %d)", cmd->cmd->name, argv[0],
                            HL_CONC_LIMIT_MAX);
    c->limit = (uint32_t)n;
    c->wait_ms = HL_CONC_WAIT_MS;
    hl_quota_init(&c->key);
    for (i = 1; i < argc; ++i) {
        int rc;
        if (!strncmp(argv[i], "by=", 3))
            rc = hl_quota_set_by(&c->key, argv[i] + 3, err, sizeof(err));
        else if (!strncmp(argv[i], "norm=", 5))
            rc = hl_quota_set_norm(&c->key, argv[i] + 5, err, sizeof(err));
        else if (!strncmp(argv[i], "queue=", 6))
            rc = set_queue(c, argv[i] + 6, err, sizeof(err));
        else if (!strncmp(argv[i], "wait=", 5))
            rc = hl_parse_duration_ms(argv[i] + 5, 1000, &c->wait_ms, err,
                                      sizeof(err));
        else {
            apr_snprintf(err, sizeof(err), "unknown token '%s' (use by=, "
                         "norm=, queue= or wait=)", argv[i]);
            rc = -1;
        }
        if (rc != 0)
            return apr_psprintf(cmd->pool, "%s: %s", cmd->cmd->name, err);
    }
    c->scope = scope;
    c->scope_len = strlen(scope);
    c->url_scope = url_scope;
    d->conc = c;
    conc_directives = 1;   /* this process parsed one (config or .htaccess) */
    return NULL;
}

/* ---- the segment and the lock ---------------------------------------------- */

int hl_conc_post_config(apr_pool_t *pconf, server_rec *s)
{
    apr_pool_t *keep = s->process->pool;
    size_t size = sizeof(hl_conc_head_t) + hl_conc_size(HL_CONC_CAPACITY)
                  + sizeof(hl_wait_table_t);
    pthread_mutexattr_t attr;
    apr_shm_t *shm = NULL;
    apr_status_t rv;
    void *base = NULL;
    (void)pconf;

    apr_pool_userdata_get(&base, HL_CONC_POOL_KEY, keep);
    if (!base) {
        rv = apr_shm_create(&shm, size, NULL, keep);
        if (rv != APR_SUCCESS) {
            ap_log_error(APLOG_MARK, APLOG_EMERG, rv, s,
                         "HL01504: HotLimitConcurrency: cannot make its "
                         "shared memory (%" APR_SIZE_T_FMT " bytes)", size);
            return !OK;
        }
        base = apr_shm_baseaddr_get(shm);
        memset(base, 0, size);
        pthread_mutexattr_init(&attr);
        pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
        pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
        pthread_mutex_init(&((hl_conc_head_t *)base)->mutex, &attr);
        pthread_mutexattr_destroy(&attr);
        hl_conc_init((char *)base + sizeof(hl_conc_head_t), HL_CONC_CAPACITY);
        apr_pool_userdata_set(base, HL_CONC_POOL_KEY, apr_pool_cleanup_null,
                              keep);
    }
    head = base;
    table = (hl_conc_table_t *)((char *)base + sizeof(hl_conc_head_t));
    waits = (hl_wait_table_t *)((char *)table + hl_conc_size(HL_CONC_CAPACITY));
    return OK;
}

/* Returns the start time of process pid (clock ticks since boot, field 22
 * of /proc/PID/stat), or 0 when it cannot be read; sets *zombie to 1 when
 * the process has exited and waits to be reaped. */
static uint64_t proc_start(pid_t pid, int *zombie)
{
    char path[64], buf[1024], *p;
    unsigned long long start = 0;
    char state = '?';
    FILE *f;
    size_t n;

    *zombie = 0;
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    f = fopen(path, "r");
    if (!f)
        return 0;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* The name in parentheses may hold spaces: fields start after ')'. */
    p = strrchr(buf, ')');
    if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
                     "%*u %*u %*d %*d %*d %*d %*d %*d %llu", &state,
                     &start) != 2)
        return 0;
    *zombie = state == 'Z' || state == 'X';
    return (uint64_t)start;
}

void hl_conc_child_init(apr_pool_t *pchild, server_rec *s)
{
    int zombie;
    (void)pchild;
    (void)s;

    me.pid = (int32_t)getpid();
    me.start = proc_start(getpid(), &zombie);
}

/* Returns 1 if holder (pid, start) still runs: hl_conc_alive_fn. */
static int holder_alive(int32_t pid, uint64_t start, void *ctx)
{
    int zombie = 0;
    uint64_t now_start;
    (void)ctx;

    if (pid == me.pid && start == me.start)
        return 1;
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
        return 0;
    now_start = proc_start((pid_t)pid, &zombie);
    if (zombie)
        return 0;
    /* Another process under a reused pid. Unknown start times (no /proc,
     * or one that cannot be read) count as the same process. */
    return start == 0 || now_start == 0 || now_start == start;
}

/* Takes the segment's lock. Returns 0, or an errno (logged, HL01503). */
static int conc_lock(server_rec *s)
{
    int rc = pthread_mutex_lock(&head->mutex);

    if (rc == EOWNERDEAD) {      /* its holder died inside: carry on */
        pthread_mutex_consistent(&head->mutex);
        rc = 0;
    }
    if (rc != 0)
        ap_log_error(APLOG_MARK, APLOG_ERR, rc, s,
                     "HL01503: HotLimitConcurrency: cannot take its lock; "
                     "admitting");
    return rc;
}

static void conc_unlock(void)
{
    pthread_mutex_unlock(&head->mutex);
}

/* ---- taking and giving back -------------------------------------------------- */

/* Pool cleanup of a client request: gives its slot back. Returns
 * APR_SUCCESS always. */
static apr_status_t give_back(void *data)
{
    const hl_conc_release_t *rel = data;

    if (conc_lock(NULL) == 0) {
        if (hl_conc_give(table, rel->key, &me))
            hl_conc_note_held(table, rel->scope, hl_mono_ms() - rel->since);
        conc_unlock();
    }
    if (rel->shared)
        rel->store->conc_give(rel->shared);
    return APR_SUCCESS;
}

/* Returns 1 if a refusal in scope should be logged under HotLimitLogRefusals
 * mode (HL_LOG_REFUSALS_*), setting *skipped to the
 * refusals of scope not logged since its last line. Under the lock. */
static int log_due(int mode, unsigned scope, uint32_t *skipped)
{
    *skipped = 0;
    if (mode == HL_LOG_REFUSALS_OFF)
        return 0;
    if (mode == HL_LOG_REFUSALS_ALL)
        return 1;
    return hl_conc_log_due(table, scope, hl_mono_ms(), skipped);
}

/* Gives back the local slot of key just taken for r under scope, which
 * Redis refused: counted as refused, not admitted. Returns log_due's
 * answer for the refusal (0 when the lock cannot be taken). */
static int give_local(request_rec *r, uint64_t key, unsigned scope, int mode,
                      uint32_t *skipped)
{
    int due;

    *skipped = 0;
    if (conc_lock(r->server) != 0)
        return 0;
    hl_conc_give(table, key, &me);
    if (scope < HL_CONC_SCOPES) {
        if (table->scopes[scope].admitted > 0)
            table->scopes[scope].admitted--;
        table->scopes[scope].refused++;
    }
    due = log_due(mode, scope, skipped);
    conc_unlock();
    return due;
}

/* Returns 1 if the whole table may be reaped at now (at most once a
 * second: a table full of live holders must not cost every request a
 * scan). Under the lock. */
static int reap_due(int64_t now)
{
    if (table->reaped_ms && now >= table->reaped_ms
        && now - table->reaped_ms < 1000)
        return 0;
    table->reaped_ms = now;
    return 1;
}

/* Returns what the client request of r holds (created from top's pool). */
static hl_conc_taken_t *taken_of(request_rec *top)
{
    void *v = NULL;

    apr_pool_userdata_get(&v, HL_CONC_NOTE_KEY, top->pool);
    if (!v) {
        v = apr_pcalloc(top->pool, sizeof(hl_conc_taken_t));
        apr_pool_userdata_setn(v, HL_CONC_NOTE_KEY, apr_pool_cleanup_null,
                               top->pool);
    }
    return v;
}

/* Gives back every slot the client request top holds now (running
 * their pool cleanups, so nothing is given back twice). */
static void give_back_all(request_rec *top)
{
    void *v = NULL;
    hl_conc_taken_t *taken;
    int i;

    apr_pool_userdata_get(&v, HL_CONC_NOTE_KEY, top->pool);
    taken = v;
    for (i = 0; taken && i < taken->n; ++i)
        apr_pool_cleanup_run(top->pool, taken->rel[i], give_back);
    if (taken)
        taken->n = 0;
}

/* Output filter: when the end of the response (EOS) reaches it, gives
 * back the client request's slots before passing the brigade on, then
 * leaves the chain. Returns what the next filter returns. */
static apr_status_t end_filter(ap_filter_t *f, apr_bucket_brigade *bb)
{
    apr_bucket *b;

    for (b = APR_BRIGADE_FIRST(bb); b != APR_BRIGADE_SENTINEL(bb);
         b = APR_BUCKET_NEXT(b))
        if (APR_BUCKET_IS_EOS(b)) {
            give_back_all(hl_client_request(f->r));
            ap_remove_output_filter(f);
            break;
        }
    return ap_pass_brigade(f->next, bb);
}

/* Returns 1 if t holds key already. */
static int holds(const hl_conc_taken_t *t, uint64_t key)
{
    int i;

    for (i = 0; i < t->n; ++i)
        if (t->keys[i] == key)
            return 1;
    return 0;
}

/* What a slot is asked under: a scope's HotLimitConcurrency or a table
 * rule's "concurrency". */
typedef struct {
    uint32_t          limit;
    uint32_t          queue;     /* queue=: 0 none (table rules) */
    uint32_t          wait_ms;   /* wait= */
    const hl_quota_t *key;       /* by= and norm= */
    const char       *scope;     /* section path or table route */
    int               url_scope; /* may be shown to clients */
    int               table;     /* 1: a table rule's */
    int               dry_run;
    int               log_mode;  /* HotLimitLogRefusals */
} hl_conc_ask_t;

/* Logs the refusal (or dry run) of r under a, key text key, and how many
 * refusals of its scope were not logged since the last line (skipped). */
static void log_refusal(request_rec *r, const hl_conc_ask_t *a,
                        const char *key, uint32_t skipped, long retry)
{
    const char *ua = apr_table_get(r->headers_in, "User-Agent");
    char ua_cut[HL_LOG_UA_MAX + 1];

    if (ua) {
        apr_cpystrn(ua_cut, ua, sizeof(ua_cut));
        ua = ap_escape_logitem(r->pool, ua_cut);
    }
    ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r,
                  "%s: %s client=%s route=%s key=%s limit=%u concurrent "
                  "retry_after=%ld user_agent=\"%s\" not_logged_since=%u",
                  a->dry_run ? "HL01501" : "HL01500",
                  a->dry_run ? "dry run, would reject" : "rejected",
                  r->useragent_ip, a->scope, ap_escape_logitem(r->pool, key),
                  (unsigned)a->limit, retry, ua ? ua : "-", (unsigned)skipped);
}

/* Sends the 429 for r, refused under a: Retry-After retry, no policy. */
static int refuse(request_rec *r, const hl_conc_ask_t *a, long retry)
{
    hl_match_t *m = apr_pcalloc(r->pool, sizeof(*m));

    m->item.quota = &m->quota_copy;    /* no window: nothing to describe */
    m->item.decision.retry_after_s = retry;
    m->route = a->url_scope ? a->scope : (r->uri ? r->uri : "/");
    m->scope = a->scope;
    return hl_respond_reject(r, m);
}

/* Returns 1 if q keys by values the client sends, alone or as a part (a
 * request may name any account with them), else 0. */
static int client_sent(const hl_quota_t *q)
{
    return hl_quota_keys_by(q, HL_BY_PARAM) || hl_quota_keys_by(q, HL_BY_JSON)
           || hl_quota_keys_by(q, HL_BY_HEADER)
           || hl_quota_keys_by(q, HL_BY_COOKIE);
}

/* Returns the Retry-After of a refusal of key hash in scope under a: the
 * scope's estimate, spread by its refusal count. Under the lock. */
static long retry_of(unsigned scope, const hl_conc_ask_t *a, uint64_t hash)
{
    uint64_t pos = scope < HL_CONC_SCOPES && table->scopes[scope].refused
                   ? table->scopes[scope].refused - 1 : 0;

    return hl_conc_retry_after_s(table, scope, a->limit, pos,
                                 hash ^ (pos * 0x9e3779b97f4a7c15ull));
}

/* Waits with ticket seq in key hash's line under a (scope: its figures)
 * until it is first and a slot is free, the client goes away or wait=
 * passes; leaves the line in every case. Returns 1 taken, -1 admitted
 * without a slot (the table is full, or the lock failed), 0 waited too
 * long (counted as refused, *retry set), 2 the client went away. */
static int wait_in_line(request_rec *r, const hl_conc_ask_t *a, uint64_t hash,
                        unsigned scope, uint64_t seq, long *retry)
{
    int64_t start = hl_mono_ms(), reaped = start, now;
    int rc = 0, gone;

    for (;;) {
        gone = hl_wait_step(r, HL_WAIT_STEP_MS);
        now = hl_mono_ms();
        if (conc_lock(r->server) != 0)
            return -1;
        if (now - reaped >= HL_CONC_REAP_MS || now < reaped) {
            hl_wait_reap(waits, holder_alive, NULL);   /* dead ones' places */
            reaped = now;
        }
        if (!gone && hl_wait_ahead(waits, hash, seq) == 0)
            rc = hl_conc_try(table, hash, &me, a->limit, scope, now,
                             holder_alive, NULL);
        if (rc == 0 && !gone && now - start < (int64_t)a->wait_ms) {
            conc_unlock();
            continue;
        }
        hl_wait_leave(waits, seq);
        if (rc == 0 && !gone) {
            if (scope < HL_CONC_SCOPES)
                table->scopes[scope].refused++;
            *retry = retry_of(scope, a, hash);
        }
        conc_unlock();
        return rc == 0 && gone ? 2 : rc;
    }
}

/* Under the lock: asks for a slot of key hash under a in scope, or a place
 * in its line (queue=): a request finding others in line goes behind
 * them. Returns hl_conc_take's answer; 0 with *seq set when it joined the
 * line (not counted as refused), 0 with *seq 0 when refused (*why: the
 * line's or the server's bound, 0 the limit alone). */
static int ask_or_join(const hl_conc_ask_t *a, uint64_t hash, unsigned scope,
                       uint64_t *seq, int *why)
{
    int lined = a->queue && !a->dry_run && hl_wait_count(waits, hash) > 0;
    int rc = lined ? 0 : hl_conc_take(table, hash, &me, a->limit, scope,
                                      hl_mono_ms(), holder_alive, NULL);

    if (rc < 0 && reap_due(hl_mono_ms())) {
        /* Full: dead holders of keys never at their limit may fill it. */
        hl_conc_reap(table, holder_alive, NULL);
        rc = hl_conc_take(table, hash, &me, a->limit, scope, hl_mono_ms(),
                          holder_alive, NULL);
    }
    *seq = 0;
    *why = 0;
    if (rc != 0 || !a->queue || a->dry_run)
        return rc;
    *seq = hl_wait_join(waits, hash, &me, a->queue, hl_wait_max(), why);
    if (scope < HL_CONC_SCOPES) {
        if (*seq && !lined)
            table->scopes[scope].refused--;    /* it waits: not refused */
        else if (!*seq && lined)
            table->scopes[scope].refused++;    /* refused without a take */
    }
    return 0;
}

/* Takes a slot for r under a (waiting for one in its line with queue=),
 * unless its client request holds one there already or this stage does
 * not decide its key. Returns DECLINED, the 429 outcome, or DONE when the
 * client went away while waiting. */
static int take_one(request_rec *r, const hl_conc_ask_t *a, int at_fixups,
                    hl_conc_taken_t *taken, request_rec *top)
{
    const hl_server_conf_t *sc;
    hl_conc_release_t *rel;
    const char *client, *key, *name;
    uint64_t hash, seq, seed = a->table ? HL_SEED_TABLE : HL_SEED_KEYS;
    size_t clen, klen;
    unsigned scope;
    uint32_t skipped = 0;
    int exempt, rc, why, due = 0;
    long retry = 1;

    if (a->key->by_user && !at_fixups)
        return DECLINED;       /* REMOTE_USER is set by fixups */
    /* A key the client sends: its body is received in full first, so a
     * trickled body holds no slot (and cannot hold someone else's). */
    if (client_sent(a->key) && (rc = hl_body_whole(r)) != DECLINED)
        return rc;
    client = hl_key_client_key(r, a->key, &clen, &exempt);
    if (exempt)
        return DECLINED;
    sc = ap_get_module_config(r->server->module_config, &hotlimit_module);
    name = sc->tag_len ? apr_pstrcat(r->pool, sc->tag, a->scope, NULL) : a->scope;
    key = hl_key_counter(r, sc, a->scope, strlen(a->scope), client, clen,
                         &klen);
    hash = hl_hash64(key, klen, seed) | 1;
    if (holds(taken, hash) || taken->n >= HL_CONC_TAKEN_MAX)
        return DECLINED;
    if (me.pid != (int32_t)getpid())
        hl_conc_child_init(NULL, NULL);   /* no child_init (-X) */

    if (conc_lock(r->server) != 0)
        return DECLINED;
    scope = hl_conc_scope(table, hl_hash64(name, strlen(name), seed) | 1,
                          name, a->table, a->limit);
    rc = ask_or_join(a, hash, scope, &seq, &why);
    if (rc == 0 && !seq) {
        due = log_due(a->log_mode, scope, &skipped);
        retry = retry_of(scope, a, hash);
    }
    conc_unlock();
    if (seq) {
        rc = wait_in_line(r, a, hash, scope, seq, &retry);
        if (rc == 2) {
            ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r,
                          "HL02651: HotLimitConcurrency: the client went away "
                          "while waiting in line; it left the queue route=%s",
                          a->scope);
            return DONE;
        }
        if (rc == 0 && conc_lock(r->server) == 0) {
            due = log_due(a->log_mode, scope, &skipped);
            conc_unlock();
        }
    }
    else if (why == HL_WAIT_SERVER_FULL && due)
        ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r,
                      "HL02650: HotLimitMaxWaiting (%u) reached: refused "
                      "instead of queued route=%s", hl_wait_max(), a->scope);

    if (rc == 1) {
        rel = apr_palloc(top->pool, sizeof(*rel));
        rel->key = hash;
        rel->scope = scope;
        rel->since = hl_mono_ms();
        rel->store = hl_stores_active();
        rel->shared = NULL;
        /* Shared with the other servers: the store says too. */
        if (rel->store->conc_take) {
            rel->shared = apr_palloc(top->pool, sizeof(*rel->shared));
            rc = rel->store->conc_take(r, hash, a->limit, rel->shared);
            if (rc != 1)
                rel->shared = NULL;     /* refused, or this server decided */
            if (rc == 0 && !a->dry_run) {
                if (give_local(r, hash, scope, a->log_mode, &skipped))
                    log_refusal(r, a, key, skipped, retry);
                return refuse(r, a, retry);
            }
        }
        taken->keys[taken->n] = hash;
        taken->rel[taken->n++] = rel;
        apr_pool_cleanup_register(top->pool, rel, give_back,
                                  apr_pool_cleanup_null);
        if (!taken->filtered) {
            taken->filtered = 1;
            ap_add_output_filter_handle(end_filter_handle, NULL, r,
                                        r->connection);
        }
        return DECLINED;
    }
    if (rc < 0) {
        ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r,
                      "HL01502: HotLimitConcurrency: its table is full (%d "
                      "holders); admitted without a slot route=%s",
                      HL_CONC_CAPACITY, a->scope);
        return DECLINED;
    }
    if (due)
        log_refusal(r, a, key, skipped, retry);
    return a->dry_run ? DECLINED : refuse(r, a, retry);
}

/* Takes the slots r needs: its scope's HotLimitConcurrency, then its
 * table rule's "concurrency". At fixups, only when something changed
 * since the access checker (a fast redirect: another configuration) or a
 * by=user key waits. Returns DECLINED, or the 429 outcome. */
static int take_slots(request_rec *r, int at_fixups)
{
    const hl_dir_conf_t *dc;
    request_rec *top;
    hl_conc_taken_t *taken;
    hl_conc_ask_t a;
    hl_quota_t rule;
    const char *route = NULL;
    int t, rc = DECLINED;

    if (!head || r->main
        || (r->prev && r->prev->status == HTTP_TOO_MANY_REQUESTS))
        return DECLINED;
    dc = ap_get_module_config(r->per_dir_config, &hotlimit_module);
    /* The status handler's scope (HotLimitStatus On) is never limited. */
    if (!dc || dc->engine == 0 || dc->status > 0
        || (!dc->conc && !hl_table_configured()))
        return DECLINED;
    top = hl_client_request(r);
    if (at_fixups) {
        void *v = NULL;
        apr_pool_userdata_get(&v, HL_CONC_NOTE_KEY, top->pool);
        taken = v;
        if (taken && taken->conf == (const void *)r->per_dir_config
            && !taken->user_pending)
            return DECLINED;
    }
    t = hl_answer_concurrency(r, &rule, &route);
    if (t < 0 || (!dc->conc && t == 0))
        return DECLINED;
    taken = taken_of(top);
    taken->conf = r->per_dir_config;
    taken->user_pending = !at_fixups
        && ((dc->conc && dc->conc->key.by_user)
            || (t > 0 && rule.by_user));
    if (dc->conc) {
        a.limit = dc->conc->limit;
        a.queue = dc->conc->queue;
        a.wait_ms = dc->conc->wait_ms;
        a.key = &dc->conc->key;
        a.scope = dc->conc->scope;
        a.url_scope = dc->conc->url_scope;
        a.table = 0;
        a.dry_run = dc->dry_run == 1;
        a.log_mode = dc->log_refusals;
        rc = take_one(r, &a, at_fixups, taken, top);
    }
    if (rc == DECLINED && t > 0) {
        a.limit = rule.concurrency;
        a.queue = 0;
        a.wait_ms = 0;
        a.key = &rule;
        a.scope = route;
        a.url_scope = 1;
        a.table = 1;
        a.dry_run = rule.dry_run >= 0 ? rule.dry_run : dc->dry_run == 1;
        a.log_mode = dc->log_refusals;
        rc = take_one(r, &a, at_fixups, taken, top);
    }
    return rc;
}

/* Returns 1 if a request of this process may need a slot: a
 * HotLimitConcurrency was parsed, or a quota table (its rules may have a
 * "concurrency"). Checked before take_slots, whose frame costs more than
 * the check. */
static int slots_possible(void)
{
    return conc_directives || hl_table_configured();
}

int hl_conc_check_access(request_rec *r)
{
    return slots_possible() ? take_slots(r, 0) : DECLINED;
}

int hl_conc_fixups(request_rec *r)
{
    return slots_possible() ? take_slots(r, 1) : DECLINED;
}

int hl_conc_protocol_switch(conn_rec *c, request_rec *r, server_rec *s,
                            const char *protocol)
{
    (void)c;
    (void)s;
    (void)protocol;

    if (r && head)
        give_back_all(hl_client_request(r));
    return DECLINED;
}

int hl_conc_hold(request_rec *r, int64_t ms)
{
    uint64_t seq;
    int64_t end, left;
    int why, gone = 0;

    if (!head)
        return 1;
    if (me.pid != (int32_t)getpid())
        hl_conc_child_init(NULL, NULL);   /* no child_init (-X) */
    if (conc_lock(r->server) != 0)
        return 1;
    seq = hl_wait_join(waits, HL_WAIT_HOLD, &me, 0, hl_wait_max(), &why);
    conc_unlock();
    if (!seq)
        return 1;
    end = hl_mono_ms() + ms;
    while (!gone && (left = end - hl_mono_ms()) > 0)
        gone = hl_wait_step(r, (int)(left < 250 ? left : 250));
    if (conc_lock(r->server) == 0) {
        hl_wait_leave(waits, seq);
        conc_unlock();
    }
    return gone ? -1 : 0;
}

void hl_conc_register(void)
{
    /* A protocol filter: it stays through internal redirects. */
    end_filter_handle = ap_register_output_filter("HOTLIMIT_CONC_END",
                                                  end_filter, NULL,
                                                  AP_FTYPE_PROTOCOL);
}

/* ---- status ------------------------------------------------------------------ */

/* Returns a copy of the table after reaping dead holders, from r->pool,
 * or NULL without a segment. */
static hl_conc_table_t *snapshot(request_rec *r)
{
    size_t size = hl_conc_size(HL_CONC_CAPACITY);
    hl_conc_table_t *copy;

    if (!head || conc_lock(r->server) != 0)
        return NULL;
    copy = apr_palloc(r->pool, size);
    hl_conc_reap(table, holder_alive, NULL);
    memcpy(copy, table, size);
    conc_unlock();
    return copy;
}

/* Returns s with \, " and newlines escaped for a Prometheus label. */
static const char *label(apr_pool_t *p, const char *s)
{
    char *out = apr_palloc(p, 2 * strlen(s) + 1), *o = out;

    for (; *s; ++s) {
        if (*s == '\\' || *s == '"' || *s == '\n') {
            *o++ = '\\';
            *o++ = *s == '\n' ? 'n' : *s;
        }
        else
            *o++ = *s;
    }
    *o = '\0';
    return out;
}

void hl_conc_write_json(request_rec *r)
{
    const hl_conc_table_t *t = snapshot(r);
    int i, first = 1;
    uint32_t j;

    ap_rputs("\"concurrency\":[", r);
    for (i = 0; t && i < HL_CONC_SCOPES && t->scopes[i].hash; ++i) {
        const hl_conc_scope_t *s = &t->scopes[i];
        int h = 0;

        ap_rprintf(r, "%s{\"route\":\"%s\",\"origin\":\"%s\",\"limit\":%u,\"in_flight\":%u,"
                   "\"admitted\":%" APR_UINT64_T_FMT ",\"rejected\":%"
                   APR_UINT64_T_FMT ",\"holders\":[", first ? "" : ",",
                   hl_json_escape(r->pool, s->name),
                   s->table ? "table" : "directive", s->limit, s->in_flight,
                   (apr_uint64_t)s->admitted, (apr_uint64_t)s->refused);
        for (j = 0; j < t->capacity; ++j)
            if (t->rec[j].key && t->rec[j].scope == i)
                ap_rprintf(r, "%s{\"pid\":%ld,\"count\":%u}", h++ ? "," : "",
                           (long)t->rec[j].pid, t->rec[j].count);
        ap_rputs("]}", r);
        first = 0;
    }
    ap_rputs("]", r);
}

void hl_conc_write_metrics(request_rec *r)
{
    const hl_conc_table_t *t = snapshot(r);
    static const char *const what[3][3] = {
        { "in_flight", "gauge", "Requests in flight now (HotLimitConcurrency)." },
        { "admitted_total", "counter", "Requests that took a slot." },
        { "rejected_total", "counter", "Requests refused: every slot of their key taken." },
    };
    int k, i;

    for (k = 0; k < 3; ++k) {
        ap_rprintf(r, "# HELP hotlimit_concurrency_%s %s\n"
                   "# TYPE hotlimit_concurrency_%s %s\n",
                   what[k][0], what[k][2], what[k][0], what[k][1]);
        for (i = 0; t && i < HL_CONC_SCOPES && t->scopes[i].hash; ++i) {
            const hl_conc_scope_t *s = &t->scopes[i];
            uint64_t v = k == 0 ? s->in_flight : k == 1 ? s->admitted
                                                        : s->refused;
            ap_rprintf(r, "hotlimit_concurrency_%s{route=\"%s\",origin=\"%s\"} %"
                       APR_UINT64_T_FMT "\n", what[k][0],
                       label(r->pool, s->name), s->table ? "table" : "directive",
                       (apr_uint64_t)v);
        }
    }
}
