# Sourced (bash) by expect-ess.sh and expect-mux.sh.
#
# shown_run LABEL COMMAND...: runs COMMAND in the background with its
# output (stdout and stderr) going to a file as it comes, and waits for
# it; sets shown_out (the output) and shown_rc (the exit status). When the
# script is signalled meanwhile (test-list.sh's time limit signals the
# whole command), it prints what every command run so far printed, each
# line led by "LABEL| ", and names the one that had not returned, before
# it ends by the same signal: a job that hangs still shows how far its
# ranks got.
shown_dir=$(mktemp -d "${TMPDIR:-/tmp}/shown-run.XXXXXX")
shown_labels=()
shown_running=
shown_out=
shown_rc=0

# shellcheck disable=SC2317 # run by the traps below
shown_on_signal() {
    local label
    for label in "${shown_labels[@]}"; do
        [ -s "$shown_dir/$label" ] && sed "s/^/$label| /" "$shown_dir/$label"
    done
    echo "ended by SIG$1 while $shown_running had not returned"
    rm -rf "$shown_dir"
    trap - "$1"
    kill -s "$1" $$
}
for shown_sig in TERM INT; do
    # shellcheck disable=SC2064 # the signal's name, now
    trap "shown_on_signal $shown_sig" "$shown_sig"
done
trap 'rm -rf "$shown_dir"' EXIT

shown_run() {
    local label=$1
    shift
    shown_labels+=("$label")
    shown_running=$label
    "$@" >"$shown_dir/$label" 2>&1 &
    # wait, unlike a command in the foreground, returns to run a trap.
    wait $!
    shown_rc=$?
    shown_running=
    shown_out=$(cat "$shown_dir/$label")
}
