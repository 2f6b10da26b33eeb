# shellcheck shell=bash
# scripts/lib-soak-faults.sh -- the faults the soak injects, which are
# legal in which state, and how the array is brought back whole.
# Sourced by scripts/soak.sh.
#
# Every fault is a function f_KIND TARGET run under the workload; it
# sets NOTE (what happened, for the log).  A member fault's TARGET is a
# slot, or r for the disk a hot replace copies onto.  RAID-5 survives
# one member out, so member faults are legal only while every member is
# in service -- or on the very member being rebuilt or re-added -- and
# while parity is being resynced after a crash only if the crash left the
# stripes it may have torn unknown (HOLE_OK: a member lost then is the
# write hole, its chunks computed from parity the crash may have torn;
# until the resync is over, reads learn nothing: random-io --no-learn).
# A dirty array started degraded with force=true is recorded clean, as
# mdadm --assemble --force does, so nothing ever resyncs the stripes the
# crash tore (md: "starting dirty degraded array - data corruption
# possible"), not even where a member being rebuilt was in sync: until a
# repair has made parity whole again (FORCE_TORN; heal runs it), no member
# fault is legal, nor a check (it would find the torn stripes).

KINDS=(array-kill power-cut member-kill member-freeze link-cut read-eio
       write-error bad-read bad-write pull re-add rebuild check repair grow
       replace)
declare -A WEIGHT=([array-kill]=4 [power-cut]=3 [member-kill]=3 [member-freeze]=3
  [link-cut]=3 [read-eio]=2 [write-error]=3 [bad-read]=2 [bad-write]=2
  [pull]=3 [re-add]=3 [rebuild]=3 [check]=1 [repair]=1 [grow]=3 [replace]=3)

# target_disk T: TD = the disk of slot T (or of the replacement, T = r).
target_disk () { if [ "$1" = r ]; then TD=$REPL_DISK; else TD=${SLOT_DISK[$1]}; fi; }

# member_targets KIND: the legal targets of a member fault, in TARGETS.
member_targets ()
{
  local kind=$1 s cand=() d t
  TARGETS=()
  { [ "$S_CLASS" = resyncing ] || [ "$S_RESYNC_DUE" = 1 ]; } && [ "$HOLE_OK" != 1 ] && return
  [ "$FORCE_TORN" = 1 ] && return
  if [ "$S_NOUT" = 0 ]; then
    for (( s = 0; s < NSLOTS; s++ )); do cand+=("$s"); done
    [ "$REPL_DISK" != - ] && [ "$kind" != pull ] && [ "$kind" != bad-read ] && cand+=(r)
  elif [ "$S_NOUT" = 1 ] && { [ "$S_OUT_STATE" = rebuilding ] || [ "$S_OUT_STATE" = re-adding ]; } &&
       [ "$kind" != bad-read ]; then
    cand=("$S_OUT")
  fi
  # A row a member's bad-block log lists is out on that member already: a
  # fault on another member would be a second one in that row (seed 42,
  # event 309: 4096 bytes lost so).  Only the listing member itself may
  # take one, and none while two members list rows.
  local bb=($S_BB_SLOTS) keep=()
  if [ ${#bb[@]} -gt 1 ]; then
    cand=()
  elif [ ${#bb[@]} = 1 ]; then
    for t in "${cand[@]}"; do [ "$t" = "${bb[0]}" ] && keep+=("$t"); done
    cand=("${keep[@]}")
  fi
  for t in "${cand[@]}"; do
    target_disk "$t"; d=$TD
    [ "$d" = - ] && continue
    case $kind in
      pull) [ "$t" != r ] && TARGETS+=("$t") ;;
      link-cut) [ "${DKIND[$d]}" = tcp ] && disk_available "$d" && TARGETS+=("$t") ;;
      *) [ "${DKIND[$d]}" != file ] && disk_available "$d" && TARGETS+=("$t") ;;
    esac
  done
}

# legal KIND: can KIND land now?  Sets TARGETS (one word for the others).
legal ()
{
  local kind=$1 idle=0 d
  TARGETS=()
  [ "$S_CLASS" = healthy ] && [ "$S_JOB" = idle ] && [ "$S_RESYNC_DUE" = 0 ] && idle=1
  case $kind in
    array-kill) TARGETS=(-) ;;
    power-cut)
      # Every served disk up (a member out may be away for good).
      for d in $(served_disks); do disk_available "$d" || return 1; done
      [ -n "$(served_disks)" ] && TARGETS=(-) ;;
    member-*|link-cut|read-eio|write-error|bad-*|pull) member_targets "$kind" ;;
    re-add)
      d=${SLOT_DISK[$S_OUT]:--}
      [ "$BITMAP" = internal ] && [ "$S_CLASS" = degraded ] && [ "$S_JOB" = idle ] &&
        [ "$d" != - ] && disk_available "$d" && TARGETS=("$S_OUT") ;;
    rebuild)
      [ "$S_CLASS" = degraded ] && [ "$S_JOB" = idle ] && TARGETS=("$S_OUT") ;;
    check) [ $idle = 1 ] && [ "$FORCE_TORN" = 0 ] && TARGETS=(-) ;;
    repair|replace) [ $idle = 1 ] && TARGETS=(-) ;;
    # While at most one member's bad-block log lists rows: the reshape
    # computes them from the rest of their rows, as md does; rows listed
    # on two members stop it at their window (an error, bytes already
    # lost), which the soak does not set out to meet.
    grow) [ $idle = 1 ] && [ "$POLICY" != ppl ] && [ -z "$INTEGRITY" ] &&
            [ "$NSLOTS" -lt "$MAX_MEMBERS" ] &&
            [ "$(wc -w <<<"$S_BB_SLOTS")" -le 1 ] && TARGETS=(-) ;;
  esac
  [ ${#TARGETS[@]} -gt 0 ]
}

# leads_to KIND: LEAD = the state KIND puts the array in, if another.
leads_to ()
{
  LEAD=
  case $1 in
    array-kill|power-cut) [ "$S_NOUT" = 0 ] && [ "$POLICY" != ppl ] && LEAD=resyncing ;;
    re-add) LEAD=re-adding ;;
    rebuild) LEAD=rebuilding ;;
    check|repair) LEAD=checking ;;
    grow) LEAD=growing ;;
    replace) LEAD=replacing ;;
    *) [ "$S_NOUT" = 0 ] && LEAD=degraded ;;
  esac
}

# least_state: LEAST = how many faults landed in the state that has had
# the fewest, of those this array can be in (no re-add without a bitmap;
# with a partial parity log no resync after a crash, and no grow: md
# reshapes no array that keeps one, nor does the plugin one with an
# integrity record).
least_state ()
{
  local st n
  LEAST=
  for st in healthy degraded resyncing rebuilding re-adding growing replacing checking; do
    [ "$BITMAP" = none ] && [ $st = re-adding ] && continue
    [ "$POLICY" = ppl ] && [ $st = resyncing ] && continue
    { [ "$POLICY" = ppl ] || [ -n "$INTEGRITY" ]; } && [ $st = growing ] && continue
    n=${STATE_N[$st]:-0}
    [ -z "$LEAST" ] || [ "$n" -lt "$LEAST" ] && LEAST=$n
  done
}

# pick_fault: a kind legal now, weighted towards the (kind, state) pairs
# seen least, and four times more where it leads to one of the states
# that have had the fewest faults; KIND and TARGET.
pick_fault ()
{
  local k w sum=0 ks=() ws=() i
  least_state
  for k in "${KINDS[@]}"; do
    legal "$k" || continue
    w=$(( WEIGHT[$k] * 1000 / (1 + ${SEEN["$k/$S_CLASS"]:-0}) ))
    leads_to "$k"
    [ -n "$LEAD" ] && [ "${STATE_N[$LEAD]:-0}" -le $(( LEAST + 1 )) ] && w=$(( w * 4 ))
    ks+=("$k") ws+=("$w") sum=$(( sum + w ))
  done
  rnd "$sum"
  for (( i = 0; i < ${#ks[@]}; i++ )); do
    R=$(( R - ws[i] ))
    [ $R -lt 0 ] && break
  done
  KIND=${ks[$i]}
  legal "$KIND"
  rnd ${#TARGETS[@]}
  TARGET=${TARGETS[$R]}
}

# wait_out T D SECONDS: wait until target T (disk D) is out of service
# (a slot not active; the replacement no longer copying), or D is no
# longer in the array (a replace ended meanwhile).
wait_out ()
{
  if [ "$1" = r ]; then
    wait_state '[ "$REPL_DISK" != '"$2"' ]' "$3"
  else
    wait_state "[ \"\${SLOT_DISK[$1]}\" != $2 ] || [[ ! \"\${S_MSTATE[$1]}\" =~ ^(active|rebuilding|re-adding)\$ ]]" "$3"
  fi
}

# outcome T D SECONDS: NOTE gets whether T (disk D) went out.
outcome ()
{
  if ! wait_out "$@"; then
    NOTE+="; stayed in ($S_HEALTH)"
  elif [ "$1" != r ] && [ "${SLOT_DISK[$1]}" != "$2" ]; then
    NOTE+="; no longer a member ($S_HEALTH)"
  else
    NOTE+="; out ($S_HEALTH${S_OUT_FAULT:+, $S_OUT_FAULT})"
  fi
}

# --- the faults ---------------------------------------------------------------

# kill_under_load [power]: kill -9 of the array's server under a workload
# round of its own; with power, of every member server too at the same
# moment (a power cut: they lose what was not flushed, random-io
# --power-loss), which are started again.  Then the array is.  Degraded,
# requests in flight (and with power writes not flushed) leave their
# whole stripes unknown (the write hole: random-io --write-hole).  Whole,
# one time in two as well: then a member may be lost while the resync that
# follows runs (HOLE_OK), since nothing known lies in a stripe the kill may
# have torn.  With a partial parity log there is no write hole, degraded
# or not (md's raid5-ppl.rst; the plugin's recovery at start): only what
# was in flight is unknown, and the array starts dirty and degraded
# without force=true.
kill_under_load ()
{
  local hole=() power=() st i d what=killed
  [ "${1:-}" = power ] && power=(--power-loss) what="power cut"
  load_stop
  rnd 2
  HOLE_OK=0
  if [ "$POLICY" = ppl ]; then
    :
  elif [ "$S_NOUT" -gt 0 ]; then
    hole=(--write-hole)
  elif [ "$R" = 1 ]; then
    hole=(--write-hole)
    # Not if an earlier kill's torn stripes may not be resynced yet.  What
    # a torn stripe reads may change if a member is lost before the resync
    # mends it: nothing is learned until then (UNSTABLE: --no-learn).
    [ "$TORN" = 1 ] || HOLE_OK=1 UNSTABLE=1
  else
    TORN=1
  fi
  # Mid-reshape an address is in the old shape or the new one, as far as
  # the reshape has gone: the stripes of both are made unknown.  (Seed 42
  # once "lost" 4096 bytes on the missing member in a torn stripe of the
  # old shape, above the line, which the new shape's stripes did not
  # cover: md's write hole, not the array's error.)
  local shape=(--disks "$S_NDISKS")
  [ "$S_GROW" = 1 ] && shape=(--disks "$S_GROW_TO" --old-disks "$S_GROW_FROM")
  # Made empty here: the child's '>' would come after the first look.
  : >"$W/kill.out"
  timeout 120 "$RANDOM_IO" "$URI" auto --seed $(( SEED % 100000 * 100000 + EV_N * 100 + 99 )) \
    --ops 100000000 --threads 4 --chunk 64K "${shape[@]}" --max-len 2M --crash-ok \
    "${hole[@]}" "${power[@]}" --no-final --model-in "$MODEL" --model-out "$MODEL" \
    >"$W/kill.out" 2>&1 &
  local rio=$! t0=$EPOCHREALTIME
  for (( i = 0; i < 600; i++ )); do
    grep -q running "$W/kill.out" && break
    kill -0 $rio 2>/dev/null || break
    sleep 0.05
  done
  grep -q running "$W/kill.out" || kill -0 $rio 2>/dev/null || sleep 0.2
  log "the workload to be killed under started in $(elapsed "$t0") s"
  if ! grep -q running "$W/kill.out"; then
    wait_gone $rio 100
    die "the workload could not start (array: $(array_gone_why)): $(head -n 3 "$W/kill.out" | tr '\n' ' ')"
  fi
  rnd 8; sleep "0.$(( R + 1 ))"
  kill_ours -KILL "$APID"
  if [ ${#power[@]} -gt 0 ]; then
    for d in $(served_disks); do kill_ours -KILL "${DPID[$d]}"; done
  fi
  wait_gone "$APID" 100 || die "hang: the array's server outlived kill -9 for 10 s"
  APID=
  wait_gone "$rio" 300 || { kill_ours -KILL "$rio"; die "hang: random-io did not end after the kill"; }
  st=$WAIT_ST
  cat "$W/kill.out" >>"$W/load.log"
  [ "$st" = 0 ] && grep -q 'server went away' "$W/kill.out" ||
    { LOST=$(( LOST + $(lost_in "$W/kill.out") ))
      die "the workload before the kill failed: $(grep -m 2 -E 'MISMATCH|failed|FAILED' "$W/kill.out" | tr '\n' ' ')"; }
  NOTE="$what ${hole[*]:+(their stripes unknown) }$(grep -m 1 -o 'after [0-9]* requests' "$W/kill.out")"
  if [ ${#power[@]} -gt 0 ]; then
    NOTE+=" ($(sed -n 's/.*; \([0-9]*\) writes not flushed.*/\1/p' "$W/kill.out") writes not flushed)"
    for d in $(served_disks); do
      wait_gone "${DPID[$d]}" 50
      server_start "$d" >/dev/null || die "disk $d's server does not start again"
    done
  fi
  restart_array
}

f_array-kill () { kill_under_load; }
f_power-cut () { kill_under_load power; }

# served_disks: the array's disks (and its replacement's) that an NBD
# server serves, all of them up.
served_disks ()
{
  local s d
  for (( s = 0; s < NSLOTS; s++ )); do
    d=${SLOT_DISK[$s]}
    [ "$d" != - ] && [ "${DKIND[$d]}" != file ] && echo "$d"
  done
  [ "$REPL_DISK" != - ] && [ "${DKIND[$REPL_DISK]}" != file ] && echo "$REPL_DISK"
  return 0
}

# restart_array: start the array again on its disks; a dirty array
# missing a member needs force=true (md: cannot start dirty degraded),
# but one with a partial parity log (md starts it: its log mends what the
# crash tore).
restart_array ()
{
  servers_check
  if ! array_start; then
    if grep -q 'force=true' <<<"$START_ERR" && [ "$POLICY" != ppl ]; then
      array_start force=true || die "the array does not start with force=true: $START_ERR"
      NOTE+="; started with force=true"
      FORCED=$(( FORCED + 1 )) FORCE_TORN=1
    else
      die "the array does not start again: $START_ERR"
    fi
  fi
  LAST_JOB_SEEN=0
  RESTARTS=$(( RESTARTS + 1 ))
  observe
  NOTE+="; back as $S_HEALTH $S_JOB"
}

# A member's server killed (kill -9) or, one time in two, stopped (SIGTERM:
# a service stopped, a host rebooting; nbdkit answers NBD_ESHUTDOWN until
# its clients let go, which the array does for a member lost or out of
# service): a lost link either way.  A server that has not ended 10 s
# later is killed, and the note says so.
f_member-kill ()
{
  local d
  target_disk "$1"; d=$TD
  rnd 2
  if [ "$R" = 1 ]; then
    kill_ours -TERM "${DPID[$d]}"
    DSRV[$d]=down
    NOTE="disk $d's server stopped (SIGTERM)"
    outcome "$1" "$d" $(( MEMBER_TIMEOUT * 3 + 3 ))
    if ! wait_gone "${DPID[$d]}" 100; then
      kill_ours -KILL "${DPID[$d]}"
      wait_gone "${DPID[$d]}" 50
      NOTE+="; it did not end in 10 s: killed"
    fi
  else
    kill_ours -KILL "${DPID[$d]}"
    wait_gone "${DPID[$d]}" 50
    DSRV[$d]=down
    NOTE="disk $d's server killed (its unflushed writes lost)"
    outcome "$1" "$d" $(( MEMBER_TIMEOUT * 3 + 3 ))
  fi
  rnd 2
  if [ "$R" = 1 ]; then
    server_start "$d" >/dev/null || die "disk $d's server does not start again"
    NOTE+="; its server started again"
  fi
}

f_member-freeze ()
{
  local d
  target_disk "$1"; d=$TD
  kill_ours -STOP "${DPID[$d]}"
  DSRV[$d]=frozen
  NOTE="disk $d's server stopped (SIGSTOP)"
  outcome "$1" "$d" $(( MEMBER_TIMEOUT * 3 + 3 ))
  rnd 10; sleep "0.$R"
  kill_ours -CONT "${DPID[$d]}"
  DSRV[$d]=up
  NOTE+="; resumed"
}

f_link-cut ()
{
  local d
  target_disk "$1"; d=$TD
  ip netns exec "$NS_A" ip link set "${P}h$d" down
  DLINK[$d]=down
  NOTE="disk $d's link down"
  outcome "$1" "$d" $(( MEMBER_TIMEOUT * 3 + 3 ))
  rnd 10; sleep "0.$R"
  ip netns exec "$NS_A" ip link set "${P}h$d" up
  DLINK[$d]=up
  NOTE+="; link up"
}

f_read-eio ()
{
  local d
  target_disk "$1"; d=$TD
  touch "${DIMG[$d]}.rerr"
  NOTE="disk $d: every read fails (EIO)"
  outcome "$1" "$d" 8
  rm -f "${DIMG[$d]}.rerr"
}

f_write-error ()
{
  local d
  target_disk "$1"; d=$TD
  touch "${DIMG[$d]}.werr"
  NOTE="disk $d: every write fails (${DERR[$d]})"
  outcome "$1" "$d" 8
  rm -f "${DIMG[$d]}.werr"
}

# bad_sectors D WHAT N: N runs of 1 to 16 sectors of disk D's data area
# listed as WHAT (read: fail until written; write: fail for good).
bad_sectors ()
{
  local d=$1 what=$2 n=$3 first last i
  first=$(( S_DOFF / 512 )) last=$(( $(to_bytes "$SIZE") / 512 - 16 ))
  for (( i = 0; i < n; i++ )); do
    rnd $(( last - first )); local at=$(( first + R ))
    rnd 16; echo "$what $at $(( R + 1 ))"
  done >"${DIMG[$d]}.bad"
}

f_bad-read ()
{
  local d c0 c1
  target_disk "$1"; d=$TD
  c0=$(grep -c '^remapped' "${DIMG[$d]}.badlog" 2>/dev/null)
  rnd 4; bad_sectors "$d" read $(( R + 1 ))
  NOTE="disk $d: $(wc -l <"${DIMG[$d]}.bad") runs of read-bad sectors"
  sleep 1
  observe
  c1=$(grep -c '^remapped' "${DIMG[$d]}.badlog" 2>/dev/null)
  NOTE+="; $(( ${c1:-0} - ${c0:-0} )) remapped by now, $S_HEALTH"
}

f_bad-write ()
{
  local d
  target_disk "$1"; d=$TD
  rnd 2; bad_sectors "$d" write $(( R + 1 ))
  NOTE="disk $d: $(wc -l <"${DIMG[$d]}.bad") runs of unwritable sectors"
  outcome "$1" "$d" 2
}

f_pull ()
{
  local out
  out=$(r5ctl --control "$CTL" fail "$1" 2>&1) || die "raid5ctl fail $1: $out"
  NOTE="raid5ctl fail $1: $out"
  observe
}

f_re-add ()
{
  local out path=()
  [ "$S_OUT_STATE" = missing ] && path=("${DURI[${SLOT_DISK[$1]}]}")
  if out=$(r5ctl --control "$CTL" re-add "$1" "${path[@]}" 2>&1); then
    NOTE="re-add $1: $out"
    READD_HAND=$(( READD_HAND + 1 ))
  else
    NOTE="re-add $1 refused: $out"
  fi
  observe
}

# f_rebuild SLOT: in place, or (one time in three, or when its disk is
# away) onto a new disk.
f_rebuild ()
{
  local out d=${SLOT_DISK[$1]} path=() new=0
  rnd 3
  if [ "$d" != - ] && disk_available "$d" && [ "$R" != 0 ]; then
    [ "$S_OUT_STATE" = missing ] && path=("${DURI[$d]}")
    NOTE="rebuild $1 in place"
  else
    next_kind; new_disk "$NK" >/dev/null || die "cannot make a disk"
    path=("${DURI[$ND]}") new=1
    NOTE="rebuild $1 onto disk $ND"
  fi
  if out=$(r5ctl --control "$CTL" rebuild "$1" "${path[@]}" 2>&1); then
    if [ $new = 1 ]; then REBUILD_NEW=$(( REBUILD_NEW + 1 ))
    else REBUILD_IN_PLACE=$(( REBUILD_IN_PLACE + 1 )); fi
  elif [[ "$out" == *"is in service"* ]]; then
    # A member lost with its link came back by itself (a bitmap's
    # re-add) between the look at the state and the command (seed 42,
    # event 405): refused as md refuses, and nothing to do.
    NOTE+=" refused, the slot came back by itself meanwhile: $out"
  else
    die "raid5ctl rebuild $1 ${path[*]}: $out"
  fi
  observe
  NOTE+=": $S_HEALTH $S_JOB"
}

f_check () { local out; out=$(r5ctl --control "$CTL" check 2>&1) || die "raid5ctl check: $out"; NOTE=$out; observe; }
f_repair () { local out; out=$(r5ctl --control "$CTL" repair 2>&1) || die "raid5ctl repair: $out"; NOTE=$out; observe; }

f_grow ()
{
  local out
  next_kind; new_disk "$NK" >/dev/null || die "cannot make a disk"
  out=$(r5ctl --control "$CTL" grow --add "${DURI[$ND]}" 2>&1) || die "raid5ctl grow --add: $out"
  NOTE="grow onto disk $ND: $out"
  observe
}

f_replace ()
{
  local out slot
  rnd "$NSLOTS"; slot=$R
  next_kind; new_disk "$NK" >/dev/null || die "cannot make a disk"
  out=$(r5ctl --control "$CTL" replace "$slot" "${DURI[$ND]}" 2>&1) ||
    die "raid5ctl replace $slot: $out"
  NOTE="replace slot $slot by disk $ND: $out"
  observe
}

# --- whole again --------------------------------------------------------------

# heal: every disk reachable and without errors, then whatever the array
# needs -- waiting for its jobs, for a member to come back by itself (a
# few seconds), re-add or rebuild by hand -- until it is healthy and idle;
# and rows a member lists in its bad-block log since it failed a write
# made rewritable (a restart).
heal ()
{
  local s d end=$(( SECONDS + HEAL_TIMEOUT )) since=$SECONDS tries=0 out path
  local bb_restarts=0 stuck load
  # Jobs crawl (SPEED) while faults land in them; healing, they run.
  out=$(r5ctl --control "$CTL" speed --min "$HEAL_SPEED" --max "$HEAL_SPEED" 2>&1) ||
    die "raid5ctl speed does not answer: $out"
  servers_check
  for (( s = 0; s < NSLOTS; s++ )); do
    d=${SLOT_DISK[$s]}
    [ "$d" = - ] || disk_restore "$d" >/dev/null || die "disk $d cannot be restored"
  done
  [ "$REPL_DISK" = - ] || disk_restore "$REPL_DISK" >/dev/null
  while :; do
    observe
    if [ "$S_CLASS" = healthy ] && [ "$S_JOB" = idle ] && [ "$S_RESYNC_DUE" = 0 ]; then
      if [ -n "$S_BB_STUCK" ] && [ $bb_restarts -lt 1 ]; then
        # A member that failed a write keeps its listed rows until the
        # array starts again (md's rule: no rewrite where writes fail);
        # its disk is good now, so a clean restart lets the next
        # read-back rewrite them and clear the log.  The workload stops
        # first (a stop under it fails its requests with ESHUTDOWN) and
        # goes on after, as it was.
        stuck=$S_BB_STUCK load=${LOAD_PID:+1}
        load_stop
        array_stop || die "heal: $STOP_ERR"
        restart_array
        [ -z "$load" ] || load_start
        bb_restarts=$(( bb_restarts + 1 ))
        log "heal: restarted so that slots $stuck's listed rows are rewritten"
        continue
      fi
      if [ "$FORCE_TORN" = 1 ]; then
        # What an admin does after force=true, once the array is whole.
        out=$(r5ctl --control "$CTL" repair --wait 2>&1)
        log "heal: repair after force=true: $(tail -n 1 <<<"$out")"
        continue
      fi
      out=$(r5ctl --control "$CTL" speed --min "$SPEED" --max "$SPEED" 2>&1) ||
        die "raid5ctl speed does not answer: $out"
      return 0
    fi
    [ $SECONDS -ge $end ] &&
      die "hang: not healthy within ${HEAL_TIMEOUT} s of healing: $S_HEALTH $S_CLASS job $S_JOB $S_JOB_DONE/$S_JOB_TOTAL${out:+ (last: $out)}"
    if [ "$S_JOB" != idle ] || [ "$S_NOUT" = 0 ]; then
      sleep 0.2
      continue
    fi
    s=$S_OUT d=${SLOT_DISK[$S_OUT]}
    # Lost with its link, it comes back by itself (bitmap arrays).
    if [ "$BITMAP" = internal ] && [ $(( SECONDS - since )) -lt "$COMEBACK_WAIT" ] &&
       [[ "$S_OUT_COMEBACK" =~ ^(waiting|trying)$ ]]; then
      sleep 0.2
      continue
    fi
    # What is refused (the slot came back meanwhile, a job started) is
    # looked at again; the time limit above ends a heal that goes nowhere.
    tries=$(( tries + 1 ))
    [ $tries -gt 8 ] && die "slot $s is not taken back: $out"
    path=()
    [ "$S_OUT_STATE" = missing ] && [ "$d" != - ] && path=("${DURI[$d]}")
    rnd 10
    if [ "$BITMAP" = internal ] && [ "$R" -lt 7 ] && [ $tries -le 2 ]; then
      out=$(r5ctl --control "$CTL" re-add "$s" "${path[@]}" 2>&1) &&
        READD_HAND=$(( READD_HAND + 1 ))
      log "heal: re-add $s: $out"
    elif [ "$R" -lt 9 ] && [ $tries -le 4 ] && [ "$d" != - ]; then
      out=$(r5ctl --control "$CTL" rebuild "$s" "${path[@]}" 2>&1) &&
        REBUILD_IN_PLACE=$(( REBUILD_IN_PLACE + 1 ))
      log "heal: rebuild $s in place: $out"
    else
      next_kind; new_disk "$NK" >/dev/null || die "cannot make a disk"
      out=$(r5ctl --control "$CTL" rebuild "$s" "${DURI[$ND]}" 2>&1) &&
        REBUILD_NEW=$(( REBUILD_NEW + 1 ))
      log "heal: rebuild $s onto disk $ND: $out"
    fi
    sleep 0.2
  done
}
