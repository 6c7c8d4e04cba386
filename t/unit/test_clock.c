/* test_clock.c - the module's clocks (hl_clock.c). */
#include <time.h>
#include "hl_tap.h"
#include "hl_clock.h"

int main(void)
{
    int64_t wall = hl_now_ms(), t = (int64_t)time(NULL) * 1000;
    int64_t m1 = hl_mono_ms(), m2;
    struct timespec pause = { 0, 20 * 1000000 };

    ok(wall >= t - 2000 && wall <= t + 2000, "wall clock: ms since the epoch");
    ok(m1 > HL_MONO_BASE_MS, "decision clock: above its base");
    nanosleep(&pause, NULL);
    m2 = hl_mono_ms();
    ok(m2 >= m1 + 19 && m2 < m1 + 5000, "decision clock: moves with time, in ms");
    ok(hl_mono_ms() >= m2, "decision clock: never goes back");
    return done_testing();
}
