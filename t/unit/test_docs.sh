#!/bin/sh
# t/unit/test_docs.sh - TAP test: the user documentation keeps up with the
# module. Every directive the module registers (AP_INIT_* in the sources)
# has a row in doc/directives.md's table, a block of its own there
# ("### NAME") and an entry in man/mod_hotlimit.5 (a .TP item starting
# .B/.BI/.BR NAME); every row of that table names a registered directive;
# README.md stays at most 600 lines and names the test command CI runs
# (.ci/run); the relative links of README.md, doc/ and bench/README.md
# resolve (t/support/doc_links.py; skipped without python3).
#
# Exit status: 0 when every test passed, 1 otherwise.

top=$(cd "$(dirname "$0")/../.." && pwd) || exit 1
ref="$top/doc/directives.md"
man="$top/man/mod_hotlimit.5"
. "$(dirname "$0")/hl_tap.sh"

registered=$(find "$top/mod_hotlimit.c" "$top/src" -name '*.c' -exec \
    grep -ho 'AP_INIT_[A-Z0-9_]*("HotLimit[A-Za-z0-9]*"' {} + |
    sed 's/.*("//; s/"$//' | sort -u)
[ -n "$registered" ]; ok $? "the sources register HotLimit directives"

for d in $registered; do
    anchor=$(echo "$d" | tr 'A-Z' 'a-z')
    grep -qF "| [\`$d\`](#$anchor) |" "$ref" 2>/dev/null
    ok $? "$d has a row in doc/directives.md's table"
    grep -qx "### $d" "$ref" 2>/dev/null
    ok $? "$d has a block in doc/directives.md"
    awk -v d="$d" 'prev == ".TP" && ($1 == ".B" || $1 == ".BI" || $1 == ".BR") && $2 == d { f = 1 }
                   { prev = $0 } END { exit !f }' "$man"
    ok $? "$d has an entry in mod_hotlimit(5)"
done

rows=$(sed -n 's/^| \[`\(HotLimit[A-Za-z0-9]*\)`\](#.*/\1/p' "$ref" 2>/dev/null)
[ -n "$rows" ]; ok $? "doc/directives.md has a directive table"
for d in $rows; do
    echo "$registered" | grep -qx "$d"
    ok $? "doc/directives.md's row $d is a registered directive"
done

lines=$(wc -l < "$top/README.md")
[ "$lines" -le 600 ]; ok $? "README.md is at most 600 lines ($lines)"
grep -qF 'bash quickstart.sh test' "$top/README.md" &&
    grep -qx 'bash quickstart.sh test' "$top/.ci/run"
ok $? "README.md names the test command .ci/run runs"

if command -v python3 >/dev/null 2>&1; then
    python3 "$top/t/support/doc_links.py" "$top"
    ok $? "relative links of README.md, doc/ and bench/README.md resolve"
else
    n=$((n + 1)); echo "ok $n # SKIP no python3 for the link check"
fi

echo "1..$n"
[ "$failed" -eq 0 ]
