/*
 * hl_duration.h - how long to wait, in words a person reads, in the languages
 * of the built-in 429 page (en zh es fr de ar ja): "30 seconds", "about 47
 * minutes", "2 hours", "about 3 days". Uses an APR pool for the strings it
 * returns; no httpd headers.
 */
#ifndef HL_DURATION_H
#define HL_DURATION_H

#include <apr_pools.h>

/*
 * Returns `seconds` (1 when below 1) in words in language lang (ASCII case
 * ignored; en when unknown or NULL), allocated from p, never NULL. Under a
 * minute: the exact seconds. Beyond: whole minutes, hours or days (the
 * largest unit that fits once), counted down (2853 s is 47 minutes), and
 * "about" before the number when that drops a remainder. Plurals as each
 * language writes them (Arabic: one, two, 3..10, others).
 */
char *hl_duration_words(apr_pool_t *p, const char *lang, long seconds);

#endif
