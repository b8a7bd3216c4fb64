#!/usr/bin/env bash
# examples/rpc_hello: a server and a client started separately (the URI
# through a file) over na btl, and over ofi+tcp when na/ofi is built; the
# client prints the server's answer (its name, the points' sum, the
# letter pulled by bulk), the server that it answered, both exit 0.
# Run by make check from the build directory.
set -u
hello=$PWD/examples/rpc_hello
[ -x "$hello" ] || { echo "rpc_hello_test: $hello not built" >&2; exit 99; }
work=$(mktemp -d "${TMPDIR:-/tmp}/rpc_hello_test.XXXXXX")
spid=""
cleanup() {
    [ -n "$spid" ] && kill "$spid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

failed=0
run_pair() { # na info
    local uri=$work/uri.$1 status=0
    timeout 120 "$hello" server "$uri" "$1" >"$work/server.out" 2>"$work/server.err" &
    spid=$!
    timeout 120 "$hello" client "$uri" Ada "$1" >"$work/client.out" 2>"$work/client.err" || status=$?
    wait "$spid" || status=$((status ? status : 100 + $?))
    spid=""
    if [ $status -ne 0 ] ||
        ! grep -q 'client: status 0: hello Ada: 3 points adding up to (-1, 16); your 16384-byte letter begins "Dear server, this letter travelled by bu' "$work/client.out" ||
        ! grep -q '^server: listening at ' "$work/server.out" ||
        ! grep -q '^server: answered Ada$' "$work/server.out"; then
        echo "rpc_hello_test: over $1 (status $status):" >&2
        tail -n 20 "$work"/*.out "$work"/*.err >&2
        failed=1
        return
    fi
    echo "rpc_hello_test: over $1: $(cat "$work/client.out")"
}

run_pair btl
if ls "$PWD"/opal/mca/na/ofi/*.la >/dev/null 2>&1; then
    run_pair ofi+tcp
fi
exit $failed
