#!/bin/sh
# The program mcarun starts for each rank when ranks should sit on two
# "hosts" (netns-lib.sh): it moves the rank into host (rank mod hosts)'s
# network namespace, gives it that host's /dev/shm and a host name of its
# own (netns-host0, netns-host1) in private mount and UTS namespaces, then
# becomes the program:
#
#   mcarun -np 2 ... test/btl/netns/netns-rank.sh <program> [arguments]
#
# Every step execs, so the rank keeps the pid mcarun started and gets its
# signals. Needs OPAL_ORTE_RANK (from mcarun) and OPAL_TEST_NETNS_PREFIX
# and _SHM (from netns_setup); OPAL_TEST_NETNS_HOSTS (2) is the number of
# hosts the ranks are spread over: 1 puts them all on host 0.
set -u
: "${OPAL_ORTE_RANK:?netns-rank.sh: not started by mcarun}"
: "${OPAL_TEST_NETNS_PREFIX:?netns-rank.sh: no namespaces (run under netns-run.sh)}"
: "${OPAL_TEST_NETNS_SHM:?netns-rank.sh: no namespaces (run under netns-run.sh)}"
[ $# -ge 1 ] || { echo "netns-rank.sh: no program given" >&2; exit 2; }
host=$((OPAL_ORTE_RANK % ${OPAL_TEST_NETNS_HOSTS:-2}))
# ip netns exec already enters a mount namespace of its own (to show the
# namespace's /sys); unshare makes the private one explicit and adds UTS.
exec ip netns exec "${OPAL_TEST_NETNS_PREFIX}h$host" \
    unshare --mount --uts --propagation private -- \
    sh -c 'mount --bind "$1" /dev/shm && hostname "$2" && shift 2 && exec "$@"' \
    netns-rank "$OPAL_TEST_NETNS_SHM/h$host" "netns-host$host" "$@"
