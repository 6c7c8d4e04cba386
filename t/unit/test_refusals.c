/* test_refusals.c - refusals counted per key (hl_refusals.h). */
#include <stdlib.h>
#include "hl_tap.h"
#include "hl_refusals.h"

#define NOW 1000000000LL   /* a monotonic clock reading, ms */

/* Counts n refusals of key by route at now. */
static void refuse(hl_refusals_t *rf, const char *key, const char *route,
                   int n, int64_t now)
{
    while (n-- > 0)
        hl_refusals_add(rf, key, strlen(key), route, 0, now);
}

/* keep callback: drops keys starting with the baton's text. */
static int not_prefixed(const char *key, size_t len, void *baton)
{
    const char *pre = baton;
    return len < strlen(pre) || strncmp(key, pre, strlen(pre)) != 0;
}

int main(void)
{
    hl_refusals_t *rf = calloc(1, sizeof(*rf));
    hl_refusal_rank_t top[10];
    char key[64];
    int i, n;

    refuse(rf, "/login|10.0.0.1", "/login", 3, NOW);
    refuse(rf, "/login|203.0.113.5", "/login#2", 500, NOW);
    refuse(rf, "/api|10.0.0.2", NULL, 7, NOW);
    n = hl_refusals_rank(rf, NOW, NULL, NULL, top, 10);
    is_int(n, 3, "three keys refused");
    is_str(top[0].key, "/login|203.0.113.5", "the flooder ranks first");
    is_int((int)top[0].now, 500, "... with its 500 refusals now");
    is_str(top[0].route, "/login#2", "... and the route that refused it");
    is_str(top[1].route, "(banned)", "no route: a ban refused it");
    is_str(top[2].key, "/login|10.0.0.1", "the least refused last");
    is_int((int)hl_refusals_of(rf, "/login|10.0.0.1", 15, NOW), 3,
           "one key's refusals now");
    is_int((int)hl_refusals_of(rf, "/nobody|x", 9, NOW), 0, "unknown key: 0");

    n = hl_refusals_rank(rf, NOW, not_prefixed, "/login", top, 10);
    ok(n == 1 && !strcmp(top[0].key, "/api|10.0.0.2"),
       "a keep callback leaves keys out");
    n = hl_refusals_rank(rf, NOW, NULL, NULL, top, 1);
    ok(n == 1 && !strcmp(top[0].key, "/login|203.0.113.5"),
       "a bounded ranking keeps the most refused");

    /* Decay: refusals now cover this minute and the one before. */
    is_int((int)hl_refusals_of(rf, "/login|203.0.113.5", 18,
                               NOW + HL_REFUSALS_MINUTE_MS), 500,
           "a minute later the refusals still count");
    n = hl_refusals_rank(rf, NOW + 3 * HL_REFUSALS_MINUTE_MS, NULL, NULL,
                         top, 10);
    is_int(n, 0, "three quiet minutes later nobody ranks");

    /* Rate: the whole seconds before now. */
    is_int((int)hl_refusals_recent(rf, NOW + 1000), 510,
           "every refusal of the last seconds counts in the rate");
    is_int((int)hl_refusals_recent(rf, NOW), 0,
           "the running second is not in the rate");
    is_int((int)hl_refusals_recent(rf, NOW + 60000), 0, "an old second is not");

    /* Bounded: a flood of distinct keys never pushes out a heavy one. */
    for (i = 0; i < 5000; ++i) {
        snprintf(key, sizeof(key), "/spray|198.51.%d.%d", i / 256, i % 256);
        refuse(rf, key, "/spray", 1, NOW);
    }
    n = hl_refusals_rank(rf, NOW, NULL, NULL, top, 1);
    ok(n == 1 && !strcmp(top[0].key, "/login|203.0.113.5"),
       "after 5000 keys refused once, the flooder still ranks first");

    /* Forget (a reset). */
    is_int(hl_refusals_forget(rf, "/login|203.0.113.5", 18), 1, "forget: found");
    is_int((int)hl_refusals_of(rf, "/login|203.0.113.5", 18, NOW), 0,
           "... and its refusals are gone");
    is_int(hl_refusals_forget(rf, "/login|203.0.113.5", 18), 0,
           "forget again: nothing");

    /* A long key is cut, consistently. */
    memset(key, 'k', sizeof(key) - 1);
    key[sizeof(key) - 1] = '\0';
    {
        char longkey[200];
        memset(longkey, 'x', sizeof(longkey) - 1);
        longkey[sizeof(longkey) - 1] = '\0';
        refuse(rf, longkey, "/r", 2, NOW);
        is_int((int)hl_refusals_of(rf, longkey, strlen(longkey), NOW), 2,
               "a long key counts under its cut form");
    }
    free(rf);
    return done_testing();
}
