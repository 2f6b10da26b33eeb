# scripts/lib-attach.sh -- serve an NBD export and attach it as a kernel
# block device; detach and clean up even when the caller fails.
#
# Source it from bash:  . scripts/lib-attach.sh
#
#   attach_trap                      run attach_cleanup on EXIT, INT, TERM
#                                    (and first $ATTACH_ON_FAILURE if the
#                                    exit status is not 0)
#   attach_why_not                   exit 0 if attaching can work here;
#                                    else print one line saying why not, exit 1
#   attach_serve SOCK PIDFILE LOG ARGS...
#                                    start "$NBDKIT -U SOCK -P PIDFILE -f ARGS"
#                                    in the background, wait until it serves;
#                                    sets ATTACH_NBDKIT_PID
#   attach_stop_nbdkit PID           SIGTERM, wait; exit status of nbdkit
#   attach_dev SOCK WORKDIR          attach the export; sets ATTACH_DEV
#                                    (/dev/nbdN or /dev/loopN) and ATTACH_METHOD
#   attach_detach DEV                undo attach_dev for DEV
#   attach_mount DEV MNT [OPTS]      mount (registered for cleanup)
#   attach_umount MNT
#   attach_cleanup                   undo everything still in place, newest
#                                    first: umount, losetup -d, fusermount3 -u,
#                                    nbd-client -d, stop nbdkit
#
# Method: nbd-client -unix SOCK /dev/nbdN -b 4096 when /dev/nbd0 exists (or
# "modprobe nbd" makes it appear); otherwise nbdfuse WORKDIR/fuse --unix SOCK
# exposes the export as the file WORKDIR/fuse/nbd and "losetup -f --show"
# turns that into /dev/loopN.  ATTACH_METHOD=nbd|fuse in the environment
# forces one; ATTACH_NBD_CONNECTIONS=N adds "-C N" to nbd-client (the
# server must advertise multi-conn).  Both need root.
#
# Every step that succeeds pushes its undo onto a stack; undo steps are
# idempotent, so calling attach_detach / attach_umount early is fine.
# Functions return non-zero with a message on stderr; they never exit.

: "${NBDKIT:=nbdkit}"
ATTACH_UNDO=()
ATTACH_DEV=
ATTACH_NBDKIT_PID=
declare -gA ATTACH_FUSE_DIR=()    # /dev/loopN -> nbdfuse mountpoint
declare -gA ATTACH_FUSE_PID=()    # nbdfuse mountpoint -> nbdfuse pid
declare -gA ATTACH_NBDKIT_LIVE=() # nbdkit pid -> its socket and pidfile

attach_log () { echo "lib-attach: $*" >&2; }

attach_push () { ATTACH_UNDO+=("$*"); }

attach_cleanup ()
{
    local i
    cd / || true     # a cwd inside a mountpoint would keep it busy
    for (( i = ${#ATTACH_UNDO[@]} - 1; i >= 0; i-- )); do
        eval "${ATTACH_UNDO[i]}" || true
    done
    ATTACH_UNDO=()
}

# On EXIT with a non-zero status, eval "$ATTACH_ON_FAILURE" (if set, e.g.
# to print server logs) before undoing everything.
attach_exit ()
{
    if [ "$1" != 0 ] && [ -n "${ATTACH_ON_FAILURE:-}" ]; then
        eval "$ATTACH_ON_FAILURE" || true
    fi
    attach_cleanup
}

attach_trap ()
{
    trap 'attach_exit $?' EXIT
    trap 'attach_log "interrupted"; trap - EXIT; attach_exit 130; exit 130' INT
    trap 'attach_log "terminated (a timeout?)"; trap - EXIT; attach_exit 143; exit 143' TERM
}

# Wait up to $2 seconds (default 30) for the command $1 to succeed.
attach_wait_for ()
{
    local cond=$1 secs=${2:-30} i
    for (( i = 0; i < secs * 10; i++ )); do
        eval "$cond" && return 0
        sleep 0.1
    done
    return 1
}

attach_have_nbd ()
{
    [ -b /dev/nbd0 ] && return 0
    command -v modprobe >/dev/null && modprobe nbd 2>/dev/null &&
        attach_wait_for '[ -b /dev/nbd0 ]' 5
}

attach_pick_method ()
{
    case ${ATTACH_METHOD:-} in
        nbd|fuse) echo "$ATTACH_METHOD"; return 0 ;;
    esac
    if command -v nbd-client >/dev/null && attach_have_nbd; then
        echo nbd
    else
        echo fuse
    fi
}

attach_why_not ()
{
    if [ "$(id -u)" != 0 ]; then
        echo "attaching a block device needs root"; return 1
    fi
    case $(attach_pick_method) in
    nbd)
        command -v nbd-client >/dev/null || { echo "nbd-client is not installed"; return 1; }
        [ -b /dev/nbd0 ] || { echo "no /dev/nbd0 (modprobe nbd failed)"; return 1; }
        ;;
    fuse)
        [ -c /dev/fuse ] || { echo "neither the nbd driver nor /dev/fuse is available"; return 1; }
        local c
        for c in nbdfuse fusermount3 losetup; do
            command -v $c >/dev/null || { echo "no nbd driver, and $c is not installed"; return 1; }
        done
        [ -e /dev/loop-control ] || [ -b /dev/loop0 ] ||
            { echo "no nbd driver and no loop devices"; return 1; }
        ;;
    esac
    return 0
}

# True if PID is alive and is the program named $2.
attach_pid_is ()
{
    local pid=$1 name=$2
    [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] &&
        tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q -- "$name"
}

attach_serve ()
{
    local sock=$1 pidfile=$2 log=$3; shift 3
    rm -f "$sock" "$pidfile"
    $NBDKIT -U "$sock" -P "$pidfile" -f "$@" >"$log" 2>&1 &
    local pid=$!
    ATTACH_NBDKIT_PID=$pid
    ATTACH_NBDKIT_LIVE[$pid]="$sock $pidfile"
    attach_push "attach_stop_nbdkit $pid >/dev/null 2>&1"
    if ! attach_wait_for "[ -s '$pidfile' ] || ! kill -0 $pid 2>/dev/null" 60 ||
       ! kill -0 "$pid" 2>/dev/null; then
        attach_log "nbdkit did not start; its log ($log):"
        sed 's/^/    /' "$log" >&2
        return 1
    fi
    attach_wait_for "[ -S '$sock' ]" 10
}

# Stop nbdkit with SIGTERM (SIGKILL after 30 s).  Returns nbdkit's exit
# status (0 after a clean shutdown), 0 if it was already stopped.
attach_stop_nbdkit ()
{
    local pid=$1 rc=0 files
    [ -n "$pid" ] && [ -n "${ATTACH_NBDKIT_LIVE[$pid]:-}" ] || return 0
    files=${ATTACH_NBDKIT_LIVE[$pid]}
    unset "ATTACH_NBDKIT_LIVE[$pid]"
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null
        if ! attach_wait_for "! kill -0 $pid 2>/dev/null" 30; then
            attach_log "nbdkit $pid ignored SIGTERM, killing it"
            kill -KILL "$pid" 2>/dev/null
        fi
    fi
    wait "$pid" 2>/dev/null || rc=$?
    rm -f $files
    return $rc
}

attach_dev ()
{
    local sock=$1 workdir=$2
    ATTACH_DEV=
    case $(attach_pick_method) in
        nbd) ATTACH_METHOD=nbd; attach_dev_nbd "$sock" ;;
        *)   ATTACH_METHOD=fuse; attach_dev_fuse "$sock" "$workdir" ;;
    esac
}

attach_free_nbd ()
{
    local d n
    for d in /sys/block/nbd*; do
        [ -e "$d" ] || continue
        n=${d##*/}
        [ -e "$d/pid" ] && continue
        [ "$(cat "$d/size" 2>/dev/null)" = 0 ] || continue
        echo "/dev/$n"; return 0
    done
    return 1
}

attach_dev_nbd ()
{
    local sock=$1 dev tries
    for tries in 1 2 3; do
        dev=$(attach_free_nbd) || { attach_log "no free /dev/nbdN"; return 1; }
        if nbd-client -unix "$sock" "$dev" -b 4096 \
               ${ATTACH_NBD_CONNECTIONS:+-C "$ATTACH_NBD_CONNECTIONS"} >&2; then
            attach_push "attach_detach $dev"
            attach_wait_for "[ -e /sys/block/${dev#/dev/}/pid ]" 10
            ATTACH_DEV=$dev
            return 0
        fi
    done
    attach_log "nbd-client could not connect $sock"
    return 1
}

attach_dev_fuse ()
{
    local sock=$1 dir=$2/fuse pidfile=$2/nbdfuse.pid pid dev
    mkdir -p "$dir" || return 1
    rm -f "$pidfile"
    nbdfuse -P "$pidfile" "$dir" --unix "$sock" >&2 &
    pid=$!
    ATTACH_FUSE_PID[$dir]=$pid
    attach_push "attach_fuse_unmount '$dir'; rm -f '$pidfile'"
    if ! attach_wait_for "[ -s '$pidfile' ] || ! kill -0 $pid 2>/dev/null" 30 ||
       ! kill -0 "$pid" 2>/dev/null || [ ! -e "$dir/nbd" ]; then
        attach_log "nbdfuse did not mount $dir"
        return 1
    fi
    dev=$(losetup -f --show "$dir/nbd") || { attach_log "losetup failed"; return 1; }
    ATTACH_FUSE_DIR[$dev]=$dir
    attach_push "attach_detach $dev"
    ATTACH_DEV=$dev
}

# True if something is mounted on $1.  Unlike mountpoint(1) this does not
# stat $1, so it also sees a FUSE mount whose daemon died (ENOTCONN).
attach_is_mounted () { findmnt -rn --mountpoint "$1" >/dev/null 2>&1; }

attach_fuse_unmount ()
{
    local dir=$1 pid=${ATTACH_FUSE_PID[$1]:-} i
    if attach_is_mounted "$dir"; then
        for i in 1 2 3 4 5 6 7 8 9 10; do
            fusermount3 -u "$dir" 2>/dev/null && break
            sleep 0.5
        done
        attach_is_mounted "$dir" && fusermount3 -u -z "$dir"
    fi
    if [ -n "$pid" ]; then
        attach_wait_for "! kill -0 $pid 2>/dev/null" 30 || kill -TERM "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        unset "ATTACH_FUSE_PID[$dir]"
    fi
    return 0
}

# Detach DEV (idempotent).  For a loop device over nbdfuse this also
# unmounts the FUSE file, so nbdfuse exits and closes its connections.
attach_detach ()
{
    local dev=$1 dir i
    case $dev in
    /dev/nbd*)
        if [ -e "/sys/block/${dev#/dev/}/pid" ]; then
            nbd-client -d "$dev" >&2 || return 1
            attach_wait_for "[ ! -e /sys/block/${dev#/dev/}/pid ]" 10
        fi
        ;;
    /dev/loop*)
        dir=${ATTACH_FUSE_DIR[$dev]:-}
        [ -n "$dir" ] || return 0
        unset "ATTACH_FUSE_DIR[$dev]"
        sync
        for i in 1 2 3 4 5 6 7 8 9 10; do
            losetup -d "$dev" 2>/dev/null && break
            sleep 0.5
        done
        attach_wait_for "! losetup '$dev' >/dev/null 2>&1" 10
        attach_fuse_unmount "$dir"
        ;;
    esac
    return 0
}

attach_mount ()
{
    local dev=$1 mnt=$2 opts=${3:-defaults}
    mkdir -p "$mnt" || return 1
    mount -o "$opts" "$dev" "$mnt" || return 1
    attach_push "attach_umount '$mnt'"
}

attach_umount ()
{
    local mnt=$1 i
    attach_is_mounted "$mnt" || return 0
    for i in 1 2 3 4 5 6 7 8 9 10; do
        umount "$mnt" 2>/dev/null && return 0
        sleep 0.5
    done
    umount "$mnt" && return 0
    attach_log "$mnt is busy; detaching it lazily"
    umount -l "$mnt"
    return 1
}
