# tests/vm/guest-lib.sh -- helpers for scripts that run inside the guest
# (tests/vm/guest-*.sh, started by `scripts/vm.sh run`).  The guest runs the
# host's programs (host root, read-only); $VM_WORK is the run's work folder,
# shared read-write with the host; /tmp and /run are guest tmpfs.
#
# Output convention: "ok NAME" / "not ok NAME: why" lines; guest scripts exit
# non-zero if anything was not ok.

set -uo pipefail
GUEST_FAILS=0
# Under TCG every exec costs 0.1-0.3 s: these helpers use bash builtins only.
exec {_sleep_fd}<> <(:)
nap () { read -r -t "$1" -u $_sleep_fd; }    # sleep without an exec

log () { printf '# %(%T)T %s\n' -1 "$*"; }
ok () { echo "ok $*"; }
not_ok () { echo "not ok $*"; GUEST_FAILS=$((GUEST_FAILS + 1)); }

# Runs "$@"; on failure prints the command and its output.
run () {
    local out rc=0
    out=$("$@" 2>&1) || rc=$?
    if [[ $rc != 0 ]]; then
        echo "# failed ($rc): $*"
        [[ -n $out ]] && echo "$out" | tail -n 20 | sed 's/^/#   /'
    fi
    return $rc
}

# nbd_up NAME CONNS NBDKIT-ARGS...: serves on /tmp/NAME.sock (nbdkit in the
# foreground of a background job, its log in $VM_WORK/nbdkit-NAME.log) and
# attaches /dev/nbd0 with CONNS connections.
NBDKIT_PID=
nbd_up () {
    local name conns=$2 sock i
    name=$(echo "$1" | tr -cs 'A-Za-z0-9\n' '-'); sock=/tmp/$name.sock; shift 2
    rm -f "$sock"
    nbdkit -f -U "$sock" --log=stderr "$@" >"$VM_WORK/nbdkit-$name.log" 2>&1 &
    NBDKIT_PID=$!
    for ((i = 0; i < 300; i++)); do
        [[ -S $sock ]] && break
        kill -0 $NBDKIT_PID 2>/dev/null || break
        nap 0.1
    done
    if [[ ! -S $sock ]]; then
        echo "# nbdkit did not start: $*"; sed 's/^/#   nbdkit: /' "$VM_WORK/nbdkit-$name.log"
        return 1
    fi
    # -t: a dead server makes I/O fail instead of hanging the guest.
    if ! run nbd-client -unix "$sock" /dev/nbd0 -b 4096 -t 60 -C "$conns"; then
        nbd_down; return 1
    fi
    # The server's sockets: the listening one plus one per connection.
    i=$(ls -l /proc/$NBDKIT_PID/fd | grep -c 'socket:')
    if [[ $i -le $conns ]]; then
        echo "# nbd-client -C $conns: nbdkit has $((i - 1)) connections"; nbd_down; return 1
    fi
    NBD_NAME=$name
}
NBD_NAME=

# nbd_down: detaches /dev/nbd0 and stops nbdkit (whose log is shown if it failed).
nbd_down () {
    local rc=0
    nbd-client -d /dev/nbd0 >/dev/null 2>&1
    if [[ -n $NBDKIT_PID ]]; then
        kill $NBDKIT_PID 2>/dev/null
        wait $NBDKIT_PID 2>/dev/null
        NBDKIT_PID=
    fi
    if grep -qiE 'error|sanitizer|assert|abort' "$VM_WORK/nbdkit-${NBD_NAME:-x}.log" 2>/dev/null; then
        echo "# nbdkit log ($NBD_NAME):"; tail -n 20 "$VM_WORK/nbdkit-$NBD_NAME.log" | sed 's/^/#   /'
        rc=1
    fi
    return $rc
}

# wait_idle MD: waits until MD's sync action is idle (at most $2 seconds, 600).
wait_idle () {
    local md=/sys/block/$1/md i action
    for ((i = 0; i < ${2:-600} * 20; i++)); do
        read -r action <$md/sync_action
        [[ $action == idle ]] && return 0
        nap 0.05
    done
    return 1
}

# md_check MD: runs a parity check; prints mismatch_cnt (sectors).  ("idle" is
# also what sync_action says before a check starts: last_sync_action and
# sync_completed say whether it ran.)
md_check () {
    local md=/sys/block/$1/md last mm
    echo check >$md/sync_action || return 1
    wait_idle $1 || { echo "# $1: check did not finish" >&2; return 1; }
    read -r last <$md/last_sync_action
    [[ $last == check ]] || { echo "# $1: last_sync_action is $last, not check" >&2; return 1; }
    read -r mm <$md/mismatch_cnt
    echo "$mm"
}

# md_stop MD
md_stop () {
    mdadm --stop /dev/$1 >/dev/null 2>&1 || { nap 1; mdadm --stop /dev/$1; }
}

# examined_value TEXT KEY: KEY's value in mdadm's TEXT ("  KEY : value" lines;
# bash only, no exec).
examined_value () {
    local line
    while IFS= read -r line; do
        line=${line#"${line%%[! ]*}"}
        [[ $line == "$2 : "* ]] && { echo "${line#"$2 : "}"; return; }
    done <<<"$1"
}

# md_same WHAT MDADM-OPTION THEIRS OURS KEY...: mdadm OPTION (--examine,
# --examine-bitmap) says the same KEYs of the two devices.  mdadm runs
# once a device: under TCG every exec costs a tenth of a second or more.
md_same () {
    local what=$1 opt=$2 a=$3 b=$4 k x y bad= ea eb; shift 4
    blockdev --flushbufs "$a" "$b"
    ea=$(mdadm "$opt" "$a" 2>&1) eb=$(mdadm "$opt" "$b" 2>&1)
    for k; do
        x=$(examined_value "$ea" "$k") y=$(examined_value "$eb" "$k")
        [[ $x == "$y" ]] || bad+="$k: md '$x', ours '$y'; "
    done
    [[ -z $bad ]] && ok "$what: mdadm $opt says the same" || not_ok "$what: $bad"
}

# Faster md syncs under TCG (KiB/s).
echo 2000000 >/proc/sys/dev/raid/speed_limit_max 2>/dev/null
echo 200000 >/proc/sys/dev/raid/speed_limit_min 2>/dev/null

# VM_TRACE=1: trace every command with a timestamp (for finding slow steps).
if [[ -n ${VM_TRACE:-} ]]; then PS4='+ $EPOCHREALTIME '; set -x; fi
