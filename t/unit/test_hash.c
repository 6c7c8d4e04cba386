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
#include "hl_slotkey.h"
#include "hl_core_calls.h"

typedef struct {
    const char *data;
    size_t      len;
    uint64_t    seed;
    uint64_t    want;
    const char *name;
} known_t;

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

    /* hl_hash64_words, the slot table's (stored in its slots: a change
     * bumps HL_SLOTS_VERSION). Values of a little-endian machine. */
    {
        static const known_t words[] = {
            { "", 0, 0, 0x73ff7a61cf7eea17ULL, "words: empty" },
            { "a", 1, 0, 0x00190ae08a802f95ULL, "words: \"a\"" },
            { "abc", 3, 1, 0xa17ec54ca8445206ULL, "words: \"abc\", seed 1" },
            { "a\0", 2, 0, 0x705699432f66aa15ULL, "words: trailing NUL counts" },
            { "12345678", 8, 0, 0xf011808fefa62ec1ULL, "words: one word" },
            { "123456789", 9, 0, 0xeb5eca483f44d9e5ULL, "words: a word and a byte" },
            { "ip:203.0.113.7|sw|0123456789abcdef|60000", 40, 0,
              0x19dedc9b45565ccfULL, "words: a slot key's length" },
        };
        unsigned char a[80], b[80];
        size_t len, bit;
        int flips = 1;

        for (i = 0; i < sizeof(words) / sizeof(words[0]); ++i)
            ok(hl_hash64_words(words[i].data, words[i].len, words[i].seed)
               == words[i].want, words[i].name);
        ok(hl_hash64_words(NULL, 0, 7) == hl_hash64_words("", 0, 7),
           "words: NULL with length 0");
        ok(hl_hash64_words("abc", 3, 1) != hl_hash64_words("abc", 3, 2),
           "words: the seed changes the hash");
        for (i = 0; i < sizeof(a); ++i)
            a[i] = (unsigned char)(i * 7 + 1);
        /* Every single-bit change of every length up to 80 changes it, and
         * the tail read that overlaps the last word is not fooled by two
         * lengths of one text. */
        for (len = 1; len <= sizeof(a); ++len)
            for (bit = 0; bit < len * 8; ++bit) {
                memcpy(b, a, len);
                b[bit / 8] ^= (unsigned char)(1u << (bit % 8));
                if (hl_hash64_words(a, len, 5) == hl_hash64_words(b, len, 5))
                    flips = 0;
            }
        ok(flips, "words: every bit of keys of 1..80 bytes counts");
        ok(hl_hash64_words(a, 15, 5) != hl_hash64_words(a, 16, 5)
           && hl_hash64_words("\0\0\0\0\0\0\0\0", 8, 5)
              != hl_hash64_words("\0\0\0\0\0\0\0\0\0", 9, 5),
           "words: the length counts (zero bytes too)");
        /* The top bits of two words flipped together: a plain 64-bit
         * multiply would carry both differences to bit 63 and collide
         * whatever the seed. */
        memcpy(b, a, 16);
        b[7] ^= 0x80;
        b[15] ^= 0x80;
        ok(hl_hash64_words(a, 16, 5) != hl_hash64_words(b, 16, 5)
           && hl_hash64_words(a, 16, 6) != hl_hash64_words(b, 16, 6),
           "words: no seed-independent collision from the top bits");
    }

    /* The seeds are the persisted values; they differ from each other. */
    ok(HL_SEED_KEYS == 0x686f746c696d6974ULL, "HL_SEED_KEYS is \"hotlimit\"");
    ok(HL_SEED_KEYS != HL_SEED_STATS && HL_SEED_KEYS != HL_SEED_TABLE
       && HL_SEED_STATS != HL_SEED_TABLE,
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
