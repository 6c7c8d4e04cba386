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

/* Returns the norm form of s under country code cc (norm=digits:CC), in
 * a buffer of exactly strlen(s) + HL_KEYFORM_ROOM bytes (static). */
static const char *fold_cc(hl_norm_t norm, unsigned cc, int hdr, const char *s)
{
    static char buf[256 + HL_KEYFORM_ROOM];
    size_t len = strlen(s), n;

    memset(buf, 'Z', sizeof(buf));
    n = hl_keyform_fold(norm, cc, hdr, buf, s, len);
    if (buf[len + HL_KEYFORM_ROOM] != 'Z')
        return "(overflow)";
    return n == strlen(buf) ? buf : "(length mismatch)";
}

/* Returns the norm form of s (a static buffer). */
static const char *fold(hl_norm_t norm, int hdr, const char *s)
{
    return fold_cc(norm, 0, hdr, s);
}

/* Phones under norm=digits:CC. */
static const char *e164(unsigned cc, const char *s)
{
    return fold_cc(HL_NORM_DIGITS, cc, 0, s);
}

/* Issue 25 items 5, 6: one phone or one inbox in any spelling. */
static void test_spellings(void)
{
    unsigned cc = 99;

    /* Decimal digits of every script, the full-width plus. */
    is_str(fold(HL_NORM_DIGITS, 0, "\xef\xbc\x8b\xef\xbc\x93\xef\xbc\x93\xef\xbc\x96\xef\xbc\x91\xef\xbc\x92"
                                   "\xef\xbc\x93\xef\xbc\x94\xef\xbc\x95\xef\xbc\x96\xef\xbc\x97\xef\xbc\x98"),
           "+33612345678", "digits: full-width +33612345678");
    is_str(fold(HL_NORM_DIGITS, 0, "+\xd9\xa3\xd9\xa3 \xd9\xa6\xd9\xa1\xd9\xa2\xd9\xa3\xd9\xa4\xd9\xa5\xd9\xa6\xd9\xa7\xd9\xa8"),
           "+33612345678", "digits: Arabic-Indic digits");
    is_str(fold(HL_NORM_DIGITS, 0, "\xdb\xb0\xdb\xb0\xdb\xb3\xdb\xb3 612345678"),
           "+33612345678", "digits: Extended Arabic-Indic 00 read as +");
    is_str(fold(HL_NORM_DIGITS, 0, "\xe0\xa5\xa6\xe0\xa5\xaf"), "09", "digits: Devanagari");
    is_str(fold(HL_NORM_DIGITS, 0, "\xf0\x9d\x9f\x8e\xf0\x9d\x9f\xbf"), "09", "digits: mathematical bold 0, monospace 9");
    is_str(fold(HL_NORM_DIGITS, 0, "\xf0\x9e\x93\xb1"), "1", "digits: Nag Mundari (Unicode 15)");
    is_str(fold(HL_NORM_DIGITS, 0, "\xc2\xb2\xe2\x91\xa0\xe2\x85\xa0"), "", "digits: superscript, circled, Roman are not decimal digits");
    is_str(fold(HL_NORM_DIGITS, 0, "1\xef\xbc\x8b" "2"), "12", "digits: a full-width + after a digit is nothing");
    is_str(fold(HL_NORM_DIGITS, 0, "\xe0\xa5\xa6\x80\xa6\xe0\xa5"), "0", "digits: broken UTF-8 dropped");
    is_str(fold(HL_NORM_DIGITS, 0, "\xed\xa0\x80\xef\xbc"), "", "digits: a surrogate, a cut character: nothing");
    is_str(fold(HL_NORM_DIGITS, 0, "+33 \xef\xbc\x88\xef\xbc\x90\xef\xbc\x89 6 12 34 56 78"),
           "+33612345678", "digits: a full-width (0) dropped");
    is_str(fold(HL_NORM_DIGITS, 0, "+33 06 12 34 56 78"), "+33612345678", "digits: a known country's trunk 0 after +33 dropped");
    is_str(fold(HL_NORM_DIGITS, 0, "+39 06 1234 5678"), "+390612345678", "digits: Italy keeps its 0");
    is_str(fold(HL_NORM_DIGITS, 0, "+7 800 555 35 35"), "+78005553535", "digits: +7 800 is no trunk 8 (too short without it)");
    is_str(fold(HL_NORM_DIGITS, 0, "+7 8 912 345 67 89"), "+79123456789", "digits: +7 8 912...: the trunk 8 dropped");

    /* norm=digits:CC: E.164. */
    is_str(e164(33, "06 12 34 56 78"), "+33612345678", "digits:33 06 12 34 56 78");
    is_str(e164(33, "6 12 34 56 78"), "+33612345678", "digits:33 without trunk");
    is_str(e164(33, "33 6 12 34 56 78"), "+33612345678", "digits:33 the international number without +");
    is_str(e164(33, "+33612345678"), "+33612345678", "digits:33 international");
    is_str(e164(33, "0033 6 12 34 56 78"), "+33612345678", "digits:33 00");
    is_str(e164(33, "+44 20 7946 0000"), "+442079460000", "digits:33 another country stays");
    is_str(e164(33, "\xd9\xa0\xd9\xa6\xd9\xa1\xd9\xa2\xd9\xa3\xd9\xa4\xd9\xa5\xd9\xa6\xd9\xa7\xd9\xa8"),
           "+33612345678", "digits:33 Arabic-Indic national");
    is_str(e164(1, "(555) 010-0001"), "+15550100001", "digits:1 (555) 010-0001");
    is_str(e164(1, "1 555 010 0001"), "+15550100001", "digits:1 1 555 010 0001");
    is_str(e164(1, "+1 555 010 0001"), "+15550100001", "digits:1 +1");
    is_str(e164(1, "011 33 6 12 34 56 78"), "+33612345678", "digits:1 011 is the international prefix");
    is_str(e164(7, "8 912 345-67-89"), "+79123456789", "digits:7 trunk 8");
    is_str(e164(7, "7 912 345-67-89"), "+79123456789", "digits:7 without +");
    is_str(e164(7, "810 33 6 12 34 56 78"), "+33612345678", "digits:7 810 is the international prefix");
    is_str(e164(39, "06 1234 5678"), "+390612345678", "digits:39 keeps its leading 0");
    is_str(e164(39, "333 123 4567"), "+393331234567", "digits:39 a mobile");
    is_str(e164(39, "392 123 4567"), "+393921234567", "digits:39 a mobile starting 39 is national");
    is_str(e164(44, "020 7946 0000"), "+442079460000", "digits:44 trunk 0");
    is_str(e164(44, "07700 900123"), "+447700900123", "digits:44 a mobile");
    is_str(e164(49, "030 1234567"), "+49301234567", "digits:49 trunk 0");
    is_str(e164(49, "0151 12345678"), "+4915112345678", "digits:49 a mobile");
    is_str(e164(86, "010 1234 5678"), "+861012345678", "digits:86 trunk 0");
    is_str(e164(86, "138 0013 8000"), "+8613800138000", "digits:86 a mobile");
    is_str(e164(91, "098765 43210"), "+919876543210", "digits:91 trunk 0");
    is_str(e164(91, "98765 43210"), "+919876543210", "digits:91 without trunk");
    is_str(e164(91, "91 98765 43210"), "+919876543210", "digits:91 without +");
    is_str(e164(91, "91987 65432"), "+919198765432", "digits:91 a national number starting 91");
    is_str(e164(33, ""), "", "digits:33 no digit is empty");
    is_str(e164(33, "00"), "", "digits:33 00 alone is empty");
    is_str(e164(61, "0011 33 6 12 34 56 78"), "+33612345678", "digits:61 0011 is the international prefix");
    is_str(e164(61, "0412 345 678"), "+61412345678", "digits:61 trunk 0");
    is_str(e164(33, "\xef\xbc\x96\xef\xbc\x96\xef\xbc\x96"), "+33666", "digits:33 full-width national");
    is_str(e164(33, "000000"), "+0000", "digits:33 00 first is international");
    is_str(e164(86, "1"), "+861", "digits:86 one digit: the room suffices");
    is_str(e164(1, "2"), "+12", "digits:1 one digit");

    is_int(hl_keyform_norm_parse("digits:33", &cc), HL_NORM_DIGITS, "norm digits:33");
    is_int((int)cc, 33, "... country 33");
    is_int(hl_keyform_norm_parse("digits", &cc), HL_NORM_DIGITS, "norm digits");
    is_int((int)cc, 0, "... no country");
    is_int(hl_keyform_norm_parse("digits:999", &cc), -2, "norm digits:999: no rules");
    is_int(hl_keyform_norm_parse("digits:", &cc), -1, "norm digits: empty");
    is_int(hl_keyform_norm_parse("digits:033", &cc), -1, "norm digits:033");
    is_int(hl_keyform_norm_parse("digits:3x", &cc), -1, "norm digits:3x");
    is_int(hl_keyform_norm_parse("digits:12345", &cc), -1, "norm digits:12345");
    is_int(hl_keyform_norm_parse("email", &cc), HL_NORM_EMAIL, "norm email");

    /* norm=email: one inbox. */
    is_str(fold(HL_NORM_EMAIL, 0, "a.li.ce@gmail.com"), "alice@gmail.com", "email: Gmail dots dropped");
    is_str(fold(HL_NORM_EMAIL, 0, "Alice@GoogleMail.com"), "alice@gmail.com", "email: googlemail.com is gmail.com");
    is_str(fold(HL_NORM_EMAIL, 0, "a.lice+promo@googlemail.com"), "alice@gmail.com", "email: dots, tag, googlemail");
    is_str(fold(HL_NORM_EMAIL, 0, "\"alice\"@gmail.com"), "alice@gmail.com", "email: quoted local part");
    is_str(fold(HL_NORM_EMAIL, 0, "\"a.lice+x\"@gmail.com."), "alice@gmail.com", "email: quoted, tag, trailing dot");
    is_str(fold(HL_NORM_EMAIL, 0, "alice@example.org."), "alice@example.org", "email: trailing dot of the domain");
    is_str(fold(HL_NORM_EMAIL, 0, "alice@example.org.."), "alice@example.org", "email: trailing dots");
    is_str(fold(HL_NORM_EMAIL, 0, "a.lice@example.org"), "a.lice@example.org", "email: other domains keep their dots");
    is_str(fold(HL_NORM_EMAIL, 0, "\"a\\\"b\"@x"), "a\"b@x", "email: a quoted escape");
    is_str(fold(HL_NORM_EMAIL, 0, "\"a@b\"@x"), "a@b@x", "email: a quoted @");
    is_str(fold(HL_NORM_EMAIL, 0, "\"ab@x"), "\"ab@x", "email: an unclosed quote: as sent");
    is_str(fold(HL_NORM_EMAIL, 0, "\"a\"b@x"), "\"a\"b@x", "email: a quote not before @: as sent");
    is_str(fold(HL_NORM_EMAIL, 0, "alice@gmail.com.evil"), "alice@gmail.com.evil", "email: not gmail.com");
    is_str(fold(HL_NORM_EMAIL, 0, "a@."), "a@.", "email: a domain of one dot kept");
    is_str(fold(HL_NORM_EMAIL, 0, "...@gmail.com"), "@gmail.com", "email: a local part of dots");
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
    is_str(fold(HL_NORM_DIGITS, 0, "\xd9\xa1\xd9\xa2 12"), "1212", "digits: Arabic-Indic digits are digits");
    is_str(fold(HL_NORM_DIGITS, 0, "\xc3\xa9 12"), "12", "digits: other characters dropped");

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
    test_spellings();
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
    {
        char out[HL_KEYFORM_HASHED_LEN + 1];

        ok(hl_keyform_hashed(out, 'h', 0x0123456789abcdefull) == 18
           && strcmp(out, "h:0123456789abcdef") == 0,
           "hashed: prefix, colon, 16 lowercase hex digits, most significant first");
        hl_keyform_hashed(out, 'p', 0);
        is_str(out, "p:0000000000000000", "hashed: leading zeros kept");
    }
    return done_testing();
}
