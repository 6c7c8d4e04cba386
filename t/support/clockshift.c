/*
 * clockshift.c - an LD_PRELOAD shim for the clock tests (t/41-clock.t):
 * shifts the wall clock (CLOCK_REALTIME*, gettimeofday, time) by the
 * number of seconds written in the file named by $HL_CLOCK_OFFSET_FILE,
 * read at every call, so a test can step the clock of a running httpd
 * (children inherit the environment) back or forward, as NTP or a VM
 * resume would. Monotonic clocks are left alone. Test support only.
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

/* Returns the offset in seconds from the file, 0 when unset or unreadable. */
static long offset_s(void)
{
    const char *path = getenv("HL_CLOCK_OFFSET_FILE");
    char buf[32];
    ssize_t n;
    int fd;

    if (!path || (fd = open(path, O_RDONLY)) < 0)
        return 0;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    return strtol(buf, NULL, 10);
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
    static int (*real)(clockid_t, struct timespec *);
    int rc;

    if (!real)
        real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
    rc = real(id, ts);
    if (rc == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE))
        ts->tv_sec += offset_s();
    return rc;
}

int gettimeofday(struct timeval *tv, void *tz)
{
    static int (*real)(struct timeval *, void *);
    int rc;

    if (!real)
        real = (int (*)(struct timeval *, void *))dlsym(RTLD_NEXT, "gettimeofday");
    rc = real(tv, tz);
    if (rc == 0)
        tv->tv_sec += offset_s();
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
