# bench/lib.sh - shared by the bench/ scripts (bench/run, bench/callgrind,
# bench/memory, bench/sse-usage, ...).
# Sourced, not executed. Writes httpd configs into a scratch directory,
# starts and stops httpd, and keeps track of what it started so the
# caller's trap can clean up.
#
# Environment (all optional):
#   HTTPD        httpd binary                (default /usr/sbin/apache2)
#   APXS         apxs binary                 (default apxs; used for LIBEXECDIR)
#   MODDIR       httpd module directory      (default `$APXS -q LIBEXECDIR`)
#   HOTLIMIT_SO  the module under test       (default <repo>/.libs/mod_hotlimit.so)
#   PORT         first port to try on 127.0.0.1 (default 18480; the next free one is used)
#   QUOTA        never-triggering quota      (default 2000000000/1h)
#   SLOTS        HotLimitSlots               (default 65536)
#   B_EXTRA      extra config lines for B only ('\n' separates lines), e.g.
#                'Mutex posixsem hotlimit-shm' to try another lock mechanism
#   KEEP=1       keep the scratch directory
#   LOAD_CPUS    when set (e.g. 0), httpd and wrk run on these CPUs only
#                (taskset -c; see pinned and pin_redis)
# shellcheck shell=bash

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(dirname "$BENCH_DIR")
RESULTS_DIR="$BENCH_DIR/results"

HTTPD=${HTTPD:-/usr/sbin/apache2}
APXS=${APXS:-apxs}
if [ -z "${MODDIR:-}" ]; then
    MODDIR=$("$APXS" -q LIBEXECDIR 2>/dev/null || true)
    [ -n "$MODDIR" ] || MODDIR=/usr/lib/apache2/modules
fi
HOTLIMIT_SO=${HOTLIMIT_SO:-$REPO_DIR/.libs/mod_hotlimit.so}
PORT=${PORT:-18480}
# 2e9 per hour: one key at the loopback's ~20k req/s would need > 27 h.
# A long window also means no slot expires during a run, so with random
# client keys a full table takes the LRU-eviction path, not expiry reuse.
QUOTA=${QUOTA:-2000000000/1h}
SLOTS=${SLOTS:-65536}
KEEP=${KEEP:-0}
RUN_USER=${RUN_USER:-www-data}
RUN_GROUP=${RUN_GROUP:-www-data}

SCRATCH=""
STARTED_PIDS=()          # httpd (or valgrind) parent pids we started

die() { echo "$(basename "$0"): $*" >&2; exit 1; }
log() { echo "# $*" >&2; }

# Checks the tools and the module; copies the module into the scratch dir so
# a rebuild by someone else during the benchmark cannot mix two binaries.
bench_init() {
    local tool
    [ -x "$HTTPD" ] || die "httpd binary '$HTTPD' not found (set HTTPD)"
    for tool in "$@"; do
        command -v "$tool" >/dev/null 2>&1 || die "'$tool' not found in PATH"
    done
    for m in mpm_event authz_core mime dir remoteip slotmem_shm; do
        [ -f "$MODDIR/mod_$m.so" ] || die "$MODDIR/mod_$m.so missing (set MODDIR)"
    done
    [ -f "$HOTLIMIT_SO" ] || die "$HOTLIMIT_SO not built: run make in $REPO_DIR (or set HOTLIMIT_SO)"
    SCRATCH=$(mktemp -d /tmp/hlbench.XXXXXX)
    chmod 755 "$SCRATCH"
    cp "$HOTLIMIT_SO" "$SCRATCH/mod_hotlimit.so"
    MODULE_SHA=$(sha256sum "$SCRATCH/mod_hotlimit.so" | cut -c1-12)
    MODULE_MTIME=$(date -r "$HOTLIMIT_SO" '+%F %T')
    mkdir -p "$RESULTS_DIR"
    write_site "$SCRATCH/htdocs"
}

# Kills every httpd we started (parent first, then stragglers of its group),
# removes the scratch dir. Safe to call twice.
bench_cleanup() {
    local pid
    for pid in "${STARTED_PIDS[@]:-}"; do
        [ -n "$pid" ] || continue
        if kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid" 2>/dev/null || true
            for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -KILL "$pid" 2>/dev/null || true
        fi
    done
    STARTED_PIDS=()
    if [ -n "$SCRATCH" ] && [ -d "$SCRATCH" ]; then
        if [ "$KEEP" = 1 ]; then log "scratch kept in $SCRATCH"
        else rm -rf "$SCRATCH"; fi
    fi
}

# Returns (prints) the first port >= $1 that nothing listens on.
free_port() {
    local p=$1
    while ss -Hltn "sport = :$p" | grep -q .; do p=$((p + 1)); done
    echo "$p"
}

# The documents: a 1 KiB static file at /1k.html and, for the table
# scenarios, the same file three directories deep.
write_site() {
    local d=$1
    mkdir -p "$d/app/v1/items"
    head -c 1024 /dev/zero | tr '\0' 'x' > "$d/1k.html"
    cp "$d/1k.html" "$d/app/v1/items/1k.html"
    echo ok > "$d/index.html"
    chmod -R a+rX "$d"
}

# URL path requested by a scenario.
scenario_path() {
    case $1 in
        table*) echo /app/v1/items/1k.html ;;
        *)      echo /1k.html ;;
    esac
}

# Starts one redis-server on a free loopback port for the redis scenarios
# (once; stopped with everything else at exit), listening on a port and
# on a unix socket. Sets REDIS_PORT and REDIS_SOCKET.
REDIS_PORT=""
REDIS_PID=""
start_redis() {
    [ -z "$REDIS_PORT" ] || return 0
    command -v redis-server >/dev/null || die "redis-server not found (apt-get install redis-server)"
    REDIS_PORT=$(free_port 16379)
    REDIS_SOCKET="$SCRATCH/redis.sock"
    redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
        --unixsocket "$REDIS_SOCKET" --unixsocketperm 777 \
        --dir "$SCRATCH" --logfile "$SCRATCH/redis.log" >/dev/null 2>&1 &
    REDIS_PID=$!
    STARTED_PIDS+=("$REDIS_PID")
    REDIS_PIDS+=("$REDIS_PID")
    for _ in $(seq 50); do
        redis-cli -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG && return 0
        sleep 0.1
    done
    die "redis-server on port $REDIS_PORT does not answer"
}

# Starts a Redis Cluster of 3 masters, no replicas, on free loopback ports
# for the redis-cluster scenarios (once; stopped with everything else at
# exit), as t/lib/HLCluster.pm does: cluster-require-full-coverage no, each
# master's bus on a port of its own, created with redis-cli --cluster create;
# waits up to 20 s for cluster_state:ok on every master. Sets
# REDIS_CLUSTER_PORTS (the masters' ports) and adds their pids to REDIS_PIDS.
REDIS_CLUSTER_PORTS=()
REDIS_PIDS=()
start_redis_cluster() {
    [ "${#REDIS_CLUSTER_PORTS[@]}" = 0 ] || return 0
    command -v redis-server >/dev/null || die "redis-server not found (apt-get install redis-server)"
    local i p bus d addrs=() out ok
    p=16479
    for i in 0 1 2; do
        p=$(free_port "$p"); bus=$(free_port $((p + 1)))
        [ "$bus" -lt 65536 ] || die "no free port for the cluster bus"
        d="$SCRATCH/cluster-$i"; mkdir -p "$d"
        redis-server --port "$p" --bind 127.0.0.1 --save '' --appendonly no \
            --cluster-enabled yes --cluster-port "$bus" --cluster-config-file "$d/nodes.conf" \
            --cluster-require-full-coverage no --dir "$d" --logfile "$d/redis.log" >/dev/null 2>&1 &
        REDIS_PIDS+=("$!"); STARTED_PIDS+=("$!")
        REDIS_CLUSTER_PORTS+=("$p"); addrs+=("127.0.0.1:$p")
        for _ in $(seq 50); do
            redis-cli -p "$p" ping 2>/dev/null | grep -q PONG && break
            sleep 0.1
        done
        p=$((bus + 1))
    done
    out=$(redis-cli --cluster create "${addrs[@]}" --cluster-replicas 0 --cluster-yes 2>&1) \
        || die "redis-cli --cluster create failed: $out"
    for _ in $(seq 200); do
        ok=1
        for p in "${REDIS_CLUSTER_PORTS[@]}"; do
            redis-cli -p "$p" cluster info 2>/dev/null | grep -q 'cluster_state:ok' || ok=0
        done
        [ "$ok" = 0 ] || return 0
        sleep 0.1
    done
    die "the cluster on ports ${REDIS_CLUSTER_PORTS[*]} does not reach cluster_state:ok"
}

# redis_ports: prints the port of every redis-server started (the single
# server's, or the cluster's masters'), one a line.
redis_ports() {
    [ -z "$REDIS_PORT" ] || echo "$REDIS_PORT"
    [ "${#REDIS_CLUSTER_PORTS[@]}" = 0 ] || printf '%s\n' "${REDIS_CLUSTER_PORTS[@]}"
}

# Runs "$@" on the CPUs of LOAD_CPUS (taskset -c), or anywhere when unset.
pinned() {
    if [ -n "${LOAD_CPUS:-}" ]; then taskset -c "$LOAD_CPUS" "$@"; else "$@"; fi
}

# pin_redis CPUS: moves every thread of every running redis-server (the
# single one and the cluster's masters) onto CPUS (taskset -a -p -c), e.g. 1
# to give Redis a core of its own, or 0-$(($(nproc) - 1)) to free it again.
# Nothing when no Redis is running.
pin_redis() {
    local pid
    for pid in "${REDIS_PIDS[@]:-}"; do
        [ -n "$pid" ] || continue
        taskset -a -p -c "$1" "$pid" >/dev/null || die "taskset cannot pin redis-server $pid to CPU $1"
    done
}

# Writes the JSON quota table for table10[-hit] / table10k[-hit] into $2.
# Every route is /t/<n>/login (never the requested one); the -hit variant adds
# /app/v1/items, the parent of the requested file, with a never-triggering quota,
# so a hit costs one missed candidate (the exact route) and one hit.
write_table() {
    local scenario=$1 out=$2 n hit=0
    case $scenario in
        table10|table10-hit)   n=10 ;;
        table10k|table10k-hit) n=10000 ;;
        *) die "write_table: unknown scenario $scenario" ;;
    esac
    case $scenario in *-hit) hit=1 ;; esac
    awk -v n="$n" -v hit="$hit" -v quota="$QUOTA" 'BEGIN {
        printf "{\n  \"enabled\": true,\n  \"routes\": {\n"
        for (i = 0; i < n; i++)
            printf "    \"/t/%d/login\": { \"limits\": [\"5/1m\", \"30/1h\"] },\n", i
        if (hit)
            printf "    \"/app/v1/items\": { \"limits\": [\"%s\"] },\n", quota
        printf "    \"/t/last\": { \"max\": 1, \"window\": \"60s\" }\n  }\n}\n"
    }' > "$out"
}

# write_conf FILE VARIANT(A|B) SCENARIO PORT [LOGLEVEL]
# A = plain httpd, B = httpd + mod_hotlimit. Identical except for what the
# module needs. Modules loaded: mpm_event authz_core mime dir remoteip
# slotmem_shm (+ hotlimit in B); log_config, unixd, watchdog are built in.
write_conf() {
    local file=$1 variant=$2 scenario=$3 port=$4 loglevel=${5:-warn}
    local dir; dir=$(dirname "$file")
    local name; name=$(basename "$file" .conf)
    mkdir -p "$dir/run-$name" "$dir/logs"
    chmod 755 "$dir" "$dir/run-$name" "$dir/logs"
    {
        cat <<EOF
# generated by bench/$(basename "$0"): variant $variant, scenario $scenario
ServerRoot "$dir"
LoadModule mpm_event_module   $MODDIR/mod_mpm_event.so
LoadModule authz_core_module  $MODDIR/mod_authz_core.so
LoadModule mime_module        $MODDIR/mod_mime.so
LoadModule dir_module         $MODDIR/mod_dir.so
LoadModule remoteip_module    $MODDIR/mod_remoteip.so
LoadModule slotmem_shm_module $MODDIR/mod_slotmem_shm.so
EOF
        [ "$variant" = B ] && echo "LoadModule hotlimit_module      $SCRATCH/mod_hotlimit.so"
        cat <<EOF
ServerName 127.0.0.1
Listen 127.0.0.1:$port
User $RUN_USER
Group $RUN_GROUP
DefaultRuntimeDir "$dir/run-$name"
PidFile "$dir/run-$name/httpd.pid"
Mutex default
ErrorLog "$dir/logs/$name.error.log"
LogLevel $loglevel
TypesConfig /etc/mime.types
DocumentRoot "$SCRATCH/htdocs"
<Directory />
    AllowOverride None
    Require all denied
</Directory>
<Directory "$SCRATCH/htdocs">
    Options None
    AllowOverride None
    Require all granted
</Directory>
DirectoryIndex index.html
KeepAlive On
MaxKeepAliveRequests 0
KeepAliveTimeout 60
Timeout 60
# A fixed set of processes and threads: no spawning or reaping mid-run.
ServerLimit 2
StartServers 2
ThreadLimit 32
ThreadsPerChild 32
MaxRequestWorkers 64
MinSpareThreads 32
MaxSpareThreads 64
MaxConnectionsPerChild 0
<Location /hl-status>
    SetHandler hotlimit-status
    <IfModule hotlimit_module>
        HotLimitStatus On
    </IfModule>
</Location>
EOF
        case $scenario in
            *randomip*)
                echo "RemoteIPHeader X-Forwarded-For"
                echo "RemoteIPTrustedProxy 127.0.0.1" ;;
        esac
        # A holds the same <Location /> section as B with an httpd directive
        # in it, so the cost of merging a section is in both and B - A is
        # the module's own.
        if [ "$variant" = A ]; then
            case $scenario in
                onekey*|randomip*|redis*)
                    printf '<Location />\n    DirectoryIndex index.html\n</Location>\n' ;;
            esac
        fi
        if [ "$variant" = B ]; then
            echo "HotLimitSlots ${SCENARIO_SLOTS:-$SLOTS}"
            case $scenario in
                onekey-noheaders|onekey-close|randomip-close)
                    printf '<Location />\n    DirectoryIndex index.html\n    HotLimitQuota %s\n    HotLimitHeaders Off\n</Location>\n' "$QUOTA" ;;
                onekey|randomip*)
                    printf '<Location />\n    DirectoryIndex index.html\n    HotLimitQuota %s\n</Location>\n' "$QUOTA" ;;
                redis-cluster*)
                    start_redis_cluster
                    printf 'HotLimitStore redis-cluster://%s\n' "$(printf '127.0.0.1:%s\n' "${REDIS_CLUSTER_PORTS[@]}" | paste -sd,)"
                    printf '<Location />\n    DirectoryIndex index.html\n    HotLimitQuota %s\n</Location>\n' "$QUOTA" ;;
                redis-lease)
                    start_redis
                    printf 'HotLimitStore redis://127.0.0.1:%s\nHotLimitStoreLease 100\n' "$REDIS_PORT"
                    printf '<Location />\n    DirectoryIndex index.html\n    HotLimitQuota %s\n</Location>\n' "$QUOTA" ;;
                redis-unix*)
                    start_redis
                    printf 'HotLimitStore unix:%s\n' "$REDIS_SOCKET"
                    printf '<Location />\n    DirectoryIndex index.html\n    HotLimitQuota %s\n</Location>\n' "$QUOTA" ;;
                redis*)
                    start_redis
                    printf 'HotLimitStore redis://127.0.0.1:%s\n' "$REDIS_PORT"
                    printf '<Location />\n    DirectoryIndex index.html\n    HotLimitQuota %s\n</Location>\n' "$QUOTA" ;;
                table*)
                    write_table "$scenario" "$dir/$name.table.json"
                    echo "HotLimitQuotaTable \"$dir/$name.table.json\"" ;;
            esac
            # Extra lines for B only, e.g. B_EXTRA='Mutex posixsem hotlimit-shm'.
            [ -z "${B_EXTRA:-}" ] || printf '%b\n' "$B_EXTRA"
        fi
    } > "$file"
}

# Prints nothing and returns 0 if the config is valid; for B configs of the
# table scenarios returns 2 (and prints the reason) when the module does not
# know HotLimitQuotaTable yet; dies on any other error.
check_conf() {
    local file=$1 out
    if out=$("$HTTPD" -t -f "$file" 2>&1); then return 0; fi
    if grep -q "HotLimitQuotaTable" <<<"$out"; then
        echo "$out" | head -3 >&2
        return 2
    fi
    echo "$out" >&2
    die "configtest failed for $file"
}

# Waits until http://127.0.0.1:$1$2 answers (any status), up to $3 s (default 15).
wait_port() {
    local port=$1 path=${2:-/} limit=${3:-15} i
    for i in $(seq $((limit * 10))); do
        if curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$port$path"; then return 0; fi
        sleep 0.1
    done
    return 1
}

# start_httpd CONF PORT: starts a daemonized httpd, waits for it to answer.
# Sets HTTPD_PID.
start_httpd() {
    local conf=$1 port=$2
    local name; name=$(basename "$conf" .conf)
    local pidfile; pidfile="$(dirname "$conf")/run-$name/httpd.pid"
    rm -f "$pidfile"
    pinned "$HTTPD" -f "$conf" -k start || die "httpd failed to start with $conf (see $(dirname "$conf")/logs/$name.error.log)"
    for _ in $(seq 100); do [ -s "$pidfile" ] && break; sleep 0.1; done
    [ -s "$pidfile" ] || die "no pid file from httpd ($conf)"
    HTTPD_PID=$(cat "$pidfile")
    STARTED_PIDS+=("$HTTPD_PID")
    wait_port "$port" /index.html 15 || die "httpd ($conf) does not answer on port $port"
}

# stop_httpd PID: SIGTERM, wait up to 10 s for the parent to exit (it writes
# the slotmem persistence file on the way out), then SIGKILL.
stop_httpd() {
    local pid=$1 i
    kill -TERM "$pid" 2>/dev/null || return 0
    for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
        log "httpd $pid did not stop in 10 s: SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
        sleep 0.2
    fi
    local keep=() p
    for p in "${STARTED_PIDS[@]:-}"; do [ "$p" = "$pid" ] || keep+=("$p"); done
    STARTED_PIDS=("${keep[@]:-}")
}

# measure CONF N XFF OUTFILE PATH: one callgrind run of `httpd -X -f CONF`
# on $PORT (bench/callgrind, bench/sse-usage): waits for /index.html, sends
# N requests for PATH with bench/client.pl, stops httpd; sets MEASURED to the
# total Ir and CRASHED to 1 if httpd crashed at exit (measure again then).
# (Not run in a subshell, so the EXIT trap still sees the pid it started.)
measure() {
    local conf=$1 n=$2 xff=$3 cgout=$4 path=$5 pid total name
    name=$(basename "$conf" .conf)
    rm -rf "$(dirname "$conf")/run-$name"
    mkdir -p "$(dirname "$conf")/run-$name"
    # httpd -X still switches to User before serving, and callgrind, which
    # creates its file at start (as root, mode 0600), reopens it at exit as
    # that user: hand it a file the user owns.
    mkdir -p "$(dirname "$cgout")"
    rm -f "$cgout"
    : > "$cgout"
    chown "$RUN_USER:$RUN_GROUP" "$cgout"
    chmod 644 "$cgout"
    valgrind --tool=callgrind --collect-atstart=yes --vgdb=no --callgrind-out-file="$cgout" \
        "$HTTPD" -X -f "$conf" > "$cgout.log" 2>&1 &
    pid=$!
    STARTED_PIDS+=("$pid")
    # One probe request (the same for N1 and N2, so it cancels out).
    wait_port "$PORT" /index.html 120 || die "httpd under valgrind does not answer (see $cgout.log)"
    perl "$BENCH_DIR/client.pl" "$PORT" "$n" "$path" $xff > "$cgout.client" \
        || die "client failed or got non-200 responses: $(cat "$cgout.client") (bench invalid)"
    kill -TERM "$pid"
    local i
    for i in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid" 2>/dev/null || true
        die "httpd under valgrind did not exit within 30 s of SIGTERM"
    fi
    wait "$pid" 2>/dev/null || true
    local keep=() p
    for p in "${STARTED_PIDS[@]}"; do [ "$p" = "$pid" ] || keep+=("$p"); done
    STARTED_PIDS=("${keep[@]:-}")
    total=$(awk '/^totals:/ { t = $2 } /^summary:/ { s = $2 } END { print (t != "") ? t : s }' "$cgout")
    [ -n "$total" ] || die "no totals in $cgout"
    MEASURED=$total
    # httpd -X itself (plain httpd too) now and then dies of SIGSEGV in its
    # exit handlers after SIGTERM; the profile is still written but its
    # shutdown part is cut short. Report it; the caller measures again.
    CRASHED=0
    if grep -q 'Process terminating with default action of signal' "$cgout.log"; then
        CRASHED=1
        log "httpd crashed at exit under valgrind ($(basename "$cgout"); $(grep -m1 -o 'signal [0-9]* ([A-Z]*)' "$cgout.log")): measuring again"
    fi
}

# Pids of the children of httpd parent $1.
httpd_children() {
    pgrep -P "$1" || true
}

# proc_usage PID...: prints "TICKS SWITCHES": the CPU time (user + system,
# clock ticks) and the context switches (voluntary and not, every thread)
# the processes have had so far; 0 0 for none. Gone pids count nothing.
proc_usage() {
    local pid ticks=0 sw=0 t s
    for pid in "$@"; do
        t=$(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null) || continue
        s=$(cat /proc/"$pid"/task/*/status 2>/dev/null \
            | awk '/^(non)?voluntary_ctxt_switches:/ { n += $2 } END { print n + 0 }')
        ticks=$((ticks + ${t:-0})); sw=$((sw + ${s:-0}))
    done
    echo "$ticks $sw"
}

# cpu_busy_ticks CPU: prints the ticks CPU (0, 1, ...) has spent not idle
# since boot, then its total, from /proc/stat.
cpu_busy_ticks() {
    awk -v c="cpu$1" '$1 == c { t = 0; for (i = 2; i <= NF; i++) t += $i;
        print t - $5 - $6, t }' /proc/stat
}

# Median of the numbers given as arguments.
median() {
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) { print "nan"; exit }
        if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Writes the wrk Lua scripts into $SCRATCH: report.lua (summary only; wrk
# keeps its fast static request) and randomip.lua (a random public IPv4
# X-Forwarded-For on every request, plus the same summary).
write_wrk_scripts() {
    local port=$1
    cat > "$SCRATCH/report.lua" <<'EOF'
function done(summary, latency, requests)
    local e = summary.errors
    io.write(string.format(
        "WRKRESULT requests=%d duration_us=%d rps=%.2f non2xx=%d connect=%d read=%d write=%d timeout=%d p50_us=%d p99_us=%d\n",
        summary.requests, summary.duration, summary.requests / (summary.duration / 1e6),
        e.status, e.connect, e.read, e.write, e.timeout,
        latency:percentile(50), latency:percentile(99)))
end
EOF
    {
        cat <<'EOF'
-- A random public IPv4 client address per request (first octet 11..126:
-- never 10/8 or 127/8, which mod_remoteip would not accept from a
-- RemoteIPTrustedProxy), so nearly every request is a new client key.
local counter = 0
function setup(thread)
    counter = counter + 1
    thread:set("tid", counter)
end
local random = math.random
local prefix, suffix
function init(args)
    math.randomseed(os.time() * 1000 + (tid or 0) * 7919)
    prefix = "GET " .. wrk.path .. " HTTP/1.1\r\nHost: " .. wrk.host .. ":" .. wrk.port ..
             "\r\nX-Forwarded-For: "
    suffix = "\r\n\r\n"
end
function request()
    return prefix .. random(11, 126) .. "." .. random(0, 255) .. "." ..
           random(0, 255) .. "." .. random(1, 254) .. suffix
end
EOF
        sed -n '/^function done/,$p' "$SCRATCH/report.lua"
    } > "$SCRATCH/randomip.lua"
}

# Parses "key=value" from a WRKRESULT line: wrk_field LINE KEY
wrk_field() {
    sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<"$1"
}

# wrk_verdict LINE: sets WRK_OK (1 = valid) and WRK_NOTE from a WRKRESULT
# line. Any non-2xx response, connect/write error or timeout makes the run
# invalid. A few read errors are tolerated (at most 1 per 10,000 requests):
# wrk counts a keep-alive connection that the server closes as a read error,
# and the event MPM now and then closes one when a child has no idle worker
# (seen with plain httpd as often as with the module); more than that is
# treated as a failure.
wrk_verdict() {
    local line=$1 req non2xx conn rd wr to
    req=$(wrk_field "$line" requests); non2xx=$(wrk_field "$line" non2xx)
    conn=$(wrk_field "$line" connect); rd=$(wrk_field "$line" read)
    wr=$(wrk_field "$line" write); to=$(wrk_field "$line" timeout)
    WRK_OK=1; WRK_NOTE=""
    if [ "$non2xx" != 0 ]; then WRK_OK=0; WRK_NOTE="$WRK_NOTE INVALID:non2xx=$non2xx"; fi
    if [ $((conn + wr + to)) != 0 ]; then
        WRK_OK=0; WRK_NOTE="$WRK_NOTE INVALID:socket_errors(connect=$conn,write=$wr,timeout=$to)"
    fi
    if [ "$rd" != 0 ]; then
        if [ $((rd * 10000)) -gt "$req" ]; then WRK_OK=0; WRK_NOTE="$WRK_NOTE INVALID:read_errors=$rd"
        else WRK_NOTE="$WRK_NOTE (read_errors=$rd tolerated)"; fi
    fi
}
