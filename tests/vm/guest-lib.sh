# tests/vm/guest-lib.sh -- helpers for scripts that run inside the guest
# (tests/vm/guest-*.sh, started by `scripts/vm.sh run`).  The guest runs the
# host's programs (host root, read-only); $VM_WORK is the run's work folder,
# shared read-write with the host; /tmp and /run are guest tmpfs.
#
# Output convention: "ok NAME" / "not ok NAME: why" lines; guest scripts exit
# non-zero if anything was not ok.

set -uo pipefail
GUEST_FAILS=0

log () { echo "# $(date +%T) $*"; }
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
    for i in $(seq 1 300); do
        [[ -S $sock ]] && break
        kill -0 $NBDKIT_PID 2>/dev/null || break
        sleep 0.1
    done
    if [[ ! -S $sock ]]; then
        echo "# nbdkit did not start: $*"; sed 's/^/#   nbdkit: /' "$VM_WORK/nbdkit-$name.log"
        return 1
    fi
    # -t: a dead server makes I/O fail instead of hanging the guest.
    if ! run nbd-client -unix "$sock" /dev/nbd0 -b 4096 -t 60 -C "$conns"; then
        nbd_down; return 1
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
    local md=$1 i
    for i in $(seq 1 $((${2:-600} * 10))); do
        [[ $(cat /sys/block/$md/md/sync_action) == idle ]] && return 0
        sleep 0.1
    done
    return 1
}

# md_check MD: runs a parity check; prints mismatch_cnt (sectors).
md_check () {
    local md=$1
    echo check >/sys/block/$md/md/sync_action || return 1
    sleep 0.1
    wait_idle $md || { echo "# $md: check did not finish" >&2; return 1; }
    cat /sys/block/$md/md/mismatch_cnt
}

# md_stop MD
md_stop () {
    mdadm --stop /dev/$1 >/dev/null 2>&1 || { sleep 1; mdadm --stop /dev/$1; }
}

# Faster md syncs under TCG (KiB/s).
echo 2000000 >/proc/sys/dev/raid/speed_limit_max 2>/dev/null
echo 200000 >/proc/sys/dev/raid/speed_limit_min 2>/dev/null
