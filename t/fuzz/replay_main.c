/*
 * replay_main.c - runs a libFuzzer target over saved inputs without
 * libFuzzer, so gcc with ASan/UBSan can replay a corpus in `make check`.
 *
 * Usage: replay FILE|DIR...  A directory replays each regular file in it
 * (not its subdirectories), in sorted name order. Prints TAP: "ok N - replay
 * FILE" per input (a crash aborts the run, which fails it), "not ok" for an
 * input that cannot be read, and "1..N" at the end. Exits 1 if any failed.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int tests = 0, failed = 0;

/* Prints one TAP line. */
static void report(int good, const char *path, const char *why)
{
    ++tests;
    if (!good)
        ++failed;
    printf("%sok %d - replay %s%s%s\n", good ? "" : "not ", tests, path,
           why ? ": " : "", why ? why : "");
    fflush(stdout);
}

/* Reads all of path into a malloc'ed buffer (caller frees; never NULL on
 * success, even for an empty file). Returns NULL on failure. */
static uint8_t *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0, got;

    if (f == NULL)
        return NULL;
    do {
        if (len == cap) {
            uint8_t *bigger;
            cap = cap ? cap * 2 : 4096;
            bigger = realloc(buf, cap);
            if (bigger == NULL) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = bigger;
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
    } while (got > 0);
    if (ferror(f)) {
        free(buf);
        fclose(f);
        return NULL;
    }
    fclose(f);
    *size = len;
    return buf;
}

/* Replays one file: the input is copied into a buffer of its exact size,
 * so ASan sees a read past its end. */
static void replay_file(const char *path)
{
    size_t size = 0;
    uint8_t *data = read_file(path, &size);
    uint8_t *exact;

    if (data == NULL) {
        report(0, path, "cannot read");
        return;
    }
    exact = malloc(size ? size : 1);
    if (exact == NULL) {
        free(data);
        report(0, path, "out of memory");
        return;
    }
    memcpy(exact, data, size);
    free(data);
    LLVMFuzzerTestOneInput(exact, size);
    free(exact);
    report(1, path, NULL);
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replays the regular files of dir in sorted order. */
static void replay_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **paths = NULL;
    size_t n = 0, cap = 0, i;

    if (d == NULL) {
        report(0, dir, "cannot open directory");
        return;
    }
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *path = malloc(len);

        if (path == NULL) {
            report(0, dir, "out of memory");
            break;
        }
        snprintf(path, len, "%s/%s", dir, e->d_name);
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
            free(path);
            continue;
        }
        if (n == cap) {
            char **bigger;
            cap = cap ? cap * 2 : 64;
            bigger = realloc(paths, cap * sizeof(*paths));
            if (bigger == NULL) {
                free(path);
                report(0, dir, "out of memory");
                break;
            }
            paths = bigger;
        }
        paths[n++] = path;
    }
    closedir(d);
    if (n > 0)
        qsort(paths, n, sizeof(*paths), compare_names);
    for (i = 0; i < n; ++i) {
        replay_file(paths[i]);
        free(paths[i]);
    }
    free(paths);
}

int main(int argc, char **argv)
{
    int i;

    for (i = 1; i < argc; ++i) {
        struct stat st;

        if (stat(argv[i], &st) != 0)
            report(0, argv[i], "no such file");
        else if (S_ISDIR(st.st_mode))
            replay_dir(argv[i]);
        else
            replay_file(argv[i]);
    }
    printf("1..%d\n", tests);
    return failed ? 1 : 0;
}
