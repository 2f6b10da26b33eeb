#!/usr/bin/env bash
# A grow while serving, the server killed -9 again and again: at KILLS
# points spread over the whole reshape (default 16; all, up to 20, must land
# before it ends), the first right after it started, each under a random
# workload of writes and reads over 4 connections.  After each kill the server is started again on the
# members: it finds the grow in the superblocks and goes on with it from
# the line they record.  Every write acknowledged before a kill must read
# back (a kill -9 loses nothing acknowledged: writes behind the line but
# past the recorded line wait until it is recorded, md's reshape_safe --
# without that wait they would be read from the old shape after the
# restart); requests in flight at a kill are unknown.  At the end the
# reshape is done, the resync after the kills too, check finds no wrong
# parity, the export reads back as the model (the new space as zeroes),
# and member-check finds every byte where md puts it for 4 members.
# Halfway, the array is also served readonly=true as the kill left it:
# every acknowledged byte reads back, no member changes.
# GROW_BITMAP=internal (test-grow-crash-bitmap.sh): the same with md's
# write-intent bitmap, the resync after the kills led by it.
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
. "${0%/*}/job-functions.sh"
requires_jobs
requires nbdinfo --version
requires_raid5ctl

KILLS=${KILLS:-16}
MB=24 CHUNK=65536
m=()
for i in 0 1 2 3; do
  m+=("$tmpdir/g$i.img")
  truncate -s ${MB}M "${m[$i]}"
done
"$RAID5CTL" create --chunk 64K --bitmap "${GROW_BITMAP:-none}" "${m[@]:0:3}" >"$tmpdir/create.log" 2>&1 ||
  { cat "$tmpdir/create.log" >&2; fail "create"; }
md_geometry "${m[0]}"
doff=$MD_DOFF
stripes=$(( (MB * 1048576 - doff) / CHUNK ))
model=$tmpdir/model
speed=(sync-speed-min=${GROW_SPEED:-1000} sync-speed-max=${GROW_SPEED:-1000})

# serve_array: the first three members, then (once the grow has begun)
# the fourth too.
serve_array ()
{
  local n=$1
  serve_ctl "$tmpdir/nbdkit.log" "${m[@]:0:$n}" "${speed[@]}" ||
    fail "serve ($(tail -n 3 "$tmpdir/nbdkit.log"))"
}

# extend_model: the model as big as the export (a grow that ended since:
# the new space known zeroes).
extend_model ()
{
  local old new
  old=$(stat -c %s "$model")
  new=$(nbdinfo --size "$URI")
  [ "$new" -gt "$old" ] || return 0
  truncate -s "$new" "$model"
  head -c $(( (new - old) / 8 )) /dev/zero | tr '\0' '\377' >>"$model.known"
}

# load: random-io until the server goes away, continuing the model.
load ()
{
  [ -z "$1" ] || extend_model
  next_seed
  "$RANDOM_IO" "$URI" auto --seed "$RIO_SEED" --ops 100000000 --threads 4 \
    --chunk 64K --disks 3 --crash-ok ${1:+--model-in "$model"} \
    --model-out "$model" >"$tmpdir/rio.out" 2>&1 &
  RIO=$!
  cleanup_fn "kill_ours -9 $RIO"
  for (( i = 0; i < 300; i++ )); do
    grep -q running "$tmpdir/rio.out" && return 0
    sleep 0.02
  done
  cat "$tmpdir/rio.out" >&2
  fail "the workload did not start"
}

# kill_when DONE: once the reshape has moved DONE stripes (or has
# ended), kill -9.
kill_when ()
{
  local i done=-1 status=0
  for (( i = 0; i < 600; i++ )); do
    [ "$k" = end ] && break
    done=$(ctl_get 's["job"]["done_stripes"] if s["job"]["kind"] == "reshape" else -1') ||
      fail "status"
    [ "$done" -ge "$1" ] || [ "$done" -lt 0 ] && break
    sleep 0.05
  done
  crash_server
  wait "$RIO" || status=$?
  [ $status -eq 0 ] || { cat "$tmpdir/rio.out" >&2; fail "random-io failed before kill $k"; }
  grep -q 'server went away' "$tmpdir/rio.out" ||
    { cat "$tmpdir/rio.out" >&2; fail "the workload ended before kill $k"; }
  KILLED_AT+=("$done")
}

# read_only_mid_grow: the array served readonly=true where the kill left
# the reshape: every acknowledged byte reads back (the reads follow the
# reshape's line: the new shape below it, the old above), no job runs,
# and not one byte of a member changes.
read_only_mid_grow ()
{
  local sums size
  sums=$(checksum_members "${m[@]#disk=}")
  serve_ctl "$tmpdir/ro.log" "${m[@]}" readonly=true || fail "serve read-only"
  [ "$(ctl_get '(s["read_only"], s["job"]["kind"], s["grow"] is not None)')" = "(True, 'idle', True)" ] ||
    fail "read-only mid-grow: $(ctl_get '(s["read_only"], s["job"], s["grow"])')"
  size=$(ctl_get 's["size_bytes"]')
  "$RANDOM_IO" "$URI" "$size" --verify-only --model-in "$model" \
    --model-out "$tmpdir/ro.model" >"$tmpdir/ro.out" 2>&1 ||
    { cat "$tmpdir/ro.out" >&2; fail "read-only mid-grow: wrong bytes"; }
  stop_server
  [ "$(checksum_members "${m[@]#disk=}")" = "$sums" ] ||
    fail "read-only mid-grow: a member changed"
  echo "   served read-only after kill $k: every acknowledged byte read back"
}

echo "== 3 -> 4 members, $KILLS kills of the server"
m=("${m[@]/#/disk=}")
serve_array 3
load ""
sleep 0.5
"$RAID5CTL" --control "$CTL_SOCK" grow --add "${m[3]#disk=}" >"$tmpdir/grow.out" 2>&1 ||
  { cat "$tmpdir/grow.out" >&2; fail "grow --add"; }
KILLED_AT=()
for (( k = 0; k < KILLS; k++ )); do
  kill_when $(( k * stripes / KILLS ))
  [ $k = $(( KILLS / 2 )) ] && [ "${KILLED_AT[$k]}" -ge 0 ] && read_only_mid_grow
  serve_array 4
  if [ "${KILLED_AT[$k]}" -lt 0 ]; then    # it ended before this kill
    unset "KILLED_AT[$k]"
    load resume
    break
  fi
  [ "$(ctl_get 's["job"]["kind"]')" = reshape ] ||
    fail "after kill $k the reshape did not go on: $(ctl_get 's["job"], s["grow"]')"
  # Held while the workload starts again (it reads its model first): on
  # a loaded machine that took seconds in which the reshape ran past the
  # next kills' stripes.
  ctl_quiet pause || fail "pause after kill $k"
  echo "   kill $k at stripe ${KILLED_AT[$k]}, resumed at $(ctl_get 's["job"]["done_stripes"]')"
  load resume
  ctl_quiet resume || fail "resume after kill $k"
done
echo "   killed at stripes: ${KILLED_AT[*]} (of $stripes)"
min=$(( KILLS < 20 ? KILLS : 20 ))
[ ${#KILLED_AT[@]} -ge $min ] ||
  fail "only ${#KILLED_AT[@]} kills landed before the reshape ended (at least $min wanted)"
[ "${KILLED_AT[0]}" -lt $(( stripes / 20 )) ] ||
  fail "the first kill came at stripe ${KILLED_AT[0]}, not among the first"
ctl_wait 's["job"]["kind"] == "idle" and s["grow"] is None' 120
k=end
kill_when 0

echo "== after: check, read back, member-check"
serve_ctl "$tmpdir/nbdkit.log" "${m[@]}" || fail "serve after the grow"
ctl_wait 's["job"]["kind"] == "idle"' 60
[ "$(ctl_get '"%d %d" % (s["raid_disks"], s["size_bytes"])')" = "4 $(( stripes * 3 * CHUNK ))" ] ||
  fail "after the grow: $(ctl_get 's["raid_disks"], s["size_bytes"]')"
"$RAID5CTL" --control "$CTL_SOCK" check --wait >"$tmpdir/check.out" 2>&1 ||
  { cat "$tmpdir/check.out" >&2; fail "check after the grow"; }
grep -q 'mismatch_cnt 0$' "$tmpdir/check.out" || fail "check: $(cat "$tmpdir/check.out")"
extend_model
new=$(( stripes * 3 * CHUNK ))
"$RANDOM_IO" "$URI" "$new" --verify-only --model-in "$model" --model-out "$model" \
  >"$tmpdir/verify.out" 2>&1 ||
  { cat "$tmpdir/verify.out" >&2; fail "acknowledged writes lost across the kills"; }
stop_server
m=("${m[@]#disk=}")
md_geometry "${m[0]}"
md_expect clean AAAA "${m[@]}"
if [ "${GROW_BITMAP:-none}" = internal ]; then
  for d in "${m[@]}"; do
    [ "$(md_field "$d" 'Internal Bitmap')" = "8 sectors from superblock" ] ||
      fail "${d##*/}: no bitmap after the grow"
  done
fi
member_check --chunk 64K --layout "$MD_LAYOUT" --data-offset "$MD_DOFF" \
  --stripes "$stripes" --model "$model" "${m[@]}"
echo "test-grow-crash: OK${GROW_BITMAP:+ (bitmap $GROW_BITMAP)}"
