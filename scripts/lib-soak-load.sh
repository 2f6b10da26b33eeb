# shellcheck shell=bash
# scripts/lib-soak-load.sh -- the soak's workload, its verification and
# its view of the array.  Sourced by scripts/soak.sh (see there for W,
# URI, CTL, MODEL, RANDOM_IO, HELPER and die).
#
# The workload is random-io run in rounds (LOAD_OPS requests each, over
# 4 connections: reads, writes of 1 byte to 2 MiB, some FUA, zeroes,
# trims, flushes), each round starting from the model the last one saved
# (--model-in/--model-out), so every acknowledged byte is in the model.
# With --crash-ok a round that loses the server saves the model with the
# ranges then in flight unknown, and the loop ends (exit 2); any other
# failure -- a read that differs, an error returned to a client -- ends
# it with exit 1.  A grown array's bigger size is given to the model
# (the new bytes unknown) before a round starts.

LOAD_PID=
LOAD_OPS=${LOAD_OPS:-40}
OPS_TOTAL=0 OPS_ROUNDS=0
declare -A OPS_BY=([read]=0 [write]=0 [zero]=0 [trim]=0 [flush]=0)
VERIFIED=0 VERIFIES=0 LOST=0

# model_fit: the model as big as the export (after a grow).
model_fit ()
{
  local size
  size=$(timeout 20 nbdinfo --size "$URI" 2>/dev/null) || return 1
  [ "$size" -gt "$(stat -c %s "$MODEL")" ] || return 0
  "$HELPER" grow-model "$MODEL" "$size"
}

load_start ()
{
  [ -n "$LOAD_PID" ] && return 0
  rm -f "$W/load.stop"
  : >"$W/load.out"
  local nd=$S_NDISKS seed=$(( SEED % 100000 * 100000 + EV_N * 100 )) learn=()
  [ "$UNSTABLE" = 1 ] && learn=(--no-learn)
  (
    r=0 tries=0
    while [ ! -e "$W/load.stop" ] && (( r < 10000 && tries < 5 )); do
      model_fit
      timeout 300 "$RANDOM_IO" "$URI" auto --seed $(( seed + r )) --ops "$LOAD_OPS" \
        --threads 4 --chunk 64K --disks "$nd" --max-len 2M --crash-ok --no-final \
        "${learn[@]}" --model-in "$MODEL" --model-out "$MODEL" >"$W/round.out" 2>&1
      st=$?
      cat "$W/round.out" >>"$W/load.out"
      if [ $st != 0 ]; then
        # The grow ended between model_fit and the connection: again.
        grep -q 'bytes, export has' "$W/round.out" && { tries=$(( tries + 1 )); continue; }
        echo "load: round $r FAILED (exit $st)" >>"$W/load.out"
        exit 1
      fi
      if grep -q 'server went away' "$W/round.out"; then
        echo "load: round $r: the server went away" >>"$W/load.out"
        exit 2
      fi
      r=$(( r + 1 )) tries=0
    done
    exit 0
  ) &
  LOAD_PID=$!
}

# load_tally: add the finished rounds' requests to the totals.
load_tally ()
{
  local line
  while read -r line; do
    set -- $line
    OPS_ROUNDS=$(( OPS_ROUNDS + 1 ))
    OPS_TOTAL=$(( OPS_TOTAL + $1 ))
    OPS_BY[read]=$(( OPS_BY[read] + $2 )) OPS_BY[write]=$(( OPS_BY[write] + $3 ))
    OPS_BY[zero]=$(( OPS_BY[zero] + $4 )) OPS_BY[trim]=$(( OPS_BY[trim] + $5 ))
    OPS_BY[flush]=$(( OPS_BY[flush] + $6 ))
  done < <(sed -n 's/.* \([0-9]*\) ops (read \([0-9]*\), write \([0-9]*\), zero \([0-9]*\), trim \([0-9]*\), flush \([0-9]*\)).*/\1 \2 \3 \4 \5 \6/p' "$W/load.out")
}

# lost_in FILE: the bytes its mismatch reports say differ.
lost_in ()
{
  sed -n 's/.*: \([0-9]*\) bytes differ, .*/\1/p' "$1" | awk '{ n += $1 } END { print n + 0 }'
}

# load_stop: end the load after its round; a failed round, or one that
# lost the server (the soak kills it only with a round of its own), ends
# the run.
load_stop ()
{
  [ -n "$LOAD_PID" ] || return 0
  touch "$W/load.stop"
  if ! wait_gone "$LOAD_PID" 1200; then
    kill_ours -KILL "$(pgrep -P "$LOAD_PID")"
    wait_gone "$LOAD_PID" 50
    LOAD_PID=
    die "hang: a round of the workload did not end within 120 s (array: $S_HEALTH $S_JOB)"
  fi
  LOAD_PID=
  load_tally
  cat "$W/load.out" >>"$W/load.log"
  case $WAIT_ST in
    0) ;;
    2) die "the array's server went away under the workload ($(array_gone_why))" ;;
    *) LOST=$(( LOST + $(lost_in "$W/load.out") ))
       die "the workload failed: $(grep -m 2 -E 'MISMATCH|failed|FAILED|error' "$W/load.out" | tr '\n' ' ')" ;;
  esac
}

# array_gone_why: how the array's server ended, if it did.
array_gone_why ()
{
  if [ -n "$APID" ] && ! kill -0 "$APID" 2>/dev/null; then
    wait "$APID" 2>/dev/null
    echo "it exited with status $?: $(tail -n 2 "$ARRAY_LOG" | tr '\n' ' ')"
  else
    echo "it still runs"
  fi
}

# verify WHY: the load stopped, every known byte of the model read back
# through the array (what was unknown is learned), the load started again
# unless WHY is final.
verify ()
{
  local st=0 k d t0=$EPOCHREALTIME t1 learn=()
  load_stop
  t1=$EPOCHREALTIME
  [ "$UNSTABLE" = 1 ] && learn=(--no-learn)
  model_fit || die "nbdinfo --size: the export does not answer"
  # The shape only names a mismatch's chunk, stripe and data index.
  timeout 300 "$RANDOM_IO" "$URI" auto --verify-only --chunk 64K --disks "$S_NDISKS" \
    "${learn[@]}" --model-in "$MODEL" --model-out "$MODEL" >"$W/verify.out" 2>&1 || st=$?
  log "verify after $1: the load stopped in $(elapsed "$t0" "$t1") s, read back in $(elapsed "$t1") s"
  read -r k d < <(sed -n 's/^random-io: verified \([0-9]*\) known bytes, \([0-9]*\) differ$/\1 \2/p' "$W/verify.out")
  VERIFIED=$(( VERIFIED + ${k:-0} )) VERIFIES=$(( VERIFIES + 1 ))
  if [ $st != 0 ]; then
    cat "$W/verify.out" >>"$W/soak.log"
    LOST=$(( LOST + ${d:-0} ))
    # What was read in place of what (zeroes, older bytes), for the log.
    DIE_DETAIL=$(grep -A 6 MISMATCH "$W/verify.out" | head -n 24)
    [ "${d:-0}" -gt 0 ] &&
      die "after $1: ${d} known bytes read back wrong: $(grep -m 1 MISMATCH "$W/verify.out")"
    die "after $1: the read back failed: $(grep -m 2 -E 'failed|error|FAILED' "$W/verify.out" | tr '\n' ' ')"
  fi
  [ "$1" = final ] || load_start
}

# state_query: the S_* variables from soak-helper.py, started once as a
# co-process (SQ); an answer must come within 30 s (its socket waits 10).
state_query ()
{
  local line out=
  if [ -z "${SQ_PID:-}" ] || ! kill -0 "$SQ_PID" 2>/dev/null; then
    coproc SQ { exec /usr/bin/python3 "$HELPER" serve; }
  fi
  echo "state $CTL" >&"${SQ[1]}"
  while IFS= read -r -t 30 line <&"${SQ[0]}"; do
    [ "$line" = END ] && break
    out+=$line$'\n'
  done
  [ "$line" = END ] || { S_ERROR="no answer within 30 s"; return; }
  eval "$out"
}

# observe: the array's state into the S_* variables (soak-helper.py
# state), SLOT_DISK and REPL_DISK from the paths it serves; a job that
# ended is looked at; events whose array is healthy again get their
# recovery time.
observe ()
{
  local out s p
  [ -n "$APID" ] && kill -0 "$APID" 2>/dev/null ||
    die "the array's server is gone ($(array_gone_why))"
  state_query
  [ -z "$S_ERROR" ] || die "hang: the control socket does not answer status: $S_ERROR"
  NSLOTS=$S_NDISKS
  for (( s = 0; s < NSLOTS; s++ )); do
    p=${S_PATH[$s]}
    [ -n "${URI2D[$p]+x}" ] && SLOT_DISK[$s]=${URI2D[$p]}
    [ -n "${SLOT_DISK[$s]+x}" ] || SLOT_DISK[$s]=-
  done
  REPL_DISK=-
  [ "$S_REPL_SLOT" -ge 0 ] && [ -n "${URI2D[$S_REPL_PATH]+x}" ] && REPL_DISK=${URI2D[$S_REPL_PATH]}
  [ "$S_CLASS" = failed ] && die "the array failed: $S_HEALTH (two members out)"
  [ "${S_INT_FAILED:-0}" -le "${S_INT_STALE:-0}" ] ||
    die "$S_INT_FAILED units failed their checksum in the integrity record ($S_INT_STALE of them stale units of a member one event behind, found at the start), though nothing spoiled bytes silently: the record and the members disagree"
  # A crash's torn stripes are mended once no resync is due or running.
  [ "$S_RESYNC_DUE" = 0 ] && [ "$S_JOB" != resync ] && TORN=0 UNSTABLE=0
  if [ "$S_LAST_NUMBER" != "$LAST_JOB_SEEN" ]; then
    LAST_JOB_SEEN=$S_LAST_NUMBER
    log "job ended: $S_LAST_KIND result $S_LAST_RESULT mismatch $S_LAST_MISMATCH"
    JOBS_ENDED[$S_LAST_KIND]=$(( ${JOBS_ENDED[$S_LAST_KIND]:-0} + 1 ))
    # A repair after force=true mends the stripes the crash tore.
    if [ "$S_LAST_KIND" = repair ] && [ "$S_LAST_RESULT" = 0 ] && [ "$FORCE_TORN" = 1 ]; then
      FORCE_TORN=0
      log "the repair after force=true found mismatch_cnt $S_LAST_MISMATCH"
    elif [ "$S_LAST_RESULT" = 0 ] && [ "$S_LAST_MISMATCH" != 0 ] &&
       { [ "$S_LAST_KIND" = check ] || [ "$S_LAST_KIND" = repair ]; }; then
      die "a $S_LAST_KIND of a whole, resynced array found wrong parity: mismatch_cnt $S_LAST_MISMATCH"
    fi
  fi
  if [ "$S_NOUT" = 0 ] && { [ "$S_CLASS" = healthy ] || [ "$S_CLASS" = checking ]; }; then
    mark_recovered
  fi
}

# wait_state EXPR SECONDS: observe until the shell test EXPR holds.
wait_state ()
{
  local end=$(( SECONDS + $2 ))
  while :; do
    observe
    eval "$1" && return 0
    [ $SECONDS -ge $end ] && return 1
    sleep 0.1
  done
}
