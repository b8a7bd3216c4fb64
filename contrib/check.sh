#!/usr/bin/env bash
# Installs what is missing, builds opal-mca and runs every test:
#   1. the default build (gcc -O2): make, make check
#   2. the tests again under valgrind (no errors, no leaks), but for the
#      slow ones and the variants (SLOW_TESTS, VARIANT_TESTS in Makefile.am)
#   3. a debug build with AddressSanitizer + UndefinedBehaviorSanitizer:
#      every test but the slow ones
#   4. the threaded tests under ThreadSanitizer
#   5. a clang build with --enable-picky (warnings are errors) and the
#      timeline marks (--enable-timeline), its tests but for the slow ones
#      and the variants, and a few seconds of libFuzzer for each target of
#      test/fuzz
#   6. make distcheck, the tarball's build running DISTCHECK_TESTS
#      (make distcheck-short)
#   7. the verbs tests on soft-RoCE in a qemu guest (make check-rdma-vm,
#      docs/rdma-vm.md): two to five minutes, plus one download of a
#      kernel package; skipped, saying so, where the guest cannot run
#      (packages missing, no kernel package, the guest never comes up).
#      --no-rdma-vm leaves it out.
# Exits non-zero if anything failed and ends with the totals of checks.
# Build trees are _build, _build-asan, _build-tsan, _build-clang; step logs
# are in _build/check-logs/.
#
# Options: --quick (step 1 only), --no-deps (do not install packages),
# --no-rdma-vm (leave step 7 out), --rdma-vm (the default), --rdma-vm-only
# (steps 1 and 7).
set -u
cd "$(dirname "$0")/.."
top=$(pwd)
jobs=$(nproc 2>/dev/null || echo 2)
quick=no
deps=yes
rdma_vm=yes
for arg in "$@"; do
    case "$arg" in
        --quick) quick=yes ;;
        --no-deps) deps=no ;;
        --rdma-vm) rdma_vm=yes ;;
        --no-rdma-vm) rdma_vm=no ;;
        --rdma-vm-only) quick=yes rdma_vm=only ;;
        -h | --help)
            sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        *)
            echo "check.sh: unknown option '$arg' (try --help)" >&2
            exit 2
            ;;
    esac
done

. "$top/contrib/opal-deps.sh"
if [ $deps = yes ]; then
    opal_install_deps || exit 1
fi

logdir="$top/_build/check-logs"
mkdir -p "$logdir"
failed_steps=()
total_checks=0
total_failed=0

# step NAME COMMAND...: runs one step with its output in $logdir/NAME.log.
step() {
    local name=$1
    shift
    local start=$SECONDS
    printf '%-28s' "$name"
    if "$@" >"$logdir/$name.log" 2>&1; then
        echo "ok ($((SECONDS - start)) s)"
        return 0
    fi
    echo "FAILED ($((SECONDS - start)) s): last lines of $logdir/$name.log:"
    tail -n 40 "$logdir/$name.log" | sed 's/^/    | /'
    failed_steps+=("$name")
    return 1
}

# count_checks BUILDDIR LABEL: adds up the "Checks: N, Failures: F, Errors: E"
# lines Check wrote into the test logs of one run, and the "netns: N passed,
# N failed, N skipped" and "slurm: ..." lines of the shell tests.
count_checks() {
    local dir=$1 label=$2 n f e
    read -r n f e < <(find "$dir/test" -name '*.log' -print0 2>/dev/null \
        | xargs -0 -r grep -h -o 'Checks: [0-9]*, Failures: [0-9]*, Errors: [0-9]*' \
        | awk -F'[:,] *' '{n+=$2; f+=$4; e+=$6} END {print n+0, f+0, e+0}')
    local sn sf
    read -r sn sf < <(count_passed_failed "^(netns|slurm): " \
        $(find "$dir/test" -name '*.log' 2>/dev/null))
    n=$((n + sn))
    f=$((f + sf))
    echo "    $label: $n checks, $f failures, $e errors"
    total_checks=$((total_checks + n))
    total_failed=$((total_failed + f + e))
}

# count_passed_failed PATTERN FILE...: sums the "N passed, N failed" of the
# lines matching PATTERN; prints "checks failures".
count_passed_failed() {
    local pattern=$1
    shift
    [ $# -gt 0 ] || { echo "0 0"; return; }
    grep -h -E "${pattern}[0-9]+ passed, [0-9]+ failed" "$@" 2>/dev/null \
        | sed -E 's/.* ([0-9]+) passed, ([0-9]+) failed.*/\1 \2/' \
        | awk '{p+=$1; f+=$2} END {print p+f, f+0}'
}

# run_tests NAME BUILDDIR LABEL MAKE-ARGS...: one test run, counted even when
# it fails (the failing suites are in the counts).
run_tests() {
    local name=$1 dir=$2 label=$3
    shift 3
    step "$name" make -C "$dir" "$@"
    local rc=$?
    [ $rc -ne 0 ] && show_failures "$dir" "$logdir/$name.log"
    count_checks "$dir" "$label"
    return $rc
}

# show_failures BUILDDIR STEPLOG: names each test the automake driver marked
# FAIL or ERROR in one step's output, with the failed checks and the last
# lines of that test's own log, so the cause is in check.sh's output.
show_failures() {
    local dir=$1 steplog=$2 t log
    for t in $(sed -n 's/^\(FAIL\|ERROR\): \([^ ]*\).*/\2/p' "$steplog" | sort -u); do
        echo "    failed test: $t"
        # A shell test's log drops its extension (test/x/y.sh: test/x/y.log).
        log="$dir/$t.log"
        [ -f "$log" ] || log="$dir/${t%.*}.log"
        [ -f "$log" ] || continue
        # "toward rank N:" is a btl test rank's picture of a peer after a
        # wait timed out (btl_dump: what each side holds).
        grep -E ':[FE]:|^FAIL|FAILED|[Ff]ailed|ERROR|Sanitizer|timeout|expect-mux:|toward rank [0-9]+: ' \
            "$log" | head -n 40 |
            sed 's/^/    | /'
        # What a list test about to time out was waiting for (test-list.sh's
        # tl_watch): its processes, stacks and daemons' state.
        grep -E '^    ! ' "$log" | head -n 100 | sed 's/^/    | /'
        echo "    | (last lines)"
        tail -n 10 "$log" | sed 's/^/    | /'
    done
}

# configure_in DIR ARGS...: configures a build tree (in a subshell, so the
# script's own directory does not change).
configure_in() {
    local dir=$1
    shift
    (mkdir -p "$dir" && cd "$dir" && "$top/configure" "$@")
}

step autogen ./autogen.sh || { echo "check.sh: autogen failed"; exit 1; }

built=no
if step configure configure_in "$top/_build" && step build make -C "$top/_build" -j"$jobs"; then
    built=yes
    sed -n '/configuration summary/,/compiler:/p' "$logdir/configure.log"
    if [ $rdma_vm != only ]; then
        # The slow cases (a million rounds of the rpc race) run in this step only.
        run_tests check "$top/_build" "gcc -O2" -j"$jobs" check OPAL_TEST_SLOW=1
    fi
    if [ $quick = no ]; then
        # Two at a time: most run one process under valgrind (one core).
        run_tests valgrind "$top/_build" "valgrind" -j"$jobs" check-valgrind
    fi
fi

if [ $quick = no ]; then
    if step asan-configure configure_in "$top/_build-asan" --enable-debug \
            --enable-sanitizers=address,undefined &&
        step asan-build make -C "$top/_build-asan" -j"$jobs"; then
        run_tests asan-check "$top/_build-asan" "asan+ubsan (debug)" -j"$jobs" check-sanitized
    fi
    if step tsan-configure configure_in "$top/_build-tsan" --enable-sanitizers=thread &&
        step tsan-build make -C "$top/_build-tsan" -j"$jobs"; then
        run_tests tsan-check "$top/_build-tsan" "tsan (threaded tests)" check-tsan
    fi
    if step clang-configure configure_in "$top/_build-clang" CC=clang --enable-picky \
            --enable-timeline &&
        step clang-build make -C "$top/_build-clang" -j"$jobs"; then
        run_tests clang-check "$top/_build-clang" "clang picky" -j"$jobs" check-short
        # A few seconds of libFuzzer per target (test/fuzz, docs/developer.md).
        step clang-fuzz make -C "$top/_build-clang" fuzz FUZZ_SECONDS=3
    fi
    if ! step distcheck make -C "$top/_build" -j"$jobs" distcheck-short; then
        # distcheck's tests ran in the unpacked tarball's own build tree.
        for sub in "$top"/_build/opal-mca-*/_build/sub; do
            [ -d "$sub" ] && show_failures "$sub" "$logdir/distcheck.log"
        done
    fi
fi

# The verbs tests in the soft-RoCE guest, on the default build (not with
# --quick). run.sh's 77 (the guest cannot run here) is a skip, reported as
# one.
if { [ $rdma_vm = only ] || { [ $rdma_vm = yes ] && [ $quick = no ]; }; } && [ $built = yes ]; then
    vm_flags=
    [ $deps = no ] && vm_flags=--no-deps
    if step rdma-vm make -C "$top/_build" check-rdma-vm RDMA_VM_SKIP_STATUS=0 \
        RDMA_VM_FLAGS="$vm_flags"; then
        grep -h '^check-rdma-vm: SKIPPED' "$logdir/rdma-vm.log" | sed 's/^/    /'
    fi
    read -r vn vf < <(count_passed_failed "^verbs: " "$logdir/rdma-vm.log")
    echo "    soft-RoCE guest: $vn checks, $vf failures"
    total_checks=$((total_checks + vn))
    total_failed=$((total_failed + vf))
fi

echo
if [ ${#failed_steps[@]} -gt 0 ]; then
    echo "check.sh: failed steps: ${failed_steps[*]}"
fi
passed=$((total_checks - total_failed))
echo "checks: $passed passed, $total_failed failed"
[ ${#failed_steps[@]} -eq 0 ] && [ $total_failed -eq 0 ]
