# Sourced by contrib/check.sh and contrib/quickstart.sh: installs the Debian
# packages opal-mca builds and tests with, when they are missing.

# A Slurm cluster on this machine (test/slurm/cluster.sh, docs/slurm.md):
# the daemons, the client commands and the PMIx plugin (mpi_pmix_v4.so).
opal_slurm_packages="munge slurmctld slurmd slurm-client slurm-wlm-basic-plugins"

# gdb: the threads' stacks of a list test about to time out (the
# tl_on_hang hooks of test-list.sh), so that CI's log says where it waited.
opal_deps_packages="gdb build-essential autoconf automake libtool pkg-config libltdl-dev
 check libsubunit-dev libhwloc-dev hwloc libfabric-dev libfabric-bin libibverbs-dev
 librdmacm-dev valgrind clang libpmix-dev openmpi-bin libopenmpi-dev
 libfuzzer-14-dev $opal_slurm_packages"

opal_install_deps() {
    local missing=() pkg
    for pkg in $opal_deps_packages; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$pkg")
        fi
    done
    if [ ${#missing[@]} -eq 0 ]; then
        echo "deps: every package is installed"
        return 0
    fi
    echo "deps: installing ${missing[*]}"
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
            sudo="sudo"
        else
            echo "deps: not root and no sudo: install these first: ${missing[*]}" >&2
            return 1
        fi
    fi
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -q >/dev/null || { echo "deps: apt-get update failed" >&2; return 1; }
    $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null \
        || { echo "deps: apt-get install ${missing[*]} failed" >&2; return 1; }
}
