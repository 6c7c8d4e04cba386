#!/bin/sh
# t/unit/test_php_json.sh - TAP test: the module reads a JSON body's
# json:PATH value, and folds it into a key, as PHP's json_decode reads it
# (issue 25): t/support/php_json_diff.py on 3000 random and adversarial
# bodies with a fixed seed, 0 differences. Skipped without php or python3.
#
# Exit status: 0 when the test passed (or was skipped), 1 otherwise.

top=$(cd "$(dirname "$0")/../.." && pwd) || exit 1

if ! command -v php >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
    echo "1..0 # SKIP no php or python3"
    exit 0
fi
echo "1..1"
out=$(python3 "$top/t/support/php_json_diff.py" 25 3000 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
if [ $rc -eq 0 ] && echo "$out" | grep -q '^3000 cases, 0 differences$'; then
    echo "ok 1 - json:PATH values and keys read as php's json_decode reads them (seed 25, 3000 bodies)"
    exit 0
fi
echo "not ok 1 - json:PATH values and keys differ from php's json_decode"
exit 1
