#!/bin/bash
# Runs inside the rdma-vm guest as its PID 1, started by the initramfs
# (init.sh) in the host's root filesystem: loads rdma_rxe, puts a soft-RoCE device rxe0 on
# the virtio NIC, then runs OUT/command.sh with a time limit, its output in
# OUT/output.log and its exit status in OUT/status for run.sh on the host.
#
#   guest.sh OUT      (OUT/guest.env holds RDMAVM_MODROOT, RDMAVM_TIMEOUT)
#
# It always ends by powering the guest off, which ends qemu.
set -u
out=$1
status=125

say() { echo "rdma-vm guest: $*"; }
# A set-up failure: said on the console and in the output run.sh shows.
fail() {
    say "$*"
    echo "rdma-vm guest: $*" >>"$out/output.log"
    exit
}

finish() {
    echo "$status" >"$out/status.tmp" && mv -f "$out/status.tmp" "$out/status"
    sync
    /bin/busybox poweroff -f
    echo o >/proc/sysrq-trigger
}
trap finish EXIT

# shellcheck source=/dev/null
. "$out/guest.env" || fail "cannot read $out/guest.env"
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
hostname rdma-vm

# The kernel's modules are in run.sh's cache, not in the host's
# /lib/modules: modprobe is pointed there, and so is the kernel's own
# module loader (rdma_rxe asks it for the crc32 algorithm, a socket family
# for its protocol).
modprobe_wrapper=/run/rdma-vm-modprobe
printf '#!/bin/sh\nexec %s -d %s "$@"\n' "$(command -v modprobe)" "$RDMAVM_MODROOT" \
    >"$modprobe_wrapper" && chmod 755 "$modprobe_wrapper" &&
    echo "$modprobe_wrapper" >/proc/sys/kernel/modprobe
for module in virtio_net rdma_rxe ib_uverbs rdma_ucm; do
    "$modprobe_wrapper" "$module" || fail "modprobe $module failed"
done

for _ in $(seq 100); do
    [ -e /sys/class/net/eth0 ] && break
    sleep 0.1
done
# IPv6 off on eth0: its link-local address would appear a second later and
# renumber the GID table under the tests.
sysctl -q -w net.ipv6.conf.eth0.disable_ipv6=1 >/dev/null 2>&1
ip link set lo up && ip link set eth0 up && ip addr add 10.99.0.2/24 dev eth0 ||
    fail "cannot bring up eth0"
rdma link add rxe0 type rxe netdev eth0 || fail "rdma link add rxe0 failed"
for _ in $(seq 100); do
    grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null && break
    sleep 0.1
done
grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state ||
    fail "rxe0 port 1 did not become ACTIVE"
read -r up _ </proc/uptime
echo "${up%.*}" >"$out/boot-seconds"
say "rxe0 up on eth0 (10.99.0.2) ${up%.*} s after boot; running the command"

# The command gets the host's environment variables run.sh passed on
# (command.sh sets them), a writable HOME and TMPDIR, and no terminal.
export HOME=/tmp TMPDIR=/tmp
started=$SECONDS
timeout -k 10 "$RDMAVM_TIMEOUT" /bin/bash "$out/command.sh" >>"$out/output.log" 2>&1 </dev/null
status=$?
# 137: timeout(1) had to kill the command after its TERM went unheard.
if [ "$status" -eq 124 ] || { [ "$status" -eq 137 ] && [ $((SECONDS - started)) -ge "$RDMAVM_TIMEOUT" ]; }; then
    echo "rdma-vm: the command did not finish within ${RDMAVM_TIMEOUT} s" >>"$out/output.log"
    status=124
fi
say "the command exited with status $status"
