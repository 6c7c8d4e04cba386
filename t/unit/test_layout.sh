#!/bin/sh
# t/unit/test_layout.sh - TAP test that doc/layout.md is true to the tree:
# every source file under src/ (.c, .h, .lua) is named there, and every
# file it names exists. doc/layout.md names files by their place in the
# target layout (src/core/hl_*, src/httpd/mod_hotlimit_*, and files at
# the top such as mod_hotlimit.c); a flat src/ (src/NAME) matches the same
# names, so the test holds before and after the files move into folders.
# The generated src/hl_redis_script.h (made from the .lua by make) is not
# a source file and is left out.
#
# Usage: test_layout.sh [ROOT] (default: the tree this script is in).
# Exit status: 0 when every test passed, 1 otherwise.

root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_layout.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/hl_tap.sh"

# named ROOT: prints the files ROOT/doc/layout.md names (`path` in
# backquotes ending in .c, .h or .lua), one a line, sorted.
named() {
    grep -o '`[A-Za-z0-9_./-]*[A-Za-z0-9_]\.\(c\|h\|lua\)`' "$1/doc/layout.md" \
        | tr -d '`' | sort -u
}

# tree ROOT: prints the source files under ROOT/src, relative to ROOT,
# sorted; the generated header is left out.
tree() {
    (cd "$1" && find src -type f \( -name '*.c' -o -name '*.h' \
        -o -name '*.lua' \) ! -name hl_redis_script.h) | sort
}

# exists ROOT PATH: status 0 if the file PATH names is in ROOT: the path
# itself, or for src/core/NAME and src/httpd/NAME, src/NAME in a flat tree.
exists() {
    [ -f "$1/$2" ] && return 0
    case $2 in
        src/core/* | src/httpd/*) [ -f "$1/src/${2##*/}" ] ;;
        *) return 1 ;;
    esac
}

# check ROOT: writes to $tmp/missing the files under src/ that
# doc/layout.md does not name, to $tmp/absent the files it names that do
# not exist, to $tmp/misplaced the names in the wrong folder (a core file
# not hl_*, a glue file not mod_hotlimit_*).
check() {
    named "$1" > "$tmp/named"
    : > "$tmp/missing"
    for f in $(tree "$1"); do
        case $f in
            src/core/* | src/httpd/*) want=$f ;;
            *) want=$(printf '%s\n' "$f" | sed 's|^src/||')
               want=$(grep -xF -e "src/core/$want" -e "src/httpd/$want" \
                      "$tmp/named" | head -n 1) ;;
        esac
        [ -n "$want" ] && grep -qxF "$want" "$tmp/named" \
            || echo "$f is not in doc/layout.md" >> "$tmp/missing"
    done
    : > "$tmp/absent"
    for f in $(cat "$tmp/named"); do
        exists "$1" "$f" || echo "$f is named but does not exist" >> "$tmp/absent"
    done
    grep '^src/core/' "$tmp/named" | grep -v '^src/core/hl_' \
        > "$tmp/misplaced"
    grep '^src/httpd/' "$tmp/named" | grep -v '^src/httpd/mod_hotlimit_' \
        >> "$tmp/misplaced"
    grep '^src/' "$tmp/named" | grep -v '^src/core/\|^src/httpd/' \
        >> "$tmp/misplaced"
}

echo "1..7"

# The tree itself.
check "$root"
[ -s "$tmp/named" ]
ok $? "doc/layout.md names files"
[ ! -s "$tmp/missing" ]
ok $? "every source file under src/ is named in doc/layout.md" "$tmp/missing"
[ ! -s "$tmp/absent" ]
ok $? "every file doc/layout.md names exists" "$tmp/absent"
[ ! -s "$tmp/misplaced" ]
ok $? "core files are src/core/hl_*, glue files src/httpd/mod_hotlimit_*" \
    "$tmp/misplaced"

# The checker itself, on small made-up trees.
fake="$tmp/fake"
mkdir -p "$fake/doc" "$fake/src"
printf '%s\n' '- `mod_hotlimit.c` top' '- `src/core/hl_a.c`, `src/core/hl_a.h`' \
    '- `src/httpd/mod_hotlimit_b.c`' > "$fake/doc/layout.md"
touch "$fake/mod_hotlimit.c" "$fake/src/hl_a.c" "$fake/src/hl_a.h" \
    "$fake/src/mod_hotlimit_b.c" "$fake/src/hl_redis_script.h"
check "$fake"
[ ! -s "$tmp/missing" ] && [ ! -s "$tmp/absent" ]
ok $? "a flat src/ matching the layout passes" "$tmp/missing"

touch "$fake/src/hl_new.c"
rm "$fake/src/hl_a.h"
check "$fake"
grep -q 'src/hl_new.c is not in' "$tmp/missing" \
    && grep -q 'src/core/hl_a.h is named but does not exist' "$tmp/absent"
ok $? "an unnamed file and a named file that is gone both fail"

rm "$fake/src/hl_new.c"
touch "$fake/src/hl_a.h"
mkdir -p "$fake/src/core" "$fake/src/httpd"
mv "$fake/src"/hl_a.* "$fake/src/core/"
mv "$fake/src/mod_hotlimit_b.c" "$fake/src/httpd/"
check "$fake"
[ ! -s "$tmp/missing" ] && [ ! -s "$tmp/absent" ]
ok $? "the same files in src/core and src/httpd pass" "$tmp/missing"

[ "$failed" -eq 0 ]
