/* hl_logthin_gate: HotLimitLogRate, the server-wide bound on full refusal
 * lines, and the summary of the lines it holds back (issue 25 item 4). */
#include <stdlib.h>
#include "hl_tap.h"
#include "hl_logthin.h"

/* Notes one refusal of key (a new key each call when distinct) at now_ms
 * (wall second now_ms / 1000) through the gate of rate; returns 1 when
 * written in full, and adds a summary's held count to *held. */
static int refuse(hl_logthin_t *t, uint64_t key, int64_t now_ms,
                  uint32_t rate, const char *addr, hl_logthin_verdict_t *v,
                  uint64_t *held)
{
    hl_logthin_note(t, key, now_ms, 3600000, v);
    hl_logthin_gate(t, now_ms, now_ms / 1000, rate, addr, v);
    *held += v->held;
    return v->first;
}

int main(void)
{
    hl_logthin_t *t = tap_calloc(hl_logthin_size(4096));
    hl_logthin_verdict_t v;
    int64_t now = 1700000000000LL;
    uint64_t held = 0, key = 1;
    int full = 0, most = 0, s, i, summaries = 0;
    char addr[32];

    hl_logthin_init(t, 4096);
    /* 20,000 new keys over 2 s (10,000 a second), from rotating addresses
     * and one flooding address (every 10th refusal). */
    for (s = 0; s < 2; s++) {
        int in_sec = 0;

        for (i = 0; i < 10000; i++) {
            snprintf(addr, sizeof(addr), "10.%d.%d.%d", s, i / 256, i % 256);
            in_sec += refuse(t, key++, now + s * 1000 + i / 10, 10,
                             i % 10 == 0 ? "198.51.100.7" : addr, &v, &held);
            summaries += v.held > 0;
        }
        full += in_sec;
        most = in_sec > most ? in_sec : most;
    }
    is_int(most, 10, "20,000 new keys in 2 s, rate 10: at most 10 full lines a second");
    is_int(full, 20, "... 20 in all");
    is_int(summaries, 0, "... no summary within 10 s of the first held line");
    refuse(t, key++, now + 10999, 10, NULL, &v, &held);
    is_int((long)held, 19980, "a refusal 11 s on (a new second: written in full): one summary of every "
           "held line");
    ok(v.held_keys == v.held, "... every one a key new to the table");
    ok(v.ntop >= 1 && strcmp(v.top[0].addr, "198.51.100.7") == 0
       && v.top[0].n >= 1998, "... the busiest address first: the flooding one");
    ok(v.ntop <= HL_LOGTHIN_TOP, "... at most HL_LOGTHIN_TOP addresses");
    refuse(t, key++, now + 11000, 10, NULL, &v, &held);
    is_int((long)v.held, 0, "nothing more held: no summary");

    /* Held lines of account keys (no address) are counted, never named. */
    for (i = 0; i < 50; i++)
        refuse(t, key++, now + 30000, 10, NULL, &v, &held);
    held = 0;
    refuse(t, key++, now + 40000, 10, NULL, &v, &held);
    ok(held == 40 && v.ntop == 0, "40 held lines of account keys: counted, "
       "no address named");
    free(t);
    return done_testing();
}
