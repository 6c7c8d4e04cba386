/*
 * test_cluster.c - the Redis Cluster client's pure core (hl_cluster.c,
 * hl_cluster_tags.c; issue 28): CRC16 key slots with hash tags as Redis
 * computes them, the 1024 bucket tags and how evenly they spread, the slot
 * map filled from CLUSTER SLOTS, the parsing of MOVED/ASK and the other
 * cluster errors, and the algorithm of one decision (redirect bound,
 * ASKING, TRYAGAIN, NOSCRIPT, CLUSTERDOWN, CROSSSLOT, one refresh a
 * second). t/94-cluster-client.t runs the same code against a real
 * 3-master cluster.
 */
#include "hl_cluster.h"
#include "hl_cluster_tags.h"
#include "hl_siphash.h"
#include "hl_tap.h"
#include "hl_redis_call.h"

#include <stdio.h>
#include <string.h>

#define S(lit) (lit), (sizeof(lit) - 1)

static unsigned slot_of(const char *key)
{
    return hl_cluster_keyslot(key, strlen(key));
}

static void test_keyslot(void)
{
    is_int(hl_cluster_crc16(S("123456789")), 0x31C3, "CRC16/XMODEM of 123456789 is 0x31C3");
    is_int(slot_of("123456789"), 12739, "CLUSTER KEYSLOT 123456789 = 12739");
    is_int(slot_of(""), 0, "the empty key: slot 0");
    is_int(slot_of("{user1000}.following"), slot_of("user1000"),
           "a hash tag: only the bytes between the braces count");
    is_int(slot_of("foo{}{bar}"), hl_cluster_crc16(S("foo{}{bar}")) & 16383,
           "an empty first tag: the whole key (Redis' rule)");
    is_int(slot_of("foo{{bar}}zap"), slot_of("{bar"),
           "the first '{' to the next '}': \"{bar\"");
    is_int(slot_of("foo{bar}{zap}"), slot_of("bar"), "only the first tag counts");
    is_int(slot_of("foo{bar"), hl_cluster_crc16(S("foo{bar")) & 16383,
           "an unclosed '{': the whole key");
    is_int(slot_of("p:{hl:5.a58}:d0/login|1.2.3.4"), 80,
           "a counter key lands on its bucket's slot (16 x 5)");
    is_int(slot_of("p:{hl:5.a58}:d0/x|{evil}"), 80,
           "a client part holding braces cannot move the key");
    ok(hl_cluster_prefix_ok(S("shop:")), "a prefix without '{' is accepted");
    ok(hl_cluster_prefix_ok("", 0), "no prefix is accepted");
    ok(!hl_cluster_prefix_ok(S("a{b}:")), "a prefix with a hash tag is refused");
    ok(!hl_cluster_prefix_ok(S("a{")), "a prefix with a lone '{' is refused");
}

static void test_tags(void)
{
    char want[HL_CLUSTER_TAG_MAX], head[16];
    unsigned b, good = 0, formed = 0, distinct = 1, masters;

    for (b = 0; b < HL_CLUSTER_BUCKETS; ++b) {
        const char *t = hl_cluster_bucket_tag(b);
        int hl = snprintf(head, sizeof(head), "hl:%u.", b);

        if (hl_cluster_keyslot(t, strlen(t)) == b * 16)
            ++good;
        if (strncmp(t, head, (size_t)hl) == 0 && strlen(t) < HL_CLUSTER_TAG_MAX)
            ++formed;
        if (b > 0 && strcmp(t, hl_cluster_bucket_tag(b - 1)) == 0)
            distinct = 0;
    }
    is_int(good, HL_CLUSTER_BUCKETS, "every bucket's tag hashes to slot 16 x B");
    is_int(formed, HL_CLUSTER_BUCKETS, "every tag reads hl:B.S and fits HL_CLUSTER_TAG_MAX");
    ok(distinct, "the tags differ");
    ok(hl_cluster_bucket_tag(HL_CLUSTER_BUCKETS) == NULL, "no tag past bucket 1023");

    /* The table is what the generator's search gives (a sample: the whole
     * search takes a second, longer under ASan). */
    good = 0;
    for (b = 0; b < HL_CLUSTER_BUCKETS; b += 31)
        if (hl_cluster_tag_search(b, want, sizeof(want)) > 0
            && strcmp(want, hl_cluster_bucket_tag(b)) == 0)
            ++good;
    is_int(good, (HL_CLUSTER_BUCKETS + 30) / 31, "the table matches hl_cluster_tag_search");
    is_int(hl_cluster_tag_search(1023, want, sizeof(want)), (int)strlen(hl_cluster_bucket_tag(1023)),
           "the search returns the tag's length");
    is_int(hl_cluster_tag_search(1024, want, sizeof(want)), -1, "no search past bucket 1023");
    is_int(hl_cluster_tag_search(0, want, 8), -1, "no search into a small buffer");

    /* Any contiguous split of the slots (redis-cli --cluster create gives
     * N masters N such ranges) holds 1024/N buckets within one. */
    for (masters = 2; masters <= 12; ++masters) {
        unsigned m, worst = 0;

        for (m = 0; m < masters; ++m) {
            unsigned first = m * 16384 / masters, last = (m + 1) * 16384 / masters - 1;
            unsigned n = 0, share = 1024 * 1000 / masters, got;

            for (b = 0; b < HL_CLUSTER_BUCKETS; ++b)
                n += b * 16 >= first && b * 16 <= last;
            got = n * 1000;
            if (got > share + 1000 || got + 1000 < share)
                ++worst;
        }
        okf(worst == 0, "%u masters: each holds 1024/%u buckets within one", masters, masters);
    }
    /* ... and so does any range a reshard moves: k slots hold k/16
     * buckets within one. */
    {
        unsigned first, len, bad = 0;

        for (first = 0; first < 16384; first += 97)
            for (len = 1; first + len <= 16384; len = len * 3 + 1) {
                unsigned n = 0;

                for (b = 0; b < HL_CLUSTER_BUCKETS; ++b)
                    n += b * 16 >= first && b * 16 < first + len;
                if (n > len / 16 + 1 || n + 1 < len / 16)
                    ++bad;
            }
        is_int(bad, 0, "any slot range of k slots holds k/16 buckets within one");
    }
}

static void test_bucket_spread(void)
{
    unsigned char secret[HL_SIPHASH_KEY_BYTES];
    hl_siphash_key_t k;
    unsigned count[3] = { 0, 0, 0 }, i;
    char client[32];

    is_int(hl_cluster_bucket(0), 0, "bucket of hash 0");
    is_int(hl_cluster_bucket(1023), 1023, "bucket of hash 1023");
    is_int(hl_cluster_bucket(1024), 0, "bucket: the hash mod 1024");
    is_int(hl_cluster_bucket(0xffffffffffffffffULL), 1023, "bucket of the largest hash");

    for (i = 0; i < sizeof(secret); ++i)
        secret[i] = (unsigned char)(i * 7 + 1);
    hl_siphash_key(&k, secret);
    for (i = 0; i < 3000; ++i) {
        unsigned b, slot;
        int n = snprintf(client, sizeof(client), "10.%u.%u.%u", i >> 16, (i >> 8) & 255, i & 255);

        b = hl_cluster_bucket(hl_siphash24(&k, client, (size_t)n));
        slot = hl_cluster_keyslot(hl_cluster_bucket_tag(b), strlen(hl_cluster_bucket_tag(b)));
        ++count[slot <= 5460 ? 0 : slot <= 10922 ? 1 : 2];
    }
    for (i = 0; i < 3; ++i)
        okf(count[i] >= 900 && count[i] <= 1100,
            "3000 client addresses: master %u of 3 holds %u (within 10%% of 1000)", i, count[i]);
}

/* Ranges as redis-cli --cluster create gives 3 masters. */
static const hl_cluster_range_t three[] = {
    { 0, 5460, "127.0.0.1", 9, 7001 },
    { 5461, 10922, "127.0.0.1", 9, 7002 },
    { 10923, 16383, "127.0.0.1", 9, 7003 },
};

static void test_map(void)
{
    static hl_cluster_map_t m, before;
    hl_cluster_range_t r[3];
    int64_t now = 5000000;
    unsigned i, s;
    int again;

    hl_cluster_map_init(&m);
    is_int(hl_cluster_map_lookup(&m, 0), -1, "an empty map knows no node");
    ok(hl_cluster_map_refresh_due(&m, now), "an empty map: refresh due at once");
    ok(!hl_cluster_map_refresh_due(&m, now + 999), "not again within the second, whatever came of it");
    ok(hl_cluster_map_refresh_due(&m, now + 1000), "again a second later while still wanted");

    is_int(hl_cluster_map_fill(&m, three, 3, S("127.0.0.1")), 0, "three ranges fill the map");
    is_int(m.n_nodes, 3, "three nodes");
    is_int(hl_cluster_map_lookup(&m, 0), 0, "slot 0: the first master");
    is_int(hl_cluster_map_lookup(&m, 5461), 1, "slot 5461: the second");
    is_int(hl_cluster_map_lookup(&m, 16383), 2, "slot 16383: the third");
    is_int(hl_cluster_map_lookup(&m, 16384), -1, "no slot 16384");
    is_str(m.nodes[2].host, "127.0.0.1", "node host");
    is_int(m.nodes[2].port, 7003, "node port");
    ok(!hl_cluster_map_refresh_due(&m, now + 5000), "a filled map wants no refresh");

    /* A reshard moved 1000 slots from the first master to the third; the
     * node indexes stay. */
    memcpy(r, three, sizeof(r));
    r[0].first = 1000;
    r[2].first = 0; r[2].last = 999;
    {
        hl_cluster_range_t r4[4] = { r[0], r[1], r[2], three[2] };

        is_int(hl_cluster_map_fill(&m, r4, 4, S("127.0.0.1")), 0, "a resharded layout fills");
    }
    is_int(hl_cluster_map_lookup(&m, 999), 2, "slot 999 moved to the third master");
    is_int(hl_cluster_map_lookup(&m, 1000), 0, "slot 1000 stays on the first");
    is_int(m.n_nodes, 3, "no new node");

    /* An unknown endpoint ("?", or empty) is the node that answered. */
    memcpy(r, three, sizeof(r));
    r[1].host = "?"; r[1].host_len = 1;
    r[2].host = ""; r[2].host_len = 0;
    is_int(hl_cluster_map_fill(&m, r, 3, S("127.0.0.1")), 0, "'?' and empty hosts fill");
    is_int(hl_cluster_map_lookup(&m, 6000), 1, "'?' is the node that answered");
    is_int(hl_cluster_map_lookup(&m, 16000), 2, "so is an empty host");

    /* Uncovered slots (a master failed without replicas) stay unknown. */
    is_int(hl_cluster_map_fill(&m, three, 2, S("127.0.0.1")), 0, "two ranges of three fill");
    is_int(hl_cluster_map_lookup(&m, 12000), -1, "an uncovered slot has no node");

    /* Invalid replies leave the map as it was. */
    hl_cluster_map_fill(&m, three, 3, S("127.0.0.1"));
    memcpy(&before, &m, sizeof(m));
    {
        static const hl_cluster_range_t bad[] = {
            { 16383, 10923, "127.0.0.1", 9, 7003 },
            { 10923, 16384, "127.0.0.1", 9, 7003 },
            { 10923, 16383, "127.0.0.1", 9, 0 },
            { 10923, 16383, "127.0.0.1", 9, 65536 },
            { 10923, 16383, "127.0.0.1\r\nFLUSHALL", 20, 7003 },
            { 10923, 16383, "", 0, 7003 },
        };
        static const char *const why[] = {
            "first > last", "a slot past 16383", "port 0", "port 65536",
            "a host with CR LF", "an empty host without a self host",
        };

        for (i = 0; i < sizeof(bad) / sizeof(*bad); ++i) {
            memcpy(r, three, sizeof(r));
            r[2] = bad[i];
            okf(hl_cluster_map_fill(&m, r, 3, "", 0) == -1, "%s is refused", why[i]);
        }
    }
    is_int(hl_cluster_map_fill(&m, r, 0, S("127.0.0.1")), -1, "no range is refused");
    ok(memcmp(&before, &m, sizeof(m)) == 0, "a refused reply leaves the map unchanged");

    /* More than 64 distinct masters cannot be held; a table filled by
     * earlier layouts is emptied for a new one (indexes renumbered). */
    {
        static hl_cluster_range_t many[HL_CLUSTER_NODES_MAX + 1];
        static char hosts[HL_CLUSTER_NODES_MAX + 1][16];

        for (i = 0; i <= HL_CLUSTER_NODES_MAX; ++i) {
            many[i].first = many[i].last = i;
            many[i].host_len = (size_t)snprintf(hosts[i], sizeof(hosts[i]), "10.0.0.%u", i);
            many[i].host = hosts[i];
            many[i].port = 6379;
        }
        is_int(hl_cluster_map_fill(&m, many, HL_CLUSTER_NODES_MAX + 1, S("127.0.0.1")), -1,
               "65 masters are refused");
        again = hl_cluster_map_fill(&m, many, HL_CLUSTER_NODES_MAX, S("127.0.0.1"));
        is_int(again, 1, "64 new masters beside 3 known: the table is renumbered");
        is_int(m.n_nodes, HL_CLUSTER_NODES_MAX, "64 nodes");
        is_int(hl_cluster_map_fill(&m, three, 3, S("127.0.0.1")), 1, "then the 3 again: renumbered");
        is_int(m.n_nodes, 3, "3 nodes");
        for (s = 0, i = 0; s < HL_CLUSTER_SLOTS; ++s)
            i += hl_cluster_map_lookup(&m, s) >= 0;
        is_int(i, HL_CLUSTER_SLOTS, "every slot covered again");
    }

    is_int(hl_cluster_map_node(&m, S("[::1]"), 7000), 3, "a bracketed IPv6 node is added");
    is_str(m.nodes[3].host, "::1", "without its brackets");
    is_int(hl_cluster_map_node(&m, S("::1"), 7000), 3, "and found again without them");
    is_int(hl_cluster_map_node(&m, S("a b"), 7000), -1, "a host with a space is refused");
}

static void test_parse(void)
{
    hl_cluster_error_t e;
    static const char *const malformed[] = {
        "MOVED", "MOVED ", "MOVED 1", "MOVED 1 ", "MOVED 16384 a:1", "MOVED -1 a:1",
        "MOVED 1 a:0", "MOVED 1 a:65536", "MOVED 1 a:", "MOVED 1 a", "MOVED 1 a:1 ",
        "MOVED 1 a:1x", "MOVED 000001 a:1", "MOVED  1 a:1", "MOVED 1 a b:1",
        "MOVED 1 a\tb:1", "MOVED 1 [::1:1", "ASK 1 a:99999", "MOVED +1 a:1",
        "MOVED 1 a:+1", "MOVED 1 :", "ASK x a:1",
    };
    static const char *const none[] = {
        "", "ERR Error running script", "MOVEDX 1 a:1", "moved 1 a:1", "-",
        "WRONGTYPE Operation against a key", "OOM command not allowed", "ASKING",
        "NOSCRIPTS", "TRYAGAINX",
    };
    unsigned i;

    is_int(hl_cluster_parse_error(S("MOVED 3999 127.0.0.1:6381"), &e), HL_CLUSTER_ERR_MOVED, "MOVED");
    is_int(e.slot, 3999, "MOVED: slot");
    ok(e.host_len == 9 && memcmp(e.host, "127.0.0.1", 9) == 0, "MOVED: host");
    is_int(e.port, 6381, "MOVED: port");
    is_int(hl_cluster_parse_error(S("-ASK 16383 10.0.0.2:7000"), &e), HL_CLUSTER_ERR_ASK,
           "ASK with the leading '-'");
    is_int(e.slot, 16383, "ASK: slot 16383");
    is_int(hl_cluster_parse_error(S("MOVED 0 ::1:7000"), &e), HL_CLUSTER_ERR_MOVED, "MOVED to IPv6");
    ok(e.host_len == 3 && memcmp(e.host, "::1", 3) == 0 && e.port == 7000,
       "IPv6: split on the last ':'");
    is_int(hl_cluster_parse_error(S("MOVED 0 [fe80::1%eth0]:7000"), &e), HL_CLUSTER_ERR_MOVED,
           "MOVED to a bracketed IPv6 address with a zone");
    ok(e.host_len == 12 && memcmp(e.host, "fe80::1%eth0", 12) == 0, "its brackets removed");
    is_int(hl_cluster_parse_error(S("MOVED 12 :6380"), &e), HL_CLUSTER_ERR_MOVED,
           "MOVED with an unknown endpoint (Redis 7)");
    ok(e.host_len == 0 && e.port == 6380, "an empty host: the node that answered");
    is_int(hl_cluster_parse_error(S("MOVED 00012 redis-2.example:6380"), &e), HL_CLUSTER_ERR_MOVED,
           "MOVED to a host name, slot with leading zeros");
    is_int(e.slot, 12, "slot 12");
    for (i = 0; i < sizeof(malformed) / sizeof(*malformed); ++i)
        okf(hl_cluster_parse_error(malformed[i], strlen(malformed[i]), &e) == HL_CLUSTER_ERR_MALFORMED
            && e.host == NULL, "malformed: \"%s\"", malformed[i]);
    for (i = 0; i < sizeof(none) / sizeof(*none); ++i)
        okf(hl_cluster_parse_error(none[i], strlen(none[i]), &e) == HL_CLUSTER_ERR_NONE,
            "not the cluster's: \"%s\"", none[i]);
    is_int(hl_cluster_parse_error(NULL, 0, &e), HL_CLUSTER_ERR_NONE, "no error text");
    is_int(hl_cluster_parse_error(S("TRYAGAIN Multiple keys request during rehashing of slot"), &e),
           HL_CLUSTER_ERR_TRYAGAIN, "TRYAGAIN");
    is_int(hl_cluster_parse_error(S("NOSCRIPT No matching script. Please use EVAL."), &e),
           HL_CLUSTER_ERR_NOSCRIPT, "NOSCRIPT");
    is_int(hl_cluster_parse_error(S("CLUSTERDOWN The cluster is down"), &e),
           HL_CLUSTER_ERR_CLUSTERDOWN, "CLUSTERDOWN");
    is_int(hl_cluster_parse_error(S("CLUSTERDOWN"), &e), HL_CLUSTER_ERR_CLUSTERDOWN, "CLUSTERDOWN alone");
    is_int(hl_cluster_parse_error(S("CROSSSLOT Keys in request don't hash to the same slot"), &e),
           HL_CLUSTER_ERR_CROSSSLOT, "CROSSSLOT");
    is_int(hl_cluster_parse_error(S("LOADING Redis is loading the dataset in memory"), &e),
           HL_CLUSTER_ERR_NODE, "LOADING");
    is_int(hl_cluster_parse_error(S("READONLY You can't write against a read only replica."), &e),
           HL_CLUSTER_ERR_NODE, "READONLY");
    is_int(hl_cluster_parse_error(S("MASTERDOWN Link with MASTER is down"), &e),
           HL_CLUSTER_ERR_NODE, "MASTERDOWN");
}

static void test_attempt(void)
{
    static hl_cluster_map_t m;
    hl_cluster_attempt_t a;
    int64_t now = 9000000;
    unsigned slot = 100;   /* on the first master */
    int i;

    hl_cluster_map_init(&m);
    is_int(hl_cluster_attempt_begin(&m, &a, slot), HL_CLUSTER_FALLBACK, "no map: fall back");
    ok(m.refresh_wanted, "and ask for a map");
    ok(hl_cluster_map_refresh_due(&m, now), "the map is due");
    hl_cluster_map_fill(&m, three, 3, S("127.0.0.1"));

    is_int(hl_cluster_attempt_begin(&m, &a, slot), HL_CLUSTER_SEND, "a mapped slot: send");
    is_int(a.node, 0, "to its master");
    ok(!a.asking && !a.eval && a.wait_ms == 0, "plainly: no ASKING, EVALSHA, no wait");
    is_int(hl_cluster_attempt_reply(&m, &a, NULL, 0), HL_CLUSTER_DONE, "a reply: done");
    hl_cluster_attempt_begin(&m, &a, slot);
    is_int(hl_cluster_attempt_reply(&m, &a, S("ERR Error running script (call to f_1)")),
           HL_CLUSTER_DONE, "a script error is the caller's: done");

    /* MOVED: the map learns, the call goes there, a refresh is asked. */
    hl_cluster_attempt_begin(&m, &a, slot);
    is_int(hl_cluster_attempt_reply(&m, &a, S("MOVED 100 127.0.0.1:7003")), HL_CLUSTER_SEND,
           "MOVED: send again");
    is_int(a.node, 2, "to the master named");
    ok(!a.asking, "without ASKING");
    is_int(hl_cluster_map_lookup(&m, 100), 2, "MOVED updates the slot's node");
    is_int(hl_cluster_map_lookup(&m, 101), 0, "and only that slot");
    ok(hl_cluster_map_refresh_due(&m, now + 2000), "MOVED asks for a refresh");
    for (i = 0; i < 100; ++i)
        hl_cluster_map_refresh_due(&m, now + 2001 + i);
    ok(!hl_cluster_map_refresh_due(&m, now + 2999), "a storm of MOVED: one refresh a second");
    hl_cluster_map_fill(&m, three, 3, S("127.0.0.1"));

    /* MOVED to a new node, and with an unknown endpoint. */
    hl_cluster_attempt_begin(&m, &a, slot);
    is_int(hl_cluster_attempt_reply(&m, &a, S("MOVED 100 127.0.0.1:7004")), HL_CLUSTER_SEND,
           "MOVED to a new master");
    is_int(a.node, 3, "a node is added");
    is_int(hl_cluster_attempt_reply(&m, &a, S("MOVED 100 :7002")), HL_CLUSTER_SEND,
           "MOVED with an empty host");
    is_int(a.node, 1, "the answering node's host, the port given");
    hl_cluster_map_fill(&m, three, 3, S("127.0.0.1"));

    /* ASK: once, with ASKING, the map unchanged; NOSCRIPT there: EVAL
     * with ASKING again. */
    hl_cluster_attempt_begin(&m, &a, slot);
    is_int(hl_cluster_attempt_reply(&m, &a, S("ASK 100 127.0.0.1:7002")), HL_CLUSTER_SEND, "ASK: send");
    ok(a.node == 1 && a.asking, "to the target, with ASKING");
    is_int(hl_cluster_map_lookup(&m, 100), 0, "ASK leaves the map");
    ok(!m.refresh_wanted, "and asks for no refresh");
    is_int(hl_cluster_attempt_reply(&m, &a, S("NOSCRIPT No matching script")), HL_CLUSTER_SEND,
           "NOSCRIPT on the target: send again");
    ok(a.node == 1 && a.asking && a.eval, "EVAL on the target, ASKING again");
    is_int(hl_cluster_attempt_reply(&m, &a, S("NOSCRIPT No matching script")), HL_CLUSTER_FALLBACK,
           "NOSCRIPT after EVAL: fall back");
    ok(!a.node_down && a.why == HL_CLUSTER_ERR_NOSCRIPT, "without opening the breaker");

    /* ASK then MOVED: ASKING is dropped. */
    hl_cluster_attempt_begin(&m, &a, slot);
    hl_cluster_attempt_reply(&m, &a, S("ASK 100 127.0.0.1:7002"));
    hl_cluster_attempt_reply(&m, &a, S("MOVED 100 127.0.0.1:7003"));
    ok(a.node == 2 && !a.asking, "MOVED after ASK: no ASKING");
    hl_cluster_map_fill(&m, three, 3, S("127.0.0.1"));

    /* TRYAGAIN: twice, waiting a little longer each time, then fall back. */
    hl_cluster_attempt_begin(&m, &a, slot);
    hl_cluster_attempt_reply(&m, &a, S("ASK 100 127.0.0.1:7002"));
    is_int(hl_cluster_attempt_reply(&m, &a, S("TRYAGAIN Multiple keys")), HL_CLUSTER_SEND, "TRYAGAIN: retry");
    ok(a.node == 1 && a.asking && a.wait_ms == HL_CLUSTER_TRYAGAIN_MS, "on the same node, ASKING, after a wait");
    is_int(hl_cluster_attempt_reply(&m, &a, S("TRYAGAIN Multiple keys")), HL_CLUSTER_SEND, "TRYAGAIN: retry again");
    is_int(a.wait_ms, 2 * HL_CLUSTER_TRYAGAIN_MS, "waiting longer");
    is_int(hl_cluster_attempt_reply(&m, &a, S("TRYAGAIN Multiple keys")), HL_CLUSTER_FALLBACK,
           "a third TRYAGAIN: fall back");
    ok(!a.node_down && a.why == HL_CLUSTER_ERR_TRYAGAIN && a.wait_ms == 0,
       "the node is not down (a migration)");

    /* The redirect bound: 5 followed, the 6th gives up. */
    hl_cluster_attempt_begin(&m, &a, slot);
    for (i = 0; i < HL_CLUSTER_MAX_REDIRECTS; ++i) {
        const char *r = i % 2 ? "MOVED 100 127.0.0.1:7002" : "ASK 100 127.0.0.1:7003";

        if (hl_cluster_attempt_reply(&m, &a, r, strlen(r)) != HL_CLUSTER_SEND)
            break;
    }
    is_int(i, HL_CLUSTER_MAX_REDIRECTS, "5 redirects are followed");
    is_int(hl_cluster_attempt_reply(&m, &a, S("MOVED 100 127.0.0.1:7001")), HL_CLUSTER_FALLBACK,
           "the 6th gives up (a redirect loop ends)");
    ok(!a.node_down && a.why == HL_CLUSTER_ERR_MOVED, "without opening a breaker");
    hl_cluster_map_fill(&m, three, 3, S("127.0.0.1"));

    /* Failures of a node: its breaker, a refresh. */
    hl_cluster_attempt_begin(&m, &a, slot);
    is_int(hl_cluster_attempt_reply(&m, &a, S("CLUSTERDOWN The cluster is down")), HL_CLUSTER_FALLBACK,
           "CLUSTERDOWN: fall back");
    ok(a.node_down && a.node == 0 && a.why == HL_CLUSTER_ERR_CLUSTERDOWN, "that node's breaker opens");
    ok(m.refresh_wanted, "CLUSTERDOWN asks for a refresh");
    hl_cluster_map_fill(&m, three, 3, S("127.0.0.1"));
    hl_cluster_attempt_begin(&m, &a, slot);
    is_int(hl_cluster_attempt_failed(&m, &a), HL_CLUSTER_FALLBACK, "a timeout: fall back");
    ok(a.node_down && a.node == 0, "that node's breaker opens");
    ok(m.refresh_wanted, "a timeout asks for a refresh (failover)");
    hl_cluster_map_fill(&m, three, 3, S("127.0.0.1"));
    hl_cluster_attempt_begin(&m, &a, slot);
    is_int(hl_cluster_attempt_reply(&m, &a, S("CROSSSLOT Keys in request don't hash to the same slot")),
           HL_CLUSTER_FALLBACK, "CROSSSLOT: fall back");
    ok(!a.node_down && a.why == HL_CLUSTER_ERR_CROSSSLOT, "a bug of ours, not the node's");
    hl_cluster_attempt_begin(&m, &a, slot);
    is_int(hl_cluster_attempt_reply(&m, &a, S("MOVED 100 127.0.0.1:0")), HL_CLUSTER_FALLBACK,
           "a malformed MOVED: fall back");
    ok(!a.node_down && m.refresh_wanted, "and ask the map again");
    ok(hl_cluster_map_lookup(&m, 100) == 0, "the map is not touched");
}

/* The Redis store's keys under a bucket tag (redis-cluster://): every key
 * of bucket B on slot 16 x B, the per-bucket sets too; redis:// keys as
 * they always were. */
static void test_redis_key_tag(void)
{
    char out[HL_REDIS_KEY_MAX];
    size_t n;
    unsigned b, bad = 0;

    n = hl_redis_key_tag(out, "hl:", NULL, S("d0/x|1.2.3.4"));
    is_int((int)n, (int)strlen("hl:{hl}:d0/x|1.2.3.4"), "tag NULL: PREFIX{hl}: as redis:// always wrote");
    ok(memcmp(out, "hl:{hl}:d0/x|1.2.3.4", n) == 0, "... byte for byte");
    n = hl_redis_key(out, "hl:", S("limited"));
    ok(n == 15 && memcmp(out, "hl:{hl}:limited", n) == 0, "hl_redis_key is the tag NULL form");
    n = hl_redis_key_tag(out, "shop:", hl_cluster_bucket_tag(5), S("d0/x|a"));
    ok(n > 0 && memcmp(out, "shop:{hl:5.", 11) == 0, "PREFIX{hl:B.S}: for bucket 5");
    for (b = 0; b < HL_CLUSTER_BUCKETS; ++b) {
        const char *tag = hl_cluster_bucket_tag(b);
        n = hl_redis_key_tag(out, "hl:", tag, S("d0/route|h:0123456789abcdef"));
        bad += n == 0 || hl_cluster_keyslot(out, n) != 16 * b;
        n = hl_redis_key_tag(out, "hl:", tag, S("limited"));
        bad += n == 0 || hl_cluster_keyslot(out, n) != 16 * b;
    }
    is_int((int)bad, 0, "every bucket's counters and index sets on slot 16 x B");
    ok(hl_redis_key_tag(out, "hl:", "0123456789abcdef", S("x")) == 0,
       "a tag longer than HL_REDIS_TAG_MAX is refused");
}

int main(void)
{
    test_keyslot();
    test_tags();
    test_bucket_spread();
    test_map();
    test_parse();
    test_attempt();
    test_redis_key_tag();
    return done_testing();
}
