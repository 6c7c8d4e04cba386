/*
 * hl_clock.c - the wall clock and the decision clock (see hl_clock.h).
 */
#include <time.h>
#include "hl_clock.h"

/* Returns ts in ms. */
static int64_t ms_of(const struct timespec *ts)
{
    return (int64_t)ts->tv_sec * 1000 + ts->tv_nsec / 1000000;
}

int64_t hl_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return ms_of(&ts);
}

int64_t hl_mono_ms(void)
{
    struct timespec ts;

#ifdef CLOCK_BOOTTIME
    if (clock_gettime(CLOCK_BOOTTIME, &ts) != 0)
#endif
        clock_gettime(CLOCK_MONOTONIC, &ts);
    return HL_MONO_BASE_MS + ms_of(&ts);
}
