#!/usr/bin/env bash
# Jobs launched by Slurm's srun --mpi=pmix across a two-node cluster on
# this machine (cluster.sh: a controller and two slurmds, each in its own
# network namespace, with its own /tmp and /dev/shm). Run by `make check`
# from the top build directory, or by hand: slurm_test.sh [BUILD-DIR].
#
#   1. the cluster: ranks placed two a node, each node's /dev/shm its own,
#      and no daemon listening in the machine's namespace;
#   2. the jobs of slurm-tests.list: ess/pmix job facts, locality and modex
#      data against mcarun's; the btl suite over self,sm,ofi (sm within a
#      node, ofi tcp between); a rank aborting, a rank killing itself;
#   3. scancel --signal=KILL of a running job: it ends, and the PMIx server
#      removes the session directories the killed ranks could not (and
#      does not when ess_pmix_register_cleanup=0, the control);
#   4. nothing left on either node, and after stop nothing running.
#
# Exit status: 0 passed, 1 failed, 77 skipped (not root, no namespaces,
# Slurm not installable, under check-valgrind), saying why. The cluster is
# stopped on every exit path.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-.}" && pwd)

if [ "${OPAL_TEST_UNDER_VALGRIND:-0}" = 1 ]; then
    echo "skipped: not under valgrind (make check runs these tests)"
    exit 77
fi
if [ ! -x "$build/orte/tools/mcarun/mcarun" ]; then
    echo "slurm_test: $build is not a build tree (no orte/tools/mcarun/mcarun)" >&2
    exit 1
fi
case "$build/" in
    /dev/shm/*)
        # Each node has a /dev/shm of its own: the programs would not be there.
        echo "skipped: the build tree $build lies under /dev/shm, which each node replaces"
        exit 77
        ;;
esac

# shellcheck source=../../contrib/test-list.sh
. "$here/../../contrib/test-list.sh"
tl_build_env "$build"
# shellcheck disable=SC2034 # read by tl_run (test-list.sh)
tl_timeout=180
# In sanitizer builds the ranks run without LeakSanitizer: libpmix keeps
# allocations until exit in plugins it unloads at PMIx_Finalize (as in
# test/orte/orte_ess_pmix_test.c). Every other check still applies.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
# Each node has a /tmp of its own; the build and source trees stay visible
# there (cluster.sh binds them in when they lie under /tmp). The ranks'
# session directories go to their node's /tmp, not to a TMPDIR they would
# share.
export OPAL_SLURM_KEEP=$build:$SRCDIR
unset TMPDIR
# A short name at the top of the build tree: slurmstepd's PMIx socket
# lives under it, and a Unix socket's path holds 107 bytes (under
# distcheck's build tree, test/slurm/cluster.<pid> made the steps with
# two-digit job ids fail to launch). Not under /tmp: there the killed-rank
# case lost its survivors' last words to Slurm's cancel in half the runs.
cluster=$build/slurm-cl.$$
# A run killed with SIGKILL (no trap runs) leaves its cluster: stop those
# whose test is gone (slurm-cl.<pid of the test>).
for stale in "$build"/slurm-cl.*/cluster.state; do
    [ -e "$stale" ] || continue
    stale=$(dirname "$stale")
    owner=${stale##*.}
    kill -0 "$owner" 2>/dev/null && [ "$(cut -d' ' -f3 "/proc/$owner/stat" 2>/dev/null)" != Z ] &&
        continue
    echo "    stopping the cluster a killed run left in $stale"
    bash "$here/cluster.sh" stop "$stale" 2>&1 | sed 's/^/    | /'
done

start=$SECONDS
why=$(bash "$here/cluster.sh" start "$cluster" 2>&1)
rc=$?
echo "$why" | sed 's/^/    | /'
if [ $rc -eq 77 ]; then
    echo "skipped: $(echo "$why" | grep '^cluster: cannot run here' | head -n 1)"
    exit 77
fi

stopped=no
stop_cluster() {
    [ $stopped = no ] || return 0
    stopped=yes
    bash "$here/cluster.sh" stop "$cluster" 2>&1 | sed 's/^/    | /'
}
on_signal() {
    echo "slurm_test: interrupted (signal $1): stopping the cluster" >&2
    [ -n "$tl_child" ] && kill -TERM "$tl_child" 2>/dev/null
    stop_cluster
    trap - "$1"
    kill -s "$1" $$
}
trap stop_cluster EXIT
for sig in INT TERM HUP; do
    # shellcheck disable=SC2064 # the signal's name, now
    trap "on_signal $sig" "$sig"
done
if [ $rc -ne 0 ]; then
    tl_fail "the cluster starts (status $rc)"
    tl_summary slurm
    exit 1
fi
tl_pass "the cluster starts, both nodes idle ($((SECONDS - start)) s)"
export CLUSTER=$cluster
export SRUN="bash $here/cluster.sh run $cluster srun"

# tl_on_hang PID (test-list.sh): what the job PID runs, about to be killed
# for taking too long, was waiting for: its processes, Slurm's daemons and
# the ranks (children of slurmstepd), with the stacks of its own programs
# and of the ranks when gdb is there; the queue, the nodes' states, the
# PMIx plugin's complaints and the daemons' last words.
tl_on_hang() {
    tl_picture "$1" '^(slurmstepd:|slurmd|slurmctld)$' slurmstepd:
    echo "-- squeue"
    bash "$here/cluster.sh" run "$cluster" squeue -a -o '%i %j %T %r %N %M' 2>&1
    echo "-- sinfo"
    bash "$here/cluster.sh" run "$cluster" sinfo -N -o '%N %T %E' 2>&1
    local f
    echo "-- the PMIx plugin's errors"
    grep -h 'mpi/pmix' "$cluster"/node*/slurmd.log 2>/dev/null | tail -n 20
    for f in "$cluster"/ctl/slurmctld.log "$cluster"/node*/slurmd.log; do
        [ -s "$f" ] && { echo "-- last lines of ${f#"$cluster"/}"; tail -n 25 "$f"; }
    done
}

# tl_hang_is_external FILE (test-list.sh): true when tl_on_hang's picture
# shows every rank of the srun job (srun's -n) waiting in PMIx_Fence: each
# has made its contribution and the launcher's PMIx servers did not
# complete the collective. Slurm 22.05's plugin collects data with its ring
# algorithm, which other projects have seen lose a contribution between
# two nodes and hang.
tl_hang_is_external() {
    awk '/^-- processes$/ { ps = 1; next }
         /^-- / { ps = 0 }
         ps && / srun / && np == "" {
             for (i = 1; i < NF; i++) if ($i == "-n") np = $(i + 1) }
         /^-- stacks of [0-9]+ \(a rank under slurmstepd\)/ { ranks++; cur = ranks; next }
         /^-- / { cur = 0 }
         cur && /in PMIx_Fence / { fenced[cur] = 1 }
         END { n = 0; for (r in fenced) n++
               exit !(np != "" && ranks == np + 0 && n == ranks) }' "$1"
}
export EXPECT_ESS=$here/expect-ess.sh EXPECT_MUX=$here/expect-mux.sh

echo "== the cluster"
out=$($SRUN -N 2 -n 4 --ntasks-per-node=2 -l sh -c \
    'hostname; touch /dev/shm/slurm-test.$SLURM_PROCID' 2>&1)
rc=$?
echo "$out" | sed 's/^/    | /'
placed=$(echo "$out" | sort | tr '\n' ' ')
if [ $rc -eq 0 ] && [ "$placed" = "0: node0 1: node0 2: node1 3: node1 " ]; then
    tl_pass "srun -N 2 -n 4 puts ranks 0, 1 on node0 and 2, 3 on node1"
else
    tl_fail "srun -N 2 -n 4 puts ranks 0, 1 on node0 and 2, 3 on node1 (status $rc)"
fi
h0=$(cd "$cluster/node0/shm" && echo slurm-test.*)
h1=$(cd "$cluster/node1/shm" && echo slurm-test.*)
echo "    node0 /dev/shm: $h0; node1 /dev/shm: $h1"
if [ "$h0" = "slurm-test.0 slurm-test.1" ] && [ "$h1" = "slurm-test.2 slurm-test.3" ] &&
    ! compgen -G "/dev/shm/slurm-test.*" >/dev/null; then
    tl_pass "the ranks of a node share its /dev/shm, and only they"
else
    tl_fail "the ranks of a node share its /dev/shm, and only they"
fi
rm -f "$cluster"/node*/shm/slurm-test.*
# Loopback and Unix sockets are fine; a daemon's TCP or UDP port in the
# machine's own namespace is not.
listening=$(ss -H -ltunp 2>/dev/null | grep -E '"(slurm[a-z]*|munged)"')
if [ -z "$listening" ]; then
    tl_pass "no daemon listens in the machine's namespace"
else
    echo "$listening" | sed 's/^/    | /'
    tl_fail "no daemon listens in the machine's namespace"
fi

echo "== jobs across the nodes"
tl_run_list "$here/slurm-tests.list"

echo "== scancel --signal=KILL"
# A job whose ranks wait after orte_init (--abort-rank past the last rank:
# nobody aborts, everybody waits); once both nodes hold its session
# directory, scancel; the ranks never reach orte_finalize. With
# register_cleanup 0 (the control) the directories must stay.
scancel_job() {
    local cleanup=$1 name=slurm-test-$1 rc id
    local log=$build/test/slurm/scancel.$$.log
    OPAL_MCA_ess_pmix_register_cleanup=$cleanup $SRUN --mpi=pmix -J "$name" -N 2 -n 4 \
        "$build/test/orte/orte_ess_rank" --expect-size 4 --abort-rank 4 >"$log" 2>&1 &
    tl_child=$!
    local up=no
    for _ in $(seq 600); do
        if compgen -G "$cluster/node0/tmp/opal-mca.*/*" >/dev/null &&
            compgen -G "$cluster/node1/tmp/opal-mca.*/*" >/dev/null; then
            up=yes
            break
        fi
        kill -0 $tl_child 2>/dev/null || break
        sleep 0.1
    done
    id=$(bash "$here/cluster.sh" run "$cluster" squeue -h -n "$name" -o %i 2>/dev/null)
    echo "    job ${id:-?}: session directories on both nodes: $up"
    [ -n "$id" ] && bash "$here/cluster.sh" run "$cluster" scancel --signal=KILL "$id"
    local start=$SECONDS
    # Bounded: srun waits KillWait (5 s) at most before SIGKILL.
    for _ in $(seq 600); do
        kill -0 $tl_child 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 $tl_child 2>/dev/null; then
        kill -TERM $tl_child
        echo "    srun did not end within 60 s of scancel"
    fi
    wait $tl_child
    rc=$?
    tl_child=
    local out
    out=$(cat "$log")
    rm -f "$log"
    echo "$out" | sed 's/^/    | /'
    echo "    srun exited $rc, $((SECONDS - start)) s after scancel"
    # slurmstepd says so through srun.
    [ $up = yes ] && [ -n "$id" ] && [ $rc -ne 0 ] && [ $((SECONDS - start)) -lt 60 ] &&
        grep -q "STEP $id.0 ON node[01] CANCELLED" <<<"$out"
}
# Session directories left on the nodes (opal-mca.<uid>/<jobid>).
sessions_left() {
    (cd "$cluster" && compgen -G "node*/tmp/opal-mca.*/*")
}
if scancel_job 0; then
    left=$(sessions_left)
    if [ -n "$left" ]; then
        echo "    left, as expected: $(echo $left)"
        tl_pass "scancel ends the job; without cleanup registered the killed ranks' sessions stay"
    else
        tl_fail "scancel: without cleanup registered the sessions of killed ranks were gone (the control)"
    fi
else
    tl_fail "scancel --signal=KILL ends a job of waiting ranks (ess_pmix_register_cleanup=0)"
fi
rm -rf "$cluster"/node*/tmp/opal-mca.*/*
if scancel_job -1; then
    left=$(sessions_left)
    if [ -z "$left" ]; then
        tl_pass "scancel ends the job; the PMIx server removes the killed ranks' sessions on both nodes"
    else
        echo "    left: $(echo $left)"
        tl_fail "scancel: the killed ranks' session directories are still there"
    fi
else
    tl_fail "scancel --signal=KILL ends a job of waiting ranks"
fi

echo "== what the jobs left"
left=$(cd "$cluster" && find node*/shm node*/tmp/opal-mca.* -mindepth 1 2>/dev/null)
if [ -z "$left" ]; then
    tl_pass "no /dev/shm file and no session directory left on either node"
else
    echo "$left" | sed 's/^/    | /'
    tl_fail "no /dev/shm file and no session directory left on either node"
fi

daemons=$(awk '$1 == "pid" { print $2 ":" $3 }' "$cluster/cluster.state")
prefix=$(awk '$1 == "netns" { print $2; exit }' "$cluster/cluster.state")
prefix=${prefix%ctl}
stop_cluster
# still_daemon NAME PID: PID is still that daemon, as stop_all asks (not
# ended, not another process that got its pid since: make check -j2 runs
# other tests beside this one).
still_daemon() {
    bash "$here/cluster.sh" is-daemon "$1" "$2"
}
# A process killed in a namespace's cleanup may take a moment to go.
for _ in $(seq 20); do
    alive=
    for d in $daemons; do
        still_daemon "${d%%:*}" "${d#*:}" && alive="$alive ${d#*:} (${d%%:*})"
    done
    [ -z "$alive" ] && break
    sleep 0.1
done
for d in $daemons; do
    still_daemon "${d%%:*}" "${d#*:}" &&
        echo "    left: ${d%%:*} pid ${d#*:}: $(tr '\0' ' ' <"/proc/${d#*:}/cmdline" 2>/dev/null)"
done
ns_left=$(ip netns list 2>/dev/null | awk -v p="$prefix" 'index($1, p) == 1 { print $1 }')
if [ -z "$alive" ] && [ -z "$ns_left" ] && [ ! -e "$cluster" ]; then
    tl_pass "stop ends every daemon and removes the namespaces and $cluster"
else
    tl_fail "stop left daemons ($alive), namespaces ($ns_left) or the directory"
fi
echo "slurm_test: $((SECONDS - start)) s in all"
tl_summary slurm
