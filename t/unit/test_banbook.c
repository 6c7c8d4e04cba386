/* test_banbook.c - why each ban was started (hl_banbook). */
#include <stdlib.h>
#include "hl_tap.h"
#include "hl_banbook.h"

#define KEY(s) (s), strlen(s)

int main(void)
{
    hl_banbook_t *b = calloc(1, sizeof(*b));
    const hl_banbook_entry_t *e;
    char key[200], long_line[400];
    int i;

    ok(hl_banbook_find(b, KEY("ban|192.0.2.1")) == NULL, "empty: nothing found");
    is_int(hl_banbook_refused(b, KEY("ban|192.0.2.1")), 0,
           "empty: a refusal has no entry to count in");
    hl_banbook_start(b, KEY("ban|192.0.2.1"), "/etc/a.conf:12",
                     "/etc/a.conf:30", 1000);
    e = hl_banbook_find(b, KEY("ban|192.0.2.1"));
    ok(e && !strcmp(e->line, "/etc/a.conf:12") && !strcmp(e->rule, "/etc/a.conf:30")
       && e->since_ms == 1000 && e->refusals == 0, "started: line, rule, since");
    ok(hl_banbook_find(b, KEY("ban|192.0.2.10")) == NULL, "another key: not found");
    ok(hl_banbook_refused(b, KEY("ban|192.0.2.1"))
       && hl_banbook_refused(b, KEY("ban|192.0.2.1")) && e->refusals == 2,
       "two refusals while banned");
    /* The same client banned again: the newest entry answers. */
    hl_banbook_start(b, KEY("ban|192.0.2.1"), "table", NULL, 5000);
    e = hl_banbook_find(b, KEY("ban|192.0.2.1"));
    ok(e && e->since_ms == 5000 && !strcmp(e->line, "table") && !e->rule[0]
       && e->refusals == 0, "banned again: the newest entry, NULL rule as \"\"");
    is_int((int)hl_banbook_total(b), 2, "two bans since start");

    /* Bounded: the oldest give way; texts are cut, never overrun. */
    memset(long_line, 'x', sizeof(long_line) - 1);
    long_line[sizeof(long_line) - 1] = '\0';
    for (i = 0; i < HL_BANBOOK_MAX; ++i) {
        snprintf(key, sizeof(key), "ban|10.0.0.%d", i);
        hl_banbook_start(b, KEY(key), long_line, long_line, 10000 + i);
    }
    ok(hl_banbook_find(b, KEY("ban|192.0.2.1")) == NULL,
       "full: the oldest bans are forgotten");
    e = hl_banbook_find(b, KEY("ban|10.0.0.63"));
    ok(e && strlen(e->line) == HL_BANBOOK_TEXT - 1
       && strlen(e->rule) == HL_BANBOOK_TEXT - 1, "long texts cut to fit");
    is_int((int)hl_banbook_total(b), 2 + HL_BANBOOK_MAX, "the total counts them all");
    /* A key longer than kept is still found by its whole key's hash. */
    memset(key, 'k', sizeof(key) - 1);
    key[sizeof(key) - 1] = '\0';
    hl_banbook_start(b, KEY(key), "l", "r", 1);
    e = hl_banbook_find(b, KEY(key));
    ok(e && strlen(e->key) == HL_BANBOOK_KEY - 1, "a long key: kept cut, found whole");
    key[150] = 'j';
    ok(hl_banbook_find(b, KEY(key)) == NULL, "... and a key differing past the cut is not it");
    free(b);
    return done_testing();
}
