#!/bin/sh
# t/unit/test_check.sh - TAP test of the hotlimit-check command-line tool
# over the tables in t/tables/. The tool is $HOTLIMIT_CHECK (default
# ./hotlimit-check, i.e. run from the build directory).
#
# Exit status: 0 when every test passed, 1 otherwise.

check=${HOTLIMIT_CHECK:-./hotlimit-check}
tables=$(cd "$(dirname "$0")/../tables" && pwd) || exit 1
out=$(mktemp "${TMPDIR:-/tmp}/test_check.XXXXXX") || exit 1
fifo="$out.fifo"
trap 'rm -f "$out" "$fifo"' EXIT

. "$(dirname "$0")/hl_tap.sh"
tap_diag=$out   # a failure shows the tool's output

# run ARGS...: runs the tool with stdout and stderr in $out; sets $rc.
run() {
    "$check" "$@" >"$out" 2>&1
    rc=$?
}

# has TEXT: status 0 if the last output contains TEXT (fixed string).
has() {
    grep -F -q -- "$1" "$out"
}

echo "1..36"

if [ ! -x "$check" ]; then
    echo "Bail out! $check not built"
    exit 1
fi

run "$tables/good.json"
[ "$rc" -eq 0 ]; ok $? "good.json: exit 0 (got $rc)"
has "good.json: 4 routes, 2 exempt, enabled, 0 errors, 0 warnings"; ok $? "good.json: summary with 4 routes"
! has "error:" && ! has "warning:"; ok $? "good.json: no problems"

has "  /user/login -> /user/login  5/1m 30/1h by=ip"; ok $? "good.json: each route as matched, with its quota"
has "  /api -> /api  600/1m by=ip algo=gcra burst=100"; ok $? "good.json: algo and burst shown"

# Route names as the module matches them: a dotted name becomes a path, a
# trailing slash goes, a later entry of the same route replaces an earlier
# one, and a skipped entry is not listed.
run "$tables/names.json"
[ "$rc" -eq 1 ]; ok $? "names.json: exit 1 for the skipped entry (got $rc)"
has "  user.login -> /user/login  5/1m 30/1h by=ip" && ! has "/user/login -> /user/login  3/10m"
ok $? "names.json: user.login -> /user/login, the later entry in force"
has "  /api/chat/ -> /api/chat  10/1m by=header:Authorization"; ok $? "names.json: trailing slash removed"
! has "user.sms ->"; ok $? "names.json: the skipped entry is not listed"

run "$tables/warn.json"
[ "$rc" -eq 0 ]; ok $? "warn.json: exit 0 (got $rc)"
has "hotlimit-check: warning: field 'comment':"; ok $? "warn.json: top-level warning"
has "hotlimit-check: warning: route '/user/login': field 'note':"; ok $? "warn.json: entry warning names route and field"
has "1 routes" && has "2 warnings"; ok $? "warn.json: the entry still applies"

run "$tables/bad-entry.json"
[ "$rc" -eq 1 ]; ok $? "bad-entry.json: exit 1 (got $rc)"
has "hotlimit-check: error: route '/user/sms': field 'window': unknown unit in '60x' (use ms, s, m, h or d)"
ok $? "bad-entry.json: names the route and the field"
has "1 routes" && has "1 errors"; ok $? "bad-entry.json: the rest applies"

run "$tables/not-json.json"
[ "$rc" -eq 1 ]; ok $? "not-json.json: exit 1 (got $rc)"
has "error: not valid JSON near line"; ok $? "not-json.json: says where"
has "table refused"; ok $? "not-json.json: refused"

run "$tables/does-not-exist.json"
[ "$rc" -eq 2 ]; ok $? "missing file: exit 2 (got $rc)"

# A FIFO is refused at once (no writer ever appears: a blocking open would
# hang until timeout kills it, status 124), and so is a directory.
mkfifo "$fifo"
timeout 5 "$check" "$fifo" >"$out" 2>&1
rc=$?
[ "$rc" -eq 2 ]; ok $? "FIFO: exit 2 without waiting for a writer (got $rc)"
has "not a regular file but a FIFO"; ok $? "FIFO: says why"
run "$tables"
[ "$rc" -eq 2 ] && has "not a regular file but a directory"; ok $? "directory: exit 2 (got $rc)"

"$check" - <"$tables/good.json" >"$out" 2>&1
rc=$?
[ "$rc" -eq 0 ] && has "4 routes"; ok $? "stdin: good.json (exit $rc)"

run --quiet "$tables/good.json"
[ "$rc" -eq 0 ] && [ ! -s "$out" ]; ok $? "--quiet: nothing printed for a good table"

run --quiet "$tables/bad-entry.json"
[ "$rc" -eq 1 ] && has "route '/user/sms'" && ! has "routes,"; ok $? "--quiet: only the problems"

run --help
[ "$rc" -eq 0 ] && has "usage:"; ok $? "--help: exit 0 with usage"

run
[ "$rc" -eq 2 ]; ok $? "no FILE: exit 2 (got $rc)"

run --bogus "$tables/good.json"
[ "$rc" -eq 2 ]; ok $? "unknown option: exit 2 (got $rc)"

echo '{"e": true, "m": 100, "t": 60000}' | "$check" - >"$out" 2>&1
rc=$?
[ "$rc" -eq 0 ] && has "enabled, global bucket 100/60000ms"; ok $? "compact form: global bucket (exit $rc)"

echo '{"ban": {"after": 20, "within": "10m", "for": "1h"}}' | "$check" - >"$out" 2>&1
rc=$?
[ "$rc" -eq 0 ] && has "ban after 20 refusals within 600000ms for 3600000ms"; ok $? "ban: summarised (exit $rc)"

echo '{"ban": {"after": 20, "within": "10m"}}' | "$check" - >"$out" 2>&1
rc=$?
[ "$rc" -eq 1 ] && has "field 'ban'"; ok $? "ban without 'for': an error under field ban (exit $rc)"

# by=A|B and by=A+B (issue 26 items 4 and 7): accepted and shown as
# written; a bad part is named with its route and field.
echo '{"routes": {"/gw": {"max": 5, "window": "1m", "by": "header:Authorization|header:x-api-key"},
  "/login": {"max": 5, "window": "15m", "by": "ip+param:log"}}}' \
    | "$check" - >"$out" 2>&1
rc=$?
[ "$rc" -eq 0 ] && has "/gw -> /gw  5/1m by=header:Authorization|header:x-api-key"
ok $? "by A|B: accepted and shown (exit $rc)"
has "/login -> /login  5/15m by=ip+param:log"; ok $? "by A+B: accepted and shown"
echo '{"routes": {"/x": {"max": 5, "window": "1m", "by": "ip+global"}}}' | "$check" - >"$out" 2>&1
rc=$?
[ "$rc" -eq 1 ] && has "route '/x': field 'by'" && has "'global' is one bucket for everyone and cannot be combined"
ok $? "by ip+global: an error naming route, field and part (exit $rc)"

echo '{"e": false}' | "$check" - >"$out" 2>&1
rc=$?
[ "$rc" -eq 0 ] && has "DISABLED (kill switch)"; ok $? "compact form: kill switch (exit $rc)"

[ "$failed" -eq 0 ]
