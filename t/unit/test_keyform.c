/* test_keyform.c - the forms client values take before they become keys. */
#include <string.h>
#include "hl_tap.h"
#include "hl_keyform.h"

/* Returns the account form of s (a static copy). */
static const char *account(const char *s)
{
    static char buf[128];
    size_t n = strlen(s);

    memcpy(buf, s, n + 1);
    buf[hl_keyform_account(buf, n)] = '\0';
    return buf;
}

/* Returns the header form of s (a static buffer). */
static const char *header(const char *s)
{
    static char buf[128];
    size_t n = hl_keyform_header(buf, s, strlen(s));

    return n == strlen(buf) ? buf : "(length mismatch)";
}

/* Returns the norm form of s (a static buffer). */
static const char *fold(hl_norm_t norm, int hdr, const char *s)
{
    static char buf[256];
    size_t n = hl_keyform_fold(norm, hdr, buf, s, strlen(s));

    return n == strlen(buf) ? buf : "(length mismatch)";
}

static void test_norms(void)
{
    /* norm=digits: the spec's three spellings are one phone. */
    is_str(fold(HL_NORM_DIGITS, 0, "+33 6 12 34 56 78"), "+33612345678", "digits: +33 6 12 ...");
    is_str(fold(HL_NORM_DIGITS, 0, "0033612345678"), "+33612345678", "digits: 00 read as +");
    is_str(fold(HL_NORM_DIGITS, 0, "(+33) 6-12-34-56-78"), "+33612345678", "digits: (+33) 6-12-...");
    is_str(fold(HL_NORM_DIGITS, 0, "+33 (0)6 12 34 56 78"), "+33612345678", "digits: the trunk (0) dropped");
    is_str(fold(HL_NORM_DIGITS, 0, " 06.12.34.56.78 "), "0612345678", "digits: a national number stays national");
    is_str(fold(HL_NORM_DIGITS, 0, "(0)612"), "0612", "digits: (0) before any digit is kept");
    is_str(fold(HL_NORM_DIGITS, 0, "6+1"), "61", "digits: a + after a digit is not international");
    is_str(fold(HL_NORM_DIGITS, 0, "phone"), "", "digits: no digit is empty (the key falls back)");
    is_str(fold(HL_NORM_DIGITS, 0, "00"), "", "digits: 00 alone is empty");
    is_str(fold(HL_NORM_DIGITS, 0, "+"), "", "digits: + alone is empty");
    is_str(fold(HL_NORM_DIGITS, 0, "0"), "0", "digits: one digit");
    is_str(fold(HL_NORM_DIGITS, 0, "\xd9\xa1\xd9\xa2 12"), "12", "digits: other bytes dropped");

    /* norm=email */
    is_str(fold(HL_NORM_EMAIL, 0, " Alice+x@Example.org "), "alice@example.org", "email: +tag dropped, lowered");
    is_str(fold(HL_NORM_EMAIL, 0, "alice@example.org"), "alice@example.org", "email: plain");
    is_str(fold(HL_NORM_EMAIL, 0, "a+b+c@x"), "a@x", "email: from the first +");
    is_str(fold(HL_NORM_EMAIL, 0, "+tag@x"), "+tag@x", "email: a local part that is all tag is kept");
    is_str(fold(HL_NORM_EMAIL, 0, "a@b+c@x"), "a@b@x", "email: the last @ ends the local part");
    is_str(fold(HL_NORM_EMAIL, 0, "Bob+x"), "bob+x", "email: no @, only lowered");
    is_str(fold(HL_NORM_EMAIL, 0, "@x"), "@x", "email: empty local part");
    is_str(fold(HL_NORM_EMAIL, 0, ""), "", "email: empty");

    /* norm=exact and lower */
    is_str(fold(HL_NORM_EXACT, 0, " Abc "), " Abc ", "exact: as sent");
    is_str(fold(HL_NORM_EXACT, 1, " A  b "), " A  b ", "exact: a header as sent");
    is_str(fold(HL_NORM_LOWER, 0, " A  B "), "a  b", "lower: account form");
    is_str(fold(HL_NORM_LOWER, 1, " A  B "), "a b", "lower: header form");

    ok(hl_keyform_norm_of("digits") == HL_NORM_DIGITS && hl_keyform_norm_of("lower") == HL_NORM_LOWER
       && hl_keyform_norm_of("email") == HL_NORM_EMAIL && hl_keyform_norm_of("exact") == HL_NORM_EXACT,
       "norm names");
    ok(hl_keyform_norm_of("Digits") == -1 && hl_keyform_norm_of("") == -1
       && hl_keyform_norm_of(NULL) == -1, "unknown norm names");
    is_str(hl_keyform_norm_name(HL_NORM_EMAIL), "email", "norm name of email");
    is_str(hl_keyform_norm_name((hl_norm_t)42), "lower", "norm name of an unknown value");
}

int main(void)
{
    test_norms();
    is_str(account("Admin"), "admin", "account: lowercased");
    is_str(account(" \tADMIN \r\n"), "admin", "account: white space around dropped");
    is_str(account("john  Doe"), "john  doe", "account: white space inside kept");
    is_str(account("   "), "", "account: only white space is empty");
    is_str(account("\xc3\x89t\xc3\xa9"), "\xc3\x89t\xc3\xa9", "account: non-ASCII bytes kept");

    is_str(header("Bearer tok"), "bearer tok", "header: lowercased");
    is_str(header("BEARER \t  tok"), "bearer tok", "header: a white space run is one space");
    is_str(header("  Bearer tok \v"), "bearer tok", "header: none at either end");
    is_str(header("a\x0b" "b\x0c" "c"), "a b c", "header: every C-locale space counts");
    is_str(header(" \t "), "", "header: only white space is empty");
    is_str(header("K3\xff\x80"), "k3\xff\x80", "header: other bytes kept");
    is_str(header("AbC"), "abc", "header: one token");
    return done_testing();
}
