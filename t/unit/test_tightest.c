/* test_tightest.c - which of a request's quota windows binds. */
#include "hl_tap.h"
#include "hl_tightest.h"

int main(void)
{
    ok(hl_tightest_beats(2, 1, 3, 60), "fewer left beats a longer wait");
    ok(!hl_tightest_beats(3, 3600, 2, 1), "more left never beats, however long");
    ok(hl_tightest_beats(2, 60, 2, 59), "as many left: the longer wait beats");
    ok(!hl_tightest_beats(2, 59, 2, 60), "as many left: a shorter wait does not");
    ok(!hl_tightest_beats(2, 60, 2, 60), "an equal window does not: the first stays");
    ok(hl_tightest_beats(0, 0, 1, 0), "none left beats one left");
    ok(hl_tightest_beats(UINT32_MAX - 1, 0, UINT32_MAX, 0),
       "the whole range of remaining compares");
    return done_testing();
}
