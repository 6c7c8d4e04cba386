# hl_tap.sh - TAP for the shell unit tests, the counterpart of hl_tap.h:
# sourced (. "$(dirname "$0")/hl_tap.sh"), it sets n and failed to 0 and
# defines ok. A test ends with [ "$failed" -eq 0 ] for its exit status.

n=0
failed=0

# ok STATUS NAME [FILE]: prints one TAP line, "ok N - NAME" when STATUS
# is 0, else "not ok N - NAME" (counted in $failed) followed by the lines
# of FILE, or of $tap_diag when set, as diagnostics.
ok() {
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $n - $2"
    else
        echo "not ok $n - $2"
        failed=$((failed + 1))
        diag=${3:-${tap_diag:-}}
        if [ -n "$diag" ]; then
            sed 's/^/#   /' "$diag"
        fi
    fi
}
