#!/usr/bin/env bash
# Block devices as members (loop devices over files), mixed with a plain
# file member: the size comes from the device, not st_size.  Buffered and
# O_DIRECT, healthy and with a loop device missing; member-check reads the
# devices directly.  Needs root and loop devices; skipped otherwise.

. "${0%/*}/functions.sh"
requires_plugin
requires losetup --version
[ "$(id -u)" = 0 ] || skip "needs root for losetup"

: "${OPS:=1000}"

# attach_loops N SIZE: MEMBERS = N loop devices over fresh files (detached
# at exit) plus one plain file, as the last member.
attach_loops ()
{
  local n=$1 size=$2 i dev
  MEMBERS=()
  for (( i = 0; i < n; i++ )); do
    rm -f "$tmpdir/b.$i"
    truncate -s "$size" "$tmpdir/b.$i"
    dev=$(losetup -f --show "$tmpdir/b.$i" 2>/dev/null) ||
      skip "cannot attach a loop device"
    cleanup_fn "losetup -d $dev"
    MEMBERS+=("$dev")
  done
  rm -f "$tmpdir/f"
  truncate -s "$size" "$tmpdir/f"
  MEMBERS+=("$tmpdir/f")
}

# run_config N_LOOPS SIZE CHUNK LAYOUT MISSING PLUGIN_ARGS...
run_config ()
{
  local nl=$1 msize=$2 chunk=$3 layout=$4 k=$5 n size m
  shift 5
  n=$(( nl + 1 ))
  echo "== $nl loop devices + 1 file of $msize, chunk $chunk, $layout," \
       "missing $k, $*"
  attach_loops "$nl" "$msize"
  mapfile -t m < <(with_missing "$k" "${MEMBERS[@]}")
  mapfile -t disks < <(disk_args "${m[@]}")
  size=$(array_size "$n" "$msize" "$chunk")
  next_seed
  raid5_captive "${disks[@]}" chunk="$chunk" layout="$layout" "$@" -- \
    "$RANDOM_IO" @URI@ "$size" --seed "$RIO_SEED" --ops "$OPS" --threads 4 \
      --chunk "$chunk" --disks "$n" --model-out "$tmpdir/model" ||
    fail "random-io on loop devices"
  member_check --chunk "$chunk" --layout "$layout" --model "$tmpdir/model" \
    --outside-zero "${m[@]}"
}

start=$SECONDS
run_config 3 16M 64K ls -1 direct=false
run_config 3 16M 64K ra -1 direct=true
run_config 2 8M 4K rs 0 direct=true
echo "$test_name: OK ($(( SECONDS - start )) s)"
