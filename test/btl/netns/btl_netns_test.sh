#!/usr/bin/env bash
# Two hosts on one machine (netns-lib.sh): two network namespaces joined by
# a veth pair, ranks placed on them by netns-rank.sh. Run by `make check`
# from the top build directory (or by hand: btl_netns_test.sh [BUILD-DIR]).
#
#   1. the plumbing: each rank of an mcarun job runs on its own host (its
#      host name says so), and ranks of one host share a /dev/shm that the
#      other host and the machine itself do not see;
#   2. libfabric's tcp;ofi_rxm carries a ping-pong from host 1 to host 0
#      over the veth;
#   3. the btl tests of netns-tests.list (btl/ofi over tcp;ofi_rxm between
#      the hosts; sm reaches a peer on its own host only).
#
# Exit status: 0 passed, 1 failed, 77 skipped (not root, no CAP_NET_ADMIN,
# a container without namespaces, or under check-valgrind), saying why.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-.}" && pwd)

if [ "${OPAL_TEST_UNDER_VALGRIND:-0}" = 1 ]; then
    # The ranks would not run under valgrind anyway; make check runs this.
    echo "skipped: not under valgrind (make check runs these tests)"
    exit 77
fi
if [ ! -x "$build/orte/tools/mcarun/mcarun" ]; then
    echo "btl_netns_test: $build is not a build tree (no orte/tools/mcarun/mcarun)" >&2
    exit 1
fi

# shellcheck source=netns-lib.sh
. "$here/netns-lib.sh"
# shellcheck source=../../../contrib/test-list.sh
. "$here/../../../contrib/test-list.sh"
if why=$(netns_unusable); then
    echo "skipped: $why"
    exit 77
fi
tl_build_env "$build"
tl_timeout=180
netns_setup || { echo "btl_netns_test: cannot set up the namespaces" >&2; exit 1; }
prefix=$netns_prefix
export NETNS_RANK=$here/netns-rank.sh NETNS_PREFIX=$netns_prefix
export TCP_MCA="--mca btl self,ofi --mca ofi_provider_include tcp;ofi_rxm"
export BTL_TCP_MCA="--mca btl self,tcp"
# Run on host 0 by a linkdown case: host 0 leaves the network silently
# (its addresses gone, forwarding off: what comes for them is dropped);
# LINK_BACK gives them back.
export LINK_CUT="echo 0 >/proc/sys/net/ipv4/ip_forward && ip addr flush dev mcanet0 scope global"
export LINK_BACK="ip addr replace 10.77.0.1/24 dev mcanet0 && ip -6 addr replace fd77::1/64 dev mcanet0 nodad"
# LINK_BACK on host 0, after a linkdown case.
link_restore() {
    ip netns exec "${NETNS_PREFIX}h0" sh -c "$LINK_BACK"
}
export -f link_restore
# tl_on_hang PID (test-list.sh): what the job PID, about to be killed for
# taking too long, was waiting for: its processes and the ranks' stacks,
# then each host's TCP connections with what their queues hold.
tl_on_hang() {
    local h
    tl_picture "$1"
    for h in 0 1; do
        echo "-- TCP connections on host $h"
        netns_exec "$h" ss -tanp 2>&1 | head -n 40
    done
}
export EXPECT=$here/expect-send-over.sh EXPECT_UNREACHABLE=$here/expect-unreachable.sh
export ALONE_PAIR=$here/alone-pair.sh

echo "== the two hosts ($prefix)"
if [ -x "$build/examples/hello" ]; then
    out=$("$MCARUN" -np 2 --timeout 60 "$NETNS_RANK" "$build/examples/hello" 2>&1)
    rc=$?
    echo "$out" | sed 's/^/    | /'
    if [ $rc -eq 0 ] && echo "$out" | grep -q '^hello from rank 0 of 2 on netns-host0 ' &&
        echo "$out" | grep -q '^hello from rank 1 of 2 on netns-host1 '; then
        tl_pass "each rank runs on its own host"
    else
        tl_fail "each rank runs on its own host (mcarun status $rc)"
    fi
else
    tl_skip "each rank runs on its own host: examples/hello not built"
fi

# Each rank leaves a file in its /dev/shm; afterwards the per-host folders
# must hold exactly their own ranks' files, and the machine's /dev/shm none.
mark=$prefix.rank
"$MCARUN" -np 4 --oversubscribe --timeout 60 "$NETNS_RANK" \
    sh -c "touch /dev/shm/$mark\$OPAL_ORTE_RANK" 2>&1 | sed 's/^/    | /'
rc=${PIPESTATUS[0]}
h0=$(cd "$netns_shm/h0" && echo $mark*)
h1=$(cd "$netns_shm/h1" && echo $mark*)
echo "    host 0 /dev/shm: $h0; host 1 /dev/shm: $h1"
if [ $rc -eq 0 ] && [ "$h0" = "${mark}0 ${mark}2" ] && [ "$h1" = "${mark}1 ${mark}3" ] &&
    ! compgen -G "/dev/shm/$mark*" >/dev/null; then
    tl_pass "ranks of one host share its /dev/shm, and only they"
else
    tl_fail "ranks of one host share its /dev/shm, and only they (mcarun status $rc)"
fi

echo "== tcp between the hosts"
if command -v fi_pingpong >/dev/null 2>&1; then
    netns_exec 0 timeout -k 5 60 fi_pingpong -p 'tcp;ofi_rxm' -e rdm -I 20 -S 4096 \
        >"$netns_shm/server.log" 2>&1 &
    server=$!
    listening=no
    for _ in $(seq 100); do
        if netns_exec 0 ss -ltnH 'sport = :47592' | grep -q .; then
            listening=yes
            break
        fi
        kill -0 $server 2>/dev/null || break
        sleep 0.1
    done
    crc=1
    if [ $listening = yes ]; then
        netns_exec 1 timeout -k 5 60 fi_pingpong -p 'tcp;ofi_rxm' -e rdm -I 20 -S 4096 10.77.0.1 \
            2>&1 | sed 's/^/    client| /'
        crc=${PIPESTATUS[0]}
    fi
    wait $server
    src=$?
    sed 's/^/    server| /' "$netns_shm/server.log"
    if [ $crc -eq 0 ] && [ $src -eq 0 ]; then
        tl_pass "fi_pingpong tcp;ofi_rxm from host 1 to host 0"
    else
        tl_fail "fi_pingpong tcp;ofi_rxm from host 1 to host 0 (client $crc, server $src)"
    fi
else
    tl_skip "fi_pingpong tcp;ofi_rxm: fi_pingpong not installed (libfabric-bin)"
fi

echo "== btl tests between the hosts"
tl_run_list "$here/netns-tests.list"

netns_cleanup
left=$(netns_leftovers "$prefix")
if [ -z "$left" ]; then
    tl_pass "nothing left behind"
else
    echo "$left" | sed 's/^/    /'
    tl_fail "nothing left behind"
fi
tl_summary netns
