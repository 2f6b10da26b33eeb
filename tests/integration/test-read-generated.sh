#!/usr/bin/env bash
# The plugin's read path on members it did not write: member-check
# --generate lays random data out with its own implementation of md's
# layouts (every layout, 3..5 members, several chunk sizes and data
# offsets); the plugin must serve exactly that data, healthy and with each
# member missing.  A layout or offset bug shows up here independently of
# the plugin's write path.

. "${0%/*}/functions.sh"
requires_plugin
requires nbdcopy --version

# run_config N MEMBER_SIZE CHUNK LAYOUT DATA_OFFSET ALL_MISSING
# ALL_MISSING=yes: also read back with each member missing in turn.
run_config ()
{
  local n=$1 msize=$2 chunk=$3 layout=$4 doff=$5 size k m last=-1
  size=$(array_size "$n" "$msize" "$chunk" "$doff")
  echo "== $n members of $msize, chunk $chunk, $layout, data-offset $doff"
  head -c "$size" /dev/urandom > "$tmpdir/model"
  make_members g "$n" 0
  "$MEMBER_CHECK" -q --generate "$msize" --chunk "$chunk" --layout "$layout" \
    --data-offset "$doff" --model "$tmpdir/model" "${MEMBERS[@]}"
  [ "$6" = yes ] && last=$(( n - 1 ))
  for (( k = -1; k <= last; k++ )); do
    mapfile -t m < <(with_missing "$k" "${MEMBERS[@]}")
    mapfile -t disks < <(disk_args "${m[@]}")
    rm -f "$tmpdir/copy"
    next_seed
    raid5_captive "${disks[@]}" chunk="$chunk" layout="$layout" \
        data-offset="$doff" -- \
      sh -c '"$0" "$1" "$2" --read-only --seed "$3" --ops 200 --chunk "$4" \
               --disks "$5" --model-in "$6" && nbdcopy "$1" "$7"' \
        "$RANDOM_IO" @URI@ "$size" "$RIO_SEED" "$chunk" "$n" \
        "$tmpdir/model" "$tmpdir/copy" ||
      fail "reading generated members, $layout, member $k missing"
    cmp "$tmpdir/copy" "$tmpdir/model" ||
      fail "nbdcopy differs from the generated data, member $k missing"
  done
}

start=$SECONDS
for layout in left-symmetric left-asymmetric right-symmetric right-asymmetric \
              parity-first parity-last; do
  run_config 3 4M 64K $layout 0 no
  run_config 4 4M 4K $layout 512K no
  run_config 5 $(( 4 * 1024 * 1024 + 5000 )) 32K $layout 8K no
done
run_config 4 6M 16K ra 1M yes
run_config 5 4M 128K ls 0 yes
run_config 4 4M 16K parity-first 4K yes
run_config 3 4M 64K parity-last 8K yes
echo "$test_name: OK ($(( SECONDS - start )) s)"
