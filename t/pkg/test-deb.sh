#!/bin/bash
# t/pkg/test-deb.sh - builds the Debian package from this tree, checks it
# with lintian, installs it, enables it with a2enmod, runs Debian's apache2
# with a quota and a shipped example (a quota table) and sees the 429. Then
# the lifecycle: an upgrade (the same .deb again) reloads the running
# apache2 (it no longer maps the replaced module file, a new generation in
# its error log, the counters kept), or prints a notice where it cannot; a
# purge while apache2 runs with the directives still configured restarts it
# without the module, leaves a configuration that parses and an
# "apache2ctl stop" that works, nothing of the module in /run/apache2*
# (persisted counters, secret, slotmem-shm-hotlimit-*), no file dpkg -L
# listed, and every shipped example still parses without the module.
#
# Runs as root (it installs a package). It works in a scratch directory and
# leaves /etc/apache2 as it found it: the test site is a conf-available
# file it removes again, and apache2 is started as a separate Debian
# instance (/etc/apache2-hlpkgtest, a copy of /etc/apache2 that listens
# only on 127.0.0.1:PORT), so the system's apache2 service and its port 80
# are never touched, running or not.
#
# Prints "ok N - ..." / "not ok N - ..." lines and "N passed, M failed";
# exits non-zero on any failure. A failed run keeps its scratch directory.
set -uo pipefail

PKG=libapache2-mod-hotlimit
INSTANCE=hlpkgtest
ICONF=/etc/apache2-$INSTANCE
TESTCONF=hotlimit-pkgtest
top=$(cd "$(dirname "$0")/../.." && pwd)

n=0 passed=0 failed=0
ok() { n=$((n + 1)); passed=$((passed + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
# check DESCRIPTION COMMAND...: one test line from the command's status.
# Its output, if any, is shown as # lines.
check() {
    local d=$1 out
    shift
    if out=$("$@" 2>&1); then ok "$d"; else not_ok "$d"; fi
    [ -z "$out" ] || diag <<<"$out"
}
# Stops at a failure whose later steps would make no sense.
bail() { not_ok "$1"; echo "Bail out! $1"; exit 1; }
diag() { sed 's/^/# /'; }

[ "$(id -u)" = 0 ] || { echo "test-deb: run as root (it installs a package)" >&2; exit 2; }
for tool in dpkg-buildpackage lintian fakeroot apache2ctl a2enmod curl man; do
    command -v "$tool" >/dev/null || { echo "test-deb: $tool is missing" >&2; exit 2; }
done
if dpkg-query -W -f='${Status}' "$PKG" 2>/dev/null | grep -q 'installed'; then
    echo "test-deb: $PKG is installed already; purge it first (apt-get purge $PKG)" >&2
    exit 2
fi
for f in /etc/apache2/mods-available/hotlimit.load /etc/apache2/mods-available/hotlimit.conf; do
    [ -e "$f" ] || continue
    echo "test-deb: $f exists (a from-source make install?); the package would take it over and purge it" >&2
    exit 2
done
if [ -e "$ICONF" ]; then
    echo "test-deb: $ICONF exists (a previous run that was killed?); remove it first" >&2
    exit 2
fi

work=$(mktemp -d /tmp/hotlimit-deb.XXXXXX)
chmod 755 "$work"          # apt's _apt user reads the .deb, www-data the htdocs
slotmem_was_enabled=no
[ -e /etc/apache2/mods-enabled/slotmem_shm.load ] && slotmem_was_enabled=yes
started=$(date +%s)

cleanup() {
    local rc=$?
    if [ -f "/var/run/apache2-$INSTANCE/apache2.pid" ]; then
        APACHE_CONFDIR=$ICONF apache2ctl stop >/dev/null 2>&1 || true
        for _ in $(seq 50); do
            [ -f "/var/run/apache2-$INSTANCE/apache2.pid" ] || break
            sleep 0.1
        done
    fi
    rm -rf "$ICONF" "/var/run/apache2-$INSTANCE" "/var/lock/apache2-$INSTANCE" \
        "/var/log/apache2-$INSTANCE"
    a2disconf -q "$TESTCONF" >/dev/null 2>&1 || true
    rm -f "/etc/apache2/conf-available/$TESTCONF.conf"
    if dpkg-query -W -f='${Status}' "$PKG" 2>/dev/null | grep -q 'installed'; then
        DEBIAN_FRONTEND=noninteractive apt-get purge -y -q "$PKG" >/dev/null 2>&1 || true
    fi
    if [ "$slotmem_was_enabled" = no ] && [ -e /etc/apache2/mods-enabled/slotmem_shm.load ]; then
        a2dismod -q slotmem_shm >/dev/null 2>&1 || true
    fi
    if [ "$rc" = 0 ] && [ "$failed" = 0 ]; then
        rm -rf "$work"
    else
        echo "# kept for inspection: $work"
    fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# ---- build --------------------------------------------------------------
# The work tree's files that git tracks or would track (uncommitted edits
# included, ignored build outputs not), or a plain copy outside git;
# debian/rules clean removes any configure state a plain copy carries.
mkdir "$work/src"
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
    (cd "$top" && git ls-files -z --cached --others --exclude-standard | tar --null -T - --ignore-failed-read -cf - 2>/dev/null) \
        | tar -x -C "$work/src"
else
    cp -a "$top/." "$work/src/"
fi
if (cd "$work/src" && dpkg-buildpackage -b -us -uc) > "$work/build.log" 2>&1; then
    ok "dpkg-buildpackage -b -us -uc builds the package"
else
    tail -n 40 "$work/build.log" | diag
    bail "dpkg-buildpackage -b -us -uc builds the package"
fi
deb=$(ls "$work"/${PKG}_*.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] || bail "the build made ${PKG}_*.deb"
grep -E 'warning:' "$work/build.log" | diag

# ---- lintian ------------------------------------------------------------
changes=$(ls "$work"/*.changes | head -n 1)
lintian "$changes" > "$work/lintian.log" 2>&1
grep -v 'running with root privileges' "$work/lintian.log" | diag
check "lintian reports no errors" \
    bash -c "! grep -q '^E: ' '$work/lintian.log'"

# ---- install and enable -------------------------------------------------
if (cd "$work" && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
        --no-install-recommends "./$(basename "$deb")") > "$work/install.log" 2>&1; then
    ok "apt-get install ./$(basename "$deb")"
else
    diag < "$work/install.log"
    bail "apt-get install ./$(basename "$deb")"
fi
check "the module is at /usr/lib/apache2/modules/mod_hotlimit.so" \
    test -f /usr/lib/apache2/modules/mod_hotlimit.so
check "no libtool archive beside it" \
    test ! -e /usr/lib/apache2/modules/mod_hotlimit.la
check "hotlimit.load declares slotmem_shm as a dependency" \
    grep -q '^# Depends: slotmem_shm' /etc/apache2/mods-available/hotlimit.load
doc=/usr/share/doc/$PKG
for d in fail2ban/filter.d fail2ban/jail.d monitoring demo; do
    check "the package ships conf-examples/$d" test -d "$doc/conf-examples/$d"
done
check "the Prometheus rules are shipped as they are (not gzipped)" \
    test -f "$doc/conf-examples/monitoring/alerts.yml"
check "README.Debian is installed" test -f "$doc/README.Debian"
check "the reference README.md links to is installed (doc/)" \
    test -f "$doc/doc/directives.md.gz" -a -f "$doc/doc/operations.md.gz"
check "the upstream changelog is installed" test -f "$doc/changelog.gz"
check "Suggests: fail2ban, prometheus" \
    bash -c "dpkg-query -W -f='\${Suggests}' $PKG | grep -q 'fail2ban, prometheus'"
check "the package does not enable the module by itself" \
    test ! -e /etc/apache2/mods-enabled/hotlimit.load
# Shows a2enmod resolving the dependency even where slotmem_shm was enabled.
[ "$slotmem_was_enabled" = no ] || a2dismod -q slotmem_shm >/dev/null
check "a2enmod hotlimit" a2enmod hotlimit
check "a2enmod enabled slotmem_shm too" test -e /etc/apache2/mods-enabled/slotmem_shm.load
check "a2enmod enabled hotlimit.load and hotlimit.conf" \
    test -e /etc/apache2/mods-enabled/hotlimit.load -a -e /etc/apache2/mods-enabled/hotlimit.conf

# ---- a site with a quota ------------------------------------------------
# A port nothing answers on at 127.0.0.1 (a listener on 0.0.0.0 would).
port=
for p in $(shuf -i 20000-29999 -n 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { port=$p; break; }
done
[ -n "$port" ] || bail "a free loopback port"
mkdir -p "$work/htdocs"
echo "pkgtest" > "$work/htdocs/pkgtest"
chmod -R a+rX "$work/htdocs"
# A shipped example as an administrator copies it: local-table.conf and its
# table (a quota table lives in a mod_slotmem_shm item, whose persisted
# file purge removes too), its paths made the test's. The directives stay
# configured through the purge below, as the issue's administrator left
# them: the example's <IfModule> wrap and this file's keep the
# configuration valid once the module is gone.
mkdir -p "$work/examples" "$work/htdocs/shop"
cp "$doc"/conf-examples/*.conf "$doc/conf-examples/local-table.json" "$work/examples/"
sed -i -e "s#/etc/apache2/hotlimit.json#$work/examples/local-table.json#" \
    -e "s#/var/www/shop#$work/htdocs/shop#" "$work/examples/local-table.conf"
chmod -R a+rX "$work/htdocs" "$work/examples"
cat > "/etc/apache2/conf-available/$TESTCONF.conf" <<EOF
# Written by mod_hotlimit's t/pkg/test-deb.sh, removed when it ends.
Listen 127.0.0.1:$port
Include $work/examples/local-table.conf
<VirtualHost 127.0.0.1:$port>
    DocumentRoot $work/htdocs
    <Directory $work/htdocs>
        Require all granted
    </Directory>
    <IfModule hotlimit_module>
        <Location /pkgtest>
            HotLimitQuota 2/1m
        </Location>
    </IfModule>
</VirtualHost>
EOF
check "a2enconf $TESTCONF" a2enconf -q "$TESTCONF"
if apache2ctl configtest > "$work/configtest.log" 2>&1; then
    ok "apache2ctl configtest"
else
    diag < "$work/configtest.log"
    bail "apache2ctl configtest"
fi

# Debian's multi-instance setup: the same configuration without ports.conf's
# Listen 80 and the default site, so only 127.0.0.1:$port is bound.
cp -a /etc/apache2 "$ICONF"
echo "# $ICONF: only the test's Listen (conf-enabled/$TESTCONF.conf)" > "$ICONF/ports.conf"
rm -f "$ICONF"/sites-enabled/*
mkdir -p "/var/log/apache2-$INSTANCE"
if APACHE_CONFDIR=$ICONF apache2ctl start > "$work/start.log" 2>&1; then
    ok "apache2ctl start (instance $ICONF on 127.0.0.1:$port)"
else
    diag < "$work/start.log"
    bail "apache2ctl start (instance $ICONF on 127.0.0.1:$port)"
fi
up=no
for _ in $(seq 50); do
    curl -s -o /dev/null "http://127.0.0.1:$port/" && { up=yes; break; }
    sleep 0.1
done
[ $up = yes ] || bail "apache2 answers on 127.0.0.1:$port"

codes=
for _ in 1 2 3; do
    codes="$codes $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/pkgtest")"
done
codes=${codes# }
if [ "$codes" = "200 200 429" ]; then
    ok "HotLimitQuota 2/1m: 200 200 429"
else
    not_ok "HotLimitQuota 2/1m: 200 200 429 (got $codes)"
    tail -n 20 "/var/log/apache2-$INSTANCE/error.log" 2>/dev/null | diag
fi
headers=$(curl -s -D - -o /dev/null "http://127.0.0.1:$port/pkgtest")
check "the 429 carries Retry-After" grep -qi '^Retry-After: [0-9]' <<<"$headers"
status=$(curl -s "http://127.0.0.1:$port/hotlimit-status?metrics")
check "hotlimit.conf's status page answers on localhost" \
    grep -q 'hotlimit_requests_total{route="[^"]*/pkgtest",decision="rejected"} [1-9]' <<<"$status"

# ---- hotlimit-check and the manual pages --------------------------------
check "man -w hotlimit-check finds the page" \
    bash -c 'man -w hotlimit-check | grep -q /usr/share/man/man1/hotlimit-check.1'
check "man -w 5 mod_hotlimit finds the page" \
    bash -c 'man -w 5 mod_hotlimit | grep -q /usr/share/man/man5/mod_hotlimit.5'
check "hotlimit-check --help" bash -c 'hotlimit-check --help | grep -q "^usage: hotlimit-check"'
check "hotlimit-check accepts a good table" \
    bash -c "echo '{\"routes\": {\"/login\": {\"limits\": [\"5/1m\"]}}}' | hotlimit-check - >/dev/null"
echo '{"routes": {"/login": {"max": 1, "window": "60x"}}}' | hotlimit-check - > "$work/check.out"
rc=$?
check "hotlimit-check refuses a bad window (exit 1)" test "$rc" = 1
check "hotlimit-check names the route and field" \
    grep -q "route '/login': field 'window'" "$work/check.out"

# ---- an upgrade reloads the running apache2 -----------------------------
# dpkg replaces the module's file: a parent that has not reloaded still maps
# the old one, which /proc/PID/maps shows as "(deleted)".
so=/usr/lib/apache2/modules/mod_hotlimit.so
pidfile=/var/run/apache2-$INSTANCE/apache2.pid
elog=/var/log/apache2-$INSTANCE/error.log
maps_new() { grep -q "$so\$" "/proc/$1/maps" 2>/dev/null; }
maps_old() { grep -q "$so (deleted)\$" "/proc/$1/maps" 2>/dev/null; }
# reinstall LOG: installs the same .deb again (dpkg unpacks it over the
# installed one and runs "postinst configure <installed version>").
reinstall() {
    (cd "$work" && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --reinstall \
        --no-install-recommends "./$(basename "$deb")") > "$1" 2>&1
}
# wait_for COMMAND...: runs it every 0.1 s for up to 10 s until it succeeds.
wait_for() {
    for _ in $(seq 100); do "$@" && return 0; sleep 0.1; done
    return 1
}
parent=$(cat "$pidfile")
children=" $(pgrep -P "$parent" | tr '\n' ' ')"
resumed=$(grep -c 'resuming normal operations' "$elog")
check "before the upgrade apache2 (pid $parent) runs the installed module" maps_new "$parent"
if reinstall "$work/upgrade.log"; then
    ok "an upgrade (apt-get install --reinstall) while apache2 runs the module"
else
    diag < "$work/upgrade.log"
    not_ok "an upgrade (apt-get install --reinstall) while apache2 runs the module"
fi
check "the upgrade reloaded apache2: it runs the new module, not the replaced one" \
    bash -c "grep -q '$so\$' /proc/$parent/maps && ! grep -q '(deleted)' <(grep -F '$so' /proc/$parent/maps)"
check "a graceful reload: the same parent, and a new generation in the error log" \
    bash -c "kill -0 $parent && [ \$(grep -c 'resuming normal operations' '$elog') -gt $resumed ]"
new_child() {
    local c
    for c in $(pgrep -P "$parent"); do
        [[ "$children" == *" $c "* ]] || return 0
    done
    return 1
}
check "new children serve" wait_for new_child
check "the counters survived the reload: /pkgtest still 429" \
    test "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/pkgtest")" = 429

# Where it cannot reload (here: a configuration that no longer parses), the
# upgrade says so, and the administrator's reload then loads the new module.
echo "NotADirective" > "$ICONF/conf-enabled/zz-hlpkgtest-broken.conf"
reinstall "$work/upgrade2.log"
check "an upgrade that cannot reload apache2 prints a notice naming it" \
    grep -q "NOTICE: the apache2 of $ICONF (pid $parent) still runs the previous mod_hotlimit" "$work/upgrade2.log"
grep -F 'NOTICE' "$work/upgrade2.log" | diag
check "(it does still run the replaced module)" maps_old "$parent"
rm -f "$ICONF/conf-enabled/zz-hlpkgtest-broken.conf"
APACHE_CONFDIR=$ICONF apache2ctl graceful >/dev/null 2>&1
check "after apache2ctl graceful it runs the new module" \
    wait_for bash -c "! grep -q '$so (deleted)' /proc/$parent/maps"

# ---- the files the module persists ---------------------------------------
# stop_instance: stops the instance and waits for its parent to exit (the
# parent removes its pid file first, and saves the counters and the
# table's slotmem when its process pool goes, just before it exits).
stop_instance() {
    local pid
    pid=$(cat "$pidfile" 2>/dev/null) || return 1
    APACHE_CONFDIR=$ICONF apache2ctl stop > "$work/stop.log" 2>&1 || { cat "$work/stop.log"; return 1; }
    wait_for bash -c "! kill -0 $pid 2>/dev/null"
}
# start_instance DESCRIPTION: starts the instance and waits until it
# answers; a test line, and a bail-out if it does not.
start_instance() {
    if APACHE_CONFDIR=$ICONF apache2ctl start > "$work/start.log" 2>&1 \
       && wait_for curl -s -o /dev/null "http://127.0.0.1:$port/"; then
        ok "$1"
    else
        diag < "$work/start.log"
        bail "$1"
    fi
}
check "apache2ctl stop" stop_instance
rundir=/var/run/apache2-$INSTANCE
ls -la "$rundir" | diag
check "the stop saved the counters ($rundir/hotlimit-counters.persist)" \
    test -f "$rundir/hotlimit-counters.persist"
check "mod_slotmem_shm saved the quota table ($rundir/slotmem-shm-hotlimit-*.persist)" \
    bash -c "ls '$rundir'/slotmem-shm-hotlimit-*.persist"
start_instance "apache2ctl start again"

# ---- purge with the directives still configured ---------------------------
# apache2 runs the module, the test site's HotLimit* directives (wrapped in
# <IfModule hotlimit_module>) stay enabled: the purge disables the module
# and restarts apache2 without it, removes what it wrote, and the
# configuration still parses.
dpkg -L "$PKG" > "$work/files.list"
parent=$(cat "$pidfile")
if DEBIAN_FRONTEND=noninteractive apt-get purge -y -q "$PKG" > "$work/purge.log" 2>&1; then
    ok "apt-get purge -y $PKG, apache2 running the module"
else
    diag < "$work/purge.log"
    not_ok "apt-get purge -y $PKG, apache2 running the module"
fi
check "dpkg no longer lists the package" bash -c "! dpkg -L $PKG >/dev/null 2>&1"
# configtest [CONFDIR]: apache2ctl configtest, its output shown on failure only.
configtest() {
    local out
    out=$(APACHE_CONFDIR=${1:-/etc/apache2} apache2ctl configtest 2>&1) || { echo "$out"; return 1; }
}
check "apache2ctl configtest passes with the directives still configured" configtest
check "and for the instance" configtest "$ICONF"
newparent=$(cat "$pidfile" 2>/dev/null)
check "the purge restarted apache2 (pid $parent -> ${newparent:-none}) without the module" \
    bash -c "[ -n '$newparent' ] && kill -0 '$newparent' && ! grep -q mod_hotlimit /proc/$newparent/maps"
codes=
for _ in 1 2 3; do
    codes="$codes $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/pkgtest")"
done
check "it serves /pkgtest, unlimited now (got$codes)" test "$codes" = " 200 200 200"
check "apache2ctl stop works after the purge" stop_instance
left=$(ls -d /run/apache2/*hotlimit* /run/apache2-*/*hotlimit* 2>/dev/null)
if [ -z "$left" ]; then
    ok "nothing of the module in /run/apache2 or /run/apache2-$INSTANCE"
else
    not_ok "nothing of the module in /run/apache2 or /run/apache2-$INSTANCE"
    echo "$left" | diag
fi
left=$(while read -r f; do [ -d "$f" ] || [ ! -e "$f" ] || echo "$f"; done < "$work/files.list"
       ls -d /etc/apache2*/mods-*/hotlimit.* /var/lib/libapache2-mod-hotlimit 2>/dev/null)
if [ -z "$left" ]; then
    ok "nothing of the package is left (dpkg -L before the purge, /etc/apache2*, /var/lib)"
else
    not_ok "nothing of the package is left (dpkg -L before the purge, /etc/apache2*, /var/lib)"
    echo "$left" | diag
fi
rm -rf "$ICONF" "$rundir" "/var/lock/apache2-$INSTANCE" "/var/log/apache2-$INSTANCE"

# Every shipped example, copied before the purge, still parses without it
# (given the other modules it needs: front-controller.conf's mod_rewrite).
for ex in "$work"/examples/*.conf; do
    printf '%s\n' '<IfModule !rewrite_module>' \
        '    LoadModule rewrite_module /usr/lib/apache2/modules/mod_rewrite.so' \
        '</IfModule>' "Include $ex" > "/etc/apache2/conf-available/$TESTCONF.conf"
    check "without the module, configtest passes with $(basename "$ex") included" \
        configtest
done
a2disconf -q "$TESTCONF" >/dev/null
rm -f "/etc/apache2/conf-available/$TESTCONF.conf"

# ---- purge with a bare directive: the notice -------------------------------
# An instance whose configuration has HotLimitQuota outside any <IfModule>
# cannot be restarted without the module: the purge leaves it running and
# says so, naming it and what to do.
if (cd "$work" && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
        --no-install-recommends "./$(basename "$deb")") > "$work/install2.log" 2>&1 \
   && a2enmod -q hotlimit >/dev/null; then
    ok "install and a2enmod again"
else
    diag < "$work/install2.log"
    bail "install and a2enmod again"
fi
cp -a /etc/apache2 "$ICONF"
rm -f "$ICONF"/sites-enabled/*
printf '%s\n' "Listen 127.0.0.1:$port" '<Location /pkgtest>' '    HotLimitQuota 2/1m' \
    '</Location>' > "$ICONF/ports.conf"
mkdir -p "/var/log/apache2-$INSTANCE"
start_instance "apache2ctl start, a bare HotLimitQuota in its configuration"
parent=$(cat "$pidfile")
DEBIAN_FRONTEND=noninteractive apt-get purge -y -q "$PKG" > "$work/purge2.log" 2>&1
check "the purge names the apache2 it could not restart without the module" \
    grep -q "NOTICE: the apache2 of $ICONF (pid $parent) still runs mod_hotlimit.*Invalid command 'HotLimitQuota'.*<IfModule hotlimit_module>" "$work/purge2.log"
grep -F 'NOTICE' "$work/purge2.log" | diag
check "(it does still run the removed module)" maps_old "$parent"
kill "$parent" && wait_for bash -c "! kill -0 $parent 2>/dev/null"
rm -rf "$ICONF" "$rundir" "/var/lock/apache2-$INSTANCE" "/var/log/apache2-$INSTANCE"

if [ "$slotmem_was_enabled" = no ]; then
    check "purge disabled slotmem_shm, which a2enmod hotlimit had enabled" \
        test ! -e /etc/apache2/mods-enabled/slotmem_shm.load
else
    a2enmod -q slotmem_shm >/dev/null
    check "slotmem_shm still enabled, as before the test" \
        test -e /etc/apache2/mods-enabled/slotmem_shm.load
fi
check "the test site is gone from /etc/apache2" \
    test ! -e "/etc/apache2/conf-available/$TESTCONF.conf" -a ! -e "/etc/apache2/conf-enabled/$TESTCONF.conf"

echo "# $(( $(date +%s) - started )) s"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
