#!/bin/sh
# /init of the rdma-vm initramfs, run by busybox as the guest's PID 1.
#
# Inserts the virtio and 9p modules listed in /modules/order, mounts the
# host's root filesystem (9p tag "root") read-only as the new root, the
# writable output folder (tag "out") at the host path rdmavm.out= names, a
# fresh /tmp (with the host's /tmp trees rdmavm.keep= names bound into
# it), /run, /dev/shm, proc, sys and devtmpfs, then runs the script
# rdmavm.script= names with bash in that root, as PID 1 (switch_root, so
# that the kernel's own helpers, such as its module loader, see that root
# too). That script powers the guest off; if it dies instead, the kernel
# panics and reboots (panic=-1), which ends qemu (-no-reboot) all the same.
export PATH=/bin

fail() {
    echo "rdma-vm init: $*" >/dev/console
    poweroff -f
    sleep 60
}

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev

while read -r module; do
    insmod "/modules/$module" || fail "insmod $module failed"
done </modules/order

script=
out=
keep=
for arg in $(cat /proc/cmdline); do
    case "$arg" in
        rdmavm.script=*) script=${arg#*=} ;;
        rdmavm.out=*) out=${arg#*=} ;;
        rdmavm.keep=*) keep=${arg#*=} ;;
    esac
done
[ -n "$script" ] && [ -n "$out" ] || fail "rdmavm.script= or rdmavm.out= missing from the kernel command line"

# msize: the default (8 KiB) makes every read of a binary or library from
# the host a string of tiny requests. The root may be cached (the host's
# files do not change under a run); the output folder may not, since the
# host reads it while the guest writes.
r=/newroot
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose root $r ||
    fail "cannot mount the host's root filesystem (9p tag root)"
mount -t proc proc $r/proc
mount -t sysfs sys $r/sys
mount -t devtmpfs dev $r/dev
mkdir -p $r/dev/shm $r/dev/pts
# What udev would make: /dev/stdout and friends (devtmpfs has none).
ln -sf /proc/self/fd $r/dev/fd
ln -sf /proc/self/fd/0 $r/dev/stdin
ln -sf /proc/self/fd/1 $r/dev/stdout
ln -sf /proc/self/fd/2 $r/dev/stderr
mount -t tmpfs -o mode=1777 shm $r/dev/shm
mount -t devpts devpts $r/dev/pts
# The host's /tmp/<top> trees run.sh names (rdmavm.keep=, comma list)
# stay visible through the guest's own /tmp: a view of the host's /tmp
# is kept aside before the new one hides it.
if [ -n "$keep" ]; then
    mkdir -p /hosttmp
    mount -o bind $r/tmp /hosttmp || fail "cannot keep a view of the host's /tmp"
fi
mount -t tmpfs -o mode=1777 tmp $r/tmp
for k in $(echo "$keep" | tr ',' ' '); do
    sub=${k#/tmp/}
    case "$k" in /tmp/*) ;; *) fail "rdmavm.keep=: $k is not under /tmp" ;; esac
    mkdir -p "$r/tmp/$sub" && mount -o bind "/hosttmp/$sub" "$r/tmp/$sub" ||
        fail "cannot carry $k over into the guest's /tmp"
done
mount -t tmpfs -o mode=0755 run $r/run
# Last, so that an output folder under /tmp is not hidden by the new /tmp.
mkdir -p "$r$out" 2>/dev/null
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out "$r$out" ||
    fail "cannot mount the output folder $out (9p tag out)"

exec switch_root $r /bin/bash "$script" "$out" </dev/console >/dev/console 2>&1
