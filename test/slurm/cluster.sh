#!/usr/bin/env bash
# A Slurm cluster on one machine: a controller and two compute nodes, each
# in a network namespace of its own, joined by a bridge.
#
#   test/slurm/cluster.sh start DIR     make it under DIR (a new or empty
#                                       folder), wait until both nodes are idle
#   test/slurm/cluster.sh run DIR CMD   run CMD on the login side (the
#                                       controller's namespace), with
#                                       SLURM_CONF set: srun, sinfo, scancel
#   test/slurm/cluster.sh stop DIR      end the daemons it started (by pid),
#                                       remove the namespaces and DIR
#   test/slurm/cluster.sh logs DIR      print the daemons' logs
#   test/slurm/cluster.sh is-daemon NAME PID
#                                       exit 0 when PID is still the daemon
#                                       NAME (munged, slurmctld,
#                                       slurmd-node<i>) that start recorded
#
#   controller  namespace <p>ctl  bridge mcabr0  10.78.0.254  host slurmctl
#   node0       namespace <p>n0   eth0           10.78.0.1    host node0
#   node1       namespace <p>n1   eth0           10.78.0.2    host node1
#
# munged runs in the machine's namespace but only on a Unix socket in DIR;
# slurmctld listens in the controller's namespace, each slurmd in its
# node's, so nothing listens outside them. Each node also has a /tmp and a
# /dev/shm of its own (DIR/node<i>/tmp, DIR/node<i>/shm), bound in a private
# mount namespace, as on separate machines. What the nodes need from the
# machine's /tmp stays there: the folder under /tmp that holds DIR, and
# those holding the paths of OPAL_SLURM_KEEP (colon-separated: the build
# and source trees whose programs the jobs run), are bound into each
# node's /tmp. DIR must not lie under /dev/shm. No systemd and no cgroups:
# proctrack/linuxproc, task/none.
#
# start installs what is missing (munge, slurmctld, slurmd, slurm-client,
# slurm-wlm-basic-plugins) as root through contrib/opal-deps.sh. It exits
# 77, saying why, where the cluster cannot run here (not root, no network
# namespaces, packages missing and not installable); 1 if it failed. A
# failed start removes what it made.
set -u
here=$(cd "$(dirname "$0")" && pwd)

# The bridge's subnet; slurmctld's and slurmd's default ports.
net=10.78.0
ctl_addr=$net.254
nodes=2

say() { echo "cluster: $*" >&2; }

usage() {
    sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'
    exit 2
}

# unusable: prints why the cluster cannot run here and returns 0, or
# returns 1 silently.
unusable() {
    local tool
    if [ "$(id -u)" -ne 0 ]; then
        echo "not root (the daemons and the network namespaces need root)"
        return 0
    fi
    for tool in ip nsenter unshare mount timeout; do
        if ! command -v "$tool" >/dev/null 2>&1; then
            echo "$tool not found (iproute2 / util-linux)"
            return 0
        fi
    done
    local probe=osl$$p err
    if ! err=$(ip netns add "$probe" 2>&1); then
        echo "cannot create a network namespace (ip netns add: $err)"
        return 0
    fi
    if ! err=$(nsenter --net="/run/netns/$probe" unshare --mount --uts -- \
        sh -c 'mount -t tmpfs probe /mnt && hostname probe' 2>&1); then
        ip netns delete "$probe" 2>/dev/null
        echo "cannot mount or set a host name in private namespaces ($err)"
        return 0
    fi
    if ! err=$(ip link add "${probe}a" type veth peer name "${probe}b" 2>&1); then
        ip netns delete "$probe" 2>/dev/null
        echo "cannot create a veth pair (ip link add: $err)"
        return 0
    fi
    ip link delete "${probe}a" 2>/dev/null
    if ! err=$(ip -n "$probe" link add mcabrp type bridge 2>&1); then
        ip netns delete "$probe" 2>/dev/null
        echo "cannot create a bridge (ip link add type bridge: $err)"
        return 0
    fi
    ip netns delete "$probe" 2>/dev/null
    return 1
}

# missing_programs: prints the programs and plugin that are missing.
missing_programs() {
    local p missing=()
    for p in munged slurmctld slurmd srun sinfo scancel; do
        command -v "$p" >/dev/null 2>&1 || [ -x "/usr/sbin/$p" ] || missing+=("$p")
    done
    [ -e /usr/lib/x86_64-linux-gnu/slurm-wlm/mpi_pmix_v4.so ] ||
        compgen -G '/usr/lib/*/slurm-wlm/mpi_pmix*.so' >/dev/null ||
        compgen -G '/usr/lib*/slurm/mpi_pmix*.so' >/dev/null || missing+=("mpi_pmix plugin")
    echo "${missing[*]}"
}

install_missing() {
    local missing
    missing=$(missing_programs)
    [ -z "$missing" ] && return 0
    say "missing: $missing; installing"
    # shellcheck source=../../contrib/opal-deps.sh
    . "$here/../../contrib/opal-deps.sh"
    # shellcheck disable=SC2154 # set by opal-deps.sh
    opal_deps_packages=$opal_slurm_packages opal_install_deps >&2 || return 1
    PATH=$PATH:/usr/sbin
    missing=$(missing_programs)
    [ -z "$missing" ] || { say "still missing after installing: $missing"; return 1; }
}

# running PID: the process exists and is not a zombie (a daemon whose
# starter has exited waits for init to reap it).
running() {
    kill -0 "$1" 2>/dev/null && [ "$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" != Z ]
}

# is_daemon NAME PID: PID still runs the daemon NAME (munged, slurmctld,
# slurmd-node<i>): not ended, and its command line is that daemon's, not
# another process's that got the pid since (pids wrap at 32768 here).
is_daemon() {
    running "$2" && [ "$(head -c 64 "/proc/$2/cmdline" 2>/dev/null | tr '\0' '\n' |
        head -n 1 | xargs basename 2>/dev/null)" = "${1%%-*}" ]
}

# The state file DIR/cluster.state records, one a line, what start made:
# "netns NAME", "link NAME" (in the machine's namespace), "pid NAME PID".
record() { echo "$*" >>"$dir/cluster.state"; }

write_conf() {
    local n
    cat >"$dir/slurm.conf" <<EOF
# Written by test/slurm/cluster.sh for the cluster under $dir.
ClusterName=opalmca
SlurmctldHost=slurmctl($ctl_addr)
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/ctl/state
SlurmctldPidFile=$dir/ctl/slurmctld.pid
SlurmctldLogFile=$dir/ctl/slurmctld.log
SlurmdSpoolDir=$dir/%n/spool
SlurmdPidFile=$dir/%n/slurmd.pid
SlurmdLogFile=$dir/%n/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups, no systemd: processes tracked by their parentage, no binding.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
# The nodes' CPU counts are what this file says, whatever the machine has.
SlurmdParameters=config_overrides
ReturnToService=2
TmpFS=/tmp
KillWait=5
MessageTimeout=20
SlurmdTimeout=120
InactiveLimit=0
MinJobAge=10
EOF
    for ((n = 0; n < nodes; n++)); do
        echo "NodeName=node$n NodeAddr=$net.$((n + 1)) NodeHostname=node$n CPUs=2 State=UNKNOWN" \
            >>"$dir/slurm.conf"
    done
    echo "PartitionName=debug Nodes=node[0-$((nodes - 1))] Default=YES MaxTime=INFINITE State=UP" \
        >>"$dir/slurm.conf"
    {
        echo "127.0.0.1 localhost"
        echo "$ctl_addr slurmctl"
        for ((n = 0; n < nodes; n++)); do
            echo "$net.$((n + 1)) node$n"
        done
    } >"$dir/hosts"
}

make_network() {
    local n ns
    ip netns add "${prefix}ctl" || return 1
    record netns "${prefix}ctl"
    ip -n "${prefix}ctl" link set lo up &&
        ip -n "${prefix}ctl" link add mcabr0 type bridge &&
        ip -n "${prefix}ctl" addr add "$ctl_addr/24" dev mcabr0 &&
        ip -n "${prefix}ctl" link set mcabr0 up || return 1
    for ((n = 0; n < nodes; n++)); do
        ns=${prefix}n$n
        ip netns add "$ns" || return 1
        record netns "$ns"
        ip -n "$ns" link set lo up || return 1
        # Made in the machine's namespace under unique names, then each
        # end moved into its namespace (where the names are local).
        ip link add "${prefix}n${n}a" type veth peer name "${prefix}n${n}b" || return 1
        record link "${prefix}n${n}a"
        ip link set "${prefix}n${n}a" netns "${prefix}ctl" &&
            ip link set "${prefix}n${n}b" netns "$ns" &&
            ip -n "${prefix}ctl" link set "${prefix}n${n}a" master mcabr0 up &&
            ip -n "$ns" link set "${prefix}n${n}b" name eth0 &&
            ip -n "$ns" addr add "$net.$((n + 1))/24" dev eth0 &&
            ip -n "$ns" link set eth0 up || return 1
    done
}

# keep_under_tmp: prints the folders right under /tmp (/tmp/X) that hold
# DIR or a path of OPAL_SLURM_KEEP, one a line.
keep_under_tmp() {
    local p real
    local IFS=:
    for p in $dir ${OPAL_SLURM_KEEP:-}; do
        real=$(realpath -m "$p" 2>/dev/null) || continue
        case "$real" in
            /tmp/?*) real=${real#/tmp/} && echo "/tmp/${real%%/*}" ;;
        esac
    done | sort -u
}

# in_host NAMESPACE HOSTNAME SHM TMP COMMAND...: execs COMMAND in the
# network namespace with its own host name, /etc/hosts and, when SHM and
# TMP are not "-", its own /dev/shm and /tmp (with the folders of
# keep_under_tmp bound into it first, so that they stay where they were).
# Every step execs, so the caller's $! is COMMAND's pid.
in_host() {
    local ns=$1 host=$2 shm=$3 tmp=$4 keep=
    shift 4
    [ "$tmp" = - ] || keep=$(keep_under_tmp)
    # nsenter rather than ip netns exec: that one mounts a /sys of the
    # namespace's own, without /sys/fs/cgroup, and slurmd will not start
    # without it (even with no cgroup plugin configured).
    exec nsenter --net="/run/netns/$ns" unshare --mount --uts --propagation private -- \
        sh -c 'set -e
               mount --bind "$1" /etc/hosts
               [ "$3" = - ] || mount --bind "$3" /dev/shm
               if [ "$4" != - ]; then
                   echo "$5" | while read -r k; do
                       [ -n "$k" ] || continue
                       mkdir -p "$4/${k#/tmp/}"
                       mount --bind "$k" "$4/${k#/tmp/}"
                   done
                   mount --rbind "$4" /tmp
               fi
               hostname "$2"
               shift 5
               exec "$@"' \
        in-host "$dir/hosts" "$host" "$shm" "$tmp" "$keep" "$@"
}

start_munge() {
    mkdir -m 700 "$dir/munge" || return 1
    dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none &&
        chmod 400 "$dir/munge/munge.key" || return 1
    # --force: DIR's parents may be writable by others (a build tree).
    munged --foreground --force --key-file="$dir/munge/munge.key" \
        --socket="$dir/munge/munge.socket" --pid-file="$dir/munge/munged.pid" \
        --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed" \
        </dev/null >>"$dir/munge/munged.out" 2>&1 &
    record pid munged $!
    local _
    for _ in $(seq 100); do
        [ -S "$dir/munge/munge.socket" ] && return 0
        kill -0 $! 2>/dev/null || break
        sleep 0.1
    done
    say "munged did not start:"
    tail -n 20 "$dir/munge/munged.log" "$dir/munge/munged.out" >&2 2>/dev/null
    return 1
}

start_daemons() {
    local n
    mkdir -p "$dir/ctl/state" || return 1
    (in_host "${prefix}ctl" slurmctl - - slurmctld -D -f "$dir/slurm.conf") \
        </dev/null >>"$dir/ctl/slurmctld.out" 2>&1 &
    record pid slurmctld $!
    for ((n = 0; n < nodes; n++)); do
        mkdir -p "$dir/node$n/spool" && mkdir -m 1777 "$dir/node$n/tmp" "$dir/node$n/shm" ||
            return 1
        (in_host "${prefix}n$n" "node$n" "$dir/node$n/shm" "$dir/node$n/tmp" \
            slurmd -D -N "node$n" -f "$dir/slurm.conf") \
            </dev/null >>"$dir/node$n/slurmd.out" 2>&1 &
        record pid "slurmd-node$n" $!
    done
}

# Both nodes idle, within a bounded wait.
wait_idle() {
    local _ states
    for _ in $(seq 120); do
        states=$(run_login sinfo -h -N -o '%N %t' 2>/dev/null | sort -u | tr '\n' ' ')
        [ "$states" = "node0 idle node1 idle " ] && return 0
        alive || return 1
        sleep 0.5
    done
    say "the nodes are not idle after 60 s (sinfo: ${states:-nothing})"
    return 1
}

# alive: every daemon start recorded is still running.
alive() {
    local what name pid ok=0
    while read -r what name pid; do
        [ "$what" = pid ] || continue
        if ! running "$pid"; then
            say "$name (pid $pid) is gone"
            ok=1
        fi
    done <"$dir/cluster.state"
    return $ok
}

run_login() {
    (
        # Run from inside another Slurm job or PMIx launcher (a CI runner
        # that is one), its variables would point srun at that job.
        local v
        for v in $(compgen -e | grep -E '^(SLURM|PMIX)_'); do
            unset "$v"
        done
        export SLURM_CONF=$dir/slurm.conf
        in_host "$(state_netns ctl)" slurmctl - - "$@"
    )
}

# state_netns SUFFIX: the recorded namespace whose name ends in SUFFIX.
state_netns() {
    awk -v s="$1" '$1 == "netns" && substr($2, length($2) - length(s) + 1) == s { print $2 }' \
        "$dir/cluster.state"
}

# stop_all: ends the recorded daemons (TERM, then KILL after 10 s), then
# whatever is left in the namespaces (job steps the daemons started),
# removes links and namespaces, then DIR.
stop_all() {
    [ -f "$dir/cluster.state" ] || { say "$dir holds no cluster"; return 1; }
    local what name pid pids=() ns
    while read -r what name pid; do
        [ "$what" = pid ] || continue
        is_daemon "$name" "$pid" && pids+=("$pid")
    done <"$dir/cluster.state"
    # Reverse order: the slurmds, then slurmctld, then munged.
    local i
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        kill -TERM "${pids[$i]}" 2>/dev/null
    done
    for _ in $(seq 100); do
        local left=()
        for pid in "${pids[@]}"; do
            running "$pid" && left+=("$pid")
        done
        [ ${#left[@]} -eq 0 ] && break
        sleep 0.1
    done
    for pid in "${pids[@]}"; do
        if running "$pid"; then
            say "pid $pid did not end on SIGTERM: SIGKILL"
            kill -KILL "$pid" 2>/dev/null
        fi
    done
    for ns in $(awk '$1 == "netns" { print $2 }' "$dir/cluster.state"); do
        read -r -a pids <<<"$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')"
        if [ ${#pids[@]} -gt 0 ]; then
            say "ending what is left in $ns: ${pids[*]}"
            kill -KILL "${pids[@]}" 2>/dev/null
        fi
    done
    for name in $(awk '$1 == "link" { print $2 }' "$dir/cluster.state"); do
        ip link delete "$name" 2>/dev/null
    done
    for ns in $(awk '$1 == "netns" { print $2 }' "$dir/cluster.state"); do
        ip netns delete "$ns" 2>/dev/null
    done
    # Reap our own children, so no zombie outlives the script.
    wait 2>/dev/null
    rm -rf "$dir"
}

if [ "${1:-}" = is-daemon ]; then
    [ $# -eq 3 ] || usage
    is_daemon "$2" "$3"
    exit
fi
[ $# -ge 2 ] || usage
cmd=$1
dir=$2
shift 2
case "$dir" in
    /*) ;;
    *) dir=$(pwd)/$dir ;;
esac
PATH=$PATH:/usr/sbin:/sbin

case "$cmd" in
    start)
        if why=$(unusable); then
            echo "cluster: cannot run here: $why"
            exit 77
        fi
        case "$dir/" in
            /dev/shm/*)
                echo "cluster: $dir lies under /dev/shm, which each node replaces"
                exit 2
                ;;
        esac
        # slurmstepd's PMIx server listens on a Unix socket
        # DIR/node<i>/spool/stepd.slurm.pmix.<job>.<step>, and a socket's
        # path holds at most 107 bytes: past it every --mpi=pmix step fails
        # to launch ("Unspecified error"; slurmd's log says why), and only
        # once the job ids grow a digit. 67 leaves room for job ids of 6
        # digits and step ids of 3.
        if [ ${#dir} -gt 67 ]; then
            echo "cluster: $dir is ${#dir} bytes long; at most 67 (slurmstepd's PMIx socket" \
                "lives under it and a Unix socket's path holds 107 bytes): use a shorter DIR"
            exit 2
        fi
        if ! install_missing; then
            echo "cluster: cannot run here: the Slurm and munge packages are missing"
            exit 77
        fi
        if [ -e "$dir" ] && [ -n "$(ls -A "$dir" 2>/dev/null)" ]; then
            say "$dir exists and is not empty"
            exit 2
        fi
        mkdir -p "$dir" && chmod 755 "$dir" || exit 1
        : >"$dir/cluster.state"
        prefix=osl$$
        start=$SECONDS
        if write_conf && make_network && start_munge && start_daemons && wait_idle; then
            say "up in $((SECONDS - start)) s: node0 $net.1, node1 $net.2, controller $ctl_addr"
            exit 0
        fi
        say "start failed; the logs:"
        for f in "$dir"/ctl/*.log "$dir"/ctl/*.out "$dir"/node*/*.log "$dir"/node*/*.out; do
            [ -s "$f" ] && { echo "== $f"; tail -n 30 "$f"; } >&2
        done
        stop_all
        exit 1
        ;;
    run)
        [ -f "$dir/cluster.state" ] || { say "$dir holds no cluster"; exit 2; }
        [ $# -ge 1 ] || usage
        run_login "$@"
        ;;
    stop)
        stop_all
        ;;
    logs)
        for f in "$dir"/munge/munged.log "$dir"/ctl/*.log "$dir"/ctl/*.out \
            "$dir"/node*/*.log "$dir"/node*/*.out; do
            [ -s "$f" ] && { echo "== $f"; cat "$f"; }
        done
        ;;
    *) usage ;;
esac
