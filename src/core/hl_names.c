/*
 * hl_names.c - the names book (see hl_names.h): account ids to the values
 * clients sent, bounded, lock-free, oldest probed entry evicted.
 */
#include <string.h>

#include "hl_names.h"

/* An entry recorded again with the same bytes is refreshed (its stamp
 * moved to now) only when this many recordings went by since: a flood of
 * one account does not write the same cache line at every refusal. */
#define HL_NAMES_REFRESH (HL_NAMES_ENTRIES / 4)

void hl_names_init(hl_names_t *book)
{
    memset(book, 0, sizeof(*book));
    book->magic = HL_NAMES_MAGIC;
}

/* Returns the value of hex digit c, or -1 (lowercase only, as the keys
 * are written). Static. */
static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

long hl_names_id_at(const char *s, size_t len)
{
    size_t at = len, i;

    while (at > 0 && s[at - 1] != '|')
        --at;
    if (len - at < HL_NAMES_ID_LEN || !strchr("uhcepj", s[at]) || !s[at]
        || s[at + 1] != ':')
        return -1;
    for (i = 2; i < HL_NAMES_ID_LEN; ++i)
        if (hex_digit(s[at + i]) < 0)
            return -1;
    if (len - at > HL_NAMES_ID_LEN && s[at + HL_NAMES_ID_LEN] != '+')
        return -1;
    return (long)at;
}

/* Returns where the probes of id (HL_NAMES_ID_LEN bytes) start: its hex
 * digits (a keyed hash already) mixed with its kind. Static. */
static uint32_t home_of(const char *id)
{
    uint64_t h = (unsigned char)id[0];
    int i;

    for (i = 2; i < HL_NAMES_ID_LEN; ++i)
        h = h << 4 ^ (uint64_t)hex_digit(id[i]);
    h ^= h >> 29;
    return (uint32_t)h & (HL_NAMES_ENTRIES - 1);
}

/* Copies entry e into *copy if no writer held it meanwhile. Returns 1 if
 * the copy is whole and in use, 0 otherwise. */
static int copy_entry(const hl_names_entry_t *e, hl_names_entry_t *copy)
{
    uint64_t before = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);

    if (before & 1)
        return 0;
    memcpy(copy, e, sizeof(*copy));
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return __atomic_load_n(&e->seq, __ATOMIC_RELAXED) == before
           && copy->stamp != 0;
}

int hl_names_record(hl_names_t *book, const char *client, size_t clen,
                    const char *value, size_t vlen)
{
    uint32_t home, i, victim = 0;
    uint64_t oldest = UINT64_MAX, now, seq;
    size_t keep = vlen < HL_NAMES_VALUE_MAX ? vlen : HL_NAMES_VALUE_MAX;
    hl_names_entry_t *e, copy;

    if (vlen == 0 || hl_names_id_at(client, clen) != 0
        || book->magic != HL_NAMES_MAGIC)
        return 0;
    now = __atomic_load_n(&book->clock, __ATOMIC_RELAXED);
    home = home_of(client);
    for (i = 0; i < HL_NAMES_PROBES; ++i) {
        uint32_t at = (home + i) & (HL_NAMES_ENTRIES - 1);

        e = &book->entries[at];
        if (!copy_entry(e, &copy)) {
            if (!(__atomic_load_n(&e->seq, __ATOMIC_RELAXED) & 1)
                && oldest != 0) {
                oldest = 0;          /* free: the best place */
                victim = at;
            }
            continue;
        }
        if (memcmp(copy.id, client, HL_NAMES_ID_LEN) == 0) {
            if (copy.len == keep && copy.cut == (vlen > keep)
                && memcmp(copy.value, value, keep) == 0) {
                if (now - copy.stamp > HL_NAMES_REFRESH)
                    __atomic_store_n(&e->stamp,
                                     __atomic_add_fetch(&book->clock, 1,
                                                        __ATOMIC_RELAXED),
                                     __ATOMIC_RELAXED);
                return 1;
            }
            oldest = 0;              /* its own entry: another spelling */
            victim = at;
            break;
        }
        if (copy.stamp < oldest) {
            oldest = copy.stamp;
            victim = at;
        }
    }
    e = &book->entries[victim];
    seq = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);
    if ((seq & 1) || !__atomic_compare_exchange_n(&e->seq, &seq, seq + 1, 0,
                                                  __ATOMIC_ACQUIRE,
                                                  __ATOMIC_RELAXED))
        return 0;
    memcpy(e->id, client, HL_NAMES_ID_LEN);
    memcpy(e->value, value, keep);
    e->len = (uint16_t)keep;
    e->cut = vlen > keep;
    e->stamp = __atomic_add_fetch(&book->clock, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&e->seq, seq + 2, __ATOMIC_RELEASE);
    return 1;
}

/* Returns how many bytes at s (n left) make one valid UTF-8 character
 * other than a control character, or 0. Static. */
static size_t utf8_char(const unsigned char *s, size_t n)
{
    size_t need, i;
    unsigned char lo = 0x80, hi = 0xbf;

    if (s[0] >= 0x20 && s[0] < 0x7f)
        return 1;
    if (s[0] < 0xc2 || s[0] > 0xf4)
        return 0;               /* controls, continuations, overlongs */
    need = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
    if (s[0] == 0xe0)
        lo = 0xa0;
    else if (s[0] == 0xed)
        hi = 0x9f;              /* no surrogates */
    else if (s[0] == 0xf0)
        lo = 0x90;
    else if (s[0] == 0xf4)
        hi = 0x8f;
    if (n < need || s[1] < lo || s[1] > hi)
        return 0;
    for (i = 2; i < need; ++i)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return need;
}

/* Copies the n bytes of value into out (n + 1 bytes) as text any writer
 * may show: valid UTF-8 without control characters, each byte of
 * anything else shown as '?'; NUL-terminated. Static. */
static void copy_shown(char *out, const char *value, size_t n)
{
    const unsigned char *v = (const unsigned char *)value;
    size_t i = 0, k;

    while (i < n) {
        k = utf8_char(v + i, n - i);
        if (k == 0) {
            out[i++] = '?';
            continue;
        }
        memcpy(out + i, v + i, k);
        i += k;
    }
    out[n] = '\0';
}

long hl_names_find(const hl_names_t *book, const char *s, size_t len,
                   char *out, int *cut)
{
    long at = hl_names_id_at(s, len);
    const char *id = s + at;
    hl_names_entry_t copy;
    uint32_t home, i;

    if (at < 0 || book->magic != HL_NAMES_MAGIC)
        return -1;
    home = home_of(id);
    for (i = 0; i < HL_NAMES_PROBES; ++i) {
        const hl_names_entry_t *e =
            &book->entries[(home + i) & (HL_NAMES_ENTRIES - 1)];

        if (!copy_entry(e, &copy)
            || memcmp(copy.id, id, HL_NAMES_ID_LEN) != 0)
            continue;
        copy_shown(out, copy.value, copy.len);
        if (cut)
            *cut = copy.cut;
        return (long)copy.len;
    }
    return -1;
}
