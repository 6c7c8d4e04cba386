/*
 * fuzz_cluster.c - libFuzzer target for hl_cluster.c: the error-reply
 * parser, the slot map fill and the per-decision algorithm, on hostile
 * replies (a compromised or broken node names any host, slot or port).
 *
 * Layout: lines. Each line is parsed as an error reply, its key slot
 * taken, and then fed as the reply of the current decision over a map of
 * three masters (a new decision begins when one ends). Lines of the form
 * "FIRST LAST HOST PORT" are also gathered into a CLUSTER SLOTS reply
 * filled into a second map at the end. The checks abort on a broken
 * invariant: slots and ports in range, hosts inside the text, node
 * indexes inside the table, the redirect and TRYAGAIN bounds, a refused
 * fill leaving the map unchanged.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hl_cluster.h"

#define CHECK(cond) do { \
    if (!(cond)) { \
        fprintf(stderr, "fuzz_cluster: check failed at line %d: %s\n", \
                __LINE__, #cond); \
        abort(); \
    } \
} while (0)

#define MAX_RANGES 64

static hl_cluster_map_t map, other, before;

static const hl_cluster_range_t three[] = {
    { 0, 5460, "127.0.0.1", 9, 7001 },
    { 5461, 10922, "127.0.0.1", 9, 7002 },
    { 10923, 16383, "127.0.0.1", 9, 7003 },
};

/* Aborts unless every slot of m names a node of its table. */
static void check_map(const hl_cluster_map_t *m)
{
    unsigned s, i;

    CHECK(m->n_nodes <= HL_CLUSTER_NODES_MAX);
    for (s = 0; s < HL_CLUSTER_SLOTS; ++s)
        CHECK(m->node_of_slot[s] == HL_CLUSTER_NO_NODE
              || m->node_of_slot[s] < m->n_nodes);
    for (i = 0; i < m->n_nodes; ++i) {
        size_t n = strnlen(m->nodes[i].host, HL_CLUSTER_HOST_MAX);

        CHECK(n > 0 && n < HL_CLUSTER_HOST_MAX);
        CHECK(m->nodes[i].port >= 1 && m->nodes[i].port <= 65535);
    }
}

/* Checks the parse of one line (text, len bytes). */
static void check_parse(const char *text, size_t len)
{
    hl_cluster_error_t e;
    hl_cluster_err_t k = hl_cluster_parse_error(text, len, &e);

    CHECK(k == e.kind);
    CHECK(k >= HL_CLUSTER_ERR_NONE && k <= HL_CLUSTER_ERR_MALFORMED);
    if (k == HL_CLUSTER_ERR_MOVED || k == HL_CLUSTER_ERR_ASK) {
        CHECK(e.slot < HL_CLUSTER_SLOTS);
        CHECK(e.port >= 1 && e.port <= 65535);
        CHECK(e.host_len < HL_CLUSTER_HOST_MAX);
        CHECK(e.host_len == 0 || (e.host >= text && e.host + e.host_len <= text + len));
    } else {
        CHECK(e.host == NULL && e.host_len == 0 && e.port == 0);
    }
    CHECK(hl_cluster_keyslot(text, len) < HL_CLUSTER_SLOTS);
    CHECK(hl_cluster_prefix_ok(text, len) == (memchr(text, '{', len) == NULL));
}

/* Feeds one line to the running decision *a (begun when *open is 0). */
static void step(hl_cluster_attempt_t *a, int *open, const char *text,
                 size_t len)
{
    hl_cluster_action_t act;

    if (!*open) {
        if (hl_cluster_attempt_begin(&map, a, hl_cluster_keyslot(text, len))
            != HL_CLUSTER_SEND) {
            hl_cluster_map_fill(&map, three, 3, "127.0.0.1", 9);
            return;
        }
        *open = 1;
    }
    if (len > 0 && text[0] == '!')
        act = hl_cluster_attempt_failed(&map, a);
    else
        act = hl_cluster_attempt_reply(&map, a, text, len);
    CHECK(act == HL_CLUSTER_SEND || act == HL_CLUSTER_DONE || act == HL_CLUSTER_FALLBACK);
    CHECK(a->redirects <= HL_CLUSTER_MAX_REDIRECTS + 1);
    CHECK(a->tryagain <= HL_CLUSTER_MAX_TRYAGAIN + 1);
    CHECK(a->wait_ms >= 0 && a->wait_ms <= HL_CLUSTER_TRYAGAIN_MS * HL_CLUSTER_MAX_TRYAGAIN);
    if (act == HL_CLUSTER_SEND) {
        CHECK(a->node >= 0 && (unsigned)a->node < map.n_nodes);
        CHECK(a->redirects <= HL_CLUSTER_MAX_REDIRECTS);
        CHECK(a->tryagain <= HL_CLUSTER_MAX_TRYAGAIN);
    } else {
        CHECK(a->wait_ms == 0);
        *open = 0;
    }
    CHECK(map.n_nodes <= HL_CLUSTER_NODES_MAX);
}

/* Adds the line to r[*n] if it reads "FIRST LAST HOST PORT"; the host
 * points into line (a NUL-terminated copy the caller keeps). */
static void gather(char *line, hl_cluster_range_t *r, size_t *n)
{
    unsigned first, last;
    int port, at = 0, end = 0;

    if (*n >= MAX_RANGES
        || sscanf(line, "%u %u %n%*s%n %d", &first, &last, &at, &end, &port) != 3)
        return;
    r[*n].first = first;
    r[*n].last = last;
    r[*n].host = line + at;
    r[*n].host_len = (size_t)(end - at);
    r[*n].port = port;
    ++*n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hl_cluster_range_t ranges[MAX_RANGES];
    hl_cluster_attempt_t a;
    size_t n_ranges = 0, off = 0;
    char *text = malloc(size + 1);
    int open = 0, rc;

    if (text == NULL)
        abort();
    memcpy(text, data, size);
    text[size] = '\0';
    hl_cluster_map_init(&map);
    hl_cluster_map_fill(&map, three, 3, "127.0.0.1", 9);
    while (off <= size) {
        char *nl = memchr(text + off, '\n', size - off);
        size_t len = nl ? (size_t)(nl - (text + off)) : size - off;

        check_parse(text + off, len);
        step(&a, &open, text + off, len);
        if (nl)
            *nl = '\0';
        gather(text + off, ranges, &n_ranges);
        off += len + 1;
    }
    check_map(&map);
    hl_cluster_map_init(&other);
    hl_cluster_map_fill(&other, three, 3, "127.0.0.1", 9);
    memcpy(&before, &other, sizeof(other));
    rc = hl_cluster_map_fill(&other, ranges, n_ranges, "10.0.0.1", 8);
    CHECK(rc >= -1 && rc <= 1);
    if (rc < 0)
        CHECK(memcmp(&before, &other, sizeof(other)) == 0);
    check_map(&other);
    free(text);
    return 0;
}
