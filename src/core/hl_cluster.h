/*
 * hl_cluster.h - the pure core of the Redis Cluster client (issue 28;
 * doc/redis.md "Redis Cluster"): the key slot, the slot map
 * filled from CLUSTER SLOTS, and what to do with each reply of one
 * decision (the algorithm of hiredis-cluster and radix: follow MOVED and
 * ASK, retry TRYAGAIN briefly, EVAL on NOSCRIPT, give up on CLUSTERDOWN,
 * CROSSSLOT, or after HL_CLUSTER_MAX_REDIRECTS redirects). The bucket
 * tags that spread clients over the slots are in hl_cluster_tags.h.
 *
 * No httpd, no hiredis, no allocation, no clock: the caller turns hiredis
 * replies into the plain values below, passes its monotonic milliseconds
 * as now, and owns every structure (a map is about 41 KB: one per child,
 * filled lazily after fork).
 */
#ifndef HL_CLUSTER_H
#define HL_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#define HL_CLUSTER_SLOTS          16384
#define HL_CLUSTER_NODES_MAX      64     /* masters (and ASK/MOVED targets) */
#define HL_CLUSTER_HOST_MAX       256    /* a host name or address, with NUL */
#define HL_CLUSTER_NO_NODE        0xffff /* a slot no known master serves */
#define HL_CLUSTER_MAX_REDIRECTS  5      /* MOVED + ASK per decision */
#define HL_CLUSTER_MAX_TRYAGAIN   2      /* TRYAGAIN retries per decision */
#define HL_CLUSTER_TRYAGAIN_MS    5      /* the wait before each of them */
#define HL_CLUSTER_REFRESH_MS     1000   /* at most one map refresh a second */

/*
 * Returns CRC16/XMODEM (polynomial 0x1021, init 0, no reflection) of len
 * bytes at data (data may be NULL when len is 0): Redis Cluster's key
 * hash ("123456789" gives 0x31C3). Never fails.
 */
uint16_t hl_cluster_crc16(const void *data, size_t len);

/*
 * Returns the cluster slot (0..16383) of the key (len bytes), as Redis
 * computes it: of the bytes between the first '{' and the next '}' when
 * there are some, else of the whole key. Never fails.
 */
unsigned hl_cluster_keyslot(const char *key, size_t len);

/* Returns 1 if prefix (len bytes) can start a cluster key: it holds no
 * '{', which would make Redis hash the prefix instead of the bucket tag
 * after it (every key one slot). Else 0. */
int hl_cluster_prefix_ok(const char *prefix, size_t len);

/* A master as the client reaches it. */
typedef struct {
    char host[HL_CLUSTER_HOST_MAX];  /* NUL-terminated, without brackets */
    int  port;                       /* 1..65535 */
} hl_cluster_node_t;

/* One range of CLUSTER SLOTS: slots first..last served by the master at
 * host:port (host_len bytes, not NUL-terminated; empty or "?" means the
 * node that answered). Replicas are not listed. */
typedef struct {
    unsigned    first, last;
    const char *host;
    size_t      host_len;
    int         port;
} hl_cluster_range_t;

/* The slot map of one child. Node indexes stay the same across refreshes
 * (connections and breakers are kept per index) unless the table fills
 * up (hl_cluster_map_fill returns 1). */
typedef struct {
    uint16_t          node_of_slot[HL_CLUSTER_SLOTS];
    hl_cluster_node_t nodes[HL_CLUSTER_NODES_MAX];
    unsigned          n_nodes;
    int               refresh_wanted;  /* 1: the map is known stale */
    int               refreshed;       /* 1: a refresh was ever started */
    int64_t           refresh_ms;      /* when the last one started */
} hl_cluster_map_t;

/* Sets *m to an empty map (no node, every slot HL_CLUSTER_NO_NODE) that
 * wants a refresh. Never fails. */
void hl_cluster_map_init(hl_cluster_map_t *m);

/*
 * Returns the index of host:port in m's node table (host, host_len bytes;
 * an IPv6 address may come in brackets), adding it if new. Returns -1,
 * with m unchanged, when the host is empty, too long or holds a byte
 * other than letters, digits and ".-_:%", when the port is not 1..65535,
 * or when the table is full.
 */
int hl_cluster_map_node(hl_cluster_map_t *m, const char *host,
                        size_t host_len, int port);

/*
 * Fills m's slots from the n ranges of a CLUSTER SLOTS reply at now; a
 * range's empty or "?" host is self_host (self_len bytes: the node that
 * answered). Slots no range names are left without a node. Returns 0, or
 * 1 when the node table had to be emptied to make room (every node index
 * changed: the caller drops its connections), or -1 when a range is
 * invalid (first > last, last > 16383, a bad host or port) or n is 0:
 * m is then unchanged. The map no longer wants a refresh after 0 or 1.
 */
int hl_cluster_map_fill(hl_cluster_map_t *m, const hl_cluster_range_t *r,
                        size_t n, const char *self_host, size_t self_len);

/* Returns the node index serving slot (0..16383), or -1 when none is
 * known (the map is empty, or the slot was uncovered). */
int hl_cluster_map_lookup(const hl_cluster_map_t *m, unsigned slot);

/*
 * Returns 1 if the caller should fetch CLUSTER SLOTS now: the map wants a
 * refresh (empty, or a MOVED or a failure said it is stale) and none was
 * started in the last HL_CLUSTER_REFRESH_MS; it then records now as the
 * start of one. Returns 0 otherwise (including within the second after a
 * refresh started, whatever its outcome: a cluster that does not answer
 * is asked at most once a second per child).
 */
int hl_cluster_map_refresh_due(hl_cluster_map_t *m, int64_t now);

/* What a cluster error reply says (hl_cluster_parse_error). */
typedef enum {
    HL_CLUSTER_ERR_NONE = 0,  /* not an error of the cluster's (the
                                 script's own, WRONGTYPE, OOM...) */
    HL_CLUSTER_ERR_MOVED,     /* the slot lives on another master */
    HL_CLUSTER_ERR_ASK,       /* this once, ask another (migration) */
    HL_CLUSTER_ERR_TRYAGAIN,  /* the slot's keys are split by a migration */
    HL_CLUSTER_ERR_NOSCRIPT,  /* this node has not the script cached */
    HL_CLUSTER_ERR_CLUSTERDOWN, /* the node cannot serve (no coverage) */
    HL_CLUSTER_ERR_CROSSSLOT, /* the keys of one call span slots */
    HL_CLUSTER_ERR_NODE,      /* LOADING, MASTERDOWN, READONLY: the node
                                 cannot serve this now (failover) */
    HL_CLUSTER_ERR_MALFORMED  /* MOVED or ASK that does not parse */
} hl_cluster_err_t;

/* A parsed error reply; host points into the text parsed. */
typedef struct {
    hl_cluster_err_t kind;
    unsigned         slot;      /* MOVED, ASK: 0..16383 */
    const char      *host;      /* MOVED, ASK: may be empty (host_len 0):
                                   the node that answered */
    size_t           host_len;
    int              port;      /* MOVED, ASK: 1..65535 */
} hl_cluster_error_t;

/*
 * Parses an error reply (text, len bytes, as hiredis gives it, with or
 * without the leading '-'): "MOVED <slot> <host>:<port>", "ASK ...",
 * "TRYAGAIN ...", "NOSCRIPT ...", "CLUSTERDOWN ...", "CROSSSLOT ...",
 * "LOADING ...", "MASTERDOWN ...", "READONLY ...". The host is split from
 * the port on the last ':' (IPv6), brackets removed. Returns out->kind:
 * HL_CLUSTER_ERR_MALFORMED for a MOVED or ASK whose slot, host or port is
 * out of range or followed by anything, HL_CLUSTER_ERR_NONE for any other
 * text. Reads only; out's host points into text.
 */
hl_cluster_err_t hl_cluster_parse_error(const char *text, size_t len,
                                        hl_cluster_error_t *out);

/* What the caller does next in one decision. */
typedef enum {
    HL_CLUSTER_SEND = 0,   /* send the call to a->node: first wait
                              a->wait_ms, then "ASKING" in the same write
                              if a->asking, then EVAL (a->eval) or EVALSHA */
    HL_CLUSTER_DONE,       /* the reply is the decision's (a success, or
                              an error that is not the cluster's) */
    HL_CLUSTER_FALLBACK    /* decide by HotLimitStoreFailure; if
                              a->node_down, open a->node's breaker */
} hl_cluster_action_t;

/* The state of one decision: the caller's, zeroed by
 * hl_cluster_attempt_begin. */
typedef struct {
    unsigned         slot;       /* of the decision's keys */
    int              node;       /* where to send, -1 when none is known */
    int              asking;     /* 1: precede the call with ASKING */
    int              eval;       /* 1: send the script (after NOSCRIPT) */
    int              wait_ms;    /* wait before sending */
    int              redirects;  /* MOVED and ASK followed so far */
    int              tryagain;   /* TRYAGAIN retries so far */
    int              node_down;  /* on FALLBACK: the node failed */
    hl_cluster_err_t why;        /* on FALLBACK: the last error, or
                                    HL_CLUSTER_ERR_NODE for a transport
                                    failure or no node known */
} hl_cluster_attempt_t;

/*
 * Begins a decision whose keys live in slot. Returns HL_CLUSTER_SEND with
 * a->node set, or HL_CLUSTER_FALLBACK when no node is known for the slot
 * (the map then wants a refresh: call hl_cluster_map_refresh_due first,
 * and begin again after a fill). Never fails.
 */
hl_cluster_action_t hl_cluster_attempt_begin(hl_cluster_map_t *m,
                                             hl_cluster_attempt_t *a,
                                             unsigned slot);

/*
 * Applies the reply of a->node: err (len bytes) its error text, or NULL
 * for a reply that is not an error. MOVED updates the slot's node and
 * asks for a map refresh; ASK changes nothing in the map; both count
 * against HL_CLUSTER_MAX_REDIRECTS. TRYAGAIN is retried
 * HL_CLUSTER_MAX_TRYAGAIN times after HL_CLUSTER_TRYAGAIN_MS; NOSCRIPT
 * once with EVAL (and ASKING again after an ASK). CLUSTERDOWN and the
 * node errors open that node's breaker and ask for a refresh. Returns the
 * next action (HL_CLUSTER_FALLBACK on any bound reached, a malformed
 * redirect, a full node table or CROSSSLOT). Never fails.
 */
hl_cluster_action_t hl_cluster_attempt_reply(hl_cluster_map_t *m,
                                             hl_cluster_attempt_t *a,
                                             const char *err, size_t len);

/* Applies a transport failure of a->node (connect error, timeout, a
 * dropped connection): returns HL_CLUSTER_FALLBACK with a->node_down set,
 * and asks for a map refresh (a failover may have moved the slot). */
hl_cluster_action_t hl_cluster_attempt_failed(hl_cluster_map_t *m,
                                              hl_cluster_attempt_t *a);

#endif
