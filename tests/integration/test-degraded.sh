#!/usr/bin/env bash
# Degraded arrays: the random workload with each member in turn given as
# `missing` (fresh members each time).  Reads of the missing member's
# chunks are rebuilt from the others, writes to them only update parity.
# member-check then rebuilds the missing member by XOR and checks every
# data chunk, the rebuilt ones included, against the model.

. "${0%/*}/functions.sh"
requires_plugin

: "${OPS:=700}"

# run_config N MEMBER_SIZE CHUNK LAYOUT DATA_OFFSET
run_config ()
{
  local n=$1 msize=$2 chunk=$3 layout=$4 doff=$5 size k m
  size=$(array_size "$n" "$msize" "$chunk" "$doff")
  for (( k = 0; k < n; k++ )); do
    echo "== $n members of $msize, chunk $chunk, $layout, data-offset $doff," \
         "member $k missing"
    make_members d "$n" "$msize"
    rm "${MEMBERS[$k]}"
    mapfile -t m < <(with_missing "$k" "${MEMBERS[@]}")
    mapfile -t disks < <(disk_args "${m[@]}")
    next_seed
    raid5_captive "${disks[@]}" chunk="$chunk" layout="$layout" \
        data-offset="$doff" -- \
      "$RANDOM_IO" @URI@ "$size" --seed "$RIO_SEED" --ops "$OPS" \
        --threads 4 --chunk "$chunk" --disks "$n" \
        --model-out "$tmpdir/model" ||
      fail "random-io, $n members, member $k missing"
    [ ! -e "${MEMBERS[$k]}" ] || fail "the plugin created the missing member"
    member_check --chunk "$chunk" --layout "$layout" --data-offset "$doff" \
      --model "$tmpdir/model" --outside-zero "${m[@]}"
  done
}

start=$SECONDS
run_config 3 8M 64K left-symmetric 0
run_config 4 4M 4K right-asymmetric 8K
run_config 5 4M 256K ls 0
run_config 4 4M 16K parity-first 4K     # member 0 missing: no parity at all
run_config 3 4M 64K parity-last 0
echo "$test_name: OK ($(( SECONDS - start )) s)"
