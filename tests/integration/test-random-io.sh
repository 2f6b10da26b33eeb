#!/usr/bin/env bash
# Healthy arrays of several shapes: random unaligned reads, writes, zeroes,
# trims and flushes over 4 connections, each read checked against the
# model; then the member files are checked directly: every data chunk
# where md's layout puts it, every parity chunk the XOR of its stripe,
# nothing written outside the array area.

. "${0%/*}/functions.sh"
requires_plugin

: "${OPS:=1500}"

# run_config N MEMBER_SIZE CHUNK LAYOUT DATA_OFFSET [PLUGIN_ARGS...]
# CHUNK/LAYOUT "-" = not given to the plugin (its defaults: 512K,
# left-symmetric) but assumed by the checker.  Extra random-io options
# come from the array rio_extra.
run_config ()
{
  local n=$1 msize=$2 chunk=$3 layout=$4 doff=$5 size args=()
  shift 5
  [ "$chunk" = - ] && chunk=512K || args+=("chunk=$chunk")
  [ "$layout" = - ] && layout=left-symmetric || args+=("layout=$layout")
  [ "$doff" = 0 ] || args+=("data-offset=$doff")
  args+=("$@")
  echo "== $n members of $msize, chunk $chunk, $layout, data-offset $doff $*"

  make_members m "$n" "$msize"
  mapfile -t disks < <(disk_args "${MEMBERS[@]}")
  size=$(array_size "$n" "$msize" "$chunk" "$doff")
  next_seed
  raid5_captive "${disks[@]}" "${args[@]}" -- \
    "$RANDOM_IO" @URI@ "$size" --seed "$RIO_SEED" --ops "$OPS" --threads 4 \
      --chunk "$chunk" --disks "$n" --model-out "$tmpdir/model" \
      "${rio_extra[@]}" ||
    fail "random-io on $n x $msize, chunk $chunk, $layout"
  member_check --chunk "$chunk" --layout "$layout" --data-offset "$doff" \
    --model "$tmpdir/model" --outside-zero "${MEMBERS[@]}"
}

start=$SECONDS
rio_extra=()
run_config 3 32M 64K left-symmetric 0
run_config 4 16M 4K ra 64K metadata=none
# 16M + 12345: the tail past the last whole chunk must stay untouched.
# 2M stripes: fewer, smaller requests keep the data volume reasonable.
rio_extra=(--ops 1000 --max-len 3M)
run_config 5 $(( 16 * 1024 * 1024 + 12345 )) 512K la 1M direct=true
rio_extra=()
run_config 3 24M 128K rs 4K metadata=auto
run_config 4 16M 16K right-symmetric 3584 direct=false   # 7 sectors
# A 160M array: zeroes and trims of up to the whole array in one request
# (more than the 64M a read or write may carry), writes of up to 32M.
rio_extra=(--ops 300 --max-len 32M)
run_config 3 80M 256K ls 0
rio_extra=()
run_config 8 4M 16K ls 0                # wide: read-modify-write
# md's parity-first and parity-last: every write writes the one parity member
run_config 4 16M 64K parity-first 1M
run_config 5 8M 16K parity-last 4K metadata=none   # 5: read-modify-write
run_config 3 16M - - 0                  # the plugin's defaults
echo "$test_name: OK ($(( SECONDS - start )) s)"
