/*
 * hl_tap.h - a tiny TAP producer for the C unit tests (run by prove).
 * Usage: ok(cond, "name"), okf(cond, "fmt", ...) (the name printf-style),
 * is_int(got, want, "name"), is_str(got, want, "name"),
 * then return done_testing(); in main.
 */
#ifndef HL_TAP_H
#define HL_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hl_tap_n = 0, hl_tap_failed = 0;

static int hl_tap_ok(int cond, const char *file, int line, const char *name)
{
    ++hl_tap_n;
    printf("%sok %d - %s\n", cond ? "" : "not ", hl_tap_n, name);
    if (!cond) {
        ++hl_tap_failed;
        printf("#   failed at %s line %d\n", file, line);
    }
    return cond;
}

#define ok(cond, name) hl_tap_ok(!!(cond), __FILE__, __LINE__, (name))

static inline int hl_tap_okf(int cond, const char *file, int line,
                             const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ok() with a name formatted like printf (truncated to 255 bytes). */
static inline int hl_tap_okf(int cond, const char *file, int line,
                             const char *fmt, ...)
{
    char name[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(name, sizeof(name), fmt, ap);
    va_end(ap);
    return hl_tap_ok(cond, file, line, name);
}

#define okf(cond, ...) hl_tap_okf(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

#define is_int(got, want, name) do { \
    long long g_ = (long long)(got), w_ = (long long)(want); \
    if (!hl_tap_ok(g_ == w_, __FILE__, __LINE__, (name))) \
        printf("#   got %lld, expected %lld\n", g_, w_); \
} while (0)

#define is_str(got, want, name) do { \
    const char *g_ = (got), *w_ = (want); \
    int c_ = (g_ && w_) ? strcmp(g_, w_) == 0 : g_ == w_; \
    if (!hl_tap_ok(c_, __FILE__, __LINE__, (name))) \
        printf("#   got '%s', expected '%s'\n", g_ ? g_ : "(null)", w_ ? w_ : "(null)"); \
} while (0)

#define has_str(hay, needle, name) do { \
    const char *h_ = (hay), *n_ = (needle); \
    if (!hl_tap_ok(h_ && n_ && strstr(h_, n_) != NULL, __FILE__, __LINE__, (name))) \
        printf("#   '%s' not found in '%.300s'\n", n_ ? n_ : "(null)", h_ ? h_ : "(null)"); \
} while (0)

/* Returns size zeroed bytes from calloc; bails out of the test on OOM. */
static inline void *tap_calloc(size_t size)
{
    void *mem = calloc(1, size);
    if (mem == NULL) {
        printf("Bail out! out of memory\n");
        exit(2);
    }
    return mem;
}

static int done_testing(void)
{
    printf("1..%d\n", hl_tap_n);
    return hl_tap_failed ? 1 : 0;
}

#endif
