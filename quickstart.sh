#!/bin/bash
# quickstart.sh - the two commands of README.md, for a fresh Debian 12
# machine as root:
#   bash quickstart.sh demo   installs what is missing, builds, starts the demo
#   bash quickstart.sh test   installs what is missing, builds, runs every test
#                             (make check, make check-dist and, as root,
#                             make check-deb; Apache::Test beside the rest)
set -euo pipefail
cd "$(dirname "$0")"

# Debian packages the build, the tests and the demo need; debhelper (with
# apache2-dev's dh_apache2), dpkg-dev, fakeroot, lintian and man-db build
# and check the Debian package (t/pkg/test-deb.sh); chromium loads the
# status page in t/33-status-browser.t; openssl makes the certificate of
# t/45-h2-tls.t; prometheus brings promtool, which checks and unit-tests the
# alert rules in t/32-monitoring.t.
PACKAGES="apache2 apache2-dev apache2-utils libapr1-dev libaprutil1-dev
  libcjson-dev libcurl4-openssl-dev libapache2-mod-perl2 libapache2-mod-php
  autoconf automake libtool pkg-config make gcc libc6-dev perl python3 curl
  debhelper dpkg-dev fakeroot lintian man-db python3-prometheus-client
  fail2ban libhiredis-dev redis-server chromium dokuwiki openssl prometheus
  libssl-dev zlib1g-dev"

install_missing() {
    local missing=() p
    for p in $PACKAGES; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" \
            || missing+=("$p")
    done
    [ ${#missing[@]} = 0 ] && return 0
    if [ "$(id -u)" != 0 ]; then
        echo "quickstart: missing packages (${missing[*]}); run as root" >&2
        exit 1
    fi
    echo "quickstart: installing ${missing[*]}"
    apt-get update -q
    # The apache2 package must not start its own service on port 80 here.
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d.hotlimit
    chmod +x /usr/sbin/policy-rc.d.hotlimit
    [ -e /usr/sbin/policy-rc.d ] || ln -s policy-rc.d.hotlimit /usr/sbin/policy-rc.d
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
    [ "$(readlink /usr/sbin/policy-rc.d 2>/dev/null)" = policy-rc.d.hotlimit ] \
        && rm -f /usr/sbin/policy-rc.d
    rm -f /usr/sbin/policy-rc.d.hotlimit
}

# Node.js and npm run the official OpenAI SDK in t/56-openai-sdk.t. A
# machine that has node and npm (Debian's packages, or NodeSource's nodejs,
# which carries its own npm) keeps them; one without gets Debian's.
install_node() {
    command -v node >/dev/null && command -v npm >/dev/null && return 0
    if [ "$(id -u)" != 0 ]; then
        echo "quickstart: node and npm are missing; run as root" >&2
        exit 1
    fi
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends nodejs npm
}

# The OpenAI SDK at the version package-lock.json pins, from the npm
# registry, into t/openai/node_modules (npm ci: exactly the lockfile).
install_sdk() {
    (cd t/openai && npm ci --no-audit --no-fund --loglevel=error)
}

build() {
    [ -x configure ] || autoreconf -fi
    [ -f Makefile ] || ./configure --with-apxs="$(command -v apxs)"
    make -j2
}

case "${1:-}" in
    demo)
        install_missing
        build
        conf-examples/demo/run
        ;;
    test)
        install_missing
        install_node
        install_sdk
        build
        # The unit tests, then the same under ASan+UBSan with the fuzz
        # replay, then the release check (the tarball of `make dist` builds
        # and passes its unit tests on its own), on their own:
        # t/lane/test_lane.c races threads and wants the CPU (beside
        # Apache::Test on a loaded machine it missed its shared failures).
        # Then the Apache::Test passes (t/run-httpd-tests.sh, mostly waiting
        # on sockets and timers) in the background and, as root, the Debian
        # package beside them at a lower priority (build, lintian, install,
        # a 429 from Debian's apache2, purge). Together they are `make
        # check`, `make check-dist` and `make check-deb`.
        make -j2 check-unit
        make -j2 check-asan
        make -j2 check-dist
        httpd_log=$(mktemp /tmp/hotlimit-check-httpd.XXXXXX)
        make check-httpd > "$httpd_log" 2>&1 &
        httpd_pid=$!
        echo "quickstart: Apache::Test runs in the background (output: $httpd_log)"
        lane=0
        if [ "$(id -u)" = 0 ]; then
            nice -n 10 make check-deb || lane=$?
        else
            echo "quickstart: skipping make check-deb (the package test needs root)"
        fi
        httpd=0
        wait "$httpd_pid" || httpd=$?
        cat "$httpd_log"
        rm -f "$httpd_log"
        if [ "$lane" != 0 ] || [ "$httpd" != 0 ]; then
            echo "quickstart: FAIL (package test: exit $lane;" \
                "Apache::Test: exit $httpd)" >&2
            exit 1
        fi
        echo "quickstart: every test passed"
        ;;
    *)
        echo "usage: bash quickstart.sh demo|test" >&2
        exit 2
        ;;
esac
