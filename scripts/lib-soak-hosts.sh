# shellcheck shell=bash
# scripts/lib-soak-hosts.sh -- the soak's disks, their servers and the
# array's server.  Sourced by scripts/soak.sh, which sets W (scratch
# directory), P (a short prefix for namespace and link names), the
# programs (NBDKIT, PLUGIN, BADSECTOR, R5CTL_BIN) and SIZE.
#
# A disk is one member image, numbered from 0 in the order made:
#   DKIND[d]  file   the image itself is the member (disk=PATH)
#             unix   nbdkit serves it on a Unix socket (disk=nbd+unix://)
#             tcp    nbdkit serves it on 10.214.X.2:10809 in a network
#                    namespace of its own, joined to the array's
#                    namespace (NS_A) by a veth pair (disk=nbd://)
#   DURI[d]   what the array is given; URI2D maps it back to d
#   DSRV[d]   up, down (killed) or frozen (SIGSTOP), for unix and tcp
#   DLINK[d]  up or down (tcp)
#   DERR[d]   the errno a write fails with while DIMG.werr exists (EIO
#             or ENOSPC, drawn again at each start of its server)
# Every served disk goes through nbdkit's error filter (reads fail with
# EIO while DIMG.rerr exists; writes, zeroes and trims with DERR while
# DIMG.werr exists), then its cache filter in writeback mode (a disk with
# a volatile write cache: what was written since the last flush is lost
# when its server is killed -- a power loss), over the badsector test
# plugin (sectors listed in DIMG.bad fail: 'read' ones until written,
# 'write' ones for good).

declare -a DKIND DIMG DURI DPID DSRV DLINK DERR DNS
declare -A URI2D
NDISKS_MADE=0
NS_A=
APID=
declare -a OUR_NS=()

# in_a CMD...: run CMD where the array runs (its namespace, if any).
in_a ()
{
  if [ -n "$NS_A" ]; then ip netns exec "$NS_A" "$@"; else "$@"; fi
}

# r5ctl ARGS...: raid5ctl where the array runs, bounded to 60 s.
r5ctl ()
{
  if [ -n "$NS_A" ]; then
    timeout 60 ip netns exec "$NS_A" "$R5CTL_BIN" "$@"
  else
    timeout 60 "$R5CTL_BIN" "$@"
  fi
}

# ours PID: is PID a live process of this run (its command line names $W)?
ours ()
{
  [ -n "$1" ] && [ -r "/proc/$1/cmdline" ] &&
    tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$W"
}

kill_ours () { local sig=$1 p; shift; for p in "$@"; do ours "$p" && kill "$sig" "$p" 2>/dev/null; done; return 0; }

# wait_gone PID TENTHS: wait until PID (a child) has ended; its exit
# status goes to WAIT_ST.  Returns 1 if it still runs.
wait_gone ()
{
  local i
  WAIT_ST=
  for (( i = 0; i < $2; i++ )); do
    kill -0 "$1" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$1" 2>/dev/null && return 1
  wait "$1" 2>/dev/null
  WAIT_ST=$?
  return 0
}

A_PRE=()

make_ns_a ()
{
  NS_A=${P}a
  A_PRE=(ip netns exec "$NS_A")
  ip netns add "$NS_A" || return 1
  OUR_NS+=("$NS_A")
  ip netns exec "$NS_A" ip link set lo up
}

# tcp_host D: disk D's namespace and link.
tcp_host ()
{
  local d=$1 ns=${P}m$1 x=$(( $1 % 250 ))
  ip netns add "$ns" || return 1
  OUR_NS+=("$ns")
  DNS[$d]=$ns
  ip link add "${P}h$d" type veth peer name "${P}n$d" &&
  ip link set "${P}h$d" netns "$NS_A" &&
  ip link set "${P}n$d" netns "$ns" &&
  ip netns exec "$NS_A" ip addr add "10.214.$x.1/30" dev "${P}h$d" &&
  ip netns exec "$NS_A" ip link set "${P}h$d" up &&
  ip netns exec "$ns" ip link set lo up &&
  ip netns exec "$ns" ip addr add "10.214.$x.2/30" dev "${P}n$d" &&
  ip netns exec "$ns" ip link set "${P}n$d" up
}

# server_start D: (re)start disk D's nbdkit; waits until it listens.
server_start ()
{
  local d=$1 img=${DIMG[$1]} e i listen=() pre=()
  e=EIO
  rnd 2; [ "$R" = 1 ] && e=ENOSPC
  DERR[$d]=$e
  rm -f "$img.pid"
  case ${DKIND[$d]} in
    unix) rm -f "$img.sock"; listen=(-U "$img.sock") ;;
    tcp) listen=(-i "10.214.$(( d % 250 )).2" -p 10809) ;;
  esac
  # ip netns exec execs nbdkit, so $! is the server itself.  One thread
  # a connection (-t 1): Debian's nbdkit 1.32 with worker threads aborts
  # now and then when its client goes away mid-reply (connections.c:
  # raw_send_socket: Assertion `sock >= 0' failed) -- its bug, which
  # would take a second member out under the array.
  # The cache's blocks are 4 KiB, the array's unit of correction: with
  # its default 64 KiB, rewriting a read-bad sector's page read the rest of
  # the block first, failed on the bad sectors, and listed the page in
  # the member's bad-block log (seed 424242) -- a disk remaps on write.
  [ -n "${DNS[$d]}" ] && pre=(ip netns exec "${DNS[$d]}")
  "${pre[@]}" "$NBDKIT" -f -t 1 "${listen[@]}" -P "$img.pid" \
    --filter=error --filter=cache "$BADSECTOR" file="$img" bad="$img.bad" log="$img.badlog" \
    cache=writeback cache-min-block-size=4K \
    error-pread=EIO error-pread-rate=100% error-pread-file="$img.rerr" \
    error-pwrite=$e error-pwrite-rate=100% error-pwrite-file="$img.werr" \
    error-zero=$e error-zero-rate=100% error-zero-file="$img.werr" \
    error-trim=$e error-trim-rate=100% error-trim-file="$img.werr" \
    >>"$img.log" 2>&1 </dev/null &
  DPID[$d]=$!
  for (( i = 0; i < 100; i++ )); do
    [ -s "$img.pid" ] && { DSRV[$d]=up; return 0; }
    kill -0 "${DPID[$d]}" 2>/dev/null || break
    sleep 0.05
  done
  echo "disk $d: its server did not start: $(tail -n 3 "$img.log")"
  return 1
}

# new_disk KIND: make a disk (image of SIZE, zeroes) and serve it; sets ND.
new_disk ()
{
  local d=$NDISKS_MADE kind=$1 img
  NDISKS_MADE=$(( d + 1 ))
  img=$W/d$d.img
  rm -f "$img"*
  truncate -s "$SIZE" "$img" || return 1
  : >"$img.bad"
  DKIND[$d]=$kind DIMG[$d]=$img DSRV[$d]=up DLINK[$d]=up DNS[$d]=
  case $kind in
    file) DURI[$d]=$img ;;
    unix) DURI[$d]="nbd+unix:///?socket=$img.sock" ;;
    tcp) DURI[$d]="nbd://10.214.$(( d % 250 )).2/"
         tcp_host "$d" 2>>"$W/netns.err" ||
           { echo "disk $d: cannot make its host: $(tail -n 1 "$W/netns.err")"; return 1; } ;;
  esac
  URI2D[${DURI[$d]}]=$d
  ND=$d
  [ "$kind" = file ] || server_start "$d"
}

# retire_disk D: its server stopped, its namespace and image removed.
retire_disk ()
{
  local d=$1
  [ "${DSRV[$d]}" = frozen ] && kill_ours -CONT "${DPID[$d]}"
  if [ -n "${DPID[$d]:-}" ]; then
    kill_ours -TERM "${DPID[$d]}"
    wait_gone "${DPID[$d]}" 50 || { kill_ours -KILL "${DPID[$d]}"; wait_gone "${DPID[$d]}" 20; }
  fi
  DPID[$d]='' DSRV[$d]=down
  if [ -n "${DNS[$d]}" ]; then
    ip netns del "${DNS[$d]}" 2>/dev/null
    DNS[$d]=
  fi
  [ "${KEEP:-0}" = 1 ] || rm -f "${DIMG[$d]}"
}

# disk_available D: can the array reach disk D now?
disk_available ()
{
  local d=$1
  [ "${DKIND[$d]}" = file ] && return 0
  [ "${DSRV[$d]}" = up ] && [ "${DLINK[$d]}" = up ]
}

# servers_check: a server that ended although nobody stopped it (see
# server_start) is said in the log and started again.
servers_check ()
{
  local d st
  for (( d = EPOCH_FIRST_DISK; d < NDISKS_MADE; d++ )); do
    [ "${DKIND[$d]}" != file ] && [ "${DSRV[$d]}" != down ] && [ -n "${DPID[$d]:-}" ] || continue
    kill -0 "${DPID[$d]}" 2>/dev/null && continue
    wait "${DPID[$d]}" 2>/dev/null; st=$?
    log "disk $d's server ended by itself (status $st): $(tail -n 1 "${DIMG[$d]}.log")"
    SERVERS_DIED=$(( ${SERVERS_DIED:-0} + 1 ))
    server_start "$d" >/dev/null || die "disk $d's server does not start again"
  done
}

# disk_restore D: its server running and reachable, no errors armed.
disk_restore ()
{
  local d=$1 img=${DIMG[$1]}
  rm -f "$img.rerr" "$img.werr"
  [ -s "$img.bad" ] && : >"$img.bad"
  [ "${DKIND[$d]}" = file ] && return 0
  if [ "${DLINK[$d]}" = down ]; then
    ip netns exec "$NS_A" ip link set "${P}h$d" up
    DLINK[$d]=up
  fi
  case ${DSRV[$d]} in
    frozen) kill_ours -CONT "${DPID[$d]}"; DSRV[$d]=up ;;
    down) server_start "$d" || return 1 ;;
  esac
  return 0
}

# array_start [force=true]: serve the array on the disks of SLOT_DISK
# (missing where a disk cannot be reached) and its replacement REPL_DISK
# if any; waits until the control socket answers.  Sets APID.  Returns 1
# (the log's last lines in START_ERR) if nbdkit exits instead.
array_start ()
{
  local args=() s d i
  for (( s = 0; s < NSLOTS; s++ )); do
    d=${SLOT_DISK[$s]}
    if [ "$d" != - ] && disk_available "$d"; then
      args+=("disk=${DURI[$d]}")
    else
      args+=(disk=missing)
    fi
  done
  if [ "$REPL_DISK" != - ] && disk_available "$REPL_DISK"; then
    args+=("disk=${DURI[$REPL_DISK]}")
  fi
  rm -f "$W/array.sock" "$W/array.pid"
  echo "=== $(date +%T.%N) start: ${args[*]} $*" >>"$ARRAY_LOG"
  # Not through in_a: $! must be nbdkit itself (ip netns exec execs it).
  "${A_PRE[@]}" "$NBDKIT" -f -U "$W/array.sock" -P "$W/array.pid" "$PLUGIN" "${args[@]}" \
    control="$CTL" member-timeout="$MEMBER_TIMEOUT" \
    sync-speed-min="$SPEED" sync-speed-max="$SPEED" ${INTEGRITY:+integrity="$INTEGRITY"} "$@" \
    >>"$ARRAY_LOG" 2>&1 </dev/null &
  APID=$!
  for (( i = 0; i < 300; i++ )); do
    if [ -s "$W/array.pid" ] && [ -S "$CTL" ]; then
      state_query
      [ -z "$S_ERROR" ] && return 0
    fi
    kill -0 "$APID" 2>/dev/null || break
    sleep 0.05
  done
  wait_gone "$APID" 1 || { kill_ours -KILL "$APID"; wait_gone "$APID" 20; }
  APID=
  START_ERR=$(tail -n 4 "$ARRAY_LOG")
  return 1
}

# array_stop: SIGTERM; it must end with status 0 within 30 s (else
# STOP_ERR says how).
array_stop ()
{
  kill_ours -TERM "$APID"
  if ! wait_gone "$APID" 300; then
    STOP_ERR="nbdkit did not end within 30 s of SIGTERM"
    return 1
  fi
  APID=
  [ "$WAIT_ST" = 0 ] || { STOP_ERR="nbdkit exited with status $WAIT_ST on SIGTERM"; return 1; }
}

# hosts_cleanup: every process of the run -- each names the scratch
# directory on its command line (ours: the array's server, the disks'
# servers, random-io) -- killed, whether or not its pid is still known
# (a disk's server once outlived a run that had lost track of it, and
# held its namespace), then the namespaces removed.
hosts_cleanup ()
{
  local ns
  pkill -KILL -f -- "$W/" 2>/dev/null
  for ns in "${OUR_NS[@]}"; do ip netns del "$ns" 2>/dev/null; done
  return 0
}
