/* hl_logthin: which refusals HotLimitLogRefusals first writes. */
#include <stdlib.h>
#include "hl_tap.h"
#include "hl_logthin.h"

/* Notes n refusals of hash at now (spell spell_ms) and returns the lines
 * they write: full lines in *first, summed counts in *summed, summary
 * lines in *summaries. */
static void flood(hl_logthin_t *t, uint64_t hash, int64_t now, int64_t spell,
                  int n, int *first, uint64_t *summed, int *summaries)
{
    hl_logthin_verdict_t v;
    int i;

    for (i = 0; i < n; ++i) {
        hl_logthin_note(t, hash, now, spell, &v);
        *first += v.first;
        *summed += v.summary;
        *summaries += v.summary > 0;
    }
}

int main(void)
{
    hl_logthin_t *t = tap_calloc(hl_logthin_size(64));
    hl_logthin_verdict_t v;
    int64_t now = 1000000;
    int first = 0, summaries = 0, i;
    uint64_t summed = 0, dropped = 0;

    hl_logthin_init(t, 64);
    is_int((int)t->nsets, 16, "64 keys: 16 sets of 4");
    is_int((int)(hl_logthin_size(1) > sizeof(hl_logthin_t)), 1,
           "one key: one set");

    /* 300 refusals of one key within a second of a 60 s spell: one line. */
    flood(t, 42, now, 60000, 300, &first, &summed, &summaries);
    is_int(first, 1, "300 refusals at once: the first written in full");
    is_int(summaries, 0, "no summary before 10 s");

    /* 10 s later: one summary of the 299 and this one. */
    hl_logthin_note(t, 42, now + 10000, 50000, &v);
    is_int(v.first, 0, "10 s later, same spell: not in full");
    is_int((int)v.summary, 300, "summary: 299 earlier + this one");
    hl_logthin_note(t, 42, now + 15000, 45000, &v);
    is_int((int)v.summary, 0, "5 s after a summary: none");
    hl_logthin_note(t, 42, now + 19999, 41000, &v);
    is_int((int)v.summary, 0, "9.999 s after: none");
    hl_logthin_note(t, 42, now + 20000, 40000, &v);
    is_int((int)v.summary, 3, "10 s after: the 3 since");

    /* A new spell (after its Retry-After): first line again; the one
     * pending refusal is carried until its summary is due. */
    hl_logthin_note(t, 42, now + 25000, 35000, &v);
    is_int((int)v.summary, 0, "pending 1");
    hl_logthin_note(t, 42, now + 60000, 60000, &v);
    is_int(v.first, 1, "new spell: in full");
    is_int((int)v.summary, 1, "and the last spell's leftover, due");
    hl_logthin_note(t, 42, now + 61000, 59000, &v);
    is_int(v.first + (int)v.summary, 0, "then quiet");
    hl_logthin_note(t, 42, now + 121000, 1000, &v);
    is_int(v.first, 1, "next spell in full");
    is_int((int)v.summary, 1, "with the leftover refusal, its summary due");

    /* Exact accounting over a long flood: every refusal in some line. */
    hl_logthin_init(t, 64);
    first = 0; summed = 0; summaries = 0;
    for (i = 0; i < 6000; ++i) {     /* 100 per second for 60 s, spell 60 s */
        hl_logthin_verdict_t w;
        hl_logthin_note(t, 7, now + i * 10, 60000 - i * 10, &w);
        first += w.first;
        summed += w.summary;
        summaries += w.summary > 0;
    }
    is_int(first, 1, "60 s flood in one spell: one full line");
    is_int(summaries, 5, "five summaries (at 10, 20, 30, 40, 50 s)");
    is_int((int)summed, 5000, "summed: the 5,000 refusals after the first, up to 50 s");

    /* Distinct keys: bounded memory; reused entries' counts reported. */
    hl_logthin_init(t, 4);           /* one set of 4 */
    for (i = 1; i <= 4; ++i) {
        hl_logthin_note(t, (uint64_t)i, now, 60000, &v);
        hl_logthin_note(t, (uint64_t)i, now, 60000, &v);  /* 1 pending each */
    }
    hl_logthin_note(t, 99, now + 1, 60000, &v);
    is_int(v.first, 1, "a fifth key is written in full");
    is_int((int)v.dropped, 1, "the reused entry's pending refusal reported");
    dropped = 0;
    for (i = 100; i < 200; ++i) {
        hl_logthin_note(t, (uint64_t)i, now + 2, 60000, &v);
        hl_logthin_note(t, (uint64_t)i, now + 2, 60000, &v);
        dropped += v.dropped;
    }
    is_int((int)dropped, 0, "dropped reported at most once per 10 s");
    hl_logthin_note(t, 5000, now + 10001, 60000, &v);
    is_int((int)v.dropped, 100, "then all that were dropped since: 100");

    /* An ended spell with nothing pending is reused before a live one. */
    hl_logthin_init(t, 4);
    hl_logthin_note(t, 1, now, 1000, &v);
    hl_logthin_note(t, 2, now, 60000, &v);
    hl_logthin_note(t, 3, now, 60000, &v);
    hl_logthin_note(t, 4, now, 60000, &v);
    hl_logthin_note(t, 5, now + 2000, 60000, &v);
    hl_logthin_note(t, 2, now + 2000, 60000, &v);
    is_int(v.first, 0, "key 2 kept (key 1's ended spell was reused)");
    hl_logthin_note(t, 0, now, 1000, &v);
    is_int(v.first, 1, "hash 0 is taken as 1: a key like any");
    free(t);
    return done_testing();
}
