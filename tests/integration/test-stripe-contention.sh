#!/usr/bin/env bash
# Many small concurrent requests to different bytes of the same few
# stripes, over 4 connections: the case the plugin's stripe locks exist
# for.  Two read-modify-writes of one stripe that are not serialised lose
# a parity update, which member-check sees as a parity mismatch (healthy)
# or as wrong rebuilt data (degraded).  Also small chunks, so a request
# often spans several stripes and takes several locks.

. "${0%/*}/functions.sh"
requires_plugin

: "${OPS:=12000}"

# run_config N CHUNK LAYOUT MISSING REGION_OFF:REGION_LEN MAX_LEN [THREADS]
run_config ()
{
  local n=$1 chunk=$2 layout=$3 k=$4 region=$5 maxlen=$6 threads=${7:-4} size m
  echo "== $n members, chunk $chunk, $layout, missing member $k," \
       "region $region, requests up to $maxlen bytes, $threads connections"
  make_members c "$n" 1M
  mapfile -t m < <(with_missing "$k" "${MEMBERS[@]}")
  mapfile -t disks < <(disk_args "${m[@]}")
  size=$(array_size "$n" 1M "$chunk")
  next_seed
  raid5_captive "${disks[@]}" chunk="$chunk" layout="$layout" -- \
    "$RANDOM_IO" @URI@ "$size" --seed "$RIO_SEED" --ops "$OPS" --threads "$threads" \
      --chunk "$chunk" --disks "$n" --region "$region" --max-len "$maxlen" \
      --model-out "$tmpdir/model" ||
    fail "random-io, $n members, chunk $chunk, missing $k"
  member_check --chunk "$chunk" --layout "$layout" --model "$tmpdir/model" \
    --outside-zero "${m[@]}"
}

start=$SECONDS
# Two 8K stripes, requests up to 3000 bytes: most requests share a stripe
# with another in flight.
run_config 3 4K ls -1 0:16K 3000
run_config 5 4K ra -1 64K:64K 6000
run_config 4 4K rs -1 100K:36K 5000
run_config 8 4K ra -1 0:112K 12000 16    # wide: read-modify-write
# Degraded: writes to the missing member's chunks update parity only.
run_config 3 4K la 1 0:16K 3000
run_config 4 4K ls 3 8K:48K 7000
echo "$test_name: OK ($(( SECONDS - start )) s)"
