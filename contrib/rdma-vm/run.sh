#!/usr/bin/env bash
# Runs a command in a qemu guest that has a soft-RoCE device (rxe0):
#
#   contrib/rdma-vm/run.sh [options] -- <command> [arguments]
#   contrib/rdma-vm/run.sh [options] --prepare
#
# The guest boots Debian's own kernel under software emulation (TCG) with
# the host's root filesystem, read-only over 9p, as its root: it runs the
# very binaries of the host's build tree. It loads rdma_rxe, puts rxe0 on
# its virtio NIC (10.99.0.2/24, no way out of the guest) and runs the
# command in the current directory, as the same user. The command's output
# is shown as it comes and kept in OUT/output.log, the guest's console in
# OUT/console.log. The guest sees the host's files read-only (but for OUT)
# and has its own empty /tmp, /dev/shm and /run.
#
# Options:
#   --build-dir DIR   the opal-mca build tree, given to the command as
#                     $RDMAVM_BUILD_DIR (default: _build in the source tree,
#                     else the current directory)
#   --out DIR         where output.log, console.log and status go (default:
#                     BUILD-DIR/rdma-vm); the guest can write there
#   --timeout SEC     the command's time limit inside the guest (default
#                     900); the whole VM gets 240 s more to boot and stop
#   --cpus N          guest CPUs (default 2)    --memory MB  (default 2048)
#   --cache DIR       kernel and initramfs cache (default: $OPAL_RDMA_VM_CACHE,
#                     else ~/.cache/opal-mca/rdma-vm)
#   --kernel PKG      the kernel package (default: the one linux-image-amd64
#                     depends on, or the newest one already in the cache)
#   --no-deps         do not install missing Debian packages
#   --console         also show the guest's console (kernel messages)
#   --prepare         only install, download and build the initramfs
#
# Exit status: the command's own; 124 if it ran out of time; 125 if the
# guest could not be set up or did not report; 77 if this machine cannot
# run the guest at all (packages missing and not installable).
#
# The caller's PATH, LD_LIBRARY_PATH, OPAL_* and CK_* variables are passed
# to the command.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

build_dir=
out=
timeout_s=900
cpus=2
memory=2048
cache=${OPAL_RDMA_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/opal-mca/rdma-vm}
kernel_pkg=
deps=yes
console=no
prepare_only=no
# Time the guest gets on top of the command's limit to boot and power off;
# under TCG on two loaded cores a boot has been seen to take 20 s.
boot_allowance=240
# Software emulation only: /dev/kvm exists on these machines, but a guest
# under KVM hangs before its first console line (seen here with -cpu qemu64;
# -cpu host aborts qemu on an MSR it cannot set).

usage() { sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'; }
die() {
    echo "rdma-vm: $2" >&2
    exit "$1"
}

while [ $# -gt 0 ]; do
    case "$1" in
        --build-dir) build_dir=${2:?--build-dir needs a directory}; shift ;;
        --out) out=${2:?--out needs a directory}; shift ;;
        --timeout) timeout_s=${2:?--timeout needs seconds}; shift ;;
        --cpus) cpus=${2:?--cpus needs a number}; shift ;;
        --memory) memory=${2:?--memory needs MiB}; shift ;;
        --cache) cache=${2:?--cache needs a directory}; shift ;;
        --kernel) kernel_pkg=${2:?--kernel needs a package name}; shift ;;
        --no-deps) deps=no ;;
        --console) console=yes ;;
        --prepare) prepare_only=yes ;;
        -h | --help) usage; exit 0 ;;
        --) shift; break ;;
        *) die 2 "unknown option '$1' (try --help)" ;;
    esac
    shift
done
if [ $prepare_only = no ] && [ $# -eq 0 ]; then
    die 2 "no command given: run.sh [options] -- <command> (try --help)"
fi
for n in "$timeout_s" "$cpus" "$memory"; do
    case "$n" in '' | *[!0-9]* | 0) die 2 "'$n' is not a positive number" ;; esac
done

# ---------------------------------------------------------------- packages

rdma_vm_packages="qemu-system-x86 busybox-static kmod rdma-core ibverbs-utils
 ibverbs-providers iproute2 libfabric-bin coreutils perftest"

install_packages() {
    # shellcheck source=../opal-deps.sh
    . "$top/contrib/opal-deps.sh"
    if [ $deps = yes ]; then
        opal_deps_packages=$rdma_vm_packages opal_install_deps >&2 ||
            die 77 "cannot install the packages the guest needs"
    fi
    local tool
    for tool in qemu-system-x86_64 /bin/busybox depmod modprobe ibv_devices rdma timeout setpriv flock; do
        command -v "$tool" >/dev/null 2>&1 ||
            die 77 "$tool is missing (packages: $rdma_vm_packages)"
    done
}

# ------------------------------------------------------------------ kernel

apt_download() {
    local sandbox=()
    # apt's download sandbox user cannot write into a root-only folder.
    [ "$(id -u)" -eq 0 ] && sandbox=(-o APT::Sandbox::User=root)
    apt-get download -q "${sandbox[@]}" "$1"
}

# The package linux-image-amd64 depends on: the current kernel of this
# Debian release. Empty when apt does not know (no package lists).
current_kernel_package() {
    apt-cache depends linux-image-amd64 2>/dev/null |
        awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }'
}

# Downloads the kernel package $1 and extracts what the guest needs into
# $cache/$1: the kernel image and the modules of the network, file systems,
# virtio and RDMA (not the 400 MB of everything), with modules.dep built
# for them. Not installed: the host's /boot and /lib/modules stay as they are.
fetch_kernel() {
    local pkg=$1 dest=$cache/$1 tmp
    tmp=$(mktemp -d "$cache/fetch.XXXXXX") || return 1
    (
        cd "$tmp" || exit 1
        if ! apt_download "$pkg" >download.log 2>&1; then
            echo "rdma-vm: apt-get download $pkg failed; updating the package lists" >&2
            apt-get update -q >/dev/null 2>&1
            apt_download "$pkg" >download.log 2>&1 || { cat download.log >&2; exit 1; }
        fi
        mkdir root
        dpkg-deb --fsys-tarfile ./*.deb |
            tar -x -C root --wildcards --no-wildcards-match-slash \
                --exclude='./lib/modules/*/kernel/drivers/net/wireless' \
                --exclude='./lib/modules/*/kernel/drivers/net/ethernet' \
                './boot/vmlinuz-*' './lib/modules/*/modules.*' \
                './lib/modules/*/kernel/net' './lib/modules/*/kernel/fs' \
                './lib/modules/*/kernel/lib' './lib/modules/*/kernel/crypto' \
                './lib/modules/*/kernel/arch' './lib/modules/*/kernel/block' \
                './lib/modules/*/kernel/drivers/infiniband' \
                './lib/modules/*/kernel/drivers/net' './lib/modules/*/kernel/drivers/virtio' \
                './lib/modules/*/kernel/drivers/char' './lib/modules/*/kernel/drivers/block' ||
            exit 1
        kver=$(ls root/lib/modules)
        [ -n "$kver" ] && [ -f "root/boot/vmlinuz-$kver" ] || exit 1
        depmod -b "$tmp/root" "$kver" || exit 1
        rm -rf "$dest" && mv root "$dest"
    )
    local rc=$?
    rm -rf "$tmp"
    return $rc
}

# Sets kroot (extracted kernel package) and kver.
find_kernel() {
    local pkg=$kernel_pkg
    if [ -z "$pkg" ]; then
        pkg=$(current_kernel_package)
        if [ -z "$pkg" ] && [ $deps = yes ]; then
            apt-get update -q >/dev/null 2>&1
            pkg=$(current_kernel_package)
        fi
    fi
    if [ -z "$pkg" ]; then
        # apt cannot say (offline, no lists): any kernel fetched before will do.
        pkg=$(find "$cache" -mindepth 1 -maxdepth 1 -name 'linux-image-*' -printf '%f\n' 2>/dev/null |
            sort -V | tail -n 1)
        [ -n "$pkg" ] || die 77 "cannot tell which kernel package to use (apt-cache depends linux-image-amd64 names none)"
    fi
    if [ ! -d "$cache/$pkg/lib/modules" ]; then
        echo "rdma-vm: fetching $pkg into $cache" >&2
        fetch_kernel "$pkg" || die 77 "cannot download or extract $pkg"
    fi
    kroot=$cache/$pkg
    kver=$(ls "$kroot/lib/modules")
}

# ---------------------------------------------------------------- initramfs

# Builds $kroot/initrd-<hash>.gz (busybox, init.sh and the virtio + 9p
# modules in dependency order) unless it is there; sets initrd.
build_initramfs() {
    local hash
    hash=$(cat "$here/init.sh" /bin/busybox | md5sum | cut -c1-12)
    initrd=$kroot/initrd-$hash.gz
    [ -s "$initrd" ] && return 0
    local tmp
    tmp=$(mktemp -d "$cache/initrd.XXXXXX") || return 1
    (
        set -e
        cd "$tmp"
        mkdir -p bin dev proc sys newroot modules
        cp /bin/busybox bin/
        for app in sh mount insmod switch_root poweroff mkdir cat sleep ln; do
            ln -s busybox "bin/$app"
        done
        for m in virtio_pci 9pnet_virtio 9p; do
            modprobe -d "$kroot" -S "$kver" --show-depends "$m"
        done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' >module-paths
        [ -s module-paths ]
        while read -r path; do
            cp "$path" modules/
            basename "$path" >>modules/order
        done <module-paths
        rm module-paths
        cp "$here/init.sh" init
        chmod 755 init
        find . | bin/busybox cpio -o -H newc 2>/dev/null | gzip -1 >"$initrd.tmp"
        mv "$initrd.tmp" "$initrd"
        # Older ones (another init.sh); a guest still booting keeps its copy
        # open.
        find "$kroot" -maxdepth 1 -name 'initrd-*.gz' ! -name "${initrd##*/}" -delete
    )
    local rc=$?
    rm -rf "$tmp"
    return $rc
}

prepare() {
    install_packages
    mkdir -p "$cache" || die 77 "cannot create the cache directory $cache"
    exec 8>"$cache/.lock"
    flock 8
    find_kernel
    build_initramfs || die 125 "cannot build the initramfs in $kroot"
    rm -f "$kroot"/initrd-*.gz.tmp
    flock -u 8
    exec 8>&-
}

start=$SECONDS
prepare
echo "rdma-vm: kernel $kver, initramfs $initrd ($((SECONDS - start)) s to prepare)" >&2
[ $prepare_only = yes ] && exit 0

# ------------------------------------------------------------------ the run

if [ -z "$build_dir" ]; then
    build_dir=$PWD
    [ -d "$top/_build" ] && build_dir=$top/_build
fi
build_dir=$(cd "$build_dir" 2>/dev/null && pwd) || die 2 "--build-dir: no such directory"
[ -n "$out" ] || out=$build_dir/rdma-vm
mkdir -p "$out" && out=$(cd "$out" && pwd) || die 125 "cannot create $out"
# The paths travel on the kernel command line and through 9p as they are.
for p in "$out" "$here"; do
    case "$p" in *[[:space:]]*) die 2 "'$p' contains white space, which the guest cannot be told" ;; esac
done
# The guest has its own empty /tmp, /run and /dev/shm: the host's files
# there are not visible in it (the output folder is mounted on its own).
# A tree under /tmp (a clone checked there) is carried over whole: the
# guest binds the host's /tmp/<top> over its own /tmp/<top>, read-only.
keep=
for p in "$PWD" "$build_dir" "$kroot" "$here"; do
    case "$p/" in
        /tmp/*/*)
            top=${p#/tmp/}
            top=/tmp/${top%%/*}
            case ",$keep," in *",$top,"*) ;; *) keep=${keep:+$keep,}$top ;; esac
            ;;
        /run/* | /dev/shm/*)
            die 2 "$p is under /run or /dev/shm, which the guest does not share (the command starts in the current directory; the kernel's modules are read from the cache)"
            ;;
    esac
done
exec 9>"$out/.lock"
flock -n 9 || die 125 "another run.sh is using $out"
rm -f "$out/status" "$out/status.tmp" "$out/output.log" "$out/console.log" "$out/boot-seconds"

{
    printf 'RDMAVM_MODROOT=%q\nRDMAVM_TIMEOUT=%q\n' "$kroot" "$timeout_s"
} >"$out/guest.env"
{
    echo "# written by run.sh: the command to run in the guest"
    while IFS= read -r name; do
        printf 'export %s=%q\n' "$name" "${!name}"
    done < <(compgen -e | grep -E '^(OPAL_|CK_|PATH$|LD_LIBRARY_PATH$)')
    printf 'export RDMAVM_BUILD_DIR=%q RDMAVM_OUT=%q\n' "$build_dir" "$out"
    printf 'cd %q || exit 125\n' "$PWD"
    printf 'exec'
    printf ' %q' "$@"
    printf '\n'
} >"$out/command.sh"
: >"$out/output.log"

qemu_pid=
follow_pid=
cleanup() {
    if [ -n "$qemu_pid" ] && kill -0 "$qemu_pid" 2>/dev/null; then
        # timeout(1) runs qemu in its own process group: end both.
        kill -TERM -- "-$qemu_pid" 2>/dev/null || kill -TERM "$qemu_pid" 2>/dev/null
        for _ in $(seq 50); do
            kill -0 "$qemu_pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL -- "-$qemu_pid" 2>/dev/null
        wait "$qemu_pid" 2>/dev/null
    fi
    if [ -n "$follow_pid" ]; then
        kill "$follow_pid" 2>/dev/null
        wait "$follow_pid" 2>/dev/null
    fi
    qemu_pid=
    follow_pid=
}
interrupted() {
    echo "rdma-vm: interrupted; stopping the guest" >&2
    cleanup
    exit 130
}
trap cleanup EXIT
trap interrupted INT TERM HUP

qemu_limit=$((timeout_s + boot_allowance))
boot=$SECONDS
# setpriv: if this script is killed outright (SIGKILL, no trap runs),
# timeout gets SIGTERM and passes it on to qemu.
setpriv --pdeathsig TERM timeout -k 10 "$qemu_limit" qemu-system-x86_64 \
    -nodefaults -no-user-config -accel tcg,thread=multi -cpu max -m "$memory" -smp "$cpus" \
    -display none -monitor none -serial "file:$out/console.log" -no-reboot \
    -kernel "$kroot/boot/vmlinuz-$kver" -initrd "$initrd" \
    -append "console=ttyS0 quiet panic=-1 rdmavm.script=$here/guest.sh rdmavm.out=$out${keep:+ rdmavm.keep=$keep}" \
    -virtfs local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap \
    -virtfs "local,path=$out,mount_tag=out,security_model=none" \
    -netdev user,id=n0,restrict=on,ipv6=off -device virtio-net-pci,netdev=n0 \
    </dev/null >"$out/qemu.log" 2>&1 &
qemu_pid=$!

if [ $console = yes ]; then
    tail --pid=$$ -n +1 -F "$out/console.log" "$out/output.log" 2>/dev/null &
else
    tail --pid=$$ -n +1 -f "$out/output.log" &
fi
follow_pid=$!

wait "$qemu_pid"
qemu_status=$?
qemu_pid=
sleep 0.3 # let tail show the last lines
cleanup
elapsed=$((SECONDS - boot))

if [ -s "$out/status" ]; then
    status=$(cat "$out/status")
    booted=$(cat "$out/boot-seconds" 2>/dev/null)
    echo "rdma-vm: the command exited with status $status (the guest ran $elapsed s, of which ${booted:-?} s to boot and set up rxe0)" >&2
    exit "$status"
fi
if [ "$qemu_status" -eq 124 ] || [ "$qemu_status" -eq 137 ]; then
    echo "rdma-vm: the guest did not finish within $qemu_limit s; last console lines:" >&2
    tail -n 30 "$out/console.log" 2>/dev/null | sed 's/^/    | /' >&2
    exit 124
fi
echo "rdma-vm: the guest stopped (qemu status $qemu_status) without reporting a status; last lines of $out/console.log and qemu.log:" >&2
tail -n 30 "$out/console.log" "$out/qemu.log" 2>/dev/null | sed 's/^/    | /' >&2
# Never up (no boot-seconds: guest.sh did not get rxe0 going): this
# machine cannot boot the guest, which callers report as a skip.
if [ ! -s "$out/boot-seconds" ]; then
    echo "rdma-vm: the guest never came up on this machine" >&2
    exit 77
fi
exit 125
