# Sourced (bash) by the scripts that run lists of test commands outside
# Check: contrib/rdma-vm/test-verbs.sh (in the soft-RoCE guest) and
# test/btl/netns/btl_netns_test.sh (ranks in two network namespaces).
#
# A list file has one test a line, NAME NEEDS COMMAND...:
#   NAME     what the PASS / FAIL / SKIP lines call it
#   NEEDS    "-", or comma-separated build-tree paths (globs allowed) that
#            must exist; a test whose needs are missing is skipped, or
#            fails when tl_require_all=yes
#   COMMAND  bash, run in the build directory with a time limit
# Blank lines and lines starting with # are ignored.

tl_passed=0
tl_failed=0
tl_skipped=0
tl_failures=()
tl_require_all=no
tl_timeout=300
tl_child=

tl_pass() {
    echo "PASS $1"
    tl_passed=$((tl_passed + 1))
}
tl_fail() {
    echo "FAIL $1"
    tl_failed=$((tl_failed + 1))
    tl_failures+=("$1")
}
tl_skip() {
    echo "SKIP $1"
    tl_skipped=$((tl_skipped + 1))
}

# tl_crashed_in_libfabric FILE: true when FILE holds a "terminated with
# signal 11" report (libpsm2's handler, loaded by libfabric, prints it)
# whose first backtrace frame is in libfabric itself. libfabric 1.17's rxm
# crashes that way now and then over verbs (rxe), in its own progress and
# in its own fi_pingpong alike (docs/rdma-vm.md). Other ranks' lines may
# fall between the report and its backtrace: the first line after the
# report that looks like a frame ("lib.so(+0x..)[0x..]") is the one read,
# within the next 8 lines.
tl_crashed_in_libfabric() {
    awk '/terminated with signal 11/ { look = 8; next }
         look > 0 { look--; line = $0; sub(/^[ |]*/, "", line)
                    if (line ~ /\[0x[0-9a-f]+\]$/ || line ~ /^[^ ]+\.so[^ ]*\(/) {
                        if (line ~ /^[^ ]*libfabric\.so/) found = 1
                        look = 0 } }
         END { exit !found }' "$1"
}

# tl_picture PID [SHOW_RE [STEP]]: for a tl_on_hang hook, the processes of
# the command PID (its descendants, and those whose command matches the
# awk regex SHOW_RE: a launcher's daemons) from one snapshot, then the
# threads' stacks (gdb) of the ranks: PID's descendants that run a program
# of the build tree other than mcarun, and the children of any process
# whose command is STEP (a launcher's step daemon, e.g. "slurmstepd:"),
# listed as "-- stacks of N (a rank under STEP)" (STEP without a final
# colon).
tl_picture() {
    local plan kind pid label exe build
    build=$(readlink -f "$tl_build")
    plan=$(ps -eo pid,ppid,stat,etimes,wchan:24,args | awk -v top="$1" \
        -v show="${2:-^$}" -v step="${3:-}" '
        NR == 1 { print "show\t" $0; name = step; sub(/:$/, "", name); next }
        { line[NR] = $0; pid[NR] = $1; parent[$1] = $2; cmd[NR] = $6
          if (step != "" && $6 == step) stepd[$1] = 1 }
        END { for (i = 2; i <= NR; i++) {
                  mine = 0
                  for (q = pid[i]; q != "" && q > 1; q = parent[q])
                      if (q == top) { mine = 1; break }
                  rank = parent[pid[i]] in stepd
                  if (mine || rank || cmd[i] ~ show)
                      print "show\t" line[i]
                  args = line[i]
                  for (k = 0; k < 5; k++)
                      sub(/^ *[^ ]+ +/, "", args)
                  if (rank)
                      print "stack\t" pid[i] "\t (a rank under " name "): " args
                  else if (mine)
                      print "mine\t" pid[i] "\t: " args
              } }')
    echo "-- processes"
    sed -n 's/^show\t//p' <<<"$plan"
    command -v gdb >/dev/null && while IFS=$'\t' read -r kind pid label; do
        if [ "$kind" = mine ]; then
            # A program of the build tree, however it was started (a
            # relative path, a libtool wrapper's .libs/lt-NAME).
            exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || continue
            case $exe in
                "$build"/*/mcarun | "$build"/*/lt-mcarun) continue ;;
                "$build"/*) ;;
                *) continue ;;
            esac
        fi
        echo "-- stacks of $pid$label"
        timeout 20 gdb -p "$pid" -batch -nx -ex 'thread apply all bt 12' 2>/dev/null |
            grep -E '^(Thread|#)' | head -n 60
    done < <(grep -E '^(stack|mine)'$'\t' <<<"$plan")
}

# tl_watch PID OUT: when the caller defines tl_on_hang, calls it with PID
# (output to OUT) if PID is still running 20 s before the time limit (gdb
# takes seconds a rank; a limit under 80 s: at three quarters of it), so
# that a command about to be killed for taking too long leaves a picture
# of what it was waiting for (a hook prints the processes, the daemons'
# state). Returns as soon as PID has ended.
tl_watch() {
    local pid=$1 out=$2 start=$SECONDS at=$((tl_timeout - 20))
    [ $at -lt $((tl_timeout * 3 / 4)) ] && at=$((tl_timeout * 3 / 4))
    # Checked every fifth of a second, so that a command that ends is not
    # kept waiting; the time read from the clock (SECONDS), not counted in
    # sleeps: on a loaded machine each round takes longer than its sleep, and
    # counting them let the limit pass before the picture was taken (a hang
    # in CI left no picture at all).
    while kill -0 "$pid" 2>/dev/null; do
        if [ $((SECONDS - start)) -ge $at ]; then
            echo "still running after $((SECONDS - start)) s, shortly before the time limit:"
            tl_on_hang "$pid"
            return
        fi
        sleep 0.2
    done >"$out" 2>&1
}

# tl_run NAME COMMAND: runs one bash command in $tl_build with the time
# limit, its output indented; PASS when it exits 0. A run that crashed
# inside libfabric (tl_crashed_in_libfabric) is run once more, saying so:
# the second run decides. A run about to reach the limit is described by
# tl_on_hang, when the caller defines it (tl_watch); when the caller also
# defines tl_hang_is_external FILE and it finds in that description that
# the wait was the launcher's, not opal-mca's, the run is made once more,
# saying so, and the second run decides.
tl_run() {
    local name=$1 command=$2 start=$SECONDS rc try out watcher
    echo "-- $name: $command"
    out=$(mktemp "${TMPDIR:-/tmp}/tl_run.XXXXXX")
    for try in 1 2; do
        # In the background and waited for, so that the caller's signal traps
        # run at once; timeout(1) passes a TERM on to the whole command.
        # The output goes to a file (shown when the command ends) so that it
        # is whole when tl_crashed_in_libfabric reads it.
        (cd "$tl_build" && exec timeout -k 10 "$tl_timeout" bash -c "$command") \
            </dev/null >"$out" 2>&1 &
        tl_child=$!
        netns_child=$tl_child
        watcher=
        if declare -F tl_on_hang >/dev/null; then
            tl_watch "$tl_child" "$out.hang" &
            watcher=$!
        fi
        wait "$tl_child"
        rc=$?
        [ -n "$watcher" ] && wait "$watcher"
        tl_child=
        netns_child=
        sed 's/^/    | /' "$out"
        local external=no
        if [ -s "$out.hang" ]; then
            sed 's/^/    ! /' "$out.hang"
            [ "$rc" -eq 124 ] && declare -F tl_hang_is_external >/dev/null &&
                tl_hang_is_external "$out.hang" && external=yes
        fi
        rm -f "$out.hang"
        [ $try -eq 1 ] || break
        if [ $external = yes ]; then
            echo "    (hung inside the launcher, not in opal-mca: running $name once more)"
        elif [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && tl_crashed_in_libfabric "$out"; then
            echo "    (crashed inside libfabric, not in opal-mca: running $name once more)"
        else
            break
        fi
    done
    rm -f "$out"
    local again=
    [ $try -eq 2 ] && again=", second run"
    if [ "$rc" -eq 0 ]; then
        tl_pass "$name ($((SECONDS - start)) s$again)"
    elif [ "$rc" -eq 124 ]; then
        tl_fail "$name: no result within $tl_timeout s"
    else
        tl_fail "$name: status $rc"
    fi
}

# tl_missing NEEDS: prints the needs that do not exist in $tl_build.
tl_missing() {
    local need missing=()
    [ "$1" = - ] && return 0
    IFS=, read -r -a need_list <<<"$1"
    for need in "${need_list[@]}"; do
        compgen -G "$tl_build/$need" >/dev/null || missing+=("$need")
    done
    echo "${missing[*]}"
}

# tl_run_list FILE: runs the tests of a list file in $tl_build.
tl_run_list() {
    local file=$1 name needs command missing
    if [ ! -r "$file" ]; then
        tl_fail "cannot read the test list $file"
        return
    fi
    while read -r name needs command; do
        case "$name" in '' | '#'*) continue ;; esac
        if [ -z "$command" ]; then
            tl_fail "$file: line '$name $needs' has no command"
            continue
        fi
        missing=$(tl_missing "$needs")
        if [ -n "$missing" ]; then
            if [ "$tl_require_all" = yes ]; then
                tl_fail "$name: not built: $missing"
            else
                tl_skip "$name: not built: $missing"
            fi
            continue
        fi
        tl_run "$name" "$command"
    done <"$file"
}

# tl_summary LABEL: the closing lines; returns 0 when nothing failed (and,
# with tl_require_all=yes, nothing was skipped).
tl_summary() {
    local f
    echo
    for f in "${tl_failures[@]}"; do
        echo "failed: $f"
    done
    echo "$1: $tl_passed passed, $tl_failed failed, $tl_skipped skipped"
    [ $tl_failed -eq 0 ] && { [ "$tl_require_all" = no ] || [ $tl_skipped -eq 0 ]; }
}

# tl_build_env BUILD: what `make check` gives tests, for commands run by
# hand from the build tree BUILD: its plugins on the component path and its
# help files on the help path (each unless already set); exports MCARUN,
# BUILD and SRCDIR (the source tree, from BUILD's Makefile).
tl_build_env() {
    local build=$1 srcdir
    tl_build=$build
    srcdir=$(sed -n 's/^abs_top_srcdir = //p' "$build/Makefile" 2>/dev/null)
    if [ -z "${OPAL_MCA_mca_base_component_path:-}" ]; then
        # The list the tests get (mca.am's mca_plugin_dirs), not a search of
        # the tree: that would also find, say, a failed distcheck's copy.
        local dirs
        dirs=$(sed -n 's/^mca_plugin_dirs = //p' "$build/Makefile" 2>/dev/null)
        dirs=${dirs//\$(abs_top_builddir)/$build}
        [ -n "$dirs" ] && export OPAL_MCA_mca_base_component_path=$dirs
    fi
    if [ -z "${OPAL_SHOW_HELP_PATH:-}" ] && [ -n "$srcdir" ]; then
        # help_dirs, as make check joins it (a variable over several lines).
        local help
        help=$(awk 'f || /^help_dirs = / {
                        f = 1; line = $0; more = sub(/\\$/, "", line); all = all " " line
                        if (!more) exit
                    }
                    END { sub(/^ *help_dirs = */, "", all); print all }' "$build/Makefile")
        help=${help//\$(abs_top_srcdir)/$srcdir}
        OPAL_SHOW_HELP_PATH=$(echo $help | tr ' ' ':')
        [ -n "$OPAL_SHOW_HELP_PATH" ] && export OPAL_SHOW_HELP_PATH
    fi
    export MCARUN=$build/orte/tools/mcarun/mcarun
    export BUILD=$build
    export SRCDIR=${srcdir:-$build}
}
