/* hl_conc: the moving estimate of slot durations and the Retry-After of
 * concurrency refusals spread from it. */
#include "hl_tap.h"
#include "hl_conc.h"

static unsigned char mem[1 << 16];

int main(void)
{
    hl_conc_table_t *t = hl_conc_init(mem, 8);
    unsigned sc = hl_conc_scope(t, 77, "/llm", 0, 2);
    long seen[8];
    int i, differ = 0;

    is_int((int)hl_conc_retry_after_s(t, sc, 2, 0, 0), 1,
           "no slot given back yet: 1 s");
    hl_conc_note_held(t, sc, 3000);
    is_int((int)t->scopes[sc].avg_ms, 3000, "the first duration is the estimate");
    hl_conc_note_held(t, sc, 3800);
    is_int((int)t->scopes[sc].avg_ms, 3100, "a later one moves it by 1/8");
    is_int((int)hl_conc_retry_after_s(t, sc, 2, 0, 0), 4,
           "position 0: the estimate (3.1 s), rounded up");
    for (i = 0; i < 8; ++i) {
        seen[i] = hl_conc_retry_after_s(t, sc, 2, (uint64_t)i, 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1));
        okf(seen[i] >= 4 && seen[i] <= 11, "position %d: %ld s within the estimate .. 3x + a share", i, seen[i]);
        if (i && seen[i] != seen[0])
            differ = 1;
    }
    ok(differ, "refused clients are told different times");
    is_int((int)hl_conc_retry_after_s(t, HL_CONC_NO_SCOPE, 2, 5, 9), 1,
           "no scope (no figures): 1 s");
    hl_conc_note_held(t, sc, -5);
    ok(hl_conc_retry_after_s(t, sc, 1, 0, 0) >= 1, "never below 1");
    return done_testing();
}
