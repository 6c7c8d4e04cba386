/*
 * hl_bucket.c - the arithmetic of one counter: fixed window, sliding window
 * counter and GCRA.
 *
 * Integers only (buckets live in shared memory), no floats even in passing.
 * Every product below is bounded so it fits in 64 bits: counts and windows
 * are below 2^32, now_ms is clamped to [0, 2^50] (35,000 years) and a GCRA
 * time is kept at or below 2^62 microseconds.
 *
 * A verdict describes the counter as it will be once this request is counted
 * (admitted) or as it is (rejected): remaining and reset_ms of an admitted
 * request already include it.
 *
 * The clock is monotonic in httpd (hl_mono_ms), but a stored time may still
 * lie ahead of now (counters saved before a reboot and rebased, a corrupt
 * slot). Such a time is pulled back so that no client stalls for longer
 * than its window:
 *   fixed   - the window restarts at now with its count kept;
 *   sliding - the current window starts now, both counts kept;
 *   gcra    - the theoretical arrival time is capped at now + tau + interval,
 *             the furthest a consistent bucket can be ahead.
 * So retry_ms never exceeds the window (sliding: window + window / limit,
 * the sliding counter's own worst case).
 *
 * Memory: the caller owns the bucket, policy and verdict; nothing is
 * allocated. Invalid input (limit 0, window 0, a corrupt stored time) is
 * clamped, never a failure.
 */
#include "hl_bucket.h"

#define HL_NOW_MAX_MS ((int64_t)1 << 50)
#define HL_T_MAX      ((int64_t)1 << 62)

/* Returns now_ms clamped to [0, HL_NOW_MAX_MS]. */
static int64_t clamp_now(int64_t now_ms)
{
    if (now_ms < 0)
        return 0;
    if (now_ms > HL_NOW_MAX_MS)
        return HL_NOW_MAX_MS;
    return now_ms;
}

/* Returns a stored time clamped to [0, HL_T_MAX] (guards corrupt slots). */
static int64_t clamp_t(int64_t t)
{
    if (t < 0)
        return 0;
    if (t > HL_T_MAX)
        return HL_T_MAX;
    return t;
}

/* Returns n + k, or UINT32_MAX when the sum does not fit. */
static uint32_t add_sat(uint32_t n, uint32_t k)
{
    return k > UINT32_MAX - n ? UINT32_MAX : n + k;
}

/* Returns the policy's limit, reading an invalid 0 as 1. */
static uint32_t limit_of(const hl_policy_t *p)
{
    return p->limit ? p->limit : 1;
}

/* Returns the policy's window in ms, reading an invalid 0 as 1. */
static int64_t window_of(const hl_policy_t *p)
{
    return p->window_ms ? (int64_t)p->window_ms : 1;
}

/* Returns ceil(a / b) for a >= 0, b > 0. */
static int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/* Sets *v to "admitted". */
static void admit(hl_verdict_t *v, uint32_t remaining, int64_t reset_ms)
{
    v->admit = 1;
    v->remaining = remaining;
    v->reset_ms = reset_ms;
    v->retry_ms = 0;
    v->held = 0;
}

/* Sets *v to "rejected". */
static void reject(hl_verdict_t *v, int64_t retry_ms, int64_t reset_ms)
{
    v->admit = 0;
    v->remaining = 0;
    v->reset_ms = reset_ms;
    v->retry_ms = retry_ms;
    v->held = 0;
}

/* ---- fixed window: starts at a key's first hit ---- */

/*
 * Rolls a fixed-window bucket to now: an ended window empties; a clock that
 * went back restarts the window at now, count kept. A bucket with count 0
 * is left as is (its window starts at the next commit).
 */
static void fixed_roll(hl_bucket_t *b, int64_t window, int64_t now)
{
    if (b->count == 0)
        return;
    b->t = clamp_t(b->t);
    if (now < b->t) {
        b->t = now;
    } else if (now - b->t >= window) {
        b->count = 0;
        b->prev_count = 0;   /* held: none in a new window */
        b->t = now;
    }
}

/* Decides one request for a fixed window (see hl_bucket_check). */
static void fixed_check(hl_bucket_t *b, const hl_policy_t *p, int64_t now,
                        hl_verdict_t *v)
{
    int64_t window = window_of(p), end;
    uint32_t limit = limit_of(p);

    fixed_roll(b, window, now);
    end = (b->count == 0 ? now : b->t) + window;   /* > now */
    if (b->count < limit) {
        admit(v, limit - b->count - 1, end - now);
        return;
    }
    reject(v, end - now, end - now);
    /* prev_count: the units held by running requests (hl_bucket_hold) */
    v->held = b->prev_count > 0
              && b->count - (b->prev_count < b->count ? b->prev_count
                                                      : b->count) < limit;
}

/* Counts n requests in a fixed window (n = 0: rolls only). */
static void fixed_commit(hl_bucket_t *b, const hl_policy_t *p, int64_t now,
                         uint32_t n)
{
    fixed_roll(b, window_of(p), now);
    if (n == 0)
        return;
    if (b->count == 0)
        b->t = now;
    b->count = add_sat(b->count, n);
}

/* ---- sliding window counter: epoch-aligned windows ---- */

/*
 * Rolls a sliding bucket to the aligned window holding now: one window on,
 * the current count becomes the previous one; further on, both empty. A now
 * in an earlier window (clock went back) leaves the bucket as it is.
 */
static void sliding_roll(hl_bucket_t *b, int64_t window, int64_t now)
{
    int64_t cur = now - now % window, r;

    b->t = clamp_t(b->t);
    if (b->t == cur)
        return;       /* the usual case: still this window */
    /* A start moved off the grid (clock rebase, another window length)
       moves to the next boundary: 1 ms before one is that window, not the
       end of the previous one. Later, never earlier, so the old count can
       only weigh longer than it did, never let a client in sooner. */
    r = b->t % window;
    if (r != 0)
        b->t += window - r;
    if (b->t > cur)
        b->t = cur;   /* a time from the future (clock step): no later than now */
    if (cur <= b->t)
        return;
    if (cur - b->t == window)
        b->prev_count = b->count;
    else
        b->prev_count = 0;
    b->count = 0;
    b->t = cur;
}

/*
 * Returns the first time (ms since epoch) at which a rolled, rejected
 * sliding bucket would admit a request if nothing is counted meanwhile.
 * With R = (limit - count - 1) * window, a time t + e of the current window
 * admits iff prev * (window - e) <= R; a time t + window + f of the next
 * window (prev becomes count, count 0) admits iff
 * count * (window - f) <= (limit - 1) * window.
 */
static int64_t sliding_admit_at(const hl_bucket_t *b, uint64_t limit,
                                int64_t window)
{
    uint64_t w = (uint64_t)window, c = b->count, p = b->prev_count, q;

    if (c + 1 <= limit && p > 0) {
        q = (limit - c - 1) * w / p;        /* < window: it rejected */
        if (q >= 1)
            return b->t + window - (int64_t)q;
    }
    if (c == 0)
        return b->t + window;
    q = (limit - 1) * w / c;
    if (q >= w)
        return b->t + window;
    return b->t + window + (window - (int64_t)q);
}

/* Decides one request for a sliding window (see hl_bucket_check). */
static void sliding_check(hl_bucket_t *b, const hl_policy_t *p, int64_t now,
                          hl_verdict_t *v)
{
    int64_t window = window_of(p), elapsed;
    uint64_t limit = limit_of(p), w, c, decay, room;

    sliding_roll(b, window, now);
    elapsed = now > b->t ? now - b->t : 0;          /* 0 <= elapsed < window */
    w = (uint64_t)window;
    c = b->count;
    decay = (uint64_t)b->prev_count * (w - (uint64_t)elapsed);
    if (c + 1 <= limit && decay <= (limit - c - 1) * w) {
        room = (limit - c - 1) * w - decay;
        admit(v, (uint32_t)(room / w), b->t + 2 * window - now);
        return;
    }
    reject(v, sliding_admit_at(b, limit, window) - now,
           (c > 0 ? b->t + 2 * window : b->t + window) - now);
}

/* Counts n requests in a sliding window. */
static void sliding_commit(hl_bucket_t *b, const hl_policy_t *p, int64_t now,
                           uint32_t n)
{
    sliding_roll(b, window_of(p), now);
    b->count = add_sat(b->count, n);
}

/* ---- GCRA: t is the theoretical arrival time (TAT) in microseconds ---- */

/* Returns the emission interval in us: ceil(window * 1000 / limit). */
static int64_t gcra_interval_us(const hl_policy_t *p)
{
    return ceil_div(window_of(p) * 1000, (int64_t)limit_of(p));
}

/* Returns the tolerance in us: (burst - 1) * interval, capped at HL_T_MAX. */
static int64_t gcra_tau_us(const hl_policy_t *p, int64_t interval)
{
    int64_t burst = p->burst ? (int64_t)p->burst : (int64_t)limit_of(p);

    if (burst - 1 > HL_T_MAX / interval)
        return HL_T_MAX;
    return (burst - 1) * interval;
}

/* Returns tat, or now_us + span when tat lies further ahead: a consistent
 * TAT is never more than tau + interval ahead, so anything further comes
 * from a clock step or a rebase and would stall the client. */
static int64_t gcra_clamp_tat(int64_t tat, int64_t now_us, int64_t span)
{
    if (span < HL_T_MAX - now_us && tat > now_us + span)
        return now_us + span;
    return tat;
}

/* Decides one request for GCRA (see hl_bucket_check). */
static void gcra_check(hl_bucket_t *b, const hl_policy_t *p, int64_t now,
                       hl_verdict_t *v)
{
    int64_t interval = gcra_interval_us(p), tau = gcra_tau_us(p, interval);
    int64_t now_us = now * 1000, tat;

    b->t = gcra_clamp_tat(clamp_t(b->t), now_us, tau + interval);
    tat = b->t > now_us ? b->t : now_us;
    if (tat - now_us <= tau) {
        admit(v, (uint32_t)((tau - (tat - now_us)) / interval),
              ceil_div(tat + interval - now_us, 1000));
        return;
    }
    reject(v, ceil_div(tat - tau - now_us, 1000),
           ceil_div(tat - now_us, 1000));
}

/* Decides whether n (2 .. burst) units fit for GCRA: n commits stay within
 * the tolerance, i.e. the TAT is at most tau - (n - 1) intervals ahead.
 * The TAT is clamped with the real tolerance first (gcra_check), never a
 * smaller one, so a refused check changes nothing a refund's mark names. */
static void gcra_check_n(hl_bucket_t *b, const hl_policy_t *p, int64_t now,
                         uint32_t n, hl_verdict_t *v)
{
    int64_t interval = gcra_interval_us(p), tau = gcra_tau_us(p, interval);
    int64_t now_us = now * 1000, room, tat;

    gcra_check(b, p, now, v);
    room = tau - (int64_t)(n - 1) * interval;    /* >= 0: n <= burst */
    tat = b->t > now_us ? b->t : now_us;
    if (tat - now_us <= room)
        admit(v, (uint32_t)((room - (tat - now_us)) / interval),
              ceil_div(tat + (int64_t)n * interval - now_us, 1000));
    else
        reject(v, ceil_div(tat - room - now_us, 1000),
               ceil_div(tat - now_us, 1000));
}

/*
 * Counts n requests for GCRA. One commit moves the TAT (clamped to at most
 * now + tau + interval) one interval on, so n commits at one now end at
 * min(TAT + n intervals, now + tau + 2 intervals): computed so at once.
 */
static void gcra_commit(hl_bucket_t *b, const hl_policy_t *p, int64_t now,
                        uint32_t n)
{
    int64_t interval = gcra_interval_us(p);
    int64_t now_us = now * 1000;
    int64_t span = gcra_tau_us(p, interval) + interval;
    int64_t tat = gcra_clamp_tat(clamp_t(b->t), now_us, span);

    if (n == 0) {
        b->t = tat;
        return;
    }
    if (tat < now_us)
        tat = now_us;
    /* tat <= HL_T_MAX and interval <= 2^42: no step below overflows */
    if ((int64_t)n > (HL_T_MAX - tat) / interval)
        tat = HL_T_MAX;
    else
        tat += (int64_t)n * interval;
    if (n > 1 && span < HL_T_MAX - now_us && tat > now_us + span + interval)
        tat = now_us + span + interval;
    b->t = clamp_t(tat);
}

/* ---- refunds: a unit committed at admission, given back ---- */

/* Gives back at most n units of a fixed window whose start was mark (see
 * hl_bucket_refund_n). Returns the units given back. */
static uint32_t fixed_refund(hl_bucket_t *b, const hl_policy_t *p,
                             int64_t now, int64_t mark, uint32_t n)
{
    uint32_t k;

    fixed_roll(b, window_of(p), now);
    if (b->count == 0 || b->t != mark)
        return 0;
    k = n < b->count ? n : b->count;
    b->count -= k;
    if (b->prev_count > b->count)
        b->prev_count = b->count;    /* held: never more than counted */
    return k;
}

/* Gives back at most n units of a sliding window whose aligned start was
 * mark: from the current window's count, or from the previous one's once
 * the window moved on (see hl_bucket_refund_n). Returns the units given
 * back. */
static uint32_t sliding_refund(hl_bucket_t *b, const hl_policy_t *p,
                               int64_t now, int64_t mark, uint32_t n)
{
    int64_t window = window_of(p);
    uint32_t *from, k;

    sliding_roll(b, window, now);
    if (b->t == mark)
        from = &b->count;
    else if (b->t - window == mark)
        from = &b->prev_count;
    else
        return 0;
    k = n < *from ? n : *from;
    *from -= k;
    return k;
}

/* Gives back the n units of the GCRA commit that produced TAT mark, if no
 * commit came since and they have not drained yet (the TAT still ahead of
 * now: a TAT behind it reads as a full bucket already): the TAT moves
 * back n intervals, never below 0 (see hl_bucket_refund_n). Returns n or
 * 0. */
static uint32_t gcra_refund(hl_bucket_t *b, const hl_policy_t *p,
                            int64_t now, int64_t mark, uint32_t n)
{
    int64_t interval = gcra_interval_us(p);

    if (b->t != mark || n == 0 || b->t <= now * 1000)
        return 0;
    if ((int64_t)n >= b->t / interval + 1)
        b->t = 0;
    else
        b->t -= (int64_t)n * interval;
    return n;
}

/* ---- public entry points ---- */

int64_t hl_bucket_mark(const hl_bucket_t *b)
{
    return b->t;
}

uint32_t hl_bucket_refund_n(hl_bucket_t *b, const hl_policy_t *p,
                            int64_t now_ms, int64_t mark, uint32_t n)
{
    int64_t now = clamp_now(now_ms);

    switch (p->algo) {
    case HL_ALGO_SLIDING:
        return sliding_refund(b, p, now, mark, n);
    case HL_ALGO_GCRA:
        return gcra_refund(b, p, now, mark, n);
    default:
        return fixed_refund(b, p, now, mark, n);
    }
}

/* Returns 1 if *b is a fixed window that, rolled to now_ms, is still the
 * counter instance mark names (and holds units), else 0. */
static int held_instance(hl_bucket_t *b, const hl_policy_t *p,
                         int64_t now_ms, int64_t mark)
{
    if (p->algo != HL_ALGO_FIXED)
        return 0;
    fixed_roll(b, window_of(p), clamp_now(now_ms));
    return b->count > 0 && b->t == mark;
}

void hl_bucket_hold(hl_bucket_t *b, const hl_policy_t *p, int64_t now_ms,
                    int64_t mark, uint32_t n)
{
    if (!held_instance(b, p, now_ms, mark))
        return;
    b->prev_count = add_sat(b->prev_count, n);
    if (b->prev_count > b->count)
        b->prev_count = b->count;
}

void hl_bucket_release(hl_bucket_t *b, const hl_policy_t *p, int64_t now_ms,
                       int64_t mark, uint32_t n)
{
    if (held_instance(b, p, now_ms, mark))
        b->prev_count -= n < b->prev_count ? n : b->prev_count;
}

void hl_bucket_check_n(hl_bucket_t *b, const hl_policy_t *p, int64_t now_ms,
                       uint32_t n, hl_verdict_t *v)
{
    hl_policy_t room = *p;
    uint32_t cap = hl_bucket_cap(p);

    if (n <= 1) {
        hl_bucket_check(b, p, now_ms, v);
        return;
    }
    if (n > cap) {
        /* Never fits: refused for a whole window (a reservation over the
         * window's COUNT can only be lowered by the client). */
        hl_bucket_check(b, p, now_ms, v);
        reject(v, window_of(p), v->reset_ms);
        return;
    }
    if (p->algo == HL_ALGO_GCRA) {
        gcra_check_n(b, p, clamp_now(now_ms), n, v);
        return;
    }
    /* n units fit where one unit fits with n - 1 less room (the roll of a
     * fixed or sliding window does not depend on its limit). */
    room.limit = cap - (n - 1);
    hl_bucket_check(b, &room, now_ms, v);
}

/*
 * Fills *v for one more request at now_ms without counting it (rolls *b
 * forward). Never fails; an unknown algo is treated as fixed.
 */
void hl_bucket_check(hl_bucket_t *b, const hl_policy_t *p, int64_t now_ms,
                     hl_verdict_t *v)
{
    int64_t now = clamp_now(now_ms);

    switch (p->algo) {
    case HL_ALGO_SLIDING:
        sliding_check(b, p, now, v);
        break;
    case HL_ALGO_GCRA:
        gcra_check(b, p, now, v);
        break;
    default:
        fixed_check(b, p, now, v);
        break;
    }
}

/*
 * Counts one request at now_ms (rolls *b forward first). Counts saturate at
 * UINT32_MAX; never fails.
 */
/*
 * Counts n requests at now_ms in O(1) (rolls *b forward first). Counts
 * saturate at UINT32_MAX, GCRA times at the bound n commits reach; never
 * fails.
 */
void hl_bucket_commit_n(hl_bucket_t *b, const hl_policy_t *p, int64_t now_ms,
                        uint32_t n)
{
    int64_t now = clamp_now(now_ms);

    switch (p->algo) {
    case HL_ALGO_SLIDING:
        sliding_commit(b, p, now, n);
        break;
    case HL_ALGO_GCRA:
        gcra_commit(b, p, now, n);
        break;
    default:
        fixed_commit(b, p, now, n);
        break;
    }
}

/* Returns what a check that said v found used of p's limit (gcra: of its
 * burst): all of it when it refused, else all but the one more it
 * admitted and the remaining after it. */
static uint32_t used_of(const hl_policy_t *p, const hl_verdict_t *v)
{
    uint32_t cap = hl_bucket_cap(p);

    if (!v->admit)
        return cap;
    return v->remaining < cap ? cap - v->remaining - 1 : 0;
}

/*
 * Returns how far ahead of now (us, >= 0) a GCRA bucket's TAT is when its
 * check said v, with v->reset_ms given as reset (>= 0): a refusal's reset
 * is the TAT rounded up to the ms; an admission's reset is one interval
 * more, and its remaining, floor((tau - ahead) / interval), bounds ahead
 * from above too: the lesser bound is the TAT itself or a little after,
 * so remaining comes out the same and the room no sooner.
 */
static int64_t gcra_ahead_us(const hl_policy_t *p, const hl_verdict_t *v,
                             int64_t reset)
{
    int64_t interval = gcra_interval_us(p), tau = gcra_tau_us(p, interval);
    int64_t ahead = (reset < HL_NOW_MAX_MS ? reset : HL_NOW_MAX_MS) * 1000;

    if (v->admit) {
        ahead -= interval;
        if ((int64_t)v->remaining <= tau / interval
            && tau - (int64_t)v->remaining * interval < ahead)
            ahead = tau - (int64_t)v->remaining * interval;
    }
    return ahead > 0 ? ahead : 0;
}

/* Sets *b from a report (see hl_bucket_follow); never fails. */
void hl_bucket_follow(hl_bucket_t *b, const hl_policy_t *p, int64_t now_ms,
                      const hl_verdict_t *v, uint32_t n)
{
    int64_t now = clamp_now(now_ms), window = window_of(p);
    int64_t reset = v->reset_ms < 0 ? 0 : v->reset_ms;
    uint32_t used = used_of(p, v);

    b->t = 0;
    b->count = 0;
    b->prev_count = 0;
    switch (p->algo) {
    case HL_ALGO_SLIDING:
        b->t = now - now % window;
        b->count = used;
        break;
    case HL_ALGO_GCRA:
        b->t = now * 1000 + gcra_ahead_us(p, v, reset);
        break;
    default:
        if (used > 0 && reset > 0) {
            b->count = used;
            b->t = now + (reset < window ? reset : window) - window;
        }
        break;
    }
    hl_bucket_commit_n(b, p, now_ms, n);
}

/*
 * Returns the ms since epoch from which *b equals a fresh counter: fixed
 * t + window, sliding t + 2 windows, gcra ceil(TAT / 1000); 0 for a bucket
 * that holds nothing.
 */
int64_t hl_bucket_expires_ms(const hl_bucket_t *b, const hl_policy_t *p)
{
    int64_t t = clamp_t(b->t);

    switch (p->algo) {
    case HL_ALGO_SLIDING:
        if (b->count == 0 && b->prev_count == 0)
            return 0;
        return t + 2 * window_of(p);
    case HL_ALGO_GCRA:
        return ceil_div(t, 1000);
    default:
        if (b->count == 0)
            return 0;
        return t + window_of(p);
    }
}
