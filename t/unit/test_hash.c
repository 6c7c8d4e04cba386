/* test_hash.c - hl_hash64 and the named seeds. Hashes are stored (slot
 * table, statistics, table images), so known values pin the function:
 * a change to hl_hash64 or to a seed fails here first. The values were
 * computed from the implementation as it stood when hl_hash.c was split
 * out of hl_slots.c. */
#include <stdint.h>
#include <string.h>
#include "hl_tap.h"
#include "hl_hash.h"
#include "hl_slots.h"

typedef struct {
    const char *data;
    size_t      len;
    uint64_t    seed;
    uint64_t    want;
    const char *name;
} known_t;

/* hl_hash64_words as its definition reads, a byte at a time: the words
 * and the tail assembled little-endian, for comparison with the loads. */
static uint64_t words_by_bytes(const unsigned char *p, size_t len, uint64_t seed)
{
    uint64_t h = (0xcbf29ce484222325ULL ^ seed) + (uint64_t)len * 0xbf58476d1ce4e5b9ULL;

    while (len > 0) {
        size_t n = len < 8 ? len : 8, i;
        uint64_t w = 0;
        for (i = 0; i < n; ++i)
            w |= (uint64_t)p[i] << (8 * i);
        h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
        h ^= h >> 32;
        p += n;
        len -= n;
    }
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    return h ^ (h >> 31);
}

int main(void)
{
    static const known_t known[] = {
        { "", 0, 0, 0xf52a15e9a9b5e89bULL, "empty, seed 0" },
        { "a", 1, 0, 0x02c0bdbf481420f8ULL, "\"a\", seed 0" },
        { "abc", 3, 1, 0x452ec90cfb0d18b0ULL, "\"abc\", seed 1" },
        { "a\0", 2, 0, 0xd0137a57d0ef408fULL, "trailing NUL counts" },
        { "hotlimit", 8, HL_SEED_KEYS, 0xf73000cbaed81c9aULL, "HL_SEED_KEYS" },
        { "/login.php", 10, HL_SEED_STATS, 0x2190fb8327642e0aULL, "HL_SEED_STATS" },
        { "/login.php", 10, HL_SEED_TABLE, 0x0e7c68d170eb0661ULL, "HL_SEED_TABLE" },
        { "/login.php", 10, HL_SEED_CLASS, 0x88bcf3905324ebabULL, "HL_SEED_CLASS" },
    };
    unsigned char all[256];
    char key[100], out[HL_KEY_MAX + 1];
    size_t i, n;

    for (i = 0; i < sizeof(known) / sizeof(known[0]); ++i)
        ok(hl_hash64(known[i].data, known[i].len, known[i].seed) == known[i].want,
           known[i].name);
    for (i = 0; i < sizeof(all); ++i)
        all[i] = (unsigned char)i;
    ok(hl_hash64(all, sizeof(all), 0) == 0xef2687f0d4371fe2ULL,
       "every byte value, seed 0");
    ok(hl_hash64(NULL, 0, 7) == hl_hash64("", 0, 7), "NULL with length 0");
    ok(hl_hash64("abc", 3, 1) == hl_hash64("abc", 3, 1), "deterministic");
    ok(hl_hash64("abc", 3, 1) != hl_hash64("abc", 3, 2), "seed changes the hash");
    ok(hl_hash64("abc", 3, 1) != hl_hash64("abd", 3, 1), "one byte changes the hash");
    ok(hl_hash64("a\0", 2, 1) != hl_hash64("a", 1, 1), "trailing NUL changes the hash");

    /* hl_hash64_words: pinned values, and every length 0..24 (whole
     * words, a tail, both) hashes differently, as does every single byte. */
    ok(hl_hash64_words("", 0, 0) == 0xf52a15e9a9b5e89bULL, "words: empty, seed 0");
    ok(hl_hash64_words("d0/|127.0.0.1", 13, 5) == 0x6aa72ccf5f87372cULL,
       "words: a slot key, a word and a tail");
    ok(hl_hash64_words(all, sizeof(all), 0) == 0x39c2affb1f49c4feULL,
       "words: every byte value, seed 0");
    ok(hl_hash64_words(NULL, 0, 7) == hl_hash64_words("", 0, 7), "words: NULL with length 0");
    ok(hl_hash64_words("abc", 3, 1) != hl_hash64_words("abc", 3, 2), "words: seed changes the hash");
    ok(hl_hash64_words("a\0", 2, 1) != hl_hash64_words("a", 1, 1),
       "words: trailing NUL changes the hash");
    {
        uint64_t seen[25];
        int distinct = 1, flips = 1;
        size_t j, k;

        for (i = 0; i <= 24; ++i) {
            seen[i] = hl_hash64_words(all, i, 9);
            for (j = 0; j < i; ++j)
                if (seen[j] == seen[i])
                    distinct = 0;
        }
        ok(distinct, "words: lengths 0..24 of one text all differ");
        for (k = 0; k < 24; ++k) {
            unsigned char c[24];
            memcpy(c, all, sizeof(c));
            c[k] ^= 1;
            if (hl_hash64_words(c, sizeof(c), 9) == seen[24])
                flips = 0;
        }
        ok(flips, "words: a flipped bit in any of 24 bytes changes the hash");
    }
    {
        int same = 1;
        size_t off, len;

        for (off = 0; off < 8; ++off)
            for (len = 0; len + off <= 100; ++len)
                if (hl_hash64_words(all + off, len, 5) != words_by_bytes(all + off, len, 5))
                    same = 0;
        ok(same, "words: the word and tail loads equal the byte-by-byte definition "
                 "(lengths 0..100, every alignment)");
    }

    /* In steps: every prefix's state, then the finalizer, is its hash. */
    {
        uint64_t st = hl_hash64_begin(HL_SEED_TABLE);
        int same = 1;

        for (i = 0; i < sizeof(all); ++i) {
            if (hl_hash64_end(st) != hl_hash64(all, i, HL_SEED_TABLE))
                same = 0;
            st = hl_hash64_byte(st, all[i]);
        }
        ok(same && hl_hash64_end(st) == hl_hash64(all, sizeof(all), HL_SEED_TABLE),
           "begin, byte by byte, end: the hash of each prefix");
        st = hl_hash64_more(hl_hash64_begin(3), "/app/v1", 7);
        ok(hl_hash64_end(hl_hash64_more(st, "/items", 6))
           == hl_hash64("/app/v1/items", 13, 3), "more: continues a prefix");
    }

    /* The seeds are the persisted values; they differ from each other. */
    ok(HL_SEED_KEYS == 0x686f746c696d6974ULL, "HL_SEED_KEYS is \"hotlimit\"");
    ok(HL_SEED_KEYS != HL_SEED_STATS && HL_SEED_KEYS != HL_SEED_TABLE
       && HL_SEED_KEYS != HL_SEED_CLASS && HL_SEED_STATS != HL_SEED_TABLE
       && HL_SEED_STATS != HL_SEED_CLASS && HL_SEED_TABLE != HL_SEED_CLASS,
       "the seeds are distinct");

    /* hl_key_compact appends hl_hash64(key, HL_SEED_KEYS) to a long key. */
    for (i = 0; i < sizeof(key); ++i)
        key[i] = (char)('a' + i % 26);
    n = hl_key_compact(out, key, sizeof(key));
    out[n] = '\0';
    is_int(n, HL_KEY_MAX, "a long key is compacted to HL_KEY_MAX");
    is_str(out + n - 17, "~2b641dc6417c98e0", "compacted key suffix is stable");
    return done_testing();
}
