# Bash completion for opal-mca's programs: mcarun, opal_info and opal_perf.
# Options come from each program's --help; after --mca (or --gmca) the
# variable names, then their values (an enumeration's values, a
# framework's components, true/false), from opal_info --all --parsable: the
# opal_info beside the program being completed, else the one on PATH.
# Installed to the bash-completion directory (one file per program name,
# all the same); source it by hand from the source tree.

# The opal_info to ask: beside $1 (a program path) if there is one.
_opal_mca_info() {
    local dir
    dir=$(dirname -- "$1")
    if [[ $1 == */* && -x $dir/opal_info ]]; then
        printf '%s\n' "$dir/opal_info"
    elif [[ $1 == */* && -x $dir/../opal_info/opal_info ]]; then
        printf '%s\n' "$dir/../opal_info/opal_info" # a build tree's tools/
    else
        command -v opal_info
    fi
}

# opal_info --all --parsable, kept for the shell's life per opal_info.
declare -gA _opal_mca_parsable_cache
_opal_mca_parsable() {
    local info
    info=$(_opal_mca_info "$1")
    [[ -n $info ]] || return
    if [[ -z ${_opal_mca_parsable_cache[$info]+set} ]]; then
        _opal_mca_parsable_cache[$info]=$("$info" --all --parsable 2>/dev/null)
    fi
    printf '%s\n' "${_opal_mca_parsable_cache[$info]}"
}

# The long and short options a program's --help lists.
_opal_mca_options() {
    "$1" --help 2>/dev/null | sed -n 's/^ \{1,4\}\(-[A-Za-z0-9]\)\{0,1\},\{0,1\} *\(--[A-Za-z0-9-]*\)\{0,1\}.*/\1 \2/p' |
        tr ' ' '\n' | grep -- '^-'
}

# Values for MCA variable $2 of program $1.
_opal_mca_values() {
    local prog=$1 name=$2 parsable
    parsable=$(_opal_mca_parsable "$prog")
    # A framework's selection variable: its components (and ^ for excluding).
    if grep -q "^framework:$name:" <<<"$parsable"; then
        sed -n "s/^mca:$name:\([^:]*\):status:.*/\1/p" <<<"$parsable" | grep -v '^base$'
        return
    fi
    local type
    type=$(sed -n "s/^mca:[^:]*:[^:]*:param:$name:type:\(.*\)/\1/p" <<<"$parsable" | head -n 1)
    if [[ $type == bool ]]; then
        printf '%s\n' true false
        return
    fi
    sed -n "s/^mca:[^:]*:[^:]*:param:$name:enumerator:value:[^:]*:\(.*\)/\1/p" <<<"$parsable"
}

# Completes an --mca argument if the cursor is on one: returns 0 if so.
_opal_mca_complete_mca() {
    local prog=$1 cur=$2 prev=$3 prevprev=$4
    if [[ $prev == --mca || $prev == -mca || $prev == --gmca || $prev == -gmca ]]; then
        local names
        names=$(_opal_mca_parsable "$prog" | sed -n 's/^mca:[^:]*:[^:]*:param:\([^:]*\):value:.*/\1/p' | sort -u)
        mapfile -t COMPREPLY < <(compgen -W "$names" -- "$cur")
        return 0
    fi
    if [[ $prevprev == --mca || $prevprev == -mca || $prevprev == --gmca || $prevprev == -gmca ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(_opal_mca_values "$prog" "$prev")" -- "$cur")
        return 0
    fi
    return 1
}

_opal_mca_opal_info() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    local prevprev=${COMP_WORDS[COMP_CWORD - 2]:-}
    _opal_mca_complete_mca "${COMP_WORDS[0]}" "$cur" "$prev" "$prevprev" && return
    case $prev in
        --param)
            local fws
            fws=$(_opal_mca_parsable "${COMP_WORDS[0]}" | sed -n 's/^framework:\([^:]*\):.*/\1/p' | sort -u)
            mapfile -t COMPREPLY < <(compgen -W "all mca $fws" -- "$cur")
            return
            ;;
        --level)
            mapfile -t COMPREPLY < <(compgen -W "1 2 3 4 5 6 7 8 9" -- "$cur")
            return
            ;;
    esac
    if [[ $prevprev == --param ]]; then
        local comps
        comps=$(_opal_mca_parsable "${COMP_WORDS[0]}" | sed -n "s/^mca:$prev:\([^:]*\):status:.*/\1/p")
        mapfile -t COMPREPLY < <(compgen -W "all $comps" -- "$cur")
        return
    fi
    mapfile -t COMPREPLY < <(compgen -W "$(_opal_mca_options "${COMP_WORDS[0]}")" -- "$cur")
}

_opal_mca_opal_perf() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    local prevprev=${COMP_WORDS[COMP_CWORD - 2]:-}
    _opal_mca_complete_mca "${COMP_WORDS[0]}" "$cur" "$prev" "$prevprev" && return
    if ((COMP_CWORD == 1)) && [[ $cur != -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "latency bw bibw rate na-lat na-put na-get bulk-pull bulk-push server rpc-rate rpc-lat rpc-bw rpc-server" -- "$cur")
        return
    fi
    mapfile -t COMPREPLY < <(compgen -W "$(_opal_mca_options "${COMP_WORDS[0]}")" -- "$cur")
}

_opal_mca_mcarun() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    local prevprev=${COMP_WORDS[COMP_CWORD - 2]:-}
    # Once the program is named, the rest is the program's: complete it as
    # the program's own completion would.
    local i=1
    while ((i < COMP_CWORD)); do
        case ${COMP_WORDS[i]} in
            --mca | -mca | --gmca | -gmca) ((i += 3)) ;;
            -n | --np | -np | -x | --output-filename | --timeout | --bind-to | --wdir) ((i += 2)) ;;
            -*) ((i += 1)) ;;
            *)
                if declare -F _command_offset >/dev/null; then
                    _command_offset "$i"
                else
                    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
                fi
                return
                ;;
        esac
    done
    _opal_mca_complete_mca "${COMP_WORDS[0]}" "$cur" "$prev" "$prevprev" && return
    case $prev in
        --bind-to)
            mapfile -t COMPREPLY < <(compgen -W "none core package" -- "$cur")
            return
            ;;
        --output-filename | --wdir)
            mapfile -t COMPREPLY < <(compgen -d -- "$cur")
            return
            ;;
        -n | --np | -np | --timeout | -x) return ;;
    esac
    if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(_opal_mca_options "${COMP_WORDS[0]}")" -- "$cur")
    else
        mapfile -t COMPREPLY < <(compgen -c -- "$cur")
    fi
}

complete -F _opal_mca_mcarun -o default mcarun
complete -F _opal_mca_opal_info opal_info
complete -F _opal_mca_opal_perf opal_perf
