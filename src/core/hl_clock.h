/*
 * hl_clock.h - the module's two clocks. Pure core: no httpd headers. Every
 * other file is handed the time as `now`; only the hooks that start a
 * decision, the reloader and the status page read a clock, and they read
 * it here (no apr_time_now, time() or clock_gettime elsewhere, but for
 * random seeds, the kernel's deadline of a wait for Redis and, still, the
 * ban book's start time in mod_hotlimit_access.c, shown only), so that
 * the test clock (t/support/clockshift.c) moves everything the module
 * decides on and shows.
 */
#ifndef HL_CLOCK_H
#define HL_CLOCK_H

#include <stdint.h>

/* Returns the wall clock in ms since the epoch (CLOCK_REALTIME): for
 * display and for translating saved counters, never for deciding. */
int64_t hl_now_ms(void);

/* Returns the decision clock in ms: monotonic, counting suspended time
 * (CLOCK_BOOTTIME, else CLOCK_MONOTONIC), offset by HL_MONO_BASE_MS so
 * that times of the boot before (rebased saved counters) stay positive.
 * Steps of the system clock (NTP, date -s) never move it. */
#define HL_MONO_BASE_MS ((int64_t)1 << 40)
int64_t hl_mono_ms(void);

#endif
