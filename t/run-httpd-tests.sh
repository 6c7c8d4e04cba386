#!/bin/bash
# t/run-httpd-tests.sh - runs the Apache::Test suite (t/*.t) against the
# built module with a real httpd on loopback, under the prefork MPM with
# mod_php and under the event MPM, the two passes at the same time.
#
# Each pass has its own copy of t/ (its own t/logs, shared server, port,
# DokuWiki and scratch files), so the passes share nothing but the module.
# Within a pass, t/testrules.yml lets the files that start only private
# httpds run in parallel beside the files of the shared server, which run
# one after the other; t/99-error-log.t runs last.
#
# Environment:
#   HOTLIMIT_MPMS        the MPMs to run under (default "prefork event")
#   HOTLIMIT_TEST_ARGS   passed on to Apache::Test (test files, -verbose)
#   HOTLIMIT_TEST_JOBS   test files at once within a pass (default 3; 1:
#                        one after the other, in name order)
#   HOTLIMIT_SERIAL=1    the passes one after the other, not at once
#
# Apache::Test refuses to run as root, so as root the suite is copied to a
# scratch directory owned by an unprivileged user (hltest, created if
# missing) and run as that user. Exit status: non-zero if any test failed.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
so="$top/.libs/mod_hotlimit.so"
[ -f "$so" ] || { echo "run-httpd-tests: $so not built (run make)" >&2; exit 1; }
modules=$(apxs -q LIBEXECDIR)
apxs=$(command -v apxs)
mpms=${HOTLIMIT_MPMS:-"prefork event"}
jobs=${HOTLIMIT_TEST_JOBS:-3}
# mod_php, whichever PHP version is installed (the newest if several);
# empty when there is none, and the PHP tests skip.
php_so=$(ls "$modules"/libphp*.so 2>/dev/null | sort -V | tail -n 1 || true)

# The files that start a second httpd under the other MPM themselves
# (HotLimitTable::hl_other_mpm), and t/94, which starts no httpd: when both
# MPMs run, they run once, in the event pass (with prefork and mod_php as
# the other MPM).
once_files="t/36-redis.t t/39-redis-status.t t/43-redis-lease.t
  t/57-redis-outage.t t/65-concurrency-redis.t t/94-cluster-client.t
  t/96-cluster-store.t t/97-cluster-failures.t t/98-fleet-view.t
  t/100-cluster-view.t"
# The files that take longest (most of it waiting), started first.
# The files that read the shared server's list of keys at their limit,
# which shows 50, run first of the shared server's files, before the
# others' keys fill it (when every file ran one after the other, the
# others' 1-minute windows had cleared by then). t/47-table-same-second.t must fit a table
# reload within one wall-clock second, which a busy machine can miss five
# times in a row, and t/35-recipes.t sends WordPress's REST burst of 31
# (algo=gcra burst=30, one more every 0.5 s) faster than the bucket
# refills: they run after the parallel files.
shared_first="t/33-status-browser.t t/59-status-scope.t t/63-status-attack.t"
solo="t/35-recipes.t t/47-table-same-second.t"
slow_first="t/36-redis.t t/64-algo-log.t t/61-device-cookie.t
  t/30-table-url-redirect.t t/43-redis-lease.t t/20-table-file.t t/42-soak.t
  t/49-failures-exact.t t/21-table-url.t t/67-reserve.t t/51-cost-usage.t"

work=$(mktemp -d /tmp/hotlimit-t.XXXXXX)
cp "$so" "$work/mod_hotlimit.so"

# Writes the base config Apache::Test inherits its LoadModule lines from.
base_conf() {
    local mpm=$1
    echo "LoadModule mpm_${mpm}_module $modules/mod_mpm_${mpm}.so"
    for m in authz_core authz_host authz_user authn_core authn_file auth_basic \
             alias dir mime env setenvif headers rewrite remoteip slotmem_shm negotiation \
             status; do
        echo "LoadModule ${m}_module $modules/mod_${m}.so"
    done
    if [ "$mpm" = prefork ] && [ -n "$php_so" ]; then
        echo "LoadModule php_module $php_so"
    fi
    # HTTP/2 (t/44-http2.t): mod_http2 stays inactive under prefork.
    if [ "$mpm" != prefork ] && [ -f "$modules/mod_http2.so" ]; then
        echo "LoadModule http2_module $modules/mod_http2.so"
    fi
    echo "LoadModule hotlimit_module $work/mod_hotlimit.so"
}

# A private copy of Debian's DokuWiki (package dokuwiki) for t/38-dokuwiki.t
# in directory $1: its code, configuration and data in one directory the
# test user owns, with an admin account (password "correct-horse") and
# plain authentication.
dokuwiki_copy() {
    local dw=$1
    [ -f /usr/share/dokuwiki/doku.php ] && [ -d /var/lib/dokuwiki/data ] || return 0
    mkdir -p "$dw"
    cp -aL /usr/share/dokuwiki "$dw/www"
    cp -aL /etc/dokuwiki "$dw/conf"
    cp -a /var/lib/dokuwiki/data "$dw/data"
    sed -i "1s|^<?php|<?php if(!defined('DOKU_CONF')) define('DOKU_CONF', '$dw/conf/'); if(!defined('DOKU_MAIN_CONF')) define('DOKU_MAIN_CONF', '$dw/conf/');|" \
        "$dw/www/inc/preload.php"
    {
        echo "\$conf['savedir'] = '$dw/data';"
        echo "\$conf['authtype'] = 'authplain';"
        echo "\$conf['useacl'] = 1;"
        echo "\$conf['superuser'] = '@admin';"
    } >> "$dw/conf/local.php"
    printf 'admin:%s:Admin:admin@example.org:admin,user\n' \
        "$(printf %s correct-horse | md5sum | cut -d' ' -f1)" > "$dw/conf/users.auth.php"
    printf '*               @ALL        1\n*               @user       8\n' > "$dw/conf/acl.auth.php"
}

# Writes the scheduling rules (TAP::Harness's testrules.yml) of the files
# in directory $1: the files that reach the shared server (its requests,
# port, logs or processes) one after the other, beside them the files that
# start only private httpds, in parallel, the slowest first; then the
# files that need the machine to themselves ($solo), one after the other;
# then the 99-* files, which read the whole run's logs.
rules() {
    local t=$1 f name shared=() private=() last=()
    for f in $shared_first $slow_first "$t"/*.t; do
        name=t/${f##*/}
        [ -f "$t/${f##*/}" ] || continue
        [[ " ${shared[*]} ${private[*]} ${last[*]} " == *" $name "* ]] && continue
        if [[ $name == t/99-* ]] || [[ " $solo " == *" $name "* ]]; then
            last+=("$name")
        elif grep -qE 'Apache::TestRequest|\bhl_(port|error_log|access_log|logs|httpd_pid|children|server_up)\b' "$t/${f##*/}"; then
            shared+=("$name")
        else
            private+=("$name")
        fi
    done
    echo "---"
    echo "seq:"
    echo "  - par:"
    echo "      - seq:"
    for f in "${shared[@]}"; do echo "          - $f"; done
    echo "      - par:"
    for f in "${private[@]}"; do echo "          - $f"; done
    for f in $(printf '%s\n' "${last[@]}" | sort); do echo "  - seq: $f"; done
}

# Fills $work/$mpm (the pass's HOTLIMIT_TEST_WORK): the copy of t/, the
# monitoring and recipe examples (t/32-monitoring.t, t/35-recipes.t), the
# table checker, the base configs of every MPM (a file may start a second
# httpd under the other one) and DokuWiki.
pass_dir() {
    local mpm=$1 dir=$work/$1 m
    mkdir -p "$dir"
    cp -a "$top/t" "$dir/t"
    rm -rf "$dir/t/logs"
    cp -a "$top/conf-examples" "$dir/conf-examples"
    # t/70-reserve-reading.t builds t/support/reserve_cli.c with the core.
    cp -a "$top/src" "$dir/src"
    if [ -x "$top/hotlimit-check" ]; then cp "$top/hotlimit-check" "$dir/hotlimit-check"; fi
    for m in prefork event; do base_conf "$m" > "$dir/base-$m.conf"; done
    dokuwiki_copy "$dir/dokuwiki"
    rules "$dir/t" > "$dir/testrules.yml"
    if [ -z "${HOTLIMIT_TEST_ARGS:-}" ] && [ "$mpm" = prefork ] \
        && [[ " $mpms " == *" event "* ]]; then
        # Apache::Test leaves out the files t/SKIP names.
        for f in $once_files; do echo "${f#t/}"; done > "$dir/t/SKIP"
    fi
}

run_as=()
if [ "$(id -u)" = 0 ]; then
    id hltest >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin hltest
    run_as=(runuser -u hltest --)
fi
for mpm in $mpms; do pass_dir "$mpm"; done
if [ "$(id -u)" = 0 ]; then
    chown -R hltest: "$work"
    chmod 755 "$work"
fi

# Prints the first base port from $1 up, in steps of 40, whose 20 ports
# (the shared server's and its virtual hosts') are free. The two passes
# start at once and would otherwise both find the same port free and race
# to bind it: prefork looks from 8529, event from 8549, so their bases
# never meet.
free_base() {
    python3 - "$1" <<'PY'
import socket, sys
start = int(sys.argv[1])
for base in range(start, start + 4000, 40):
    free = True
    for port in range(base, base + 20):
        s = socket.socket()
        try:
            s.bind(('', port))
        except OSError:
            free = False
        finally:
            s.close()
        if not free:
            break
    if free:
        print(base)
        break
PY
}

# Runs the suite under MPM $1 in $work/$1; its output goes to
# $work/$1/run.log, and a one-line summary to $work/$1/summary. Returns
# non-zero if a test failed.
run_pass() {
    local mpm=$1 dir=$work/$1 try rc started port
    started=$(date +%s)
    # A port found free can be taken by another suite's httpd (several runs
    # on one machine) before this one binds it: Apache::Test then stops
    # with "port N is in use" before any test ran. Up to 3 tries.
    for try in 1 2 3; do
        rm -rf "$dir/t/logs"
        rc=0
        port=$(free_base $([ "$mpm" = prefork ] && echo $((8529 + 80 * (try - 1))) \
                                               || echo $((8549 + 80 * (try - 1)))))
        (cd "$dir/t" && "${run_as[@]}" env HOTLIMIT_TEST_MPM="$mpm" \
            HOTLIMIT_TEST_WORK="$dir" TMPDIR="$dir" \
            HARNESS_OPTIONS="j$jobs" HARNESS_RULESFILE="$dir/testrules.yml" \
            HARNESS_TIMER="${HARNESS_TIMER:-1}" \
            perl TEST.PL -apxs "$apxs" \
            -httpd_conf "$dir/base-$mpm.conf" -port "${port:-select}" -minclients 4 \
            -maxclients 16 -defines "HL_MPM_${mpm^^}" ${HOTLIMIT_TEST_ARGS:-}) \
            > "$dir/run.log" 2>&1 || rc=1
        [ $rc != 0 ] && grep -qE 'is in use, cannot determine server pid|could not bind to address' "$dir/run.log" \
            && ! grep -q '^Result: ' "$dir/run.log" || break
        echo "== $mpm: port taken by another run (try $try of 3); again on another port"
        (cd "$dir/t" && "${run_as[@]}" perl TEST.PL -clean >/dev/null 2>&1) || true
    done
    local totals result
    totals=$(grep -E '^Files=[0-9]+, Tests=[0-9]+' "$dir/run.log" | tail -n 1 | cut -d, -f1-2)
    result=$(grep -E '^Result: ' "$dir/run.log" | tail -n 1)
    echo "$mpm: ${totals:-no totals}, ${result:-no result}, $(( $(date +%s) - started )) s" \
        > "$dir/summary"
    if [ $rc != 0 ]; then
        {
            echo "== error_log tail ($mpm):"
            tail -n 40 "$dir/t/logs/error_log" 2>/dev/null || true
        } >> "$dir/run.log"
        return 1
    fi
    # Screenshots the browser tests took are kept as artifacts.
    if ls "$dir"/t/logs/*.png >/dev/null 2>&1; then
        mkdir -p "$top/t/logs/artifacts/$mpm"
        cp "$dir"/t/logs/*.png "$top/t/logs/artifacts/$mpm/"
    fi
    (cd "$dir/t" && "${run_as[@]}" perl TEST.PL -clean >/dev/null 2>&1) || true
}

status=0
started=$(date +%s)
pids=()
for mpm in $mpms; do
    echo "== Apache::Test under the $mpm MPM (output: $work/$mpm/run.log)"
    if [ "${HOTLIMIT_SERIAL:-0}" = 1 ]; then
        run_pass "$mpm" || status=1
    else
        run_pass "$mpm" &
        pids+=($!)
    fi
done
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
for mpm in $mpms; do
    echo "== Apache::Test under the $mpm MPM"
    cat "$work/$mpm/run.log"
done
echo "== summary"
for mpm in $mpms; do echo "   $(cat "$work/$mpm/summary" 2>/dev/null || echo "$mpm: not run")"; done
# What failed, repeated last: CI keeps only the tail of a long output.
for mpm in $mpms; do
    grep -q '^Test Summary Report' "$work/$mpm/run.log" 2>/dev/null || continue
    echo "== what failed under $mpm:"
    sed -n '/^Test Summary Report/,/^Files=/p' "$work/$mpm/run.log" | grep -v '^Files=' | head -n 30
    grep -E '^(not ok|#[[:space:]]+(Failed test|at |got|expected|[a-z]))' "$work/$mpm/run.log" | head -n 40
done
echo "   wall time $(( $(date +%s) - started )) s; $([ $status = 0 ] && echo PASS || echo FAIL)"
if [ $status = 0 ]; then rm -rf "$work"; else echo "== kept for inspection: $work"; fi
exit $status
