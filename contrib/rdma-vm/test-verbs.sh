#!/usr/bin/env bash
# The verbs tests, run inside the rdma-vm guest (they need rxe0):
#
#   contrib/rdma-vm/run.sh --build-dir _build -- \
#       contrib/rdma-vm/test-verbs.sh _build [options]
#
# 1. ibv_devices lists rxe0.
# 2. fi_info offers rxe0 through verbs;ofi_rxm as a reliable datagram
#    (FI_EP_RDM) endpoint: what btl/ofi asks libfabric for.
# 3. Smoke tests: ibv_rc_pingpong between two processes over rxe0 (verbs
#    alone), and libfabric's fi_pingpong over verbs;ofi_rxm, 64 B (eager)
#    and 1 MiB (rendezvous, an RDMA read).
# 4. The test commands of the list files (default: verbs-tests.list, then
#    verbs-btl.list, then verbs-ports.list, which adds a second device,
#    rxe1, then verbs-valgrind.list when valgrind is installed, all beside
#    this script), each in BUILD-DIR with a time limit. A command whose
#    build-tree programs are not built is skipped and said to be.
#
# Options:
#   --list FILE       take the test commands from FILE (repeatable; the
#                     first one replaces the default list)
#   --no-list         run the checks and smoke tests only
#   --require-all     a test whose programs are not built fails
#   --test-timeout S  time limit of each listed test (default 300)
#
# Ends with "verbs: N passed, N failed, N skipped"; exits 0 when nothing
# failed (and, with --require-all, nothing was skipped), else 1; 2 on a
# usage error.
set -u
here=$(cd "$(dirname "$0")" && pwd)

usage() { sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'; }
[ $# -ge 1 ] || { usage >&2; exit 2; }
case "$1" in -h | --help) usage; exit 0 ;; esac
build=$(cd "$1" 2>/dev/null && pwd) || { echo "test-verbs: $1: no such build directory" >&2; exit 2; }
shift
lists=()
default_list=yes
require_all=no
test_timeout=300
while [ $# -gt 0 ]; do
    case "$1" in
        --list) lists+=("${2:?--list needs a file}"); default_list=no; shift ;;
        --no-list) default_list=no ;;
        --require-all) require_all=yes ;;
        --test-timeout) test_timeout=${2:?--test-timeout needs seconds}; shift ;;
        *) echo "test-verbs: unknown option '$1'" >&2; exit 2 ;;
    esac
    shift
done
if [ $default_list = yes ]; then
    lists=("$here/verbs-tests.list" "$here/verbs-btl.list" "$here/verbs-ports.list")
    command -v valgrind >/dev/null && lists+=("$here/verbs-valgrind.list")
fi

# shellcheck source=../test-list.sh
. "$here/../test-list.sh"
tl_require_all=$require_all
tl_timeout=$test_timeout
pass() { tl_pass "$@"; }
fail() { tl_fail "$@"; }

# wait_listening PORT PID: until something listens on TCP PORT, or PID died.
wait_listening() {
    for _ in $(seq 200); do
        ss -ltnH "sport = :$1" 2>/dev/null | grep -q . && return 0
        kill -0 "$2" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}

# pingpong NAME PORT SERVER-CMD... -- CLIENT-CMD...: a server in the
# background, the client once the server listens; both must succeed. A run
# in which either crashed inside libfabric (tl_crashed_in_libfabric: rxm
# 1.17 does, in fi_pingpong too) is run once more, saying so.
pingpong() {
    local name=$1 port=$2 server=() client=() start=$SECONDS try crc src
    shift 2
    while [ $# -gt 0 ] && [ "$1" != -- ]; do server+=("$1"); shift; done
    shift
    client=("$@")
    local log=/tmp/test-verbs.$$.server clog=/tmp/test-verbs.$$.client
    for try in 1 2; do
        timeout -k 5 60 "${server[@]}" >"$log" 2>&1 &
        local spid=$!
        if ! wait_listening "$port" "$spid"; then
            wait "$spid"
            sed 's/^/    server| /' "$log"
            rm -f "$log"
            fail "$name: the server did not start"
            return
        fi
        timeout -k 5 60 "${client[@]}" >"$clog" 2>&1
        crc=$?
        wait "$spid"
        src=$?
        sed 's/^/    client| /' "$clog"
        sed 's/^/    server| /' "$log"
        if [ "$crc" -eq 0 ] && [ "$src" -eq 0 ]; then
            break
        fi
        [ $try -eq 1 ] && { tl_crashed_in_libfabric "$log" || tl_crashed_in_libfabric "$clog"; } ||
            break
        echo "    (crashed inside libfabric: running $name once more)"
    done
    rm -f "$log" "$clog"
    if [ "$crc" -eq 0 ] && [ "$src" -eq 0 ]; then
        pass "$name ($((SECONDS - start)) s$([ $try -eq 2 ] && echo ', second run'))"
    else
        fail "$name (client status $crc, server status $src)"
    fi
}

echo "== the device"
devices=$(ibv_devices 2>&1)
echo "$devices" | sed 's/^/    /'
if echo "$devices" | awk '$1 == "rxe0" { found = 1 } END { exit !found }'; then
    pass "ibv_devices lists rxe0"
else
    fail "ibv_devices lists rxe0"
fi

echo "== libfabric"
# One record per provider/domain/type triple, as fi_info prints them.
rdm=$(fi_info -p 'verbs;ofi_rxm' -t FI_EP_RDM 2>&1 |
    awk '$1 == "provider:" { p = $2 } $1 == "domain:" { d = $2 }
         $1 == "type:" { print p, d, $2 }' | sort -u)
echo "$rdm" | sed 's/^/    /'
if echo "$rdm" | grep -qx 'verbs;ofi_rxm rxe0 FI_EP_RDM'; then
    pass "fi_info: rxe0 through verbs;ofi_rxm as FI_EP_RDM"
else
    fail "fi_info: rxe0 through verbs;ofi_rxm as FI_EP_RDM"
fi

echo "== smoke tests"
# GID 1 is the IPv4 address of eth0 (guest.sh turns IPv6 off, so GID 0 is
# the link-local default and nothing renumbers them).
pingpong "ibv_rc_pingpong over rxe0" 18515 \
    ibv_rc_pingpong -d rxe0 -g 1 -n 100 -- ibv_rc_pingpong -d rxe0 -g 1 -n 100 localhost
# rxm sizes its verbs completion queues by the universe size (default 256)
# times the queue depths, past rxe's 32767 CQEs: fi_enable then fails with
# EINVAL ("Unable to create verbs CQ"). 64 peers is plenty here.
for size in 64 1048576; do
    pingpong "fi_pingpong verbs;ofi_rxm $size B" 47592 \
        env FI_UNIVERSE_SIZE=64 fi_pingpong -p 'verbs;ofi_rxm' -e rdm -I 20 -S $size -- \
        env FI_UNIVERSE_SIZE=64 fi_pingpong -p 'verbs;ofi_rxm' -e rdm -I 20 -S $size 10.99.0.2
done

# What the listed commands see: the build tree's mcarun ($MCARUN), plugins
# and help files, and the selection under test.
tl_build_env "$build"
export VERBS_MCA="--mca btl self,ofi --mca ofi_provider_include verbs;ofi_rxm"
# btl/verbs's lists name the btls themselves.
export VERBS_MCA_PROV="--mca ofi_provider_include verbs;ofi_rxm"
export EXPECT=$here/../../test/btl/netns/expect-send-over.sh
# The rank program's own deadline for each wait, under the jobs' --timeout
# (everything is slow under emulation).
export BTL_TEST_DEADLINE=${BTL_TEST_DEADLINE:-120}
if [ ${#lists[@]} -gt 0 ]; then
    echo "== btl tests ($VERBS_MCA)"
    for list in "${lists[@]}"; do
        tl_run_list "$list"
    done
fi
tl_summary verbs
