#!/usr/bin/env bash
# Kill -9 the server in the middle of the random workload, then serve the
# members again: every write acknowledged before the kill must read back
# (a process crash loses nothing the plugin acknowledged: no user-space
# write-back), requests in flight at the kill are unknown.  Parity may be
# stale only in stripes such requests touched (the RAID-5 write hole; raw
# members have nowhere to record a dirty stripe for a later resync), so
# member-check runs with --lenient-parity.  Then, as an admin would, an
# online repair rewrites that parity, and member-check runs strictly.  Two
# crashes per array, the workload continuing from the model left by the
# first (whose verify run learned the bytes of the stale stripes: without
# the repair, the second round would find their parity stale with every
# byte known).

. "${0%/*}/functions.sh"
requires_plugin
: "${RAID5CTL:=$abs_top_builddir/tools/raid5ctl}"
[ -x "$RAID5CTL" ] || skip "raid5ctl not built: $RAID5CTL"

# crash_round N CHUNK LAYOUT MODEL_IN PLUGIN_ARGS...
crash_round ()
{
  local n=$1 chunk=$2 layout=$3 model_in=$4 server rio status=0 delay
  shift 4
  rm -f "$tmpdir/pid" "$tmpdir/sock"
  "$NBDKIT" -f -U "$tmpdir/sock" -P "$tmpdir/pid" "$PLUGIN" \
    "${disks[@]}" chunk="$chunk" layout="$layout" "$@" &
  server=$!
  cleanup_fn "kill_ours -9 $server"
  for (( i = 0; i < 100; i++ )); do [ -s "$tmpdir/pid" ] && break; sleep 0.1; done
  [ -s "$tmpdir/pid" ] || fail "the server did not start"

  next_seed
  "$RANDOM_IO" "nbd+unix:///?socket=$tmpdir/sock" auto --seed "$RIO_SEED" \
    --ops 100000000 --threads 4 --chunk "$chunk" --disks "$n" --crash-ok \
    ${model_in:+--model-in "$model_in"} --model-out "$tmpdir/model.crash" \
    > "$tmpdir/rio.out" &
  rio=$!
  for (( i = 0; i < 300; i++ )); do
    grep -q running "$tmpdir/rio.out" && break
    sleep 0.1
  done
  delay=$(( 5 + RIO_SEED % 12 ))      # 0.5 .. 1.6 s of I/O
  sleep "$(( delay / 10 )).$(( delay % 10 ))"
  kill -9 "$server"
  wait "$server" || :
  wait "$rio" || status=$?
  cat "$tmpdir/rio.out"
  [ $status -eq 0 ] || fail "random-io failed before the crash"
  grep -q 'server went away' "$tmpdir/rio.out" ||
    fail "the workload ended before the kill"

  # Everything acknowledged reads back (learning what the crash left in
  # the unknown ranges), then the members agree with the model.
  mapfile -t m < <(printf '%s\n' "${disks[@]}" | sed 's/^disk=//')
  raid5_captive "${disks[@]}" chunk="$chunk" layout="$layout" "$@" -- \
    "$RANDOM_IO" @URI@ auto --verify-only --chunk "$chunk" --disks "$n" \
      --model-in "$tmpdir/model.crash" --model-out "$tmpdir/model" ||
    fail "acknowledged writes lost in the crash"
  member_check --chunk "$chunk" --layout "$layout" --lenient-parity \
    --model "$tmpdir/model.crash" "${m[@]}"
  raid5_captive "${disks[@]}" chunk="$chunk" layout="$layout" \
    control="$tmpdir/ctl" "$@" -- \
    "$RAID5CTL" --control "$tmpdir/ctl" repair --wait > "$tmpdir/repair.out" ||
    fail "online repair after the crash: $(tail -n 1 "$tmpdir/repair.out")"
  tail -n 1 "$tmpdir/repair.out"
  member_check --chunk "$chunk" --layout "$layout" --model "$tmpdir/model" \
    "${m[@]}"
}

# run_config N MEMBER_SIZE CHUNK LAYOUT PLUGIN_ARGS...
run_config ()
{
  local n=$1 msize=$2 chunk=$3 layout=$4
  shift 4
  echo "== $n members of $msize, chunk $chunk, $layout $*"
  make_members k "$n" "$msize"
  mapfile -t disks < <(disk_args "${MEMBERS[@]}")
  crash_round "$n" "$chunk" "$layout" "" "$@"
  echo "-- second crash"
  crash_round "$n" "$chunk" "$layout" "$tmpdir/model" "$@"
}

start=$SECONDS
run_config 3 16M 64K left-symmetric
run_config 4 8M 4K ra direct=true
echo "$test_name: OK ($(( SECONDS - start )) s)"
