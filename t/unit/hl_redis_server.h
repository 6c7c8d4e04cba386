/*
 * hl_redis_server.h - for unit tests that need a real Redis: a private
 * redis-server started by the test (no TCP port: a Unix socket in a fresh
 * temporary directory, no persistence), and a minimal blocking RESP client
 * over it. Header-only, like hl_tap.h; include after hl_tap.h.
 *
 * rs_start() returns -1 when no redis-server is on PATH, so that the test
 * can skip cleanly ("1..0 # SKIP"). The server dies with the test (at
 * rs_stop(), at exit, and on Linux when the test process dies).
 *
 * Replies are read into rs_reply_t trees the caller frees with
 * rs_free(). Integers, bulk and simple strings, errors, arrays and nil
 * are understood; that is all the tests need.
 */
#ifndef HL_REDIS_SERVER_H
#define HL_REDIS_SERVER_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

typedef enum {
    RS_NIL, RS_INT, RS_STR, RS_ERR, RS_ARRAY
} rs_type_t;

typedef struct rs_reply {
    rs_type_t        type;
    long long        integer;    /* RS_INT */
    char            *str;        /* RS_STR, RS_ERR: NUL-terminated, owned */
    size_t           n;          /* RS_ARRAY: elements */
    struct rs_reply *el;         /* RS_ARRAY: n elements, owned */
} rs_reply_t;

static pid_t rs_pid = -1;
static int rs_fd = -1;
static char rs_dir[64];
static char rs_sock[96];   /* fits sun_path */
static FILE *rs_in;              /* buffered reads of rs_fd */

/* Returns 1 if an executable redis-server is on PATH, else 0. */
static int rs_available(void)
{
    const char *path = getenv("PATH");
    char dir[1024], file[1100];

    while (path && *path) {
        size_t n = strcspn(path, ":");
        if (n > 0 && n < sizeof(dir)) {
            memcpy(dir, path, n);
            dir[n] = '\0';
            snprintf(file, sizeof(file), "%s/redis-server", dir);
            if (access(file, X_OK) == 0)
                return 1;
        }
        path += n + (path[n] == ':');
    }
    return 0;
}

/* Stops the server started by rs_start and removes its directory. Safe to
 * call twice. */
static void rs_stop(void)
{
    char file[200];

    if (rs_in) {
        fclose(rs_in);           /* closes rs_fd too */
        rs_in = NULL;
        rs_fd = -1;
    }
    if (rs_pid > 0) {
        kill(rs_pid, SIGTERM);
        waitpid(rs_pid, NULL, 0);
        rs_pid = -1;
    }
    if (rs_dir[0]) {
        unlink(rs_sock);
        snprintf(file, sizeof(file), "%s/redis.log", rs_dir);
        unlink(file);
        rmdir(rs_dir);
        rs_dir[0] = '\0';
    }
}

/* Connects to the server's socket. Returns 0, or -1 (nothing to free). */
static int rs_connect(void)
{
    struct sockaddr_un sa;
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);

    if (fd < 0)
        return -1;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", rs_sock);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        close(fd);
        return -1;
    }
    rs_fd = fd;
    rs_in = fdopen(fd, "r");
    return rs_in ? 0 : -1;
}

/*
 * Starts a private redis-server (no TCP, no persistence) and connects to
 * it. Returns 0; -1 when redis-server is not on PATH; -2 when it was but
 * could not be started or reached within 5 s (its log is printed as TAP
 * comments). rs_stop() undoes it; it is also registered with atexit.
 */
static int rs_start(void)
{
    char log[200];
    int i;

    if (!rs_available())
        return -1;
    snprintf(rs_dir, sizeof(rs_dir), "/tmp/hl-redis-XXXXXX");
    if (mkdtemp(rs_dir) == NULL) {
        rs_dir[0] = '\0';
        return -2;
    }
    snprintf(rs_sock, sizeof(rs_sock), "%s/redis.sock", rs_dir);
    snprintf(log, sizeof(log), "%s/redis.log", rs_dir);
    atexit(rs_stop);
    rs_pid = fork();
    if (rs_pid < 0)
        return -2;
    if (rs_pid == 0) {
        int out = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
#ifdef __linux__
        prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
        if (out >= 0) {
            dup2(out, 1);
            dup2(out, 2);
        }
        execlp("redis-server", "redis-server", "--port", "0",
               "--unixsocket", rs_sock, "--unixsocketperm", "700",
               "--save", "", "--appendonly", "no", "--dir", rs_dir,
               (char *)NULL);
        _exit(127);
    }
    for (i = 0; i < 250; ++i) {
        struct timespec ts = { 0, 20 * 1000 * 1000 };
        if (rs_connect() == 0)
            return 0;
        if (waitpid(rs_pid, NULL, WNOHANG) == rs_pid) {
            rs_pid = -1;
            break;
        }
        nanosleep(&ts, NULL);
    }
    {
        FILE *f = fopen(log, "r");
        char line[256];
        while (f && fgets(line, sizeof(line), f))
            printf("# redis-server: %s", line);
        if (f)
            fclose(f);
    }
    rs_stop();
    return -2;
}

/* Frees what a reply owns (not *r itself). */
static void rs_free(rs_reply_t *r)
{
    size_t i;

    if (r->type == RS_ARRAY) {
        for (i = 0; i < r->n; ++i)
            rs_free(&r->el[i]);
        free(r->el);
    }
    free(r->str);
    memset(r, 0, sizeof(*r));
}

/* Reads one reply into *r. Returns 0, or -1 on a broken connection or a
 * reply this reader does not know (*r is then an RS_ERR or RS_NIL the
 * caller still frees). */
static int rs_read(rs_reply_t *r)
{
    char line[512];
    size_t len, i;
    long long n;

    memset(r, 0, sizeof(*r));
    if (!fgets(line, sizeof(line), rs_in))
        return -1;
    len = strcspn(line, "\r\n");
    line[len] = '\0';
    switch (line[0]) {
    case ':':
        r->type = RS_INT;
        r->integer = strtoll(line + 1, NULL, 10);
        return 0;
    case '+':
    case '-':
        r->type = line[0] == '+' ? RS_STR : RS_ERR;
        r->str = strdup(line + 1);
        return r->str ? 0 : -1;
    case '$':
        n = strtoll(line + 1, NULL, 10);
        if (n < 0)
            return 0;                         /* nil */
        r->type = RS_STR;
        r->str = tap_calloc((size_t)n + 3);
        if (fread(r->str, 1, (size_t)n + 2, rs_in) != (size_t)n + 2)
            return -1;
        r->str[n] = '\0';
        return 0;
    case '*':
        n = strtoll(line + 1, NULL, 10);
        if (n < 0)
            return 0;                         /* nil array */
        r->type = RS_ARRAY;
        r->n = (size_t)n;
        r->el = tap_calloc(sizeof(*r->el) * (r->n ? r->n : 1));
        for (i = 0; i < r->n; ++i)
            if (rs_read(&r->el[i]) != 0)
                return -1;
        return 0;
    default:
        return -1;
    }
}

/* Sends len bytes of cmd, one command already in the protocol's
 * form (RESP), and reads one reply into *r (the caller frees it:
 * rs_free). Returns 0; on a broken connection or an unreadable reply the
 * test cannot go on: it bails out (exit 2). */
static int rs_send(const char *cmd, size_t len, rs_reply_t *r)
{
    size_t off;

    for (off = 0; off < len; ) {
        ssize_t w = write(rs_fd, cmd + off, len - off);
        if (w <= 0 && errno != EINTR) {
            printf("Bail out! lost the redis-server connection\n");
            exit(2);
        }
        if (w > 0)
            off += (size_t)w;
    }
    if (rs_read(r) != 0) {
        printf("Bail out! unreadable reply from redis-server\n");
        exit(2);
    }
    return 0;
}

/* Sends the command argv[0 .. argc) (lengths len; a NULL len: C strings)
 * and reads its reply into *r (the caller frees it: rs_free). Returns 0;
 * on a broken connection or an unreadable reply the test cannot go on:
 * it bails out (exit 2). */
static int rs_command(int argc, const char *const *argv, const size_t *len,
                      rs_reply_t *r)
{
    size_t cap = 64, at = 0, need;
    char *buf = tap_calloc(cap);
    int i;

    at += (size_t)snprintf(buf, cap, "*%d\r\n", argc);
    for (i = 0; i < argc; ++i) {
        size_t n = len ? len[i] : strlen(argv[i]);
        need = at + n + 40;
        if (need > cap) {
            char *more = tap_calloc(need * 2);
            memcpy(more, buf, at);
            free(buf);
            buf = more;
            cap = need * 2;
        }
        at += (size_t)snprintf(buf + at, cap - at, "$%zu\r\n", n);
        memcpy(buf + at, argv[i], n);
        at += n;
        buf[at++] = '\r';
        buf[at++] = '\n';
    }
    rs_send(buf, at, r);
    free(buf);
    return 0;
}

#endif
