#!/usr/bin/env bash
# Mercury's everyday case across two hosts: a server started alone on
# host 0, a client started alone on host 1, the server's URI passed
# through a file (no launcher, no job between them):
#
#   alone-pair.sh SERVER CLIENT ROWS -- OPAL_PERF_ARGS...
#
# runs `opal_perf SERVER OPAL_PERF_ARGS --uri-file F` in host 0's network
# namespace and `opal_perf CLIENT OPAL_PERF_ARGS --uri-file F` in host 1's
# (both keep the machine's host name and /dev/shm, so the URI's card says
# "same host": the client must still reach the server over the link).
# Passes when the client exits 0 and prints ROWS result rows. Needs
# NETNS_PREFIX and the build directory as the current one.
set -u
[ $# -ge 4 ] && [ "$4" = -- ] || {
    echo "usage: alone-pair.sh SERVER CLIENT ROWS -- <opal_perf args...>" >&2
    exit 2
}
server=$1 client=$2 rows=$3
shift 4
: "${NETNS_PREFIX:?alone-pair.sh: no namespaces (run by btl_netns_test.sh)}"
dir=$(mktemp -d "${TMPDIR:-/tmp}/alone-pair.XXXXXX")
trap 'rm -rf "$dir"' EXIT
ip netns exec "${NETNS_PREFIX}h0" timeout -k 5 60 tools/opal_perf/opal_perf "$server" "$@" \
    --uri-file "$dir/uri" >"$dir/server.log" 2>&1 &
spid=$!
for _ in $(seq 100); do
    [ -s "$dir/uri" ] && break
    kill -0 $spid 2>/dev/null || break
    sleep 0.1
done
if [ ! -s "$dir/uri" ]; then
    echo "alone-pair: the server wrote no URI"
    sed 's/^/    server| /' "$dir/server.log"
    kill $spid 2>/dev/null
    wait $spid
    exit 1
fi
echo "server on host 0: $(cut -c1-60 "$dir/uri")..."
out=$(ip netns exec "${NETNS_PREFIX}h1" timeout -k 5 60 tools/opal_perf/opal_perf "$client" "$@" \
    --uri-file "$dir/uri" 2>&1)
rc=$?
echo "$out" | sed 's/^/    client| /'
kill $spid 2>/dev/null
wait $spid
sed 's/^/    server| /' "$dir/server.log" | tail -n 5
got=$(grep -cE '^[0-9]+( +[0-9.]+)+$' <<<"$out")
if [ $rc -ne 0 ] || [ "$got" != "$rows" ]; then
    echo "alone-pair: the client exited $rc with $got result rows (expected 0 and $rows)"
    exit 1
fi
