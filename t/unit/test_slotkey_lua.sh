#!/bin/sh
# t/unit/test_slotkey_lua.sh - TAP test: the Redis script's ban matcher
# (bans_set in src/core/hl_redis_script.lua) agrees with the C owner of the
# key layout (hl_slotkey_is_ban_slot, src/core/hl_slotkey.h). The script holds
# the patterns hl_slotkey.h names, and, run by a throwaway redis-server on
# a Unix socket, says of every slot key listed in t/unit/test_slotkey.c
# what test_slotkey checks that the C code says. Skipped without
# redis-server and redis-cli.
#
# Exit status: 0 when every test passed (or all were skipped), 1 otherwise.

top=$(cd "$(dirname "$0")/../.." && pwd) || exit 1
lua="$top/src/core/hl_redis_script.lua"
hdr="$top/src/core/hl_slotkey.h"
cases="$top/t/unit/test_slotkey.c"
server=${REDIS_SERVER:-redis-server}
cli=${REDIS_CLI:-redis-cli}

if ! command -v "$server" >/dev/null 2>&1 || ! command -v "$cli" >/dev/null 2>&1; then
    echo "1..0 # SKIP no redis-server or redis-cli"
    exit 0
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/test_slotkey_lua.XXXXXX") || exit 1
sock="$dir/redis.sock"
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT

. "$(dirname "$0")/hl_tap.sh"

# The patterns of hl_slotkey.h, as the script must spell them.
for name in HL_SLOTKEY_BAN_LUA_MAIN HL_SLOTKEY_BAN_LUA_VHOST; do
    pat=$(sed -n "s/^#define $name *\"\\(.*\\)\"\$/\\1/p" "$hdr")
    grep -F -q "'^(.-{hl[^}]*}:)$pat'" "$lua"
    ok $? "the script matches $name ($pat)"
done

# bans_set, from its "local function" line to its closing "end".
fn=$(sed -n '/^local function bans_set(/,/^end$/p' "$lua")
[ -n "$fn" ]
ok $? "bans_set found in the script"

"$server" --port 0 --unixsocket "$sock" --save '' --appendonly no \
          --dir "$dir" >"$dir/log" 2>&1 &
pid=$!
i=0
while [ ! -S "$sock" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done

# The listed keys: "EXPECTED KEY" a line.
sed -n '/BEGIN BAN SLOTS/,/END BAN SLOTS/s/^ *{ \([01]\), "\(.*\)" },$/\1 \2/p' \
    "$cases" >"$dir/cases"
[ -s "$dir/cases" ]
ok $? "ban slot keys listed in test_slotkey.c"

set --
while read -r want key; do
    set -- "$@" "hl:{hl}:$key"
done <"$dir/cases"
script="$fn
local out = {}
for i = 1, #ARGV do out[i] = bans_set(ARGV[i]) and 1 or 0 end
return out"
"$cli" -s "$sock" EVAL "$script" 0 "$@" >"$dir/got" 2>&1
[ "$(wc -l <"$dir/got")" -eq "$(wc -l <"$dir/cases")" ]
ok $? "the script answered for every key"
paste -d ' ' "$dir/got" "$dir/cases" >"$dir/both"
while read -r got want key; do
    [ "$got" = "$want" ]
    ok $? "Lua says $got, C says $want: $key"
done <"$dir/both"

# Under redis-cluster:// a key carries its bucket's tag, {hl:B.S}: the
# same answers, and the set is that bucket's own.
set --
while read -r want key; do
    set -- "$@" "hl:{hl:37.k}:$key"
done <"$dir/cases"
"$cli" -s "$sock" EVAL "$script" 0 "$@" >"$dir/got2" 2>&1
cmp -s "$dir/got" "$dir/got2"
ok $? "the same answers with a cluster bucket's tag {hl:37.k}"
got=$("$cli" -s "$sock" EVAL "$fn
return bans_set(ARGV[1])" 0 'p:{hl:37.k}:d0ban|1.2.3.4' 2>&1)
[ "$got" = 'p:{hl:37.k}:bans' ]
ok $? "a ban counter of bucket 37 goes to that bucket's set ($got)"

echo "1..$n"
[ "$failed" -eq 0 ]
