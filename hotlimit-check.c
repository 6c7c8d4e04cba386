/*
 * hotlimit-check.c - validates a mod_hotlimit quota table (spec section 3)
 * with the parser the module uses, hl_table_parse.
 *
 *   hotlimit-check [--quiet] FILE     (FILE "-" reads standard input)
 *
 * FILE must be a regular file, as for the module: a FIFO, device or
 * directory is refused (exit 2) without being read or waited on.
 *
 * Prints each problem on one line ("hotlimit-check: error: route '/x':
 * field 'window': ..."), then each route as the module will match it
 * ("  user.login -> /user/login  5/1m 30/1h by=ip"), then a summary line. Exit status: 0 when there
 * is no error (warnings allowed), 1 when an entry was skipped or the whole
 * document refused, 2 on a usage or I/O error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cJSON.h>
#include "hl_table.h"
#include "hl_table_parse.h"
#include "hl_route.h"
#include "hl_quota_text.h"

#define PROG "hotlimit-check"

/* Counts of the problems printed, and the names of the entries skipped. */
typedef struct {
    int errors;
    int warnings;
    char **skipped;      /* route names as written, malloc'd; NULL on OOM */
    int nskipped, cap;
} counts_t;

/* Prints usage to f. */
static void usage(FILE *f)
{
    fprintf(f,
        "usage: " PROG " [--quiet] FILE\n"
        "Checks a mod_hotlimit quota table (JSON) with the module's own\n"
        "parser. FILE must be a regular file; \"-\" reads standard input.\n"
        "\n"
        "  --quiet   print only the problems, not the summary line\n"
        "  --help    print this help\n"
        "\n"
        "Exit status: 0 no error (warnings allowed), 1 an entry was skipped\n"
        "or the table was refused, 2 usage or I/O error.\n");
}

/* Prints s with bytes outside printable ASCII escaped as \xNN, so a
 * problem always fits on one line. */
static void put_clean(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;

    for (; *p != '\0'; p++) {
        if (*p < 0x20 || *p >= 0x7f)
            printf("\\x%02x", *p);
        else
            putchar(*p);
    }
}

/* hl_table_report_fn: prints one problem line and counts it. */
static void print_problem(void *baton, hl_problem_t severity,
                          const char *route, const char *field,
                          const char *msg)
{
    counts_t *n = baton;

    if (severity == HL_PROBLEM_ERROR) {
        n->errors++;
        if (route != NULL && n->nskipped == n->cap) {
            int cap = n->cap ? 2 * n->cap : 16;
            char **more = realloc(n->skipped, (size_t)cap * sizeof(*more));
            if (more != NULL) {
                n->skipped = more;
                n->cap = cap;
            }
        }
        if (route != NULL && n->nskipped < n->cap
            && (n->skipped[n->nskipped] = strdup(route)) != NULL)
            n->nskipped++;
    } else
        n->warnings++;
    printf(PROG ": %s: ", severity == HL_PROBLEM_ERROR ? "error" : "warning");
    if (route != NULL) {
        printf("route '");
        put_clean(route);
        printf("': ");
    }
    if (field != NULL) {
        printf("field '");
        put_clean(field);
        printf("': ");
    }
    put_clean(msg);
    putchar('\n');
}

/*
 * Reads all of f, at most HL_TABLE_MAX_DOC + 1 bytes (one more than is
 * accepted, to tell that the file is too large). Returns a malloc'd buffer
 * the caller frees and sets *len, or NULL on a read or memory error.
 */
static char *read_all(FILE *f, size_t *len)
{
    size_t cap = HL_TABLE_MAX_DOC + 1, n = 0, got;
    char *buf = malloc(cap);

    if (buf == NULL)
        return NULL;
    while (n < cap && (got = fread(buf + n, 1, cap - n, f)) > 0)
        n += got;
    if (ferror(f)) {
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

/* Returns what a file of mode m is, for messages. */
static const char *file_kind(mode_t m)
{
    if (S_ISDIR(m))
        return "a directory";
    if (S_ISFIFO(m))
        return "a FIFO (named pipe)";
    if (S_ISCHR(m))
        return "a character device";
    if (S_ISBLK(m))
        return "a block device";
    if (S_ISSOCK(m))
        return "a socket";
    return "not a regular file";
}

/*
 * Opens path for reading as the module does: only a regular file, checked
 * with stat before opening (a device is never opened) and with fstat after
 * an O_NONBLOCK open (a FIFO put there meanwhile cannot block). Returns the
 * stream (caller closes it), or NULL after printing why.
 */
static FILE *open_regular(const char *path)
{
    struct stat st;
    FILE *f;
    int fd;

    if (stat(path, &st) != 0) {
        fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        fprintf(stderr, PROG ": %s: not a regular file but %s; only regular "
                "files are read (use - for standard input)\n", path,
                file_kind(st.st_mode));
        return NULL;
    }
    fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        fprintf(stderr, PROG ": %s: replaced by %s while being opened; only "
                "regular files are read\n", path, file_kind(st.st_mode));
        close(fd);
        return NULL;
    }
    f = fdopen(fd, "rb");
    if (f == NULL) {
        fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
        close(fd);
    }
    return f;
}

/* Opens and reads path ("-" is stdin). Returns the buffer (caller frees)
 * or NULL after printing why. */
static char *load(const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : open_regular(path);
    char *buf;
    int err;

    if (f == NULL)
        return NULL;
    errno = 0;
    buf = read_all(f, len);
    err = errno;
    if (f != stdin)
        fclose(f);
    if (buf == NULL)
        fprintf(stderr, PROG ": %s: cannot read: %s\n", path,
                err ? strerror(err) : "read error");
    return buf;
}

/* Returns 1 if route name (as written) had an entry skipped as invalid. */
static int was_skipped(const counts_t *n, const char *name)
{
    int i;

    for (i = 0; i < n->nskipped; i++)
        if (strcmp(n->skipped[i], name) == 0)
            return 1;
    return 0;
}

/*
 * Prints each route of doc (len bytes, parsed into t without refusal) as
 * the module will match it: the name as written, the normalised route and
 * the quota in force ("  user.login -> /user/login  5/1m 30/1h by=ip").
 * A skipped entry is left out, and of entries naming one route only the
 * last, the one in force, is printed. Returns 0, or -1 when out of memory
 * (nothing printed).
 */
static int print_routes(const hl_table_t *t, const char *doc, size_t len,
                        const counts_t *n)
{
    cJSON *root = cJSON_ParseWithLength(doc, len);
    const cJSON *routes = cJSON_GetObjectItemCaseSensitive(root, "routes");
    const cJSON *e;
    const hl_rule_t **last;     /* per entry: its rule if it is in force */
    int count = 0, i, j;
    char route[HL_TABLE_ROUTE_MAX], quota[256];

    if (!cJSON_IsObject(routes)) {
        cJSON_Delete(root);
        return 0;
    }
    cJSON_ArrayForEach(e, routes)
        count++;
    last = calloc((size_t)count + 1, sizeof(*last));
    if (last == NULL) {
        cJSON_Delete(root);
        return -1;
    }
    i = 0;
    cJSON_ArrayForEach(e, routes) {
        size_t rlen;
        if (e->string != NULL && e->string[0] != '\0'
            && !was_skipped(n, e->string)) {
            rlen = hl_route_from_name(route, sizeof(route), e->string,
                                      strlen(e->string));
            if (rlen < HL_TABLE_ROUTE_MAX) {
                last[i] = hl_table_lookup(t, route, rlen);
                /* A later valid entry of the same route replaces it. */
                for (j = 0; last[i] != NULL && j < i; j++)
                    if (last[j] == last[i])
                        last[j] = NULL;
            }
        }
        i++;
    }
    i = 0;
    cJSON_ArrayForEach(e, routes) {
        if (last[i] != NULL) {
            printf("  ");
            put_clean(e->string);
            printf(" -> ");
            put_clean(last[i]->route);
            printf("  %s\n", hl_quota_describe(&last[i]->quota, quota,
                                                sizeof(quota)));
        }
        i++;
    }
    free(last);
    cJSON_Delete(root);
    return 0;
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    int quiet = 0, i, rc, opts = 1;
    counts_t n = { 0, 0, NULL, 0, 0 };
    size_t len = 0, size;
    char *doc;
    void *mem;
    hl_table_t *t;

    for (i = 1; i < argc; i++) {
        if (opts && strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (opts && strcmp(argv[i], "--quiet") == 0) {
            quiet = 1;
        } else if (opts && strcmp(argv[i], "--") == 0) {
            opts = 0;
        } else if (opts && argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr, PROG ": unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        } else if (path == NULL) {
            path = argv[i];
        } else {
            fprintf(stderr, PROG ": only one FILE may be given\n");
            usage(stderr);
            return 2;
        }
    }
    if (path == NULL) {
        usage(stderr);
        return 2;
    }
    doc = load(path, &len);
    if (doc == NULL)
        return 2;
    if (len > HL_TABLE_MAX_DOC) {
        printf(PROG ": error: %s is larger than %u bytes, the most a quota "
               "table may be; the module would refuse it\n", path,
               HL_TABLE_MAX_DOC);
        free(doc);
        return 1;
    }
    size = hl_table_size(HL_TABLE_MAX_ROUTES);
    mem = malloc(size);
    if (mem == NULL) {
        fprintf(stderr, PROG ": out of memory\n");
        free(doc);
        return 2;
    }
    rc = hl_table_parse(mem, size, HL_TABLE_MAX_ROUTES, doc, len,
                        print_problem, &n, NULL);
    t = mem;
    if (!quiet && rc != 0) {
        printf(PROG ": %s: table refused (a table failure, see "
               "HotLimitTableFailure), %d errors, %d warnings\n",
               path, n.errors, n.warnings);
    } else if (!quiet) {
        if (print_routes(t, doc, len, &n) != 0)
            fprintf(stderr, PROG ": out of memory listing the routes\n");
        printf(PROG ": %s: %u routes, %u exempt, %s", path,
               (unsigned)t->nrules, (unsigned)t->nexempt,
               t->enabled ? "enabled" : "DISABLED (kill switch)");
        if (t->has_global)
            printf(", global bucket %u/%ums",
                   (unsigned)t->global.windows[0].count,
                   (unsigned)t->global.windows[0].window_ms);
        if (t->has_ban)
            printf(", ban after %u refusals within %ums for %ums",
                   (unsigned)t->ban.rejections.windows[0].count,
                   (unsigned)t->ban.rejections.windows[0].window_ms,
                   (unsigned)t->ban.ban.windows[0].window_ms);
        printf(", %d errors, %d warnings\n", n.errors, n.warnings);
    }
    free(mem);
    free(doc);
    for (i = 0; i < n.nskipped; i++)
        free(n.skipped[i]);
    free(n.skipped);
    if (fflush(stdout) != 0)
        return 2;
    return rc != 0 || n.errors > 0 ? 1 : 0;
}
