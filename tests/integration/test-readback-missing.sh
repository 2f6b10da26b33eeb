#!/usr/bin/env bash
# Write random data to a healthy array, then serve the same members again,
# healthy and with each member in turn `missing`, and read everything
# back: random unaligned reads plus a whole-export read by random-io
# against the saved model, and an nbdcopy of the export compared with the
# model byte for byte.  Reading (even degraded) must not modify a member.

. "${0%/*}/functions.sh"
requires_plugin
requires nbdcopy --version

: "${OPS:=1500}"

# run_config N MEMBER_SIZE CHUNK LAYOUT DATA_OFFSET
run_config ()
{
  local n=$1 msize=$2 chunk=$3 layout=$4 doff=$5 size k m sums geo
  geo=(chunk="$chunk" layout="$layout" data-offset="$doff")
  size=$(array_size "$n" "$msize" "$chunk" "$doff")
  echo "== $n members of $msize, chunk $chunk, $layout, data-offset $doff"
  make_members r "$n" "$msize"
  mapfile -t disks < <(disk_args "${MEMBERS[@]}")
  next_seed
  raid5_captive "${disks[@]}" "${geo[@]}" -- \
    "$RANDOM_IO" @URI@ "$size" --seed "$RIO_SEED" --ops "$OPS" --threads 4 \
      --chunk "$chunk" --disks "$n" --model-out "$tmpdir/model" ||
    fail "writing the array"
  # The final read of random-io taught the model every trimmed byte.
  head -c $(( (size + 7) / 8 )) /dev/zero | tr '\0' '\377' |
    cmp -s - "$tmpdir/model.known" || fail "model not fully known"
  sums=$(checksum_members "${MEMBERS[@]}")

  for (( k = -1; k < n; k++ )); do
    echo "-- read back, $( [ $k -ge 0 ] && echo "member $k missing" || echo healthy)"
    mapfile -t m < <(with_missing "$k" "${MEMBERS[@]}")
    mapfile -t disks < <(disk_args "${m[@]}")
    rm -f "$tmpdir/copy"
    next_seed
    raid5_captive "${disks[@]}" "${geo[@]}" -- \
      sh -c '"$0" "$1" "$2" --read-only --seed "$3" --ops 200 --chunk "$4" \
               --disks "$5" --model-in "$6" && nbdcopy "$1" "$7"' \
        "$RANDOM_IO" @URI@ "$size" "$RIO_SEED" "$chunk" "$n" \
        "$tmpdir/model" "$tmpdir/copy" ||
      fail "reading back with member $k missing"
    cmp "$tmpdir/copy" "$tmpdir/model" ||
      fail "nbdcopy of the export differs from the model (member $k missing)"
    [ "$(checksum_members "${MEMBERS[@]}")" = "$sums" ] ||
      fail "reading with member $k missing modified a member"
  done
}

start=$SECONDS
run_config 3 8M 64K left-symmetric 0
run_config 5 4M 16K la 1M
run_config 4 4M 4K rs 4K
echo "$test_name: OK ($(( SECONDS - start )) s)"
