#!/usr/bin/env bash
# What the export advertises (nbdinfo --json): size from md's formula;
# block size minimum 1 (unaligned clients keep working), preferred one
# full stripe (the write size without read-modify-write; nbdkit requires a
# power of two, so for 4 members it can only be a power of two near it),
# maximum a multiple of it; multi-conn, flush, FUA, trim and zero; not
# read-only.  Healthy and degraded.

. "${0%/*}/functions.sh"
requires_plugin
requires nbdinfo --version
requires jq --version

# run_config N MEMBER_SIZE CHUNK DATA_OFFSET MISSING
run_config ()
{
  local n=$1 msize=$2 chunk=$3 doff=$4 k=$5 size stripe m info
  local min pref max
  echo "== $n members of $msize, chunk $chunk, data-offset $doff, missing $k"
  size=$(array_size "$n" "$msize" "$chunk" "$doff")
  stripe=$(( $(to_bytes "$chunk") * (n - 1) ))
  make_members i "$n" "$msize"
  mapfile -t m < <(with_missing "$k" "${MEMBERS[@]}")
  mapfile -t disks < <(disk_args "${m[@]}")
  raid5_captive "${disks[@]}" chunk="$chunk" data-offset="$doff" -- \
    sh -c 'nbdinfo --json "$0" > "$1"' @URI@ "$tmpdir/info.json" ||
    fail "nbdinfo"
  info=$(jq -c '.exports[0]' "$tmpdir/info.json")
  jq -c '{size: ."export-size", block_size_minimum, block_size_preferred,
          block_size_maximum, can_multi_conn, can_flush, can_fua, can_trim,
          can_zero, is_read_only}' <<<"$info"
  jget () { jq -r ".$1" <<<"$info"; }

  [ "$(jget '"export-size"')" = "$size" ] ||
    fail "size $(jget '"export-size"'), md's formula gives $size"
  min=$(jget block_size_minimum) pref=$(jget block_size_preferred)
  max=$(jget block_size_maximum)
  [ "$min" = 1 ] || fail "block size minimum is $min, not 1"
  [ "$pref" != null ] && [ $(( pref & (pref - 1) )) -eq 0 ] ||
    fail "block size preferred $pref is not a power of two"
  if [ $(( stripe & (stripe - 1) )) -eq 0 ] && [ $stripe -le 33554432 ]; then
    [ "$pref" -eq "$stripe" ] ||
      fail "block size preferred is $pref, not the full stripe ($stripe)"
  else
    [ "$pref" -ge "$(to_bytes "$chunk")" ] ||
      fail "block size preferred $pref is below one chunk"
  fi
  [ "$max" -ge "$pref" ] && [ $(( max % pref )) -eq 0 ] ||
    [ "$max" -eq 4294967295 ] ||
    fail "block size maximum $max is not a multiple of preferred $pref"
  for flag in can_multi_conn can_flush can_fua can_trim can_zero; do
    [ "$(jget $flag)" = true ] || fail "$flag is $(jget $flag)"
  done
  [ "$(jget is_read_only)" = false ] || fail "the export is read-only"
}

run_config 3 8M 64K 0 -1
run_config 5 8M 512K 1M -1
run_config 3 4M 4K 4K -1
run_config 4 8M 64K 0 -1
run_config 4 8M 64K 0 2
run_config 3 8M 64K 0 0
echo "$test_name: OK"
