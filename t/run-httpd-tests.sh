#!/bin/bash
# t/run-httpd-tests.sh - runs the Apache::Test suite (t/*.t) against the
# built module with a real httpd on loopback, twice: under the prefork MPM
# with mod_php, and under the event MPM.
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
# mod_php, whichever PHP version is installed (the newest if several);
# empty when there is none, and the PHP tests skip.
php_so=$(ls "$modules"/libphp*.so 2>/dev/null | sort -V | tail -n 1 || true)

work=$(mktemp -d /tmp/hotlimit-t.XXXXXX)
cp -a "$top/t" "$work/t"
# t/32-monitoring.t checks the monitoring examples against ?metrics.
cp -a "$top/conf-examples" "$work/conf-examples"
# t/70-reserve-reading.t builds t/support/reserve_cli.c with the core.
cp -a "$top/src" "$work/src"
cp "$so" "$work/mod_hotlimit.so"
if [ -x "$top/hotlimit-check" ]; then cp "$top/hotlimit-check" "$work/hotlimit-check"; fi

# A private copy of Debian's DokuWiki (package dokuwiki) for t/38-dokuwiki.t:
# its code, configuration and data in one directory the test user owns, with
# an admin account (password "correct-horse") and plain authentication.
if [ -f /usr/share/dokuwiki/doku.php ] && [ -d /var/lib/dokuwiki/data ]; then
    dw="$work/dokuwiki"
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
fi

run_as=()
if [ "$(id -u)" = 0 ]; then
    id hltest >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin hltest
    chown -R hltest: "$work"
    chmod 755 "$work"
    run_as=(runuser -u hltest --)
fi

# Writes the base config Apache::Test inherits its LoadModule lines from.
base_conf() {
    local mpm=$1
    {
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
    } > "$work/base-$mpm.conf"
}

status=0
started=$(date +%s)
summary=()
for mpm in $mpms; do
    base_conf "$mpm"
    echo "== Apache::Test under the $mpm MPM"
    mpm_started=$(date +%s)
    # Each MPM starts from empty logs: the tests read t/logs/*, and the
    # counters start empty anyway (HotLimitPersist Off in extra.conf.in).
    # A port found free can be taken by another suite's httpd (several runs
    # on one machine) before this one binds it: Apache::Test then stops
    # with "port N is in use" before any test ran. Up to 3 tries.
    for try in 1 2 3; do
        rm -rf "$work/t/logs"
        rc=0
        (cd "$work/t" && "${run_as[@]}" env HOTLIMIT_TEST_MPM="$mpm" \
            HOTLIMIT_TEST_WORK="$work" perl TEST.PL -apxs "$apxs" \
            -httpd_conf "$work/base-$mpm.conf" -port select -minclients 4 \
            -maxclients 16 -defines "HL_MPM_${mpm^^}" ${HOTLIMIT_TEST_ARGS:-}) \
            2>&1 | tee "$work/run-$mpm.log" || rc=1
        [ $rc != 0 ] && grep -q 'is in use, cannot determine server pid' "$work/run-$mpm.log" \
            && ! grep -q '^Result: ' "$work/run-$mpm.log" || break
        echo "== port taken by another run (try $try of 3); again on another port"
        (cd "$work/t" && "${run_as[@]}" perl TEST.PL -clean >/dev/null 2>&1) || true
    done
    [ $rc = 0 ] || status=1
    totals=$(grep -E '^Files=[0-9]+, Tests=[0-9]+' "$work/run-$mpm.log" | tail -n 1 | cut -d, -f1-2)
    result=$(grep -E '^Result: ' "$work/run-$mpm.log" | tail -n 1)
    summary+=("$mpm: ${totals:-no totals}, ${result:-no result}, $(( $(date +%s) - mpm_started )) s")
    if [ $status != 0 ]; then
        echo "== error_log tail ($mpm):"
        tail -n 40 "$work/t/logs/error_log" 2>/dev/null || true
        echo "== kept for inspection: $work"
        break
    fi
    # Screenshots the browser tests took are kept as artifacts.
    if ls "$work"/t/logs/*.png >/dev/null 2>&1; then
        mkdir -p "$top/t/logs/artifacts/$mpm"
        cp "$work"/t/logs/*.png "$top/t/logs/artifacts/$mpm/"
    fi
    (cd "$work/t" && "${run_as[@]}" perl TEST.PL -clean >/dev/null 2>&1) || true
done
echo "== summary"
for line in "${summary[@]}"; do echo "   $line"; done
echo "   wall time $(( $(date +%s) - started )) s; $([ $status = 0 ] && echo PASS || echo FAIL)"
[ $status = 0 ] && rm -rf "$work"
exit $status
