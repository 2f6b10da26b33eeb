#!/usr/bin/env bash
# raid5ctl grow, offline (no server):
#  - refusals are one line and write nothing: a new disk too small, one
#    holding a file system, a member given as the new disk, a degraded
#    array (without --force), a resync due (killed after a write),
#    nothing to grow, a served array;
#  - 3 -> 4 members with the whole array holding random data, the grow
#    killed (-9) at GROW_KILLS - 4 points or more (default 24: 20) spread
#    over its length (the first right after it is recorded, at line 0)
#    and each time resumed from what the superblocks say, the recorded
#    line never going back; afterwards member-check (md's layout written
#    out independently) finds every byte of the old array where md puts
#    it for 4 members at the new data offset, the new space zero, parity
#    right; raid5ctl check says 0; mdadm --examine says 4 devices, clean,
#    data offset moved down by mdadm's least, no reshape left;
#  - then 4 -> 5, and 5 -> 7 with two --add at once, data filled in
#    between, each checked the same way and read back through the plugin;
#  - a degraded array grown with --force: the missing member's data is
#    computed as it moves, and the 4 members (one missing) hold it all.

. "${0%/*}/functions.sh"
. "${0%/*}/../integration/md-functions.sh"
requires_raid5ctl
requires nbdcopy --version
start=$SECONDS

CHUNK=65536
md_create r 3 64M --chunk 64K --bitmap none
m=("${MEMBERS[@]}")
doff=$MD_DOFF
STRIPES=$(( (64 * 1048576 - doff) / CHUNK ))

# fill: random bytes over the whole array, kept as the model.
fill ()
{
  local size
  fill_random "$tmpdir/model" "$@"
}

# grown N OLD_DOFF MOVE MEMBERS...: the array as md lays out N members
# at the data offset moved down by MOVE, the model's bytes first, zeroes
# after; parity right; check 0; mdadm agrees; the plugin reads it back.
grown ()
{
  local n=$1 old=$2 move=$3 size
  shift 3
  local new=$(( old - move )) stripe_data=$(( (n - 1) * CHUNK ))
  size=$(( STRIPES * stripe_data ))
  truncate -s "$size" "$tmpdir/model"
  member_check --chunk 64K --layout "$MD_LAYOUT" --data-offset "$new" --stripes "$STRIPES" \
    --model "$tmpdir/model" "$@"
  "$RAID5CTL" check "$@" 2>/dev/null | grep -q "mismatch_cnt 0$" ||
    fail "raid5ctl check after growing to $n"
  md_expect clean "$(printf 'A%.0s' $(seq "$n"))" "$@"
  [ "$(md_field "$1" 'Raid Devices')" = "$n" ] ||
    fail "Raid Devices: $(md_field "$1" 'Raid Devices')"
  [ "$(md_field "$1" 'Data Offset')" = "$(( new / 512 )) sectors" ] ||
    fail "Data Offset $(md_field "$1" 'Data Offset'), not $(( new / 512 ))"
  ! mdadm --examine "$1" | grep -Eq "Reshape|Delta Devices|New Offset" ||
    fail "reshape fields left in $1"
  "$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${@/#/disk=}" --run \
    "[ \$(nbdinfo --size \"\$uri\") = $size ] && nbdcopy \"\$uri\" '$tmpdir/back'" ||
    fail "the plugin does not serve $size bytes"
  cmp "$tmpdir/model" "$tmpdir/back" || fail "read back through the plugin"
  echo "   $n members at data offset $new: $size bytes, every byte right"
}

echo "== refusals"
fill "${m[@]/#/disk=}"
new=$tmpdir/new1
truncate -s 64M "$new"
truncate -s 16M "$tmpdir/small"
truncate -s 80M "$tmpdir/fs"
mkfs.ext4 -q -F -L keep "$tmpdir/fs"
DISKS=("${m[@]}" "$new" "$tmpdir/small" "$tmpdir/fs")
expect_refused 'small is too small' grow --add "$tmpdir/small" "${m[@]}"
expect_refused "fs holds an ext4 file system \\(label 'keep'.*--force overwrites it" \
  grow --add "$tmpdir/fs" "${m[@]}"
expect_refused 'r\.2 is member 2 already' grow --add "${m[2]}" "${m[@]}"
# --force wipes what a new disk holds, but only once every one passed.
expect_refused 'small is too small' grow --force --add "$tmpdir/fs" --add "$tmpdir/small" "${m[@]}"
expect_refused 'given twice' grow --add "$new" --add "$new" "${m[@]}"
expect_refused 'the array is degraded: rebuild it first .*or --force' \
  grow --add "$new" "${m[0]}" missing "${m[2]}"
expect_refused 'nothing to grow: the array has 3 members' grow "${m[@]}"
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${m[@]/#/disk=}" --run \
  "$(sh_quote "$RAID5CTL" grow --add "$new" "${m[@]}") 2>'$tmpdir/err'; test \$? = 1" ||
  fail "grow of a served array was not refused"
[ "$(grep -c . "$tmpdir/err")" = 1 ] && grep -q "in use" "$tmpdir/err" ||
  fail "served: $(cat "$tmpdir/err")"
echo "   served -> $(cat "$tmpdir/err")"
[ "$failures" = 0 ] || fail "$failures refusals went wrong"
if /usr/bin/python3 -c 'import nbd' 2>/dev/null; then
  # Killed right after a write: a resync is due, and comes first.
  serve_bg "$tmpdir/serve.log" "${m[@]/#/disk=}" || fail "serving"
  /usr/bin/python3 "${0%/*}/../integration/poke.py" "$URI" write 0 7 "$SERVER"
  wait "$SERVER" 2>/dev/null || :
  md_expect active AAA "${m[@]}"
  expect_refused 'cannot grow: a resync is due \(the array was not stopped cleanly\)' \
    grow --add "$new" "${m[@]}"
  "$RAID5CTL" repair "${m[@]}" >/dev/null 2>&1 || fail "repair"
  head -c 65536 /dev/zero | tr '\0' '\7' |
    dd of="$tmpdir/model" conv=notrunc status=none
  [ "$failures" = 0 ] || fail "a dirty array was not refused"
else
  echo "   (no python3-libnbd: the dirty array's refusal is not tried)"
fi

echo "== 3 -> 4, killed all along and resumed"
# mdadm prints "Reshape pos'n : K (...)" in KiB of the array.
reshape_kib ()
{
  local p
  p=$(md_field "$1" "Reshape pos'n")
  echo "${p%% *}"
}
total_kib=$(( STRIPES * 3 * CHUNK / 1024 ))
args=(--add "$new" "${m[@]}")
kills=0 last=-1
# Each run is killed a random 0-0.3 s after the superblocks record a new
# line (at most 4 s after its start), so the kills fall all along the
# reshape, the first right after the grow is recorded at line 0.
KILLS=${GROW_KILLS:-24}
for (( k = 0; k < KILLS; k++ )); do
  before=$(reshape_kib "${m[0]}")
  "$RAID5CTL" grow --max-speed 1200K "${args[@]}" >/dev/null 2>"$tmpdir/err" &
  pid=$!
  for (( i = 0; i < 200; i++ )); do
    pos=$(reshape_kib "${m[0]}")
    [ -n "$pos" ] && [ "$pos" != "${before:-none}" ] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.02
  done
  [ $k = 0 ] || sleep "0.$(( RANDOM % 3 ))$(( RANDOM % 10 ))"
  kill -9 $pid 2>/dev/null && kills=$(( kills + 1 ))
  wait $pid 2>/dev/null || :
  args=("${m[@]}" "$new")
  pos=$(reshape_kib "${m[0]}")
  [ -n "$pos" ] || break       # the grow ended before the kill
  [ "$pos" -ge "$last" ] || fail "the line went back from $last to $pos KiB"
  last=$pos
  printf '%s ' "$pos"
done
echo
[ "$kills" -ge $(( KILLS - 4 )) ] || fail "only $kills kills landed before the end"
if [ -n "$(reshape_kib "${m[0]}")" ]; then
  "$RAID5CTL" grow "${m[@]}" "$new" >"$tmpdir/out" 2>"$tmpdir/err" ||
    fail "the last resume: $(cat "$tmpdir/err")"
  cat "$tmpdir/out"
  grep -q "(resumed at stripe [1-9][0-9]* of $STRIPES)$" "$tmpdir/err" ||
    fail "the last run did not resume: $(cat "$tmpdir/err")"
  grep -q "^grow: the array has 4 members" "$tmpdir/out" ||
    fail "grow said: $(cat "$tmpdir/out")"
fi
m4=("${m[@]}" "$new")
grown 4 "$doff" $(( 3 * CHUNK )) "${m4[@]}"
doff=$(( doff - 3 * CHUNK ))

echo "== 4 -> 5"
fill "${m4[@]/#/disk=}"
truncate -s 64M "$tmpdir/new2"
"$RAID5CTL" grow --add "$tmpdir/new2" "${m4[@]}" >"$tmpdir/out" 2>"$tmpdir/err" ||
  fail "4 -> 5: $(cat "$tmpdir/err")"
m5=("${m4[@]}" "$tmpdir/new2")
# mdadm's least: LCM(3, 4) chunks of the array / 3 old data members.
grown 5 "$doff" $(( 4 * CHUNK )) "${m5[@]}"
doff=$(( doff - 4 * CHUNK ))

echo "== 5 -> 7, two at once"
fill "${m5[@]/#/disk=}"
truncate -s 64M "$tmpdir/new3" "$tmpdir/new4"
"$RAID5CTL" grow --add "$tmpdir/new3" --add "$tmpdir/new4" "${m5[@]}" \
  >"$tmpdir/out" 2>"$tmpdir/err" || fail "5 -> 7: $(cat "$tmpdir/err")"
# LCM(4, 6) = 12 chunks / 4.
grown 7 "$doff" $(( 3 * CHUNK )) "${m5[@]}" "$tmpdir/new3" "$tmpdir/new4"
echo "== degraded, --force: 3 -> 4 with slot 1 missing"
md_create d 3 32M --chunk 64K --bitmap none
d=("${MEMBERS[@]}")
fill "${d[@]/#/disk=}"
truncate -s 32M "$tmpdir/dnew"
"$RAID5CTL" grow --force --add "$tmpdir/dnew" "${d[0]}" missing "${d[2]}" \
  >"$tmpdir/out" 2>"$tmpdir/err" || fail "degraded grow: $(cat "$tmpdir/err")"
dstripes=$(( (32 * 1048576 - MD_DOFF) / CHUNK ))
truncate -s $(( dstripes * 3 * CHUNK )) "$tmpdir/model"
member_check --chunk 64K --layout "$MD_LAYOUT" --data-offset $(( MD_DOFF - 3 * CHUNK )) \
  --stripes "$dstripes" --model "$tmpdir/model" "${d[0]}" missing "${d[2]}" "$tmpdir/dnew"
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" disk="${d[0]}" disk=missing disk="${d[2]}" disk="$tmpdir/dnew" \
  --run "nbdcopy \"\$uri\" '$tmpdir/back'" || fail "serving the degraded grown array"
cmp "$tmpdir/model" "$tmpdir/back" || fail "degraded grow: read back through the plugin"
echo "   4 members, slot 1 missing: every byte right (its data computed from the others)"
echo "== a write-intent bitmap: grown with it (md reshapes with one)"
bm_field () { sed -n "s/^ *$1 : \(.*\)\$/\1/p" "$tmpdir/bm.txt" | head -n 1; }
md_create w 3 24M --chunk 64K --bitmap internal
w=("${MEMBERS[@]}" "$tmpdir/wnew")
truncate -s 24M "$tmpdir/wnew"
ws=("${w[@]:0:3}")
fill "${ws[@]/#/disk=}"
"$RAID5CTL" grow --add "$tmpdir/wnew" "${w[@]:0:3}" >"$tmpdir/out" 2>&1 ||
  fail "grow with a bitmap: $(cat "$tmpdir/out")"
for d in "${w[@]}"; do
  [ "$(md_field "$d" 'Raid Devices')" = 4 ] &&
    [ "$(md_field "$d" 'Internal Bitmap')" = "8 sectors from superblock" ] ||
    fail "${d##*/}: not 4 members with a bitmap after the grow"
  # mdadm -X reads a regular file as a bitmap file: the area copied out.
  dd if="$d" of="$tmpdir/bm" bs=4096 skip=2 count=1 status=none
  mdadm -X "$tmpdir/bm" >"$tmpdir/bm.txt" 2>&1
  [ "$(bm_field UUID)" = "$(md_field "$d" 'Array UUID')" ] &&
    [ "$(bm_field Events)" = "$(md_field "$d" Events)" ] &&
    [ "$(bm_field State)" = OK ] ||
    fail "${d##*/}: its bitmap is not the array's now: $(head -n 12 "$tmpdir/bm.txt")"
done
wstripes=$(( (24 * 1048576 - MD_DOFF) / CHUNK ))
truncate -s $(( wstripes * 3 * CHUNK )) "$tmpdir/model"
member_check --chunk 64K --layout "$MD_LAYOUT" --data-offset $(( MD_DOFF - 3 * CHUNK )) \
  --stripes "$wstripes" --model "$tmpdir/model" "${w[@]}"
"$RAID5CTL" check "${w[@]}" 2>/dev/null | grep -q "mismatch_cnt 0$" ||
  fail "check after the grow with a bitmap"
echo "   4 members, each with its bitmap (the new one too), every byte where md puts it, check 0"
echo "test-grow-offline: OK ($(( SECONDS - start )) s)"
