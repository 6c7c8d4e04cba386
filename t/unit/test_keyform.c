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

int main(void)
{
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
