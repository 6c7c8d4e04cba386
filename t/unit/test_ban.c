/* hl_ban: parsing HotLimitBan and recognising ban counters among slots. */
#include "hl_tap.h"
#include "hl_ban.h"

int main(void)
{
    hl_ban_t b;
    char err[HL_ERR_MAX];
    const char *client = NULL;
    size_t clen = 0;

    is_int(hl_ban_parse(&b, "20/10m", "1h", err, sizeof(err)), 0, "20/10m 1h");
    is_int((int)b.rejections.windows[0].count, 20, "after 20");
    is_int((int)b.rejections.windows[0].window_ms, 600000, "within 10m");
    is_int((int)b.ban.windows[0].count, 1, "ban: one count");
    is_int((int)b.ban.windows[0].window_ms, 3600000, "ban for 1h");
    is_int(b.ban.algo, HL_ALGO_FIXED, "ban: fixed window");
    is_int(hl_ban_parse(&b, "0/10m", "1h", err, sizeof(err)), -1, "0/10m refused");
    is_str(err, "bad window '0/10m': count must be a positive integer",
           "0/10m message");
    is_int(hl_ban_parse(&b, "20/10m", "60", err, sizeof(err)), -1,
           "a duration without unit refused");
    is_str(err, "bad duration '60': missing unit (use ms, s, m, h or d)",
           "bare number message");
    is_int(hl_ban_parse(&b, "20/10m", "31d", err, sizeof(err)), -1,
           "over 30 days refused");

    ok(hl_ban_key_client("ban|127.0.0.1", 13, &client, &clen)
       && clen == 9 && memcmp(client, "127.0.0.1", 9) == 0, "ban|IP");
    ok(hl_ban_key_client("localhost:8080ban|10.0.0.1", 26, &client, &clen)
       && clen == 8 && memcmp(client, "10.0.0.1", 8) == 0, "vhost tag + ban|IP");
    ok(!hl_ban_key_client("rej|127.0.0.1", 13, &client, &clen), "rej| is not");
    ok(!hl_ban_key_client("/ban|127.0.0.1", 14, &client, &clen),
       "a /ban Location is not");
    ok(!hl_ban_key_client("/x/ban|127.0.0.1", 16, &client, &clen),
       "a path ending in ban is not");
    ok(!hl_ban_key_client("localhost:8080/ban|1.2.3.4", 26, &client, &clen),
       "a vhost's /ban Location is not");
    ok(!hl_ban_key_client("ban|", 4, &client, &clen), "no client: not");
    ok(!hl_ban_key_client("ba", 2, &client, &clen), "short: not");

    ok(hl_ban_key_is_counter("ban|127.0.0.1", 13), "ban| is a ban counter");
    ok(hl_ban_key_is_counter("rej|127.0.0.1", 13), "rej| is a ban counter");
    ok(hl_ban_key_is_counter("localhost:8080rej|10.0.0.1", 26), "vhost tag + rej|");
    ok(!hl_ban_key_is_counter("/rej|127.0.0.1", 14), "a /rej Location is not");
    ok(!hl_ban_key_is_counter("localhost:8080/x/rej|1.2.3.4", 28), "a vhost's /x/rej is not");
    ok(!hl_ban_key_is_counter("/login|127.0.0.1", 16), "a quota's counter is not");
    return done_testing();
}
