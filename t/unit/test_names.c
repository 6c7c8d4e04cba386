/* test_names.c - the names book (HotLimitStatusNames): ids found in keys,
 * values recorded and found, bounded, oldest probed entry evicted. */
#include <stdio.h>
#include <stdlib.h>
#include "hl_tap.h"
#include "hl_names.h"

/* Writes into id (HL_NAMES_ID_LEN + 1 bytes) the account id of number n. */
static void make_id(char *id, char kind, uint64_t n)
{
    snprintf(id, HL_NAMES_ID_LEN + 1, "%c:%016llx", kind,
             (unsigned long long)(n * 0x9e3779b97f4a7c15ULL));
}

int main(void)
{
    static hl_names_t book;
    char id[HL_NAMES_ID_LEN + 1], out[HL_NAMES_VALUE_MAX + 1], key[128];
    char longv[200];
    int cut = -1, i, found = 0;

    hl_names_init(&book);
    is_int(hl_names_id_at("p:8c2fedfcb891a4ad", 18), 0, "a client part is an id");
    snprintf(key, sizeof(key), "host:80/login|p:8c2fedfcb891a4ad");
    is_int(hl_names_id_at(key, strlen(key)), 14, "found after the last '|'");
    snprintf(key, sizeof(key), "/login|p:8c2fedfcb891a4ad+d:0123456789abcdef");
    is_int(hl_names_id_at(key, strlen(key)), 7, "a device cookie's key names its account");
    is_int(hl_names_id_at("/login|203.0.113.7", 18), -1, "an address is no id");
    is_int(hl_names_id_at("/login|p:8c2fedfcb891a4aZ", 25), -1, "not hex");
    is_int(hl_names_id_at("/login|p:8c2fedfcb891a4ad0", 26), -1, "too long");
    is_int(hl_names_id_at("/login|x:8c2fedfcb891a4ad", 25), -1, "unknown kind");
    is_int(hl_names_id_at("", 0), -1, "empty");

    ok(hl_names_record(&book, "p:8c2fedfcb891a4ad", 18, "Admin", 5), "recorded");
    is_int(hl_names_find(&book, key, strlen(key), out, &cut), 5, "found by a key");
    is_str(out, "Admin", "as the client sent it");
    is_int(cut, 0, "not cut");
    ok(hl_names_record(&book, "p:8c2fedfcb891a4ad", 18, "admin", 5), "another spelling");
    hl_names_find(&book, "p:8c2fedfcb891a4ad", 18, out, NULL);
    is_str(out, "admin", "the latest spelling replaces it");
    is_int(hl_names_find(&book, "u:8c2fedfcb891a4ad", 18, out, NULL), -1,
           "another kind is another id");
    ok(!hl_names_record(&book, "p:8c2fedfcb891a4ad", 18, "", 0), "no empty value");
    ok(!hl_names_record(&book, "/x|p:8c2fedfcb891a4ad", 21, "a", 1),
       "only a client part is recorded");

    memset(longv, 'x', sizeof(longv));
    longv[0] = '<';
    ok(hl_names_record(&book, "h:0000000000000001", 18, longv, sizeof(longv)), "long");
    is_int(hl_names_find(&book, "h:0000000000000001", 18, out, &cut),
           HL_NAMES_VALUE_MAX, "the first 64 bytes kept");
    is_int(cut, 1, "and said to be cut");
    ok(hl_names_record(&book, "j:0000000000000002", 18, "a\0b", 3), "a NUL inside");
    is_int(hl_names_find(&book, "j:0000000000000002", 18, out, NULL), 3,
           "a NUL inside");
    is_str(out, "a?b", "is shown as '?'");
    ok(hl_names_record(&book, "j:0000000000000003", 18,
                       "\xc3\xa9t\xc3\xa9\x1b[31m\xff\xed\xa0\x80\xe2\x82", 16),
       "UTF-8, an escape, bad bytes, a surrogate, a cut character");
    hl_names_find(&book, "j:0000000000000003", 18, out, NULL);
    is_str(out, "\xc3\xa9t\xc3\xa9?[31m??????", "valid UTF-8 kept, the rest '?'");

    /* A flood of 20,000 accounts: bounded, and the newest are found. */
    for (i = 0; i < 20000; ++i) {
        char v[32];
        make_id(id, 'p', (uint64_t)i + 100);
        snprintf(v, sizeof(v), "user%d", i);
        hl_names_record(&book, id, HL_NAMES_ID_LEN, v, strlen(v));
    }
    for (i = 19900; i < 20000; ++i) {
        char v[32];
        make_id(id, 'p', (uint64_t)i + 100);
        snprintf(v, sizeof(v), "user%d", i);
        found += hl_names_find(&book, id, HL_NAMES_ID_LEN, out, NULL) > 0
                 && !strcmp(out, v);
    }
    is_int(found, 100, "the last 100 of 20,000 accounts are all named");
    found = 0;
    for (i = 0; i < 1000; ++i) {
        make_id(id, 'p', (uint64_t)i + 100);
        found += hl_names_find(&book, id, HL_NAMES_ID_LEN, out, NULL) > 0;
    }
    is_int(found, 0, "the oldest were evicted");
    is_int(hl_names_find(&book, "p:8c2fedfcb891a4ad", 18, out, NULL), -1,
           "admin too, after 20,000 newer names");

    /* An account recorded again stays while others flood in. */
    ok(hl_names_record(&book, "p:8c2fedfcb891a4ad", 18, "admin", 5), "admin again");
    for (i = 0; i < 5000; ++i) {
        char v[32];
        make_id(id, 'p', (uint64_t)i + 50000);
        snprintf(v, sizeof(v), "n%d", i);
        hl_names_record(&book, id, HL_NAMES_ID_LEN, v, strlen(v));
        if (i % 100 == 0)
            hl_names_record(&book, "p:8c2fedfcb891a4ad", 18, "admin", 5);
    }
    is_int(hl_names_find(&book, "p:8c2fedfcb891a4ad", 18, out, NULL), 5,
           "an account refused all along is kept through 5,000 others");
    return done_testing();
}
