# Sourced (bash) by netns-run.sh and btl_netns_test.sh: two "hosts" on one
# machine, as two network namespaces joined by a veth pair.
#
#   host 0: namespace ${prefix}h0, interface mcanet0, 10.77.0.1/24
#   host 1: namespace ${prefix}h1, interface mcanet0, 10.77.0.2/24
#
# Each host also gets a folder that its ranks see as /dev/shm (netns-rank.sh
# mounts it there), so that ranks on different hosts share no shared
# memory while ranks on the same host do. The launcher's session directory
# (under $TMPDIR) stays common to all: mcarun's Unix socket lives there.
#
# netns_setup creates all that and installs traps that remove it on every
# exit path; netns_cleanup removes it (processes left in the namespaces
# are killed first, since a namespace outlives its name while a process
# holds it).

netns_prefix=
netns_shm=
netns_hosts=2
# Names of this run's namespaces carry the pid of the shell that made them,
# so that runs in parallel do not collide and stale ones can be recognised.
netns_name_re='^omca([0-9]+)h[0-9]$'

netns_say() { echo "netns: $*" >&2; }

# netns_unusable: prints why this machine cannot run the namespaces (and
# returns 1), or returns 0 silently.
netns_unusable() {
    local tool
    for tool in ip unshare mount timeout; do
        if ! command -v "$tool" >/dev/null 2>&1; then
            echo "$tool not found (iproute2 / util-linux)"
            return 0
        fi
    done
    if [ "$(id -u)" -ne 0 ]; then
        echo "not root (network namespaces and mounts need CAP_NET_ADMIN and CAP_SYS_ADMIN)"
        return 0
    fi
    local probe=omca$$probe err
    if ! err=$(ip netns add "$probe" 2>&1); then
        echo "cannot create a network namespace (ip netns add: $err)"
        return 0
    fi
    if ! err=$(ip netns exec "$probe" unshare --mount -- mount -t tmpfs probe /mnt 2>&1); then
        ip netns delete "$probe" 2>/dev/null
        echo "cannot mount in a private mount namespace ($err)"
        return 0
    fi
    if ! err=$(ip link add "${probe}a" type veth peer name "${probe}b" 2>&1); then
        ip netns delete "$probe" 2>/dev/null
        echo "cannot create a veth pair (ip link add: $err)"
        return 0
    fi
    ip link delete "${probe}a" 2>/dev/null
    ip netns delete "$probe" 2>/dev/null
    return 1
}

# Removes namespaces left by runs whose shell is gone (killed with SIGKILL,
# where no trap runs).
netns_remove_stale() {
    local name pid
    for name in $(ip netns list 2>/dev/null | awk '{ print $1 }'); do
        [[ $name =~ $netns_name_re ]] || continue
        pid=${BASH_REMATCH[1]}
        # Alive, and not a zombie nobody has reaped yet.
        kill -0 "$pid" 2>/dev/null && [ "$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null)" != Z ] &&
            continue
        netns_say "removing $name, left by process $pid"
        netns_kill_inside "$name"
        ip netns delete "$name" 2>/dev/null
        rm -rf "/dev/shm/omca$pid" 2>/dev/null
    done
}

# netns_kill_inside NAME: ends every process still in namespace NAME.
netns_kill_inside() {
    local pids
    pids=$(ip netns pids "$1" 2>/dev/null)
    [ -n "$pids" ] || return 0
    # shellcheck disable=SC2086 # a list of pids
    kill -TERM $pids 2>/dev/null
    for _ in $(seq 30); do
        pids=$(ip netns pids "$1" 2>/dev/null)
        [ -n "$pids" ] || return 0
        sleep 0.1
    done
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null
}

netns_cleanup() {
    [ -n "$netns_prefix" ] || return 0
    local h
    for ((h = 0; h < netns_hosts; h++)); do
        netns_kill_inside "${netns_prefix}h$h"
    done
    # Deleting the veth is synchronous; a namespace's own deletion is not
    # (the kernel tears it down later), so the link goes first.
    ip -n "${netns_prefix}h0" link delete mcanet0 2>/dev/null
    ip link delete "${netns_prefix}a" 2>/dev/null
    for ((h = 0; h < netns_hosts; h++)); do
        ip netns delete "${netns_prefix}h$h" 2>/dev/null
    done
    [ -n "$netns_shm" ] && rm -rf "$netns_shm"
    netns_prefix=
    netns_shm=
}

# The command a script runs in the background and waits for (bash runs a
# trap only once the foreground command has ended, so long ones are not
# run in the foreground); the signal handler ends it.
netns_child=

netns_on_signal() {
    netns_say "interrupted (signal $1): removing the namespaces"
    if [ -n "$netns_child" ]; then
        kill -TERM "$netns_child" 2>/dev/null
        for _ in $(seq 30); do
            kill -0 "$netns_child" 2>/dev/null || break
            sleep 0.1
        done
    fi
    netns_cleanup
    trap - "$1"
    kill -s "$1" $$
}

# netns_setup: makes the two hosts and exports what netns-rank.sh reads:
# OPAL_TEST_NETNS_PREFIX, OPAL_TEST_NETNS_HOSTS, OPAL_TEST_NETNS_SHM.
# Returns non-zero (after cleaning up what it made) if anything failed.
netns_setup() {
    netns_remove_stale
    netns_prefix=omca$$
    trap netns_cleanup EXIT
    local sig
    for sig in INT TERM HUP; do
        # shellcheck disable=SC2064 # the signal's name, now
        trap "netns_on_signal $sig" "$sig"
    done
    # Per-host /dev/shm folders, on the host's tmpfs when there is one.
    local base=/dev/shm
    [ -d "$base" ] && [ -w "$base" ] || base=${TMPDIR:-/tmp}
    netns_shm=$base/$netns_prefix
    local h addr
    mkdir -m 700 "$netns_shm" || return 1
    for ((h = 0; h < netns_hosts; h++)); do
        mkdir -m 1777 "$netns_shm/h$h" || return 1
        ip netns add "${netns_prefix}h$h" || { netns_cleanup; return 1; }
        ip -n "${netns_prefix}h$h" link set lo up || { netns_cleanup; return 1; }
    done
    # Made in the root namespace under unique names, then moved and renamed
    # to the same name on both hosts (so a test can name "the" interface).
    ip link add "${netns_prefix}a" type veth peer name "${netns_prefix}b" &&
        ip link set "${netns_prefix}a" netns "${netns_prefix}h0" &&
        ip link set "${netns_prefix}b" netns "${netns_prefix}h1" ||
        { netns_cleanup; return 1; }
    for ((h = 0; h < netns_hosts; h++)); do
        local end=a
        [ $h -eq 1 ] && end=b
        addr=10.77.0.$((h + 1))/24
        # And an IPv6 address (unique local, no duplicate detection: usable
        # at once) for btl/tcp's IPv6 cases.
        ip -n "${netns_prefix}h$h" link set "${netns_prefix}$end" name mcanet0 &&
            ip -n "${netns_prefix}h$h" addr add "$addr" dev mcanet0 &&
            ip -n "${netns_prefix}h$h" -6 addr add "fd77::$((h + 1))/64" dev mcanet0 nodad &&
            ip -n "${netns_prefix}h$h" link set mcanet0 up ||
            { netns_cleanup; return 1; }
    done
    export OPAL_TEST_NETNS_PREFIX=$netns_prefix
    export OPAL_TEST_NETNS_HOSTS=$netns_hosts
    export OPAL_TEST_NETNS_SHM=$netns_shm
}

# netns_exec HOST COMMAND...: runs a command on host 0 or 1 (its network
# namespace only; not its /dev/shm).
netns_exec() {
    local h=$1
    shift
    ip netns exec "${netns_prefix}h$h" "$@"
}

# netns_leftovers: prints what this run left behind (nothing after
# netns_cleanup).
netns_leftovers() {
    local prefix=$1
    ip netns list 2>/dev/null | awk -v p="$prefix" 'index($1, p "h") == 1 { print "namespace " $1 }'
    ip -o link show 2>/dev/null | awk -F': ' -v p="$prefix" 'index($2, p) == 1 { print "link " $2 }'
    [ -e "/dev/shm/$prefix" ] && echo "folder /dev/shm/$prefix"
    [ -e "${TMPDIR:-/tmp}/$prefix" ] && echo "folder ${TMPDIR:-/tmp}/$prefix"
    grep -F "$prefix" /proc/self/mountinfo | awk '{ print "mount " $5 }'
    return 0
}
