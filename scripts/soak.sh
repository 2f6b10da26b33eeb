#!/bin/bash
# scripts/soak.sh -- a thousand faults and nothing lost: one seeded run
# that keeps a verified workload going on a served array while it injects
# faults of every kind in every state the array can be in.
#
#   scripts/soak.sh [--events N] [--seed S] [--members local|nbd|mixed]
#                   [--epoch N] [--policy bitmap|resync|ppl] [--integrity on|off]
#                   [--build DIR] [--keep]
#
# The array (nbdkit raid5, control=SOCKET, member-timeout=1) is made of
# three members that are image files (local), NBD exports (nbd: nbdkit
# serving a file through its error and cache filters and the badsector
# test plugin, on Unix sockets or on hosts of their own -- network
# namespaces joined by veth pairs), or both (mixed, the default).  The
# workload is random-io over 4 connections in rounds that carry its model
# of every byte acknowledged (lib-soak-load.sh).  Each event picks, by
# the seed, a fault legal in the state the array is in (status --json:
# healthy, degraded, resyncing, rebuilding, re-adding, growing,
# replacing, checking), weighted towards the pairs seen least and the
# states least visited (lib-soak-faults.sh): kill -9 of the array's
# server and its restart; a power cut (that and every member server at
# once, losing what they were not asked to flush); a member's server
# killed (with its unflushed writes) or frozen (SIGSTOP) past the member
# timeout; its link cut; reads or
# writes failing (EIO, ENOSPC); bad sectors (read-bad ones corrected,
# unwritable ones failing the member); raid5ctl fail, re-add, rebuild
# (in place or onto a new disk), check, repair, grow and replace.  Never
# two members out at once: that loses data in RAID-5 by definition.
# After each fault every known byte is read back through the array and
# compared; the array is then left as it is for the next fault (so that
# faults land in degraded arrays and in running jobs) or made whole
# (heal: a member lost with its link comes back by itself; otherwise
# re-add or rebuild; after force=true, a repair), which the next fault's
# read-back checks.
#
# Without a write-intent bitmap nothing can be re-added, and with one a
# resync visits only what it marks, so the run makes a new array every
# --epoch events (default 50), every other one with an internal bitmap
# and between them, in turn, one without (consistency policy resync) and
# one with a partial parity log (ppl: no write hole, so a crash leaves
# only what was in flight unknown, and no grow); --policy makes every
# array one kind.  Every other array keeps an integrity record
# (integrity=FILE; --integrity on|off for all): as no fault spoils bytes
# silently, a unit that fails its checksum is a failure of the run.
# Each array's end: made whole, read back,
# raid5ctl check online, a clean stop, then its member images offline:
# raid5ctl check (mismatch_cnt 0) and member-check against the model.
#
# Output: the seed first, a line per event, then the tables (faults by
# kind and state, time to recover, bytes verified) and last `bytes lost:
# N`.  Exit status 0 only if nothing was lost and nothing failed; 77
# (one line) when something it needs is missing.  A failure says the
# seed to run again with; the choices follow from the seed, though the
# timing of a machine can still make a run take another branch.

set -u
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
EVENTS=100 SEED='' MEMBERS=mixed EPOCH_EVENTS=50 KEEP=0 ONLY_POLICY= ONLY_INTEGRITY=
BUILD=${R5_BUILD:-$top/build}

usage ()
{
  sed -n '3,7p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  exit "${1:-0}"
}

while [ $# -gt 0 ]; do
  case $1 in
    --events) EVENTS=$2; shift ;;
    --seed) SEED=$2; shift ;;
    --members) MEMBERS=$2; shift ;;
    --epoch) EPOCH_EVENTS=$2; shift ;;
    --policy) ONLY_POLICY=$2; shift ;;
    --integrity) ONLY_INTEGRITY=$2; shift ;;
    --build) BUILD=$2; shift ;;
    --keep) KEEP=1 ;;
    -h|--help) usage 0 ;;
    *) echo "soak.sh: unknown option $1" >&2; usage 2 ;;
  esac
  shift
done
[[ "$EVENTS" =~ ^[0-9]+$ ]] && [[ "$EPOCH_EVENTS" =~ ^[1-9][0-9]*$ ]] ||
  { echo "soak.sh: --events and --epoch take numbers" >&2; exit 2; }
case $MEMBERS in local|nbd|mixed) ;; *) echo "soak.sh: --members local|nbd|mixed" >&2; exit 2 ;; esac
case $ONLY_POLICY in ''|bitmap|resync|ppl) ;; *) echo "soak.sh: --policy bitmap|resync|ppl" >&2; exit 2 ;; esac
case $ONLY_INTEGRITY in ''|on|off) ;; *) echo "soak.sh: --integrity on|off" >&2; exit 2 ;; esac
: "${SEED:=$(( $(date +%s%N) / 1000 % 1000000000 ))}"
[[ "$SEED" =~ ^[0-9]+$ ]] || { echo "soak.sh: --seed takes a number" >&2; exit 2; }

echo "soak: seed $SEED, $EVENTS events, members $MEMBERS (scripts/soak.sh --seed $SEED --events $EVENTS --epoch $EPOCH_EVENTS --members $MEMBERS${ONLY_POLICY:+ --policy $ONLY_POLICY}${ONLY_INTEGRITY:+ --integrity $ONLY_INTEGRITY} repeats it)"

# --- what it needs ------------------------------------------------------------

skip () { echo "soak: SKIP: $*"; exit 77; }
NBDKIT=$(command -v nbdkit) || skip "needs nbdkit"
PLUGIN=$BUILD/plugin/.libs/nbdkit-raid5-plugin.so
R5CTL_BIN=$BUILD/tools/raid5ctl
RANDOM_IO=$BUILD/tests/integration/random-io
MEMBER_CHECK=$BUILD/tests/integration/member-check
BADSECTOR=$BUILD/tests/integration/.libs/nbdkit-badsector-plugin.so
HELPER=$top/scripts/soak-helper.py
[ -f "$PLUGIN" ] && [ -x "$R5CTL_BIN" ] || skip "not built: $PLUGIN, $R5CTL_BIN (scripts/check.sh --quick builds them)"
if [ ! -x "$RANDOM_IO" ] || [ ! -x "$MEMBER_CHECK" ] || [ ! -f "$BADSECTOR" ]; then
  # Under a lock: two soaks at once (as check.sh runs them) would both
  # build them in the same folder.
  flock "$BUILD/.soak-build.lock" make -C "$BUILD" -j1 check TESTS= >/dev/null 2>&1 ||
    skip "cannot build the test programs (make -C $BUILD check TESTS=)"
fi
[ -x /usr/bin/python3 ] || skip "needs /usr/bin/python3"
command -v nbdinfo >/dev/null || skip "needs nbdinfo (libnbd-bin)"
if [ "$MEMBERS" != local ]; then
  [ "$(id -u)" = 0 ] || skip "--members $MEMBERS needs root (network namespaces)"
  command -v ip >/dev/null || skip "--members $MEMBERS needs ip (iproute2)"
  "$NBDKIT" --filter=error null --version >/dev/null 2>&1 || skip "needs nbdkit's error filter"
fi

# --- the run's state ----------------------------------------------------------

W=$(mktemp -d "${TMPDIR:-/tmp}/r5soak.XXXXXX")
# What commands say on stderr (and bash's word of each server killed)
# goes to a file; the run speaks on stdout.
exec 2>>"$W/stderr.log"
P=r5k$(( $$ % 100000 ))               # namespace and link names <= 15 characters
CTL=$W/array.ctl
URI="nbd+unix:///?socket=$W/array.sock"
ARRAY_LOG=$W/array.log
SIZE=8M CHUNK=64K MAX_MEMBERS=5
MAX_DEFER=4 MEMBER_TIMEOUT=1 SPEED=200 HEAL_SPEED=100000 HEAL_TIMEOUT=180 COMEBACK_WAIT=4
EPOCH=0 EV_N=0 DEFER=0 FAILED=0 DIE_DETAIL= RESTARTS=0 FORCED=0 READD_HAND=0
REBUILD_IN_PLACE=0 REBUILD_NEW=0 LAST_JOB_SEEN=0 KIND_N=0 START=$SECONDS
declare -a SLOT_DISK EVK EVS EVT EVT0 EVT1 EVNOTE
declare -A SEEN STATE_N JOBS_ENDED
NSLOTS=3 REPL_DISK=- MODEL='' BITMAP=internal POLICY=bitmap INTEGRITY= HOLE_OK=0 TORN=0 UNSTABLE=0 FORCE_TORN=0 KIND=- S_CLASS=- S_HEALTH=- S_JOB=-

. "$top/scripts/lib-soak-hosts.sh"
. "$top/scripts/lib-soak-load.sh"
. "$top/scripts/lib-soak-faults.sh"

log () { echo "$(date +%T.%N | cut -c1-12) $*" >>"$W/soak.log"; }

# elapsed T0 [T1]: seconds from T0 to T1 (default now), $EPOCHREALTIME's.
elapsed () { awk -v a="$1" -v b="${2:-$EPOCHREALTIME}" 'BEGIN { printf "%.2f", b - a }'; }

# rnd N: R = the seed's next number in [0, N).
_rs=$(( SEED % 2147483647 + 1 ))
rnd ()
{
  _rs=$(( (_rs * 48271) % 2147483647 ))
  R=$(( $1 > 0 ? _rs % $1 : 0 ))
}

to_bytes ()
{
  case $1 in
    *K) echo $(( ${1%K} * 1024 )) ;;
    *M) echo $(( ${1%M} * 1048576 )) ;;
    *) echo "$1" ;;
  esac
}

# next_kind: NK = the kind of the next disk made, in turn: local files;
# NBD exports on a host of their own and on a Unix socket; or all three.
next_kind ()
{
  local kinds
  case $MEMBERS in
    local) kinds=(file) ;;
    nbd) kinds=(tcp unix) ;;
    mixed) kinds=(file unix tcp) ;;
  esac
  NK=${kinds[$(( KIND_N % ${#kinds[@]} ))]}
  KIND_N=$(( KIND_N + 1 ))
}

# mark_recovered: the array is healthy: the events before now that were
# waiting for it have their recovery time.
mark_recovered ()
{
  local i now=$EPOCHREALTIME
  for (( i = ${FIRST_PENDING:-1}; i <= EV_N; i++ )); do
    [ -n "${EVNOTE[$i]+x}" ] || break        # its fault is still landing
    [ -n "${EVT1[$i]:-}" ] || EVT1[$i]=$now
  done
  FIRST_PENDING=$i
}

cleanup ()
{
  local st=$?
  [ -n "$LOAD_PID" ] && { touch "$W/load.stop"; kill_ours -KILL $(pgrep -P "$LOAD_PID" 2>/dev/null); }
  hosts_cleanup
  if [ "$KEEP" = 1 ] || [ $FAILED = 1 ]; then
    echo "soak: scratch kept: $W"
  else
    rm -rf "$W"
  fi
  exit $st
}
trap cleanup EXIT
trap 'die "interrupted"' INT TERM

# --- the report ---------------------------------------------------------------

report ()
{
  local i f=$W/events.tsv secs=$(( SECONDS - START )) cpu comebacks
  for (( i = 1; i <= EV_N; i++ )); do
    [ -n "${EVK[$i]:-}" ] || continue
    printf '%d\t%s\t%s\t%s\t%s\t%s\t%s\n' "$i" "${EVK[$i]}" "${EVS[$i]}" "${EVT[$i]}" \
      "${EVT0[$i]}" "${EVT1[$i]:--}" "${EVNOTE[$i]:-(under way)}"
  done >"$f"
  "$HELPER" report "$f" "$W/table.txt" && { echo; cat "$W/table.txt"; }
  cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
  comebacks=$(grep -c 'answers again: re-added' "$ARRAY_LOG" 2>/dev/null)
  echo
  echo "arrays: $EPOCH (a new one every $EPOCH_EVENTS events, an internal bitmap and, in turn, none or a partial parity log between; every other one an integrity record), $NDISKS_MADE disks ($MEMBERS)"
  echo "workload: $OPS_TOTAL requests in $OPS_ROUNDS rounds over 4 connections (read ${OPS_BY[read]}, write ${OPS_BY[write]}, zero ${OPS_BY[zero]}, trim ${OPS_BY[trim]}, flush ${OPS_BY[flush]})"
  echo "bytes verified: $VERIFIED in $VERIFIES read-backs of the whole array against the model"
  echo "back in service: by itself $comebacks, re-add by hand $READD_HAND, rebuild in place $REBUILD_IN_PLACE, onto a new disk $REBUILD_NEW; array restarts $RESTARTS (force=true $FORCED)"
  echo "jobs ended: $(for k in "${!JOBS_ENDED[@]}"; do printf '%s %s, ' "$k" "${JOBS_ENDED[$k]}"; done | sed 's/, $//')"
  echo "time: $(( secs / 60 ))m$(printf %02d $(( secs % 60 )))s on $(nproc) x $cpu; seed $SEED"
  echo "bytes lost: $LOST"
}

# die WHY: the run fails here; the report so far and what led to it.
die ()
{
  [ $FAILED = 1 ] && exit 1
  FAILED=1
  echo "soak: FAIL at event $EV_N (${KIND} in ${S_CLASS}, array $S_HEALTH job $S_JOB): $*; seed $SEED"
  [ -z "${DIE_DETAIL:-}" ] || sed 's/^/   /' <<<"$DIE_DETAIL"
  echo "soak: the events before it:"
  for (( i = EV_N > 6 ? EV_N - 6 : 1; i <= EV_N; i++ )); do
    [ -n "${EVK[$i]:-}" ] && echo "   $i ${EVK[$i]} (slot ${EVT[$i]}) in ${EVS[$i]}: ${EVNOTE[$i]:-(under way)}"
  done
  echo "soak: the array's log, last lines:"
  tail -n 15 "$ARRAY_LOG" 2>/dev/null | sed 's/^/   /'
  log "FAIL: $*"
  report
  exit 1
}

# --- an array's life ----------------------------------------------------------

epoch_start ()
{
  local s uris=() out
  EPOCH=$(( EPOCH + 1 ))
  # Every other array has a bitmap; between them, no bitmap and the
  # partial parity log take turns, the log first for an odd seed.
  if [ -n "$ONLY_POLICY" ]; then
    POLICY=$ONLY_POLICY
  elif [ $(( EPOCH % 2 )) = 1 ]; then
    POLICY=bitmap
  elif [ $(( (EPOCH / 2 + SEED) % 2 )) = 0 ]; then
    POLICY=ppl
  else
    POLICY=resync
  fi
  BITMAP=none
  [ "$POLICY" = bitmap ] && BITMAP=internal
  # Every other array keeps an integrity record, the second first when
  # the seed's second bit is clear (so CI's seed 1 has the log's array
  # keep one); the seeds between them meet every pair of policy and
  # record.  No unit may fail its checksum, as nothing here spoils bytes
  # silently.
  INTEGRITY=
  case $ONLY_INTEGRITY$(( (EPOCH + SEED / 2) % 2 )) in
    on*|0) INTEGRITY=$W/integrity.$EPOCH ;;
  esac
  MODEL=$W/model.$EPOCH
  SLOT_DISK=() REPL_DISK=- NSLOTS=3
  for s in 0 1 2; do
    next_kind; new_disk "$NK" >"$W/disk.err" || die "$(cat "$W/disk.err")"
    SLOT_DISK[$s]=$ND
    uris+=("${DURI[$ND]}")
  done
  out=$(r5ctl create --chunk "$CHUNK" --bitmap "$BITMAP" --consistency-policy "$POLICY" \
        "${uris[@]}" 2>&1) ||
    die "raid5ctl create: $out"
  array_start || die "the new array does not start: $START_ERR"
  LAST_JOB_SEEN=0
  observe
  echo "soak: array $EPOCH: $POLICY${INTEGRITY:+, integrity record}, disks ${uris[*]}"
  log "array $EPOCH: $POLICY${INTEGRITY:+, integrity record $INTEGRITY}: ${uris[*]}"
  "$RANDOM_IO" "$URI" auto --verify-only --model-out "$MODEL" >"$W/verify.out" 2>&1 ||
    die "the new array does not read as zeroes: $(tail -n 2 "$W/verify.out")"
  load_start
}

epoch_finish ()
{
  local s d imgs=() st=0 out doff stripes
  KIND="the end of array $EPOCH"
  heal
  verify final
  out=$(r5ctl --control "$CTL" check --wait 2>&1) || st=$?
  [ $st = 0 ] && grep -q 'mismatch_cnt 0$' <<<"$out" ||
    die "array $EPOCH: raid5ctl check --control: $(tail -n 2 <<<"$out" | tr '\n' ' ')"
  observe
  for (( s = 0; s < NSLOTS; s++ )); do imgs+=("${DIMG[${SLOT_DISK[$s]}]}"); done
  array_stop || die "array $EPOCH: $STOP_ERR"
  for (( d = EPOCH_FIRST_DISK; d < NDISKS_MADE; d++ )); do
    [ -n "${DPID[$d]:-}" ] || continue
    [ "${DSRV[$d]}" = frozen ] && kill_ours -CONT "${DPID[$d]}"
    kill_ours -TERM "${DPID[$d]}"; wait_gone "${DPID[$d]}" 50; DPID[$d]=
  done
  out=$("$R5CTL_BIN" check "${imgs[@]}" 2>&1) ||
    die "array $EPOCH: raid5ctl check of the stopped members: $(tail -n 2 <<<"$out" | tr '\n' ' ')"
  grep -q 'mismatch_cnt 0$' <<<"$out" || die "array $EPOCH: offline check: $out"
  # md's data offset and component size (a grow moves the one, keeps the other).
  read -r doff stripes < <("$R5CTL_BIN" examine --json "${imgs[0]}" |
    /usr/bin/python3 -c 'import json, sys
j = json.load(sys.stdin)[0]
print(j["data_offset_sectors"] * 512, j["used_dev_sectors"] * 512 // (j["chunk_kib"] * 1024))')
  out=$("$MEMBER_CHECK" --chunk "$CHUNK" --layout left-symmetric --data-offset "$doff" \
        --stripes "$stripes" --model "$MODEL" "${imgs[@]}" 2>&1) ||
    die "array $EPOCH: member-check of the members against the model: $(head -n 3 <<<"$out" | tr '\n' ' ')"
  echo "soak: array $EPOCH done: $NSLOTS members, check online and offline mismatch_cnt 0, member-check: data and parity as md lays them out"
  for (( d = EPOCH_FIRST_DISK; d < NDISKS_MADE; d++ )); do retire_disk "$d"; done
  EPOCH_FIRST_DISK=$NDISKS_MADE
  [ "$KEEP" = 1 ] || rm -f "$MODEL" "$MODEL.known"
}

# --- the run ------------------------------------------------------------------

if [ "$MEMBERS" != local ]; then
  make_ns_a 2>"$W/netns.err" || skip "cannot make network namespaces here: $(head -n 1 "$W/netns.err")"
fi
EPOCH_FIRST_DISK=0
epoch_start
for (( EV_N = 1; EV_N <= EVENTS; EV_N++ )); do
  if [ $(( (EV_N - 1) % EPOCH_EVENTS )) = 0 ] && [ "$EV_N" != 1 ]; then
    epoch_finish
    epoch_start
  fi
  observe
  load_start
  pick_fault
  state=$S_CLASS name=$KIND
  if [ "$KIND" = write-error ]; then
    target_disk "$TARGET"; d=$TD
    name=write-${DERR[$d],,}
  fi
  log "event $EV_N: $name $TARGET in $state ($S_HEALTH $S_JOB)"
  EVK[$EV_N]=$name EVS[$EV_N]=$state EVT[$EV_N]=$TARGET EVT0[$EV_N]=$EPOCHREALTIME
  SEEN["$KIND/$state"]=$(( ${SEEN["$KIND/$state"]:-0} + 1 ))
  STATE_N[$state]=$(( ${STATE_N[$state]:-0} + 1 ))
  NOTE=
  "f_$KIND" "$TARGET"
  EVNOTE[$EV_N]=$NOTE
  rnd 5; sleep "0.$(( R + 1 ))"
  observe
  verify "event $EV_N"
  for (( d = EPOCH_FIRST_DISK; d < NDISKS_MADE; d++ )); do
    [ -s "${DIMG[$d]}.bad" ] && : >"${DIMG[$d]}.bad"
  done
  printf 'soak: %4d %-13s %-2s in %-10s -> %s %s; %s\n' "$EV_N" "$name" "$TARGET" "$state" \
    "$S_HEALTH" "$S_JOB" "$NOTE"
  log "  -> $S_HEALTH $S_CLASS $S_JOB: $NOTE"
  # Left as it is, the next fault lands in this state: always while a
  # job runs (a few times), more often than not when degraded.
  if [ "$S_CLASS" != healthy ] || [ "$S_JOB" != idle ]; then
    rnd 100
    if [ $DEFER -lt $MAX_DEFER ] && { [ "$S_CLASS" != degraded ] || [ "$R" -lt 70 ]; } &&
       [ $(( EV_N % EPOCH_EVENTS )) != 0 ]; then
      DEFER=$(( DEFER + 1 ))
      continue
    fi
    heal
  elif [ -n "$S_BB_STUCK" ]; then
    heal                        # rows listed where writes failed: see heal
  fi
  DEFER=0
done
epoch_finish
report
[ "$LOST" = 0 ] || exit 1
exit 0
