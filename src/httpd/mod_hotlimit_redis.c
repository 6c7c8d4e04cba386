/*
 * mod_hotlimit_redis.c - the Redis store (HotLimitStore redis://...): the
 * same decisions as the shared-memory store (hl_store.h), shared by every
 * httpd that points at one Redis or Valkey server.
 *
 * One round trip per decision: one atomic script (src/core/hl_redis_script.lua,
 * EVALSHA, EVAL when the server answers NOSCRIPT) checks every window of
 * every quota with the algorithms of hl_bucket.c on the server's clock and
 * counts only if all admit. All keys carry the hash tag {hl}, so a Redis
 * Cluster serves a decision from one slot. The call is written, and the
 * decisions read from its reply, by hl_redis_call.c (pure: the unit test
 * that runs the script beside the shared-memory store uses it too).
 *
 * Connections: one per child, shared by its threads, made on first use
 * (never before fork), bounded by HotLimitStoreTimeout for connect and
 * every command, and dropped after any error (a hiredis context is not
 * reusable then); decisions that meet in time travel in one write
 * (mod_hotlimit_redis_conn.c). A breaker in shared memory (one per httpd) opens on a
 * failure, so that one child's timeout spares every other: while it is
 * open, decisions follow HotLimitStoreFailure (local: the shm counters;
 * open: admit; closed: 503); after a jittered backoff one request at a time
 * probes the server. A warning is logged once per outage, a notice on
 * recovery.
 *
 * A refused client carries a "refused until T" note in a per-thread cache,
 * so a flood of refused requests does not each cost a round trip; a note
 * is trusted for a second at most, so that a reset (on any server sharing
 * the Redis) reaches every thread within a second.
 *
 * The keys at their limit: the script also keeps a sorted set,
 * PREFIX{hl}:limited, of the counters at their limit (scored with when
 * each clears), which the status page of every server lists in one round
 * trip (the store's `limited` call) and a reset cleans (unlist); both
 * in mod_hotlimit_redis_admin.c.
 */
#include <string.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/time.h>
#include <pthread.h>

#include <hiredis/hiredis.h>

#include "httpd.h"
#include "http_config.h"
#include "http_log.h"
#include "apr_strings.h"
#include "apr_sha1.h"
#include "apr_shm.h"
#include "apr_lib.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_redis.h"
#include "mod_hotlimit_redis_url.h"
#include "mod_hotlimit_redis_admin.h"
#include "mod_hotlimit_store_shm.h"
#include "hl_redis_script.h"
#include "hl_redis_call.h"
#include "hl_fmt.h"
#include "hl_breaker.h"
#include "mod_hotlimit_redis_conn.h"
#include "mod_hotlimit_kept_shm.h"
#include "mod_hotlimit_conc_redis.h"
#include "hl_lease.h"
#include "hl_ban.h"

APLOG_USE_MODULE(hotlimit);

#define HL_REDIS_LIFE_KEY   "hotlimit-redis"
#define HL_REFUSED_CACHE    64
#define HL_REFUSED_RECHECK_MS 1000   /* a note is trusted this long at most */

/* The breaker and the figures, in shared memory (one per httpd parent). */
typedef struct {
    hl_breaker_t breaker;     /* times are hl_mono_ms */
    uint64_t decisions;       /* answered by Redis */
    uint64_t fallbacks;       /* decided by HotLimitStoreFailure */
    uint64_t errors;          /* failed round trips */
    uint64_t leased;          /* admitted by a lease, without a round trip */
    uint32_t resets;          /* resets so far: a change voids every lease */
    uint32_t pad;
} hl_redis_shared_t;

static const hl_redis_conf_t *rconf;     /* this generation's address */
static const hl_server_conf_t *rsc;      /* and the main server's settings:
                                            HotLimitStoreTimeout, ...Failure,
                                            ...Lease */
static hl_redis_shared_t *rshared;
static server_rec *rserver;
static char script_sha[41];
static const char *rwhere = "";          /* "host:port" or the socket */

/* Per thread: the refused-until notes. */
typedef struct {
    uint64_t      key;        /* hash of the decision's keys and limits */
    int64_t       until_ms;   /* hl_mono_ms */
    int64_t       recheck_ms; /* hl_mono_ms: ask Redis again from then on */
    hl_decision_t decision;
} hl_refused_t;

static __thread hl_refused_t refused[HL_REFUSED_CACHE];

/* Per child: the leases (HotLimitStoreLease, hl_lease.h), under lease_lock. */
static hl_leases_t leases;
static uint32_t leases_gen;       /* rshared->resets they were granted under */
static pthread_mutex_t lease_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- keys ------------------------------------------------------------------ */

/* Writes PREFIX{hl}: then n bytes of tail (a slot key, or "limited") into
 * out (HL_REDIS_KEY_MAX bytes), with this generation's prefix
 * (hl_redis_key). Returns the length, or 0 when tail is too long. */
static size_t redis_key(char *out, const char *tail, size_t n)
{
    return hl_redis_key(out, rconf->prefix, tail, n);
}

/* ---- configuration ------------------------------------------------------ */

/* Returns where the store is, "host:port" or the socket path (from p). */
static const char *where(apr_pool_t *p)
{
    if (rconf->label)
        return rconf->label;
    return rconf->socket ? apr_pstrdup(p, rconf->socket)
                         : apr_psprintf(p, "%s:%d", rconf->host, rconf->port);
}

/* Returns HotLimitStoreFailure's setting, as written. */
static const char *failure_name(void)
{
    return rsc->store_failure == HL_STORE_FAIL_OPEN ? "open"
           : rsc->store_failure == HL_STORE_FAIL_CLOSED ? "closed" : "local";
}

/* ---- the breaker (hl_breaker.c) ------------------------------------------ */

/* Returns 1 if this request may use Redis now (see hl_breaker_may_try). A
 * probe older than two timeouts and a second is one whose process died. */
static int may_try(int64_t now)
{
    return hl_breaker_may_try(&rshared->breaker, now,
                              2 * (int64_t)rsc->store_timeout + 1000);
}

/* Records a failed round trip (why: for the log) and opens the breaker
 * with a jittered (+-20 %), growing backoff. */
static void failed(const char *why, int64_t now)
{
    __atomic_add_fetch(&rshared->errors, 1, __ATOMIC_RELAXED);
    if (hl_breaker_failed(&rshared->breaker, now, 80 + rand() % 41))
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, rserver,
                     "HL00701: Redis store %s unavailable (%s): deciding by "
                     "HotLimitStoreFailure %s until it answers again",
                     rwhere, why, failure_name());
}

/* Records a round trip that worked: closes the breaker. */
static void succeeded(void)
{
    __atomic_add_fetch(&rshared->decisions, 1, __ATOMIC_RELAXED);
    if (hl_breaker_succeeded(&rshared->breaker))
        ap_log_error(APLOG_MARK, APLOG_NOTICE, 0, rserver,
                     "HL00702: Redis store %s answers again: counting there",
                     rwhere);
}

/* Sets the breaker's longest backoff from HOTLIMIT_TEST_BREAKER_MAX_MS
 * (1..5000 ms; for tests only, so that they wait out a short backoff), or
 * back to the default when it is unset or invalid. */
static void test_breaker_max(server_rec *s)
{
    const char *env = getenv("HOTLIMIT_TEST_BREAKER_MAX_MS");
    char *end = NULL;
    long ms = env ? strtol(env, &end, 10) : 0;

    if (!env || *env == '\0' || *end != '\0' || ms < 1 || ms > HL_BREAKER_BACKOFF_MAX_MS) {
        if (env)
            ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s,
                         "HL02901: HOTLIMIT_TEST_BREAKER_MAX_MS='%s' ignored "
                         "(1 to %d ms)", env, HL_BREAKER_BACKOFF_MAX_MS);
        ms = 0;
    }
    else
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s,
                     "HL02900: the Redis breaker's backoff is cut to %ld ms "
                     "(HOTLIMIT_TEST_BREAKER_MAX_MS, for tests only)", ms);
    hl_breaker_set_max(&rshared->breaker, (uint32_t)ms);
}

/* ---- the connection (mod_hotlimit_redis_conn.c) ------------------------- */

/* Returns 1 if reply is an error starting with prefix. */
static int is_error(const redisReply *reply, const char *prefix)
{
    return reply && reply->type == REDIS_REPLY_ERROR && reply->str
           && !strncmp(reply->str, prefix, strlen(prefix));
}

/* Sends one command (RESP) and reads its reply over the child's shared
 * connection. Returns the reply (the caller frees it), or NULL with *why
 * set; a failed round trip is recorded on the breaker once, by the call
 * the connection names (hl_redis_exchange). */
static redisReply *exchange(const char *cmd, size_t len, int64_t now,
                            const char **why)
{
    redisReply *reply;

    switch (hl_redis_exchange(cmd, len, &reply, why)) {
    case HL_EXCHANGE_OK:
        return reply;
    case HL_EXCHANGE_FAILED:
        failed(*why, now);
        return NULL;
    default:
        return NULL;
    }
}

/* ---- the decision ---------------------------------------------------------- */

/* Each thread keeps its call buffer (hl_redis_call.h) for its life (it
 * grows, rarely: EVAL carries the script). */
static __thread hl_redis_call_t thread_call;

/* Returns this thread's call buffer. Not inlined on purpose: in a module
 * (-fPIC) the compiler would otherwise recompute a __thread address, a
 * call into the dynamic loader, at every use. */
static __attribute__((noinline)) hl_redis_call_t *this_thread_call(void)
{
    return &thread_call;
}

/* Sends one call and reads its reply. Returns the reply (the caller frees
 * it), or NULL with *why set. */
static redisReply *round_trip(hl_redis_call_t *c, hl_decide_item_t *const *items,
                              int n, const char *mode, uint32_t cost,
                              uint32_t lease, int eval, int64_t now,
                              const char **why)
{
    const hl_redis_script_t s = { rconf->prefix, hl_redis_script, script_sha, NULL };

    if (hl_redis_call_build(c, &s, eval, items, n, mode, cost, lease) != 0) {
        *why = "out of memory";
        return NULL;
    }
    return exchange(c->buf + c->start, c->len - c->start, now, why);
}

/* Sends a call, loading the script when the server has lost it. Returns
 * the reply (the caller frees it), or NULL with *why set (a failed round
 * trip is already recorded; a reply that is neither the script's string
 * nor an array is recorded here and the connection discarded). */
static redisReply *send_call(hl_decide_item_t *const *items, int n,
                             const char *mode, uint32_t cost, uint32_t lease,
                             int64_t now, const char **why)
{
    hl_redis_call_t *c = this_thread_call();
    redisReply *reply;

    reply = round_trip(c, items, n, mode, cost, lease, 0, now, why);
    if (is_error(reply, "NOSCRIPT")) {
        freeReplyObject(reply);
        reply = round_trip(c, items, n, mode, cost, lease, 1, now, why);
    }
    if (!reply)
        return NULL;
    if (reply->type != REDIS_REPLY_STRING && reply->type != REDIS_REPLY_ARRAY) {
        /* READONLY: a failed-over replica; anything else is as bad. */
        *why = is_error(reply, "READONLY") ? "READONLY (a replica)"
               : reply->type == REDIS_REPLY_ERROR ? "script error" : "bad reply";
        if (reply->type == REDIS_REPLY_ERROR)
            ap_log_error(APLOG_MARK, APLOG_DEBUG, 0, rserver,
                         "HL00703: Redis answered: %s", reply->str);
        freeReplyObject(reply);
        hl_redis_conn_discard();
        failed(*why, now);
        return NULL;
    }
    return reply;
}

/* The one reader of the script's replies (every caller of the script's
 * decide, count, refund and settle uses it): writes the reply's integers
 * to el[0 .. max) and returns how many, or -1 when it is neither one
 * string of integers (modes "d" and "c": hl_redis_call_parse) nor an
 * array (modes "r" and "s"; an element that is not an integer reads 0,
 * elements past max are not read). The reply stays the caller's. */
long hl_redis_reply_integers(const redisReply *reply, long long *el, size_t max)
{
    size_t i, n;

    if (reply->type == REDIS_REPLY_STRING)
        return hl_redis_call_parse(reply->str, reply->len, el, max);
    if (reply->type != REDIS_REPLY_ARRAY)
        return -1;
    n = reply->elements < max ? reply->elements : max;
    for (i = 0; i < n; ++i)
        el[i] = reply->element[i]->type == REDIS_REPLY_INTEGER
                ? reply->element[i]->integer : 0;
    return (long)n;
}

/* Fills the items' decisions from a decide reply (hl_redis_reply_integers,
 * then hl_redis_call_read). Returns 1 if admitted, 0 if not, -1 when the
 * reply does not fit the items. The reply stays the caller's. */
int hl_redis_read_decisions(const redisReply *reply,
                            hl_decide_item_t *const *items, int n)
{
    long long el[HL_REDIS_REPLY_MAX];
    long nel = hl_redis_reply_integers(reply, el, HL_REDIS_REPLY_MAX);

    return nel < 0 ? -1 : hl_redis_call_read(el, (size_t)nel, items, n);
}

static void follow_integers(const long long *el, size_t nel,
                            hl_decide_item_t *const *items, int n,
                            int counting, uint32_t cost);

/*
 * Makes this server's shared-memory counters follow a reply of Redis to a
 * call over items (n; mode "c" when counting, else "d"), so that when Redis
 * fails, HotLimitStoreFailure local goes on from what Redis had counted:
 * per window, Redis' check, then what it counted there (mode "c": cost;
 * "d": the request and any lease granted, when every quota admitted and
 * this one counts now). Only under HotLimitStoreFailure local. Stops at a
 * reply that does not fit the items. Never fails.
 */
static void follow_reply(const long long *el, size_t nel,
                         hl_decide_item_t *const *items, int n, int counting,
                         uint32_t cost)
{
    if (rsc->store_failure == HL_STORE_FAIL_LOCAL)
        follow_integers(el, nel, items, n, counting, cost);
}

/* follow_reply's work from a reply, whatever HotLimitStoreFailure says
 * (the caller checks it): for redis-cluster://. Never fails. */
void hl_redis_follow(const redisReply *reply, hl_decide_item_t *const *items,
                     int n, int counting, uint32_t cost)
{
    long long el[HL_REDIS_REPLY_MAX];
    long nel = hl_redis_reply_integers(reply, el, HL_REDIS_REPLY_MAX);

    if (nel >= 0)
        follow_integers(el, (size_t)nel, items, n, counting, cost);
}

/* follow_reply's work over the reply's integers el[0 .. nel). */
static void follow_integers(const long long *el, size_t nel,
                            hl_decide_item_t *const *items, int n,
                            int counting, uint32_t cost)
{
    size_t at = 3;
    int64_t now = hl_mono_ms();  /* after the round trip: windows end no sooner */
    long long grant;
    int all, i, j;

    if (nel < 3)
        return;
    all = el[0] != 0;
    grant = el[1] > 0 ? el[1] : 0;
    for (i = 0; i < n; ++i) {
        const hl_quota_t *q = items[i]->quota;
        hl_verdict_t v[HL_MAX_WINDOWS];
        uint32_t counted = 0;
        int admit = 1;

        if (at + 6 * (size_t)q->nwindows > nel)
            return;
        for (j = 0; j < q->nwindows; ++j, at += 6) {
            long long rem = el[at + 1];
            v[j].admit = el[at] != 0;
            v[j].remaining = rem < 0 ? 0 : rem > UINT32_MAX ? UINT32_MAX : (uint32_t)rem;
            v[j].reset_ms = el[at + 2];
            v[j].retry_ms = el[at + 3];
            v[j].held = 0;      /* followed locally: no reservation held */
            admit &= v[j].admit;
        }
        if (counting)
            counted = cost;
        else if (all && admit && hl_decide_units(items[i]) > 0)
            counted = hl_decide_units(items[i])
                      + (uint32_t)(grant < UINT32_MAX ? grant : 0);
        hl_store_shm_follow(items[i], v, counted, now);
    }
}

/* Returns the refused-until key of a decision: its keys, limits and
 * reservations. */
static uint64_t refused_key(hl_decide_item_t *const *items, int n)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    int i;

    for (i = 0; i < n; ++i) {
        const hl_quota_t *q = items[i]->quota;
        h ^= (uint64_t)items[i]->origin << 56;   /* a table rule's counters are not a directive's */
        h = hl_hash64(items[i]->key, items[i]->key_len, h);
        h = hl_hash64(q->windows, sizeof(q->windows[0]) * (size_t)q->nwindows,
                      h ^ ((uint64_t)q->algo << 8) ^ hl_quota_burst(q));
        /* [reserve=] a refusal of N units says nothing of fewer */
        h ^= (uint64_t)items[i]->reserve << 32;
    }
    return h | 1;
}

/* Returns 1 if the first of items (n) refusing ends the decision: a look
 * (a ban) not in dry run, followed by quotas (hl_decide.h). */
static int look_first(hl_decide_item_t *const *items, int n)
{
    return n > 1 && items[0]->peek && !items[0]->dry_run;
}

/* Returns 1 if a refusal of items (n) by their first item can be noted and
 * answered again from the note: the first is not in dry run (it never
 * refuses) and is the only one, or a look that ends the decision. */
static int notable(hl_decide_item_t *const *items, int n)
{
    return !items[0]->dry_run && (n == 1 || look_first(items, n));
}

/* Answers from this thread's refused-until notes: returns 1 and fills the
 * first item (the others: not asked) when key, the note key of the first
 * item, is refused until later, else 0. */
static int still_refused(uint64_t key, hl_decide_item_t *const *items, int n,
                         int64_t now)
{
    hl_refused_t *e = &refused[key % HL_REFUSED_CACHE];
    int i;

    if (e->key != key || now >= e->until_ms || now >= e->recheck_ms)
        return 0;
    items[0]->decision = e->decision;
    items[0]->decision.retry_after_s = (long)((e->until_ms - now + 999) / 1000);
    for (i = 1; i < n; ++i)
        hl_decide_not_asked(items[i]);
    return 1;
}

/* Decides without Redis, as HotLimitStoreFailure says: 1/0 from the local
 * store, 1 (open), or -2 (closed: the caller answers 503). */
static int fallback(hl_decide_item_t *const *items, int n, int64_t now)
{
    const hl_store_t *local = hl_store_shm();

    __atomic_add_fetch(&rshared->fallbacks, 1, __ATOMIC_RELAXED);
    if (rsc->store_failure == HL_STORE_FAIL_CLOSED)
        return -2;
    if (rsc->store_failure == HL_STORE_FAIL_OPEN) {
        int i;
        for (i = 0; i < n; ++i) {
            memset(&items[i]->decision, 0, sizeof(items[i]->decision));
            items[i]->decision.admit = 1;
            items[i]->decision.nwindows = items[i]->quota->nwindows;
        }
        hl_decide_stats(hl_store_shm_stats(), items, n, now);
        return 1;
    }
    return local->ops->decide(local->ctx, items, n, now);
}

static void redis_prepare(void *ctx, hl_decide_item_t *it)
{
    const hl_store_t *local = hl_store_shm();
    (void)ctx;
    local->ops->prepare(local->ctx, it);   /* slot keys: the Redis keys too */
}

/* Returns 1 if the decision of items may use a lease: one quota, counted
 * now for good (not count=failures|status, whose unit may be given back:
 * a leased unit has no mark to give back, and a refunded unit must never
 * be spendable twice; not cost= or a ban check), not a ban
 * counter, not in dry run, not gcra (units counted ahead and spent later
 * would stack on a bucket that refilled meanwhile, past its burst), not
 * log (exact: a unit spent later than it was counted would let more than
 * COUNT into some WINDOW span), with HotLimitStoreLease set. */
static int leasable(hl_decide_item_t *const *items, int n)
{
    return rsc->store_lease > 0 && n == 1 && !items[0]->peek
           && !items[0]->exact && !items[0]->dry_run
           && items[0]->quota->algo != HL_ALGO_GCRA
           && items[0]->quota->algo != HL_ALGO_LOG
           && !hl_quota_after_response(items[0]->quota)
           && !hl_quota_refunds(items[0]->quota);
}

/* Answers from this child's lease of key: returns 1 with the item's
 * decision filled when a leased unit admits it; else 0 with *want set to
 * the units to ask for (hl_lease_take). Leases granted before the latest
 * reset of any child of this httpd are dropped first; *gen_out is the
 * reset count they were checked against (for keep_lease). */
static int from_lease(uint64_t key, hl_decide_item_t *it, uint32_t *want,
                      uint32_t *gen_out)
{
    uint32_t gen = __atomic_load_n(&rshared->resets, __ATOMIC_ACQUIRE);
    int got;

    *gen_out = gen;
    pthread_mutex_lock(&lease_lock);
    if (gen != leases_gen) {     /* a reset in any child: units are void */
        hl_lease_clear(&leases);
        leases_gen = gen;
    }
    /* The clock is read under the lock: a unit is never taken on a time
     * read before a wait, when its window may have ended meanwhile. */
    got = hl_lease_take(&leases, key, hl_mono_ms(), (uint32_t)rsc->store_lease,
                        &it->decision, want);
    pthread_mutex_unlock(&lease_lock);
    return got;
}

/* Keeps the units a decide reply granted (el[1], usable for el[2] ms) as
 * this child's lease of key, unless a reset came after the reset count
 * gen read before asking. */
static void keep_lease(uint64_t key, const long long *el,
                       const hl_decide_item_t *it, int64_t now, uint32_t gen)
{
    long long units = el[1];

    if (units <= 0 || units > rsc->store_lease)
        return;
    pthread_mutex_lock(&lease_lock);
    /* A reset since the request asked: the units may have been counted in
     * a counter it deleted, so they are not kept. */
    if (gen == __atomic_load_n(&rshared->resets, __ATOMIC_ACQUIRE))
        hl_lease_grant(&leases, key, now, (uint32_t)units, el[2], &it->decision);
    pthread_mutex_unlock(&lease_lock);
}

static int redis_decide(void *ctx, hl_decide_item_t *const *items, int n,
                        int64_t now)
{
    /* Refused-until notes are kept for refusals by the first item alone
     * (one quota, or a ban), leases for single-quota decisions: their key
     * is not worth hashing otherwise. */
    uint64_t key = notable(items, n) ? refused_key(items, 1) : 0;
    const char *why = "unknown";
    redisReply *reply;
    long long el[HL_REDIS_REPLY_MAX];
    long nel;
    uint32_t want = 0, gen = 0;
    int admit, i;
    (void)ctx;

    if (key != 0 && still_refused(key, items, n, now)) {
        hl_decide_stats(hl_store_shm_stats(), items, n, now);
        return 0;
    }
    /* No lease while Redis is failing: the local counters, which count the
     * units granted as spent, decide instead (follow_reply). */
    if (leasable(items, n) && hl_breaker_is_closed(&rshared->breaker)
        && from_lease(key, items[0], &want, &gen)) {
        __atomic_add_fetch(&rshared->leased, 1, __ATOMIC_RELAXED);
        hl_decide_stats(hl_store_shm_stats(), items, n, now);
        return 1;
    }
    if (!may_try(now))
        return fallback(items, n, now);
    reply = send_call(items, n, "d", 1, want, now, &why);
    if (!reply)
        return fallback(items, n, now);
    nel = hl_redis_reply_integers(reply, el, HL_REDIS_REPLY_MAX);
    freeReplyObject(reply);
    admit = nel < 0 ? -1 : hl_redis_call_read(el, (size_t)nel, items, n);
    if (admit == 0 && look_first(items, n) && !items[0]->decision.admit)
        for (i = 1; i < n; ++i)   /* as the shared-memory store: not asked */
            hl_decide_not_asked(items[i]);
    if (admit > 0 && want > 0)
        keep_lease(key, el, items[0], now, gen);
    if (admit >= 0)
        follow_reply(el, (size_t)nel, items, n, 0, 0);
    if (admit < 0) {
        failed("a reply that does not fit the request", now);
        return fallback(items, n, now);
    }
    succeeded();
    hl_decide_stats(hl_store_shm_stats(), items, n, now);
    if (!admit)
        hl_redis_note_refused(key, items, now);
    return admit;
}

void hl_redis_note_refused(uint64_t key, hl_decide_item_t *const *items,
                           int64_t now)
{
    hl_refused_t *e = &refused[key % HL_REFUSED_CACHE];
    int64_t retry = 0;
    int i;

    if (key == 0 || items[0]->dry_run || items[0]->decision.admit)
        return;
    for (i = 0; i < items[0]->decision.nwindows; ++i)
        if (!items[0]->decision.windows[i].admit
            && items[0]->decision.windows[i].retry_ms > retry)
            retry = items[0]->decision.windows[i].retry_ms;
    e->key = key;
    e->until_ms = now + retry;
    e->recheck_ms = now + HL_REFUSED_RECHECK_MS;
    e->decision = items[0]->decision;
}

uint64_t hl_redis_note_key(hl_decide_item_t *const *items, int n)
{
    return notable(items, n) ? refused_key(items, 1) : 0;
}

int hl_redis_noted(uint64_t key, hl_decide_item_t *const *items, int n,
                   int64_t now)
{
    return key != 0 && still_refused(key, items, n, now);
}

static int redis_count(void *ctx, const hl_decide_item_t *it, uint32_t cost,
                       int64_t now)
{
    hl_decide_item_t *items[1];
    const char *why = "unknown";
    redisReply *reply;
    long long el[HL_REDIS_REPLY_MAX];
    long nel;
    (void)ctx;

    items[0] = (hl_decide_item_t *)it;
    if (!may_try(now)) {
        const hl_store_t *local = hl_store_shm();
        return rsc->store_failure == HL_STORE_FAIL_LOCAL
               ? local->ops->count(local->ctx, it, cost, now) : 0;
    }
    reply = send_call(items, 1, "c", cost, 0, now, &why);
    if (!reply)
        return -1;
    nel = hl_redis_reply_integers(reply, el, HL_REDIS_REPLY_MAX);
    freeReplyObject(reply);
    if (nel > 0)
        follow_reply(el, (size_t)nel, items, 1, 1, cost);
    succeeded();
    return 0;
}

/* Drops this thread's note that the one item of items is refused, room
 * having come back for it (other threads trust theirs a second at most:
 * a refusal too many, never an admission). */
static void forget_refused(hl_decide_item_t *const *items)
{
    uint64_t key = refused_key(items, 1);

    if (refused[key % HL_REFUSED_CACHE].key == key)
        refused[key % HL_REFUSED_CACHE].key = 0;
}

/* [exact count=failures|status] Gives back the unit item it took at its
 * decision, by the script's refund (mode "r"), in the counters its marks
 * name. Without Redis (the breaker open), the local counters under
 * HotLimitStoreFailure local, where a decision of the outage counted it;
 * a mark from Redis never matches a local counter (nor one from the local
 * store a Redis counter), so a unit is never given back where it was not
 * taken. Returns the windows given back, or -1 when the store cannot
 * answer. */
static int redis_refund(void *ctx, const hl_decide_item_t *it, int64_t now)
{
    hl_decide_item_t *items[1];
    const char *why = "unknown";
    redisReply *reply;
    long long el[1];
    int given = -1, j, marked = 0;
    (void)ctx;

    for (j = 0; j < it->quota->nwindows && j < HL_MAX_WINDOWS; ++j)
        marked |= it->decision.marks[j] != 0;
    if (!marked)
        return 0;    /* nothing was counted (HotLimitStoreFailure open) */
    items[0] = (hl_decide_item_t *)it;
    if (!may_try(now)) {
        const hl_store_t *local = hl_store_shm();
        return rsc->store_failure == HL_STORE_FAIL_LOCAL
               ? local->ops->refund(local->ctx, it, now) : 0;
    }
    reply = send_call(items, 1, "r", 0, 0, now, &why);
    if (!reply)
        return -1;
    if (hl_redis_reply_integers(reply, el, 1) == 1)
        given = (int)el[0];
    freeReplyObject(reply);
    succeeded();
    if (given > 0)
        forget_refused(items);
    return given;
}

/* [reserve=] Settles the reservation of cost= item it to cost by the
 * script's settlement (mode "s": the rest given back in the counters its
 * marks name, or the excess counted). Without Redis (the breaker open),
 * the local counters under HotLimitStoreFailure local, as redis_refund.
 * Returns the windows touched, or -1 when the store cannot answer. */
static int redis_settle(void *ctx, const hl_decide_item_t *it, uint32_t cost,
                        int64_t now)
{
    hl_decide_item_t *items[1];
    const char *why = "unknown";
    redisReply *reply;
    long long el[1];
    int touched = -1;
    (void)ctx;

    /* At its reservation, only a fixed window has something to do: its
     * held units (hl_bucket_release). */
    if (it->reserve == 0
        || (cost == it->reserve && it->quota->algo != HL_ALGO_FIXED))
        return 0;
    items[0] = (hl_decide_item_t *)it;
    if (!may_try(now)) {
        const hl_store_t *local = hl_store_shm();
        return rsc->store_failure == HL_STORE_FAIL_LOCAL
               ? local->ops->settle(local->ctx, it, cost, now) : 0;
    }
    reply = send_call(items, 1, "s", cost, 0, now, &why);
    if (!reply)
        return -1;
    if (hl_redis_reply_integers(reply, el, 1) == 1)
        touched = (int)el[0];
    freeReplyObject(reply);
    succeeded();
    if (touched > 0 && cost < it->reserve)
        forget_refused(items);
    return touched;
}

/* ---- calls for the keys at their limit and resets (mod_hotlimit_redis_admin.c) ---- */

/* Sends the command argv[0 .. argc) (lengths argl) over the shared
 * connection. Returns the reply (the caller frees it; it may be an error
 * reply), or NULL with *why set (a failed round trip is recorded on the
 * breaker by exchange). */
redisReply *hl_redis_send(int argc, const char **argv, const size_t *argl,
                          const char **why)
{
    redisReply *reply;
    char *cmd = NULL;
    int len = redisFormatCommandArgv(&cmd, argc, argv, argl);

    if (len < 0) {
        *why = "out of memory";
        return NULL;
    }
    reply = exchange(cmd, (size_t)len, hl_mono_ms(), why);
    redisFreeCommand(cmd);
    return reply;
}

/* Runs the script's listing (mode "l") of PREFIX{hl}:limited, or of
 * PREFIX{hl}:bans when bans, for at most max keys, loading the script when
 * the server lost it. Returns the reply (the caller frees it; it may be an
 * error reply), or NULL with *why set. */
redisReply *hl_redis_list_call(int max, int bans, const char **why)
{
    char zkey[HL_REDIS_KEY_MAX], num[HL_FMT_U64_MAX];
    const char *argv[6];
    size_t argl[6];
    redisReply *reply;

    argv[0] = "EVALSHA";
    argv[1] = script_sha;
    argv[2] = "1";
    argv[3] = zkey;
    argv[4] = "l";
    argv[5] = num;
    argl[0] = 7;
    argl[1] = 40;
    argl[2] = 1;
    argl[3] = bans ? redis_key(zkey, "bans", 4) : redis_key(zkey, "limited", 7);
    argl[4] = 1;
    argl[5] = hl_fmt_u64(num, (uint64_t)max);
    reply = hl_redis_send(6, argv, argl, why);
    if (is_error(reply, "NOSCRIPT")) {
        freeReplyObject(reply);
        argv[0] = "EVAL";
        argl[0] = 4;
        argv[1] = hl_redis_script;
        argl[1] = strlen(hl_redis_script);
        reply = hl_redis_send(6, argv, argl, why);
    }
    return reply;
}

/* Returns 1 when the store is set up and its breaker closed (a call may
 * be tried now without waiting), else 0. Never fails. */
int hl_redis_is_up(void)
{
    return rconf && rshared && hl_breaker_is_closed(&rshared->breaker);
}

/* Returns where the store is, for messages ("" before setup); the string
 * lives as long as the configuration. */
const char *hl_redis_where(void)
{
    return rwhere;
}

/* Returns the main server, for logs (NULL before setup). */
server_rec *hl_redis_server(void)
{
    return rserver;
}

/* Voids every child's leases (a reset changed the counters they were
 * granted on). Never fails. */
void hl_redis_void_leases(void)
{
    __atomic_add_fetch(&rshared->resets, 1, __ATOMIC_ACQ_REL);
}

/* Forgets this thread's refused-until notes, so the next decision of each
 * client asks Redis. Never fails. */
void hl_redis_forget_refused(void)
{
    memset(refused, 0, sizeof(refused));
}

static void redis_figures(void *ctx, hl_store_figures_t *f);

static const hl_store_ops_t redis_ops = {
    .name    = "redis",
    .prepare = redis_prepare,
    .decide  = redis_decide,
    .count   = redis_count,
    .refund  = redis_refund,
    .settle  = redis_settle,
    .reset   = hl_redis_reset,
    .limited = hl_redis_limited,
    .figures = redis_figures,
};
static const hl_store_t redis_store = { &redis_ops, NULL };

/* ---- setup ------------------------------------------------------------------ */

int hl_redis_post_config(apr_pool_t *pconf, server_rec *s, void *conf)
{
    hl_server_conf_t *sc = ap_get_module_config(s->module_config, &hotlimit_module);
    apr_pool_t *pp = s->process->pool;
    apr_status_t rv;
    unsigned char digest[APR_SHA1_DIGESTSIZE];
    apr_sha1_ctx_t sha;
    int i, created;

    rconf = conf;
    rsc = sc;
    rserver = s;
    rwhere = where(pconf);
    hl_redis_conn_setup(rconf, sc->store_timeout);
    rshared = hl_kept_shm(pp, HL_REDIS_LIFE_KEY, sizeof(hl_redis_shared_t),
                          &created, &rv);
    if (!rshared) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s,
                     "HL00704: cannot create the Redis store's shared memory");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    test_breaker_max(s);
    apr_sha1_init(&sha);
    apr_sha1_update(&sha, hl_redis_script, (unsigned int)strlen(hl_redis_script));
    apr_sha1_final(digest, &sha);
    for (i = 0; i < APR_SHA1_DIGESTSIZE; ++i)
        apr_snprintf(script_sha + 2 * i, 3, "%02x", digest[i]);
    ap_log_error(APLOG_MARK, APLOG_INFO, 0, s,
                 "HL00705: counters in Redis at %s (timeout %d ms, on "
                 "failure: %s)", rwhere, rsc->store_timeout, failure_name());
    return OK;
}

const hl_store_t *hl_redis_store(void)
{
    return &redis_store;
}

const hl_store_provider_t hl_redis_provider = {
    "redis", hl_redis_parse_url, hl_redis_post_config, hl_redis_store,
    hl_conc_redis_take, hl_conc_redis_give
};

/* The store's `figures` call. */
static void redis_figures(void *ctx, hl_store_figures_t *f)
{
    (void)ctx;
    memset(f, 0, sizeof(*f));
    if (!rshared)
        return;
    f->configured = 1;
    f->up = hl_breaker_is_closed(&rshared->breaker);
    f->decisions = __atomic_load_n(&rshared->decisions, __ATOMIC_RELAXED);
    f->fallbacks = __atomic_load_n(&rshared->fallbacks, __ATOMIC_RELAXED);
    f->errors = __atomic_load_n(&rshared->errors, __ATOMIC_RELAXED);
    f->leased = __atomic_load_n(&rshared->leased, __ATOMIC_RELAXED);
}

/* ---- for HotLimitConcurrency (mod_hotlimit_conc_redis.c) ----------------- */

redisReply *hl_redis_command(int argc, const char **argv, const size_t *argl,
                             const char **why)
{
    if (!rconf) {
        *why = "not configured";
        return NULL;
    }
    if (!may_try(hl_mono_ms())) {
        *why = "unavailable (breaker open)";
        return NULL;
    }
    return hl_redis_send(argc, argv, argl, why);
}

size_t hl_redis_name(char *out, const char *tail, size_t n)
{
    return rconf ? redis_key(out, tail, n) : 0;
}
