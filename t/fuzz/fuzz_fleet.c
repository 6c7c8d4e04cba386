/*
 * fuzz_fleet.c - libFuzzer target for hl_fleet.c: the text of another
 * server's view, as read from the store, is decoded; whatever decodes is
 * written again, read back the same, and merged into a ranking. The
 * checks below abort on a broken invariant.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hl_fleet.h"

#define CHECK(cond) do { \
    if (!(cond)) { \
        fprintf(stderr, "fuzz_fleet: check failed at line %d: %s\n", \
                __LINE__, #cond); \
        abort(); \
    } \
} while (0)

static hl_fleet_view_t v, w;
static char text[HL_FLEET_TEXT_MAX];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hl_refusal_rank_t rank[HL_FLEET_MERGE_MAX];
    size_t len;
    int i, n;

    if (hl_fleet_decode((const char *)data, size, &v) != 0) {
        CHECK(v.nrefused == 0 && v.nbans == 0);
        return 0;
    }
    CHECK(v.nrefused >= 0 && v.nrefused <= HL_FLEET_REFUSED);
    CHECK(v.nbans >= 0 && v.nbans <= HL_FLEET_BANS);
    for (i = 0; i < v.nrefused; ++i)
        CHECK(v.refused[i].key[0] && strnlen(v.refused[i].key, sizeof(v.refused[i].key)) < sizeof(v.refused[i].key));
    len = hl_fleet_encode(&v, text, sizeof(text));
    CHECK(len > 0);
    CHECK(hl_fleet_decode(text, len, &w) == 0);
    CHECK(w.nrefused == v.nrefused && w.nbans == v.nbans);
    CHECK(!memcmp(w.refused, v.refused, sizeof(v.refused[0]) * (size_t)v.nrefused));
    for (i = 0; i < v.nbans; ++i)
        CHECK(!strcmp(w.bans[i].key, v.bans[i].key) && !strcmp(w.bans[i].rule, v.bans[i].rule)
              && w.bans[i].since_ms == v.bans[i].since_ms);
    n = hl_fleet_merge(rank, 0, HL_FLEET_MERGE_MAX, v.refused, v.nrefused, NULL, NULL);
    CHECK(n >= 0 && n <= v.nrefused);
    for (i = 1; i < n; ++i)
        CHECK(rank[i - 1].now >= rank[i].now);
    n = hl_fleet_merge(rank, n, 5, w.refused, w.nrefused, NULL, NULL);
    CHECK(n <= 5);
    return 0;
}
