/*
 * hl_cluster.c - the Redis Cluster client's pure core (see hl_cluster.h):
 * key slots, the slot map, error replies and the per-decision algorithm.
 */
#include "hl_cluster.h"

#include <string.h>

_Static_assert(HL_CLUSTER_NODES_MAX <= 64, "ranges_check keeps a 64-bit set");

uint16_t hl_cluster_crc16(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint16_t crc = 0;
    size_t i;
    int b;

    for (i = 0; i < len; ++i) {
        crc ^= (uint16_t)(p[i] << 8);
        for (b = 0; b < 8; ++b)
            crc = (uint16_t)(crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1);
    }
    return crc;
}

unsigned hl_cluster_keyslot(const char *key, size_t len)
{
    const char *open = len ? memchr(key, '{', len) : NULL;

    if (open != NULL) {
        size_t from = (size_t)(open - key) + 1;
        const char *close = memchr(key + from, '}', len - from);

        if (close != NULL && close > key + from)
            return hl_cluster_crc16(key + from, (size_t)(close - key) - from)
                   & (HL_CLUSTER_SLOTS - 1);
    }
    return hl_cluster_crc16(key, len) & (HL_CLUSTER_SLOTS - 1);
}

int hl_cluster_prefix_ok(const char *prefix, size_t len)
{
    return len == 0 || memchr(prefix, '{', len) == NULL;
}

void hl_cluster_map_init(hl_cluster_map_t *m)
{
    memset(m, 0, sizeof(*m));
    memset(m->node_of_slot, 0xff, sizeof(m->node_of_slot));
    m->refresh_wanted = 1;
}

/* Returns 1 if c may be part of a host: letters, digits, ".-_:%". */
static int host_byte_ok(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
           || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_'
           || c == ':' || c == '%';
}

/* Strips one pair of brackets around *host; returns 0, or -1 when the
 * host (after that) is empty, too long or holds a byte not allowed. */
static int host_check(const char **host, size_t *len)
{
    size_t i;

    if (*len >= 2 && (*host)[0] == '[' && (*host)[*len - 1] == ']') {
        ++*host;
        *len -= 2;
    }
    if (*len == 0 || *len >= HL_CLUSTER_HOST_MAX)
        return -1;
    for (i = 0; i < *len; ++i)
        if (!host_byte_ok((unsigned char)(*host)[i]))
            return -1;
    return 0;
}

/* Returns the index of host:port among m's nodes, or -1 (host checked). */
static int node_find(const hl_cluster_map_t *m, const char *host,
                     size_t len, int port)
{
    unsigned i;

    for (i = 0; i < m->n_nodes; ++i)
        if (m->nodes[i].port == port && strlen(m->nodes[i].host) == len
            && memcmp(m->nodes[i].host, host, len) == 0)
            return (int)i;
    return -1;
}

int hl_cluster_map_node(hl_cluster_map_t *m, const char *host,
                        size_t host_len, int port)
{
    int i;

    if (host_check(&host, &host_len) != 0 || port < 1 || port > 65535)
        return -1;
    i = node_find(m, host, host_len, port);
    if (i >= 0)
        return i;
    if (m->n_nodes >= HL_CLUSTER_NODES_MAX)
        return -1;
    memcpy(m->nodes[m->n_nodes].host, host, host_len);
    m->nodes[m->n_nodes].host[host_len] = '\0';
    m->nodes[m->n_nodes].port = port;
    return (int)m->n_nodes++;
}

/* Sets *host to self when it is empty or "?" (CLUSTER SLOTS's unknown
 * endpoint). */
static void host_or_self(const char **host, size_t *len, const char *self,
                         size_t self_len)
{
    if (*len == 0 || (*len == 1 && (*host)[0] == '?')) {
        *host = self;
        *len = self_len;
    }
}

/* Returns 0 if every range is valid and the nodes they name fit in the
 * table beside those already there (*fits 1) or alone (*fits 0); -1 if a
 * range is invalid or they name more nodes than the table holds. O(n x
 * nodes): a map fragmented by resharding lists up to 16384 ranges. */
static int ranges_check(const hl_cluster_map_t *m,
                        const hl_cluster_range_t *r, size_t n,
                        const char *self, size_t self_len, int *fits)
{
    struct { const char *h; size_t len; int port; } fresh[HL_CLUSTER_NODES_MAX];
    uint64_t known = 0;          /* bit i: node i of m is named */
    unsigned n_fresh = 0, n_known = 0, j;
    size_t i;

    for (i = 0; i < n; ++i) {
        const char *h = r[i].host;
        size_t hl = r[i].host_len;
        int at;

        host_or_self(&h, &hl, self, self_len);
        if (r[i].first > r[i].last || r[i].last >= HL_CLUSTER_SLOTS
            || r[i].port < 1 || r[i].port > 65535 || h == NULL
            || host_check(&h, &hl) != 0)
            return -1;
        at = node_find(m, h, hl, r[i].port);
        if (at >= 0) {
            if (!(known & (1ULL << at)))
                ++n_known;
            known |= 1ULL << at;
            continue;
        }
        for (j = 0; j < n_fresh; ++j)
            if (fresh[j].port == r[i].port && fresh[j].len == hl
                && memcmp(fresh[j].h, h, hl) == 0)
                break;
        if (j < n_fresh)
            continue;
        if (n_known + n_fresh >= HL_CLUSTER_NODES_MAX)
            return -1;
        fresh[n_fresh].h = h;
        fresh[n_fresh].len = hl;
        fresh[n_fresh++].port = r[i].port;
    }
    *fits = m->n_nodes + n_fresh <= HL_CLUSTER_NODES_MAX;
    return 0;
}

int hl_cluster_map_fill(hl_cluster_map_t *m, const hl_cluster_range_t *r,
                        size_t n, const char *self_host, size_t self_len)
{
    int fits = 0, renumbered = 0;
    size_t i;

    if (n == 0 || ranges_check(m, r, n, self_host, self_len, &fits) != 0)
        return -1;
    if (!fits) {
        m->n_nodes = 0;
        renumbered = 1;
    }
    memset(m->node_of_slot, 0xff, sizeof(m->node_of_slot));
    for (i = 0; i < n; ++i) {
        const char *h = r[i].host;
        size_t hl = r[i].host_len;
        int node;
        unsigned s;

        host_or_self(&h, &hl, self_host, self_len);
        node = hl_cluster_map_node(m, h, hl, r[i].port); /* checked: >= 0 */
        for (s = r[i].first; s <= r[i].last; ++s)
            m->node_of_slot[s] = (uint16_t)node;
    }
    m->refresh_wanted = 0;
    return renumbered;
}

int hl_cluster_map_lookup(const hl_cluster_map_t *m, unsigned slot)
{
    if (slot >= HL_CLUSTER_SLOTS
        || m->node_of_slot[slot] == HL_CLUSTER_NO_NODE)
        return -1;
    return m->node_of_slot[slot];
}

int hl_cluster_map_refresh_due(hl_cluster_map_t *m, int64_t now)
{
    if (!m->refresh_wanted)
        return 0;
    if (m->refreshed && now - m->refresh_ms < HL_CLUSTER_REFRESH_MS)
        return 0;
    m->refreshed = 1;
    m->refresh_ms = now;
    return 1;
}

/* Returns 1 if text (len bytes) starts with the word w followed by the
 * end or a space, and sets *rest past the space. */
static int word_is(const char *text, size_t len, const char *w,
                   const char **rest)
{
    size_t wl = strlen(w);

    if (len < wl || memcmp(text, w, wl) != 0 || (len > wl && text[wl] != ' '))
        return 0;
    *rest = text + (len > wl ? wl + 1 : wl);
    return 1;
}

/* Parses 1..digits decimal digits at *p (before end) as an unsigned
 * number no larger than max; advances *p. Returns the value or -1. */
static long number(const char **p, const char *end, int digits, long max)
{
    long v = 0;
    int n = 0;

    while (*p < end && **p >= '0' && **p <= '9' && n < digits) {
        v = v * 10 + (**p - '0');
        ++*p;
        ++n;
    }
    if (n == 0 || (*p < end && **p >= '0' && **p <= '9') || v > max)
        return -1;
    return v;
}

/* Parses "<slot> <host>:<port>" (rest..end) into out; returns 0 or -1. */
static int parse_redirect(const char *rest, const char *end,
                          hl_cluster_error_t *out)
{
    const char *p = rest, *colon = NULL, *q, *host;
    size_t host_len;
    long slot, port;

    slot = number(&p, end, 5, HL_CLUSTER_SLOTS - 1);
    if (slot < 0 || p >= end || *p != ' ')
        return -1;
    host = ++p;
    for (q = p; q < end; ++q)
        if (*q == ':')
            colon = q;
    if (colon == NULL)
        return -1;
    p = colon + 1;
    port = number(&p, end, 5, 65535);
    if (port < 1 || p != end)
        return -1;
    host_len = (size_t)(colon - host);
    if (host_len > 0 && host_check(&host, &host_len) != 0)
        return -1;
    out->slot = (unsigned)slot;
    out->host = host;
    out->host_len = host_len;
    out->port = (int)port;
    return 0;
}

hl_cluster_err_t hl_cluster_parse_error(const char *text, size_t len,
                                        hl_cluster_error_t *out)
{
    static const struct {
        const char *word;
        hl_cluster_err_t kind;
    } plain[] = {
        { "TRYAGAIN", HL_CLUSTER_ERR_TRYAGAIN },
        { "NOSCRIPT", HL_CLUSTER_ERR_NOSCRIPT },
        { "CLUSTERDOWN", HL_CLUSTER_ERR_CLUSTERDOWN },
        { "CROSSSLOT", HL_CLUSTER_ERR_CROSSSLOT },
        { "LOADING", HL_CLUSTER_ERR_NODE },
        { "MASTERDOWN", HL_CLUSTER_ERR_NODE },
        { "READONLY", HL_CLUSTER_ERR_NODE },
    };
    const char *rest;
    size_t i;

    memset(out, 0, sizeof(*out));
    if (text == NULL)
        return HL_CLUSTER_ERR_NONE;
    if (len > 0 && text[0] == '-') {
        ++text;
        --len;
    }
    if (word_is(text, len, "MOVED", &rest))
        out->kind = HL_CLUSTER_ERR_MOVED;
    else if (word_is(text, len, "ASK", &rest))
        out->kind = HL_CLUSTER_ERR_ASK;
    if (out->kind != HL_CLUSTER_ERR_NONE) {
        if (parse_redirect(rest, text + len, out) != 0) {
            memset(out, 0, sizeof(*out));
            out->kind = HL_CLUSTER_ERR_MALFORMED;
        }
        return out->kind;
    }
    for (i = 0; i < sizeof(plain) / sizeof(plain[0]); ++i)
        if (word_is(text, len, plain[i].word, &rest))
            return out->kind = plain[i].kind;
    return HL_CLUSTER_ERR_NONE;
}

hl_cluster_action_t hl_cluster_attempt_begin(hl_cluster_map_t *m,
                                             hl_cluster_attempt_t *a,
                                             unsigned slot)
{
    memset(a, 0, sizeof(*a));
    a->slot = slot;
    a->node = hl_cluster_map_lookup(m, slot);
    if (a->node >= 0)
        return HL_CLUSTER_SEND;
    m->refresh_wanted = 1;
    a->why = HL_CLUSTER_ERR_NODE;
    return HL_CLUSTER_FALLBACK;
}

/* Gives up the decision for reason why; node_down: the node failed. */
static hl_cluster_action_t give_up(hl_cluster_attempt_t *a,
                                   hl_cluster_err_t why, int node_down)
{
    a->why = why;
    a->node_down = node_down;
    a->wait_ms = 0;
    return HL_CLUSTER_FALLBACK;
}

/* Follows a MOVED or ASK (e) from a->node. */
static hl_cluster_action_t redirect(hl_cluster_map_t *m,
                                    hl_cluster_attempt_t *a,
                                    const hl_cluster_error_t *e)
{
    const char *host = e->host;
    size_t host_len = e->host_len;
    int node;

    if (++a->redirects > HL_CLUSTER_MAX_REDIRECTS)
        return give_up(a, e->kind, 0);
    if (host_len == 0 && a->node >= 0) {   /* "MOVED 1 :6380": same host */
        host = m->nodes[a->node].host;
        host_len = strlen(host);
    }
    node = hl_cluster_map_node(m, host, host_len, e->port);
    if (node < 0) {
        m->refresh_wanted = 1;
        return give_up(a, e->kind, 0);
    }
    if (e->kind == HL_CLUSTER_ERR_MOVED) {
        m->node_of_slot[e->slot] = (uint16_t)node;
        m->refresh_wanted = 1;
    }
    a->node = node;
    a->asking = e->kind == HL_CLUSTER_ERR_ASK;
    a->tryagain = 0;
    a->wait_ms = 0;
    return HL_CLUSTER_SEND;
}

hl_cluster_action_t hl_cluster_attempt_reply(hl_cluster_map_t *m,
                                             hl_cluster_attempt_t *a,
                                             const char *err, size_t len)
{
    hl_cluster_error_t e;

    a->wait_ms = 0;
    switch (hl_cluster_parse_error(err, len, &e)) {
    case HL_CLUSTER_ERR_NONE:
        return HL_CLUSTER_DONE;
    case HL_CLUSTER_ERR_MOVED:
    case HL_CLUSTER_ERR_ASK:
        return redirect(m, a, &e);
    case HL_CLUSTER_ERR_TRYAGAIN:
        if (++a->tryagain > HL_CLUSTER_MAX_TRYAGAIN)
            return give_up(a, e.kind, 0);
        a->wait_ms = HL_CLUSTER_TRYAGAIN_MS * a->tryagain;
        return HL_CLUSTER_SEND;
    case HL_CLUSTER_ERR_NOSCRIPT:
        if (a->eval)
            return give_up(a, e.kind, 0);
        a->eval = 1;
        return HL_CLUSTER_SEND;
    case HL_CLUSTER_ERR_CLUSTERDOWN:
    case HL_CLUSTER_ERR_NODE:
        m->refresh_wanted = 1;
        return give_up(a, e.kind, 1);
    case HL_CLUSTER_ERR_MALFORMED:
        m->refresh_wanted = 1;
        return give_up(a, e.kind, 0);
    case HL_CLUSTER_ERR_CROSSSLOT:
    default:
        return give_up(a, e.kind, 0);
    }
}

hl_cluster_action_t hl_cluster_attempt_failed(hl_cluster_map_t *m,
                                              hl_cluster_attempt_t *a)
{
    m->refresh_wanted = 1;
    return give_up(a, HL_CLUSTER_ERR_NODE, a->node >= 0);
}
