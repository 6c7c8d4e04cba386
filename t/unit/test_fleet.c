/* test_fleet.c - one server's view of an attack as text, and the merge of
 * the other servers' refusals (hl_fleet). */
#include <stdlib.h>
#include "hl_tap.h"
#include "hl_fleet.h"

#define KEY(s) (s), strlen(s)

/* Fills rank r with key, route, now and total. */
static void rank(hl_refusal_rank_t *r, const char *key, const char *route,
                 uint32_t now, uint64_t total)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->key, sizeof(r->key), "%s", key);
    snprintf(r->route, sizeof(r->route), "%s", route);
    r->now = now;
    r->total = total;
}

/* keep callback: keys not starting with "x". */
static int not_x(const char *key, size_t len, void *baton)
{
    (void)baton;
    return len && key[0] != 'x';
}

int main(void)
{
    hl_fleet_view_t *v = calloc(1, sizeof(*v)), *w = calloc(1, sizeof(*w));
    hl_banbook_t *book = calloc(1, sizeof(*book));
    hl_refusal_rank_t r[HL_FLEET_MERGE_MAX], add[HL_FLEET_REFUSED];
    char *text = malloc(HL_FLEET_TEXT_MAX), big[300];
    size_t len;
    int i, n;

    /* Round trip, with bytes that need escaping. */
    rank(&v->refused[0], "/lim|10.0.0.1", "/lim", 40, 90);
    rank(&v->refused[1], "/a\tb%c\n|x", "/r\x01", 3, 3);
    v->nrefused = 2;
    hl_banbook_start(book, KEY("ban|10.0.0.1"), "/etc/a.conf:3", "/etc/a.conf:9", 1700000000000LL);
    hl_banbook_refused(book, KEY("ban|10.0.0.1"));
    hl_fleet_bans_from_book(book, v);
    is_int(v->nbans, 1, "the book's one entry is taken");
    len = hl_fleet_encode(v, text, HL_FLEET_TEXT_MAX);
    ok(len > 0 && memchr(text, '\t', 5) == NULL, "encoded");
    ok(!memchr(text + 5, '\x01', len - 5), "control bytes are escaped");
    is_int(hl_fleet_decode(text, len, w), 0, "decoded");
    is_int(w->nrefused, 2, "two refused keys back");
    ok(!strcmp(w->refused[0].key, "/lim|10.0.0.1") && w->refused[0].now == 40
       && w->refused[0].total == 90 && !strcmp(w->refused[0].route, "/lim"),
       "the first: key, now, total, route");
    ok(!strcmp(w->refused[1].key, "/a\tb%c\n|x") && !strcmp(w->refused[1].route, "/r\x01"),
       "the second: escaped bytes come back");
    ok(w->nbans == 1 && !strcmp(w->bans[0].key, "ban|10.0.0.1")
       && !strcmp(w->bans[0].line, "/etc/a.conf:3") && !strcmp(w->bans[0].rule, "/etc/a.conf:9")
       && w->bans[0].since_ms == 1700000000000LL && w->bans[0].refusals == 1,
       "the ban: key, line, rule, since, refusals");
    ok(hl_fleet_find_ban(w, 1, "ban|10.0.0.1") == &w->bans[0]
       && hl_fleet_find_ban(w, 1, "ban|10.0.0.2") == NULL, "found by key");

    /* Worst case fits HL_FLEET_TEXT_MAX; one byte short does not. */
    memset(big, '%', sizeof(big));
    big[sizeof(big) - 1] = '\0';
    for (i = 0; i < HL_FLEET_REFUSED; ++i)
        rank(&v->refused[i], big, big, UINT32_MAX, UINT64_MAX);
    v->nrefused = HL_FLEET_REFUSED;
    for (i = 0; i < HL_BANBOOK_MAX; ++i)
        hl_banbook_start(book, big, 90 + (size_t)i % 5, big, big, INT64_MAX);
    hl_fleet_bans_from_book(book, v);
    is_int(v->nbans, HL_FLEET_BANS, "the newest HL_FLEET_BANS entries are taken");
    len = hl_fleet_encode(v, text, HL_FLEET_TEXT_MAX);
    okf(len > 0, "the largest view fits (%zu bytes)", len);
    is_int((int)hl_fleet_encode(v, text, len - 1), 0, "one byte short: 0");
    is_int(hl_fleet_decode(text, len, w), 0, "... and reads back");
    ok(w->nrefused == HL_FLEET_REFUSED && w->nbans == HL_FLEET_BANS,
       "... every entry");

    /* Garbage. */
    is_int(hl_fleet_decode("hlv2\nr\t1\t1\tk\tr\n", 15, w), -1, "another magic: not a view");
    is_int(w->nrefused, 0, "... empty");
    {
        static const char bad[] = "hlv1\nr\t1\t1\tk\n"       /* too few */
            "r\tx\t1\tk\tr\n"                              /* not a number */
            "r\t1\t1\tk%4\tr\n"                            /* bad escape */
            "r\t1\t1\tk%00\tr\n"                           /* a NUL */
            "r\t4294967296\t1\tk\tr\n"                     /* now too big */
            "r\t1\t1\t\tr\n"                               /* no key */
            "b\t1\t1\tk\tl\n"                              /* too few */
            "z\t1\n"                                       /* unknown kind */
            "r\t7\t8\tgood\troute";                        /* no newline */
        is_int(hl_fleet_decode(bad, sizeof(bad) - 1, w), 0, "bad lines: read");
        ok(w->nrefused == 1 && w->nbans == 0 && !strcmp(w->refused[0].key, "good")
           && w->refused[0].now == 7, "... only the good one kept");
    }
    memset(big, 'k', sizeof(big));
    memcpy(big, "hlv1\nr\t1\t1\t", 11);
    is_int(hl_fleet_decode(big, sizeof(big), w), 0, "a key too long ...");
    is_int(w->nrefused, 0, "... is skipped");

    /* Merge: sums per key, appends, filters, sorts, cuts. */
    rank(&r[0], "/lim|a", "/lim", 10, 10);
    rank(&r[1], "/lim|b", "/lim", 5, 50);
    rank(&add[0], "/lim|b", "/lim", 30, 30);
    rank(&add[1], "/lim|c", "/other", 7, 7);
    rank(&add[2], "x/hidden|d", "/x", 99, 99);
    rank(&add[3], "/lim|quiet", "/lim", 0, 5);
    n = hl_fleet_merge(r, 2, 20, add, 4, not_x, NULL);
    is_int(n, 3, "merged: three keys (filtered and quiet ones left out)");
    ok(!strcmp(r[0].key, "/lim|b") && r[0].now == 35 && r[0].total == 80,
       "the key refused on both comes first, summed");
    ok(!strcmp(r[1].key, "/lim|a") && r[1].now == 10, "then this server's own");
    ok(!strcmp(r[2].key, "/lim|c") && !strcmp(r[2].route, "/other"),
       "then the other server's, with its route");
    n = hl_fleet_merge(r, 3, 2, add, 0, NULL, NULL);
    is_int(n, 2, "cut to max");
    rank(&r[0], "k", "", UINT32_MAX - 1, 1);
    rank(&add[0], "k", "/r", 5, 1);
    n = hl_fleet_merge(r, 1, 20, add, 1, NULL, NULL);
    ok(n == 1 && r[0].now == UINT32_MAX && !strcmp(r[0].route, "/r"),
       "a sum held at the top; an empty route filled");
    free(v);
    free(w);
    free(book);
    free(text);
    return done_testing();
}
