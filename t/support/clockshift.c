/*
 * clockshift.c - an LD_PRELOAD test clock for httpd (t/lib/HotLimitTable.pm,
 * start_httpd(clock => 1)): shifts the clocks of a running httpd (children
 * inherit the environment) by the offsets written in the file named by
 * $HL_CLOCK_OFFSET_FILE, read at every call:
 *
 *     WALL [MONO]      seconds, decimals allowed, e.g. "-3600" or "9.5 9.5"
 *
 * WALL shifts the wall clock (CLOCK_REALTIME*, CLOCK_TAI, gettimeofday,
 * time): a step back or forward, as NTP or a VM resume would make
 * (t/41-clock.t). MONO (default 0) shifts the monotonic clocks
 * (CLOCK_MONOTONIC, _RAW, _COARSE, CLOCK_BOOTTIME): a test that writes
 * "N N" has made N seconds pass for the module, which decides on the
 * monotonic clock, without waiting them out. A test only ever raises MONO
 * (a monotonic clock never goes back). Test support only.
 *
 * Build: cc -shared -fPIC -o clockshift.so clockshift.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* Reads the two offsets in ns from the file; both 0 when it is unset or
 * unreadable, MONO 0 when the file has one number. */
static void offsets_ns(long long *wall, long long *mono)
{
    const char *path = getenv("HL_CLOCK_OFFSET_FILE");
    char buf[64], *end;
    ssize_t n;
    int fd;

    *wall = *mono = 0;
    if (!path || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return;
    buf[n] = '\0';
    *wall = (long long)(strtod(buf, &end) * 1e9);
    *mono = (long long)(strtod(end, NULL) * 1e9);
}

/* Adds ns to ts, keeping tv_nsec within [0, 1e9). */
static void add_ns(struct timespec *ts, long long ns)
{
    long long t = (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec + ns;

    ts->tv_sec = (time_t)(t / 1000000000LL);
    ts->tv_nsec = (long)(t % 1000000000LL);
    if (ts->tv_nsec < 0) {
        ts->tv_nsec += 1000000000L;
        ts->tv_sec--;
    }
}

/* Returns 1 for the wall clocks, 2 for the monotonic ones, 0 for others
 * (CPU-time clocks). */
static int kind_of(clockid_t id)
{
    switch (id) {
    case CLOCK_REALTIME:
    case CLOCK_REALTIME_COARSE:
#ifdef CLOCK_TAI
    case CLOCK_TAI:
#endif
        return 1;
    case CLOCK_MONOTONIC:
    case CLOCK_MONOTONIC_RAW:
    case CLOCK_MONOTONIC_COARSE:
#ifdef CLOCK_BOOTTIME
    case CLOCK_BOOTTIME:
#endif
        return 2;
    default:
        return 0;
    }
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
    static int (*real)(clockid_t, struct timespec *);
    long long wall, mono;
    int rc, kind = kind_of(id);

    if (!real)
        real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
    rc = real(id, ts);
    if (rc == 0 && kind) {
        offsets_ns(&wall, &mono);
        add_ns(ts, kind == 1 ? wall : mono);
    }
    return rc;
}

int gettimeofday(struct timeval *tv, void *tz)
{
    static int (*real)(struct timeval *, void *);
    long long wall, mono;
    struct timespec ts;
    int rc;

    if (!real)
        real = (int (*)(struct timeval *, void *))dlsym(RTLD_NEXT, "gettimeofday");
    rc = real(tv, tz);
    if (rc == 0) {
        offsets_ns(&wall, &mono);
        ts.tv_sec = tv->tv_sec;
        ts.tv_nsec = tv->tv_usec * 1000L;
        add_ns(&ts, wall);
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = ts.tv_nsec / 1000L;
    }
    return rc;
}

time_t time(time_t *t)
{
    struct timeval tv;
    time_t now;

    gettimeofday(&tv, NULL);
    now = tv.tv_sec;
    if (t)
        *t = now;
    return now;
}
