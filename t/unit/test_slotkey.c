/* hl_slotkey: a counter's key text written and read back, malformed keys,
 * clients holding '|', long (compacted) keys, and which slot keys are a
 * ban's counters (the rule the Redis script shares: test_slotkey_lua.sh
 * runs the script's matcher over the ban_slots list below). */
#include "hl_tap.h"
#include "hl_slotkey.h"
#include "hl_limiter.h"
#include "hl_ban.h"

/* Slot keys and whether each is a ban's counter (hl_slotkey_is_ban_slot).
 * test_slotkey_lua.sh reads the lines between the two markers: one
 * { EXPECTED, "KEY" } a line, no '"' or '\' in KEY. */
static const struct {
    int         ban;
    const char *skey;
} ban_slots[] = {
/* BEGIN BAN SLOTS */
    { 1, "d0ban|127.0.0.1" },
    { 1, "d0localhost:8080ban|10.0.0.1" },
    { 1, "d0[::1]:8443ban|2001:db8::" },
    { 1, "d0:80ban|10.0.0.1" },
    { 1, "d0ban|" },
    { 1, "d0ban|a|b" },
    { 1, "d0a:1b:2ban|c" },
    { 0, "d1ban|127.0.0.1" },
    { 0, "t0ban|127.0.0.1" },
    { 0, "d0rej|127.0.0.1" },
    { 0, "d0/ban|127.0.0.1" },
    { 0, "d0/x/ban|127.0.0.1" },
    { 0, "d0localhost:8080/ban|1.2.3.4" },
    { 0, "d0/x:1ban|127.0.0.1" },
    { 0, "d0h:80/x:1ban|127.0.0.1" },
    { 0, "d0a:80x9ban|127.0.0.1" },
    { 0, "d0host:ban|127.0.0.1" },
    { 0, "d0/login|127.0.0.1" },
    { 0, "d0/login|ban|127.0.0.1" },
    { 0, "d0|127.0.0.1" },
    { 0, "d0ban" },
    { 0, "d0" },
    { 0, "d" },
/* END BAN SLOTS */
};

/* Encodes tag, scope, client, decodes the result, and checks every part. */
static void round_trip(const char *tag, const char *scope, const char *client,
                       hl_slotkey_kind_t kind, size_t tag_len)
{
    char key[512];
    hl_slotkey_t k;
    size_t len = hl_slotkey_encode(key, sizeof(key), tag, strlen(tag), scope,
                                   strlen(scope), client, strlen(client));

    okf(len == strlen(tag) + strlen(scope) + 1 + strlen(client)
        && strlen(key) == len, "encode %s%s|%s: length", tag, scope, client);
    okf(hl_slotkey_decode(key, len, &k) == 0 && k.key == key
        && k.key_len == len && k.name_len == strlen(tag) + strlen(scope)
        && k.client == key + k.name_len + 1
        && k.client_len == strlen(client)
        && !memcmp(k.client, client, k.client_len) && k.origin == 0
        && k.window == -1 && !k.compacted,
        "decode %s: name and client", key);
    okf(k.kind == kind && k.tag_len == tag_len, "decode %s: kind %d, tag %zu",
        key, (int)k.kind, k.tag_len);
}

static void test_round_trips(void)
{
    round_trip("", "/login", "203.0.113.7", HL_SLOTKEY_QUOTA, 0);
    /* A quota's tag is not told from its scope by text alone. */
    round_trip("localhost:8080", "/login", "10.0.0.1", HL_SLOTKEY_QUOTA, 0);
    round_trip("", "/api plan=gold", "k:5f2b", HL_SLOTKEY_QUOTA, 0);
    round_trip("", HL_SLOTKEY_BAN_SCOPE, "127.0.0.1", HL_SLOTKEY_BAN, 0);
    round_trip("localhost:8080", HL_SLOTKEY_BAN_SCOPE, "10.0.0.1",
               HL_SLOTKEY_BAN, 14);
    round_trip("[::1]:8443", HL_SLOTKEY_REJ_SCOPE, "2001:db8::",
               HL_SLOTKEY_REJ, 10);
    /* The client part is everything after the first '|'. */
    round_trip("", "/api", "a|b|c", HL_SLOTKEY_QUOTA, 0);
    round_trip("h:80", HL_SLOTKEY_BAN_SCOPE, "|x|", HL_SLOTKEY_BAN, 4);
    round_trip("", "/login", "", HL_SLOTKEY_QUOTA, 0);
}

static void test_encode_short_buffer(void)
{
    char small[8];

    memset(small, 'Z', sizeof(small));
    is_int((int)hl_slotkey_encode(small, sizeof(small), "h:80", 4, "/login", 6,
                                  "1.2.3.4", 7), 18,
           "too small a buffer: the length needed");
    ok(small[0] == 'Z' && small[7] == 'Z', "... and nothing written");
    is_int((int)hl_slotkey_encode(NULL, 0, "", 0, "ban", 3, "x", 1), 5,
           "NULL buffer: the length needed");
    is_int((int)hl_slotkey_encode(small, 6, "", 0, "ban", 3, "x", 1), 5,
           "exactly fits with its NUL");
    is_str(small, "ban|x", "... written");
}

static void test_malformed(void)
{
    hl_slotkey_t k;

    ok(hl_slotkey_decode("", 0, &k) == -1 && k.key_len == 0, "empty key");
    ok(hl_slotkey_decode("203.0.113.7", 11, &k) == -1 && k.key_len == 11
       && k.client == NULL && k.kind == HL_SLOTKEY_QUOTA,
       "no '|': a bare client address");
    ok(hl_slotkey_decode("|203.0.113.7", 12, &k) == 0 && k.name_len == 0
       && k.client_len == 11 && k.kind == HL_SLOTKEY_QUOTA,
       "empty name: the client after the '|'");
    ok(hl_slotkey_decode("ban|1.2.3.4", 3, &k) == -1,
       "the length bounds the key: no '|' within it");
    ok(hl_slotkey_decode_slot("d0", 2, &k) == -1 && k.window == -1
       && k.origin == 0, "slot key of the prefix alone");
    ok(hl_slotkey_decode_slot("d", 1, &k) == -1, "one byte");
    ok(hl_slotkey_decode_slot(NULL, 0, &k) == -1, "no bytes");
    ok(hl_slotkey_decode_slot("dxban|1.2.3.4", 13, &k) == 0 && k.window == -1
       && k.origin == 'd' && k.kind == HL_SLOTKEY_BAN,
       "a window that is not a digit: -1");
    ok(hl_slotkey_decode_slot("t3nobar", 7, &k) == -1 && k.origin == 't'
       && k.window == 3, "no '|': origin and window still set");
    ok(hl_slotkey_decode_slot("t3/api|k", 8, &k) == 0 && k.origin == 't'
       && k.window == 3 && k.key_len == 6 && k.name_len == 4
       && k.client_len == 1, "a table rule's window 3");
    ok(hl_slotkey_decode("ban|", 4, &k) == 0 && k.kind == HL_SLOTKEY_BAN
       && k.client_len == 0 && !hl_slotkey_is_ban_counter("ban|", 4),
       "ban| without a client: a ban's scope, not a ban counter");
}

/* Keys the old decoder took for ban counters: a Location ending in
 * ":DIGITSban" (a tag holds no '/'; it ends with ':' and its port). */
static void test_tag_grammar(void)
{
    const char *client;
    size_t clen;

    ok(!hl_ban_key_client("/x:1ban|127.0.0.1", 17, &client, &clen),
       "a /x:1ban Location is not a ban counter");
    ok(!hl_ban_key_client("h:80/x:1ban|127.0.0.1", 21, &client, &clen),
       "a vhost's /x:1ban Location is not");
    ok(!hl_ban_key_client("a:80x9ban|127.0.0.1", 19, &client, &clen),
       "a tag must end with its port");
    ok(!hl_ban_key_is_counter("/x:1rej|127.0.0.1", 17),
       "a /x:1rej Location is not a refusal counter");
    ok(hl_ban_key_client("[::1]:8443ban|10.0.0.1", 22, &client, &clen)
       && clen == 8 && !memcmp(client, "10.0.0.1", 8), "an IPv6 vhost's ban");
}

/* Long keys: the slot key is compacted to HL_KEY_MAX bytes; the name stays
 * readable, the client is cut, the decoder says so. */
static void test_long_keys(void)
{
    char client[400], key[600], skey[HL_KEY_MAX];
    size_t len, slen;
    hl_slotkey_t k;

    memset(client, 'c', sizeof(client) - 1);
    client[sizeof(client) - 1] = '\0';
    client[10] = '|';
    len = hl_slotkey_encode(key, sizeof(key), "example.org:443", 15, "/upload",
                            7, client, strlen(client));
    is_int((int)len, 15 + 7 + 1 + 399, "a long key's length");
    slen = hl_limiter_slot_key(skey, HL_ORIGIN_DIRECTIVE, 1, key, len);
    is_int((int)slen, HL_KEY_MAX, "compacted to HL_KEY_MAX");
    ok(hl_slotkey_decode_slot(skey, slen, &k) == 0 && k.compacted
       && k.origin == 'd' && k.window == 1 && k.name_len == 22
       && !memcmp(k.key, "example.org:443/upload", 22)
       && k.client_len == HL_KEY_MAX - HL_SLOTKEY_PREFIX - 23
       && k.client[10] == '|', "decoded: name whole, client cut, compacted");
    /* One byte short of compaction: kept as it is. */
    len = hl_slotkey_encode(key, sizeof(key), "", 0, "/a", 2, client,
                            HL_KEY_MAX - HL_SLOTKEY_PREFIX - 3);
    slen = hl_limiter_slot_key(skey, HL_ORIGIN_TABLE, 0, key, len);
    ok(slen == HL_KEY_MAX && hl_slotkey_decode_slot(skey, slen, &k) == 0
       && !k.compacted && k.client_len == HL_KEY_MAX - HL_SLOTKEY_PREFIX - 3
       && k.origin == 't' && k.window == 0, "a key that just fits: whole");
    /* A long ban key keeps its scope readable: still a ban counter. */
    len = hl_slotkey_encode(key, sizeof(key), "h:80", 4, "ban", 3, client,
                            strlen(client));
    slen = hl_limiter_slot_key(skey, HL_ORIGIN_DIRECTIVE, 0, key, len);
    ok(hl_slotkey_is_ban_slot(skey, slen), "a compacted ban key is a ban's");
}

static void test_ban_slots(void)
{
    size_t i;

    for (i = 0; i < sizeof(ban_slots) / sizeof(ban_slots[0]); ++i)
        okf(hl_slotkey_is_ban_slot(ban_slots[i].skey, strlen(ban_slots[i].skey))
            == ban_slots[i].ban, "%s %s a ban's counter", ban_slots[i].skey,
            ban_slots[i].ban ? "is" : "is not");
}

int main(void)
{
    test_round_trips();
    test_encode_short_buffer();
    test_malformed();
    test_tag_grammar();
    test_long_keys();
    test_ban_slots();
    return done_testing();
}
