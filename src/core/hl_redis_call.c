/*
 * hl_redis_call.c - the Redis store's script call and the reading of its
 * reply (see hl_redis_call.h).
 */
#include <stdlib.h>
#include <string.h>

#include "hl_redis_call.h"
#include "hl_fmt.h"

#define HEAD_ROOM 32     /* before the arguments: "*ARGC CRLF", written last */

size_t hl_redis_key_tag(char *out, const char *prefix, const char *tag,
                        const char *tail, size_t n)
{
    size_t plen = strlen(prefix), tlen;

    if (!tag)
        tag = "hl";
    tlen = strlen(tag);
    if (plen > HL_REDIS_PREFIX_MAX || tlen > HL_REDIS_TAG_MAX || n > HL_KEY_MAX)
        return 0;
    memcpy(out, prefix, plen);
    out[plen] = '{';
    memcpy(out + plen + 1, tag, tlen);
    memcpy(out + plen + 1 + tlen, "}:", 2);
    memcpy(out + plen + 3 + tlen, tail, n);
    return plen + 3 + tlen + n;
}

size_t hl_redis_key(char *out, const char *prefix, const char *tail, size_t n)
{
    return hl_redis_key_tag(out, prefix, NULL, tail, n);
}

/* Makes room for n more bytes (realloc). Returns 0, or -1 when out of
 * memory (the buffer is kept). */
static int reserve(hl_redis_call_t *c, size_t n)
{
    size_t cap;
    char *b;

    if (c->len + n <= c->cap)
        return 0;
    cap = (c->len + n) * 2;
    if (cap < 2048)
        cap = 2048;
    b = realloc(c->buf, cap);
    if (!b)
        return -1;
    c->buf = b;
    c->cap = cap;
    return 0;
}

/* Appends one bulk-string argument ($LEN CRLF DATA CRLF). Returns 0, or
 * -1 when out of memory. */
static int add_arg(hl_redis_call_t *c, const char *s, size_t n)
{
    char *p;

    if (reserve(c, n + HL_FMT_U64_MAX + 5) != 0)
        return -1;
    p = c->buf + c->len;
    *p++ = '$';
    p += hl_fmt_u64(p, n);
    *p++ = '\r';
    *p++ = '\n';
    memcpy(p, s, n);
    p += n;
    *p++ = '\r';
    *p++ = '\n';
    c->len = (size_t)(p - c->buf);
    c->argc++;
    return 0;
}

/* Appends one number argument. Returns 0, or -1 when out of memory. */
static int add_num(hl_redis_call_t *c, uint64_t v)
{
    char num[HL_FMT_U64_MAX], *p;
    size_t n;

    if (reserve(c, HL_FMT_U64_MAX + 8) != 0)
        return -1;
    p = c->buf + c->len;
    if (v < 10) {                /* most of them: flags, counts of windows */
        memcpy(p, "$1\r\n0\r\n", 7);
        p[4] = (char)('0' + v);
        p += 7;
    }
    else {
        n = hl_fmt_u64(num, v);  /* at most 20 digits */
        *p++ = '$';
        if (n >= 10)
            *p++ = (char)('0' + n / 10);
        *p++ = (char)('0' + n % 10);
        *p++ = '\r';
        *p++ = '\n';
        memcpy(p, num, n);
        p += n;
        *p++ = '\r';
        *p++ = '\n';
    }
    c->len = (size_t)(p - c->buf);
    c->argc++;
    return 0;
}

/* Returns 1 if an admitted it takes a reservation its request holds
 * until it settles (reserve=: the script keeps it apart, see
 * hl_bucket_hold). */
static int holds(const hl_decide_item_t *it)
{
    return it->reserve > 0 && !it->peek && hl_quota_after_response(it->quota);
}

int hl_redis_call_build(hl_redis_call_t *c, const hl_redis_script_t *s,
                        int eval, hl_decide_item_t *const *items, int n,
                        const char *mode, uint32_t cost, uint32_t lease)
{
    char head[HL_FMT_U64_MAX + 4];
    size_t h;
    int i, j, nkeys = 0, rc = 0;

    c->len = HEAD_ROOM;
    c->argc = 0;
    rc |= eval ? add_arg(c, "EVAL", 4) | add_arg(c, s->script, strlen(s->script))
               : add_arg(c, "EVALSHA", 7) | add_arg(c, s->sha, 40);
    for (i = 0; i < n; ++i)
        nkeys += items[i]->quota->nwindows;
    rc |= add_num(c, (uint64_t)nkeys);
    for (i = 0; i < n; ++i)
        for (j = 0; j < items[i]->quota->nwindows; ++j) {
            char key[HL_REDIS_KEY_MAX];
            size_t klen = hl_redis_key_tag(key, s->prefix, s->tag,
                                           items[i]->refs[j].key,
                                           items[i]->refs[j].len);
            if (klen == 0)
                return -1;
            rc |= add_arg(c, key, klen);
        }
    rc |= add_arg(c, mode, 1) | add_num(c, (uint64_t)n) | add_num(c, cost)
          | add_num(c, lease);
    for (i = 0; i < n; ++i) {
        const hl_quota_t *q = items[i]->quota;
        rc |= add_num(c, (uint64_t)q->algo) | add_num(c, (uint64_t)q->nwindows)
              | add_num(c, mode[0] == 's' ? items[i]->reserve
                                           : hl_decide_units(items[i]))
              | add_num(c, (uint64_t)(items[i]->dry_run != 0)
                           | (holds(items[i]) ? 2u : 0u));
        for (j = 0; j < q->nwindows; ++j)
            rc |= add_num(c, q->windows[j].count) | add_num(c, q->windows[j].window_ms)
                  | add_num(c, hl_quota_burst(q));
    }
    if (mode[0] == 'r' || mode[0] == 's')
        for (j = 0; j < items[0]->quota->nwindows; ++j)
            rc |= add_num(c, (uint64_t)items[0]->decision.marks[j]);
    if (rc)
        return -1;
    head[0] = '*';
    h = 1 + hl_fmt_u64(head + 1, (uint64_t)c->argc);
    head[h++] = '\r';
    head[h++] = '\n';
    c->start = HEAD_ROOM - h;
    memcpy(c->buf + c->start, head, h);
    return 0;
}

int hl_redis_call_read(const long long *el, size_t nel,
                       hl_decide_item_t *const *items, int n)
{
    size_t at = 3;               /* after admitted, lease granted, lease ms;
                                    then 6 per window */
    int i, j;

    if (nel < 3)
        return -1;
    for (i = 0; i < n; ++i) {
        hl_decision_t *d = &items[i]->decision;
        int64_t retry_ms = 0;

        memset(d, 0, sizeof(*d));
        d->admit = 1;
        d->nwindows = items[i]->quota->nwindows;
        d->remaining = UINT32_MAX;
        for (j = 0; j < d->nwindows; ++j) {
            hl_verdict_t *v = &d->windows[j];
            if (at + 6 > nel)
                return -1;
            v->admit = el[at] != 0;
            v->remaining = (uint32_t)el[at + 1];
            v->reset_ms = el[at + 2];
            v->retry_ms = el[at + 3];
            d->marks[j] = el[at + 4];
            v->held = !v->admit && el[at + 5] != 0;
            at += 6;
            if (!v->admit) {
                d->admit = 0;
                if (v->retry_ms > retry_ms)
                    retry_ms = v->retry_ms;
            }
        }
        for (j = 0; j < d->nwindows; ++j) {
            hl_verdict_t *v = &d->windows[j];
            if (!d->admit)
                v->remaining = v->admit ? v->remaining + 1 : 0;
            if (v->remaining < d->remaining)
                d->remaining = v->remaining;
        }
        d->retry_after_s = d->admit ? 0 : (long)((retry_ms + 999) / 1000);
        if (!d->admit && d->retry_after_s < 1)
            d->retry_after_s = 1;
    }
    return el[0] != 0;
}

long hl_redis_call_parse(const char *s, size_t len, long long *el, size_t max)
{
    const char *p = s, *end = s + len;
    size_t n = 0;

    if (len == 0)
        return -1;
    for (;;) {
        unsigned long long v = 0;
        int neg = 0, digits = 0;

        if (n == max)
            return -1;
        if (p < end && *p == '-') {
            neg = 1;
            ++p;
        }
        while (p < end && *p >= '0' && *p <= '9') {
            if (++digits > 18)   /* below 10^18: no overflow, any reply fits */
                return -1;
            v = v * 10 + (unsigned)(*p++ - '0');
        }
        if (digits == 0)
            return -1;
        el[n++] = neg ? -(long long)v : (long long)v;
        if (p == end)
            return (long)n;
        if (*p++ != ' ' || p == end)
            return -1;
    }
}
