#!/usr/bin/env bash
# raid5ctl replace --control: slot 1 copied onto a new disk while it
# serves, under a verified random workload over 4 connections (md's
# want_replacement, mdadm --replace).  Mid-way: status says so (text and
# JSON, the job "replace"), mdadm --examine calls the new disk
# "Replacement device 1", and the array stays [UUU]; the server is
# killed -9 and started again (the new disk given among the members): the
# copy starts over (a write in flight at the kill may have reached the
# old member and not the new disk: test-replace-crash), while stopped
# cleanly and started again it goes on from its recorded point; then
# slot 2 fails: the copy goes on.  At the end slot 1 is the new disk, every read of the
# workload was right, the old member is out of the array (mdadm agrees:
# its events are behind), and member-check finds every byte where md
# puts it, the new disk included.  Then a second replace whose member
# fails mid-way, written to while it is held: the new disk takes the slot
# as md's does, rebuilt from its copy's point, and the writes it missed
# read back; started again mid-way with the old member given, that one
# is replaced, not offered for a re-add; and one whose new disk is a
# second member's path: refused in one line.  Last, a replace with
# another slot failed mid-way, stopped and started again: the copy goes
# on, degraded; that slot rebuilt meanwhile holds the copy, which goes
# on from its point once the rebuild is done.
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
. "${0%/*}/job-functions.sh"
requires_jobs
requires_raid5ctl

MB=24 CHUNK=65536
m=()
for i in 0 1 2; do
  m+=("$tmpdir/r$i.img")
  truncate -s ${MB}M "${m[$i]}"
done
new=$tmpdir/new1.img
truncate -s ${MB}M "$new"
"$RAID5CTL" create --chunk 64K --bitmap none "${m[@]}" >"$tmpdir/create.log" 2>&1 ||
  { cat "$tmpdir/create.log" >&2; fail "create"; }
md_geometry "${m[0]}"
stripes=$(( (MB * 1048576 - MD_DOFF) / CHUNK ))
speed=(sync-speed-min=2000 sync-speed-max=2000)

echo "== replace slot 1 under a verified load"
serve_ctl "$tmpdir/nbdkit.log" "${m[@]/#/disk=}" "${speed[@]}" || fail "serve"
load_start "$tmpdir/model" 3
sleep 0.5
"$RAID5CTL" --control "$CTL_SOCK" replace 1 "$new" >"$tmpdir/rep.out" 2>&1 ||
  { cat "$tmpdir/rep.out" >&2; fail "replace 1"; }
cat "$tmpdir/rep.out"
ctl_wait 's["job"]["kind"] == "replace" and s["job"]["done_stripes"] > 20' 30
[ "$(ctl_get '"%s %s %s" % (s["health"], s["members"][1]["path"], s["members"][1]["replacement"])')" = \
  "[UUU] ${m[1]} $new" ] ||
  fail "status mid-replace: $(ctl_get 's["health"], s["members"][1]')"
ctl status >"$tmpdir/status.txt"
grep -q "being replaced by $new (R)" "$tmpdir/status.txt" ||
  fail "status text: $(cat "$tmpdir/status.txt")"
grep -Eq '^ +\[=*>\.*\] +replace = ' "$tmpdir/status.txt" ||
  fail "no progress line: $(cat "$tmpdir/status.txt")"
ctl_wait 's["job"]["done_stripes"] > 60' 30      # a checkpoint or two
[ "$(md_field "$new" 'Device Role')" = "Replacement device 1" ] ||
  fail "mdadm --examine the new disk: role '$(md_field "$new" 'Device Role')'"
echo "   mdadm: $(md_field "$new" 'Device Role'), recovery offset $(md_field "$new" 'Recovery Offset')"

echo "== stopped cleanly mid-replace, started again: it goes on"
ctl_ok pause                  # where it is now, while the load ends
load_stop
stop_server
done_at=$(( $(md_field "$new" 'Recovery Offset' | cut -d' ' -f1) * 512 / CHUNK ))
serve_ctl "$tmpdir/nbdkit.log" "${m[@]/#/disk=}" "disk=$new" "${speed[@]}" ||
  fail "serve after the stop"
resumed=$(ctl_get 's["job"]["done_stripes"] if s["job"]["kind"] == "replace" else -1')
echo "   stopped with stripe $done_at recorded, resumed at $resumed"
[ "$done_at" -gt 0 ] && [ "$resumed" -ge "$done_at" ] ||
  fail "the replace did not go on from its recorded point"
# Held while the load starts, so that the replace still runs at the kill
# however slow the machine is.
ctl_ok pause

echo "== kill -9 mid-replace, under writes, start again"
# The kill leaves the stripes it tore for a resync, which runs after the
# replace (md's order too: recovery before resync), and slot 2 fails
# before either ends: those stripes' bytes are then md's write hole.
# So the whole stripes of the requests in flight become unknown
# (--write-hole), and nothing learns them back (--no-learn below).
next_seed
"$RANDOM_IO" "$URI" auto --seed "$RIO_SEED" --ops 100000000 --crash-ok \
  --write-hole --chunk 64K --model-in "$tmpdir/model" \
  --model-out "$tmpdir/model.crash" >"$tmpdir/rio.out" 2>&1 &
rio=$!
for (( i = 0; i < 300; i++ )); do
  grep -q running "$tmpdir/rio.out" 2>/dev/null && break
  sleep 0.02
done
ctl_ok resume
sleep 0.5
done_at=$(ctl_get 's["job"]["done_stripes"]')
rec0=$(md_field "$new" 'Recovery Offset' | cut -d' ' -f1)
[ "$(ctl_get 's["job"]["kind"]')" = replace ] || fail "the replace ended before the kill"
crash_server
wait "$rio" || { cat "$tmpdir/rio.out" >&2; fail "random-io before the kill"; }
grep -q 'server went away' "$tmpdir/rio.out" || fail "the writes ended before the kill"
serve_ctl "$tmpdir/nbdkit.log" "${m[@]/#/disk=}" "disk=$new" "${speed[@]}" ||
  fail "serve after the kill"
ctl_ok pause                  # held until slot 2 fails, below
[ "$(ctl_get '"%s %s" % (s["job"]["kind"], s["members"][1]["replacement"])')" = "replace $new" ] ||
  fail "after the kill: $(ctl_get 's["job"], s["members"][1]')"
rec=$(md_field "$new" 'Recovery Offset' | cut -d' ' -f1)
echo "   killed at stripe $done_at (${rec0} sectors recorded); the copy starts over (${rec} now)"
[ "${rec:-0}" -lt "$rec0" ] || fail "after kill -9 the copy did not start over: ${rec} sectors recorded"
grep -q "slot 1's replacement ($new): the array was not stopped cleanly, so its copy starts over" \
  "$tmpdir/nbdkit.log" || fail "the log does not say the copy starts over"
# Every acknowledged write reads back; what was in flight at the kill
# stays unknown.
"$RANDOM_IO" "$URI" auto --verify-only --no-learn \
  --model-in "$tmpdir/model.crash" --model-out "$tmpdir/model" \
  >"$tmpdir/verify.out" 2>&1 ||
  { cat "$tmpdir/verify.out" >&2; fail "the array after the kill"; }

load_start "$tmpdir/model" 3 --no-learn

echo "== slot 2 fails mid-replace: the copy goes on"
ctl_ok fail 2
[ "$(ctl_get '"%s %s" % (s["health"], s["job"]["kind"])')" = "[UU_] replace" ] ||
  fail "after fail 2: $(ctl_get 's["health"], s["job"]')"
ctl_ok resume
timeout 120 "$RAID5CTL" --control "$CTL_SOCK" replace --wait 1 "$new" \
  >"$tmpdir/wait.out" 2>&1 || { cat "$tmpdir/wait.out" >&2; fail "replace --wait"; }
tail -n 1 "$tmpdir/wait.out"
grep -qxF "replace: slot 1 ($new) is active; the array is degraded [UU_]" "$tmpdir/wait.out" ||
  fail "replace --wait said: $(cat "$tmpdir/wait.out")"
# Asked again once it is over: PATH holds the slot, exit 0 (it said the
# path is a member already, exit 1).
out=$(timeout 30 "$RAID5CTL" --control "$CTL_SOCK" replace --wait 1 "$new" 2>&1) ||
  fail "replace --wait asked again after its end: $out"
grep -q "slot 1 is $new already: nothing to replace" <<<"$out" ||
  fail "replace --wait asked again said: $out"
load_alive || fail "the load died during the replace"
load_stop
echo "== slot 2 back (rebuilt in place), then check"
"$RAID5CTL" --control "$CTL_SOCK" rebuild --wait 2 "${m[2]}" >"$tmpdir/rb.out" 2>&1 ||
  { cat "$tmpdir/rb.out" >&2; fail "rebuild 2"; }
ctl speed --max 200000 >/dev/null
ctl_wait 's["job"]["kind"] == "idle"' 120      # the resync the kill left
"$RAID5CTL" --control "$CTL_SOCK" check --wait >"$tmpdir/check.out" 2>&1 ||
  { cat "$tmpdir/check.out" >&2; fail "check"; }
grep -q 'mismatch_cnt 0$' "$tmpdir/check.out" || fail "check: $(cat "$tmpdir/check.out")"
"$RANDOM_IO" "$URI" auto --verify-only --model-in "$tmpdir/model" \
  >"$tmpdir/verify.out" 2>&1 ||
  { cat "$tmpdir/verify.out" >&2; fail "the array after the replace"; }
stop_server
now=("${m[0]}" "$new" "${m[2]}")
md_expect clean AAA "${now[@]}"
[ "$(md_events "${m[1]}")" -lt "$MD_EVENTS" ] ||
  fail "the old member's events ($(md_events "${m[1]}")) are not behind ($MD_EVENTS)"
member_check --chunk 64K --layout "$MD_LAYOUT" --data-offset "$MD_DOFF" \
  --model "$tmpdir/model" "${now[@]}"

echo "== the member being replaced fails: the new disk takes the slot from the copy's point"
# md goes on from the copy's point (raid5_remove_disk moves the
# replacement into the slot).  Held while the member fails and a verified
# load writes: those writes are planned around the slot and miss the new
# disk, below its copy's point too; they are computed onto it before it
# takes the slot, or the load's reads after would find them missing.
new2=$tmpdir/new2.img
truncate -s ${MB}M "$new2"
serve_ctl "$tmpdir/nbdkit.log" "${now[@]/#/disk=}" "${speed[@]}" || fail "serve"
ctl_ok replace 0 "$new2"
ctl_wait 's["job"]["done_stripes"] > 40' 30
ctl_ok pause
copied=$(ctl_get 's["job"]["done_stripes"]')
ctl_ok fail 0
[ "$(md_field "$new2" 'Recovery Offset')" = "0 sectors" ] ||
  fail "the new disk still claims a copy while writes miss it: $(md_field "$new2" 'Recovery Offset')"
LOAD_OPS=300 load_start "$tmpdir/model" 3
sleep 1
load_stop
ctl_ok resume
ctl_wait 's["job"]["kind"] != "replace"' 20
[ "$(ctl_get '"%s %s" % (s["members"][0]["path"], s["members"][0]["state"])')" = "$new2 rebuilding" ] ||
  fail "slot 0 after its member failed: $(ctl_get 's["members"][0]')"
from=$(sed -n 's/.*takes the slot, rebuilt from stripe \([0-9]*\) on.*/\1/p' "$tmpdir/nbdkit.log")
echo "   copied $copied stripes when slot 0 failed; rebuilt from stripe ${from:-?} on"
[ "${from:-0}" -ge "$copied" ] && [ "${from:-0}" -gt 0 ] ||
  fail "the new disk did not take the slot from its copy's point: $(grep 'slot 0' "$tmpdir/nbdkit.log" | tail -n 3)"
[ "$(md_field "$new2" 'Device Role')" = "Active device 0" ] ||
  fail "mdadm --examine the new disk: role '$(md_field "$new2" 'Device Role')'"
# Stopped and started again mid-rebuild, the old member given too: it
# was replaced (the superblocks give its slot to the new disk), not left
# out for a re-add -- status advised one, which failed the new disk.
stop_server
serve_ctl "$tmpdir/nbdkit.log" "disk=${now[0]}" "disk=$new2" "disk=${now[1]}" \
  "disk=${now[2]}" "${speed[@]}" || fail "serve again, the old member given"
[ "$(ctl_get 's["members"][0]["state"]')" = rebuilding ] ||
  fail "slot 0 after the restart: $(ctl_get 's["members"][0]') (the case needs it mid-rebuild)"
[ "$(ctl_get 's["left_out"]')" = "[]" ] ||
  fail "the replaced member is left out for a re-add: $(ctl_get 's["left_out"]')"
out=$(ctl status)
! grep -q "left out of slot" <<<"$out" || fail "status: $(grep 'left out' <<<"$out")"
grep -q "${now[0]}.*was replaced: slot 0 is member" "$tmpdir/nbdkit.log" ||
  fail "the log does not say the old member was replaced: $(grep "${now[0]}" "$tmpdir/nbdkit.log" | tail -n 2)"
echo "   started again with the old member: replaced, not offered for a re-add"
ctl speed --max 200000 >/dev/null
ctl_wait 's["job"]["kind"] == "idle" and s["health"] == "[UUU]"' 60
"$RANDOM_IO" "$URI" auto --verify-only --model-in "$tmpdir/model" \
  >"$tmpdir/verify.out" 2>&1 ||
  { cat "$tmpdir/verify.out" >&2; fail "the array after the replacement's rebuild"; }
# Slowed again, or a check at 200 MB/s may end between two looks and
# never be seen part-way.
ctl speed --max 8000 >/dev/null
ctl_ok check
ctl_progress check 60 1
[ "$(ctl_get 's["last_job"]["mismatch_sectors"]')" = 0 ] ||
  fail "check after the new disk took the slot: $(ctl_get 's["last_job"]')"

echo "== refused in one line"
out=$("$RAID5CTL" --control "$CTL_SOCK" replace 2 "$new" 2>&1) &&
  fail "replace onto a member was not refused"
grep -q "is member 1 already" <<<"$out" || fail "refusal: $out"
echo "   $out"
out=$("$RAID5CTL" --control "$CTL_SOCK" replace 7 "$tmpdir/x.img" 2>&1) &&
  fail "replace of slot 7 was not refused"
echo "   $out"

echo "== another slot out mid-replace, stopped and started again: the copy goes on"
# Served, the copy goes on when another member fails; started again it
# did not (the start resumed a replace only on a whole array), while
# status said the new disk takes the slot when the copy is done.
new3=$tmpdir/new3.img
truncate -s ${MB}M "$new3"
ctl speed --min 2000 --max 2000 >/dev/null
ctl_ok replace 1 "$new3"
ctl_wait 's["job"]["kind"] == "replace" and s["job"]["done_stripes"] > 20' 30
ctl_ok fail 2
stop_server
serve_ctl "$tmpdir/nbdkit.log" "disk=$new2" "disk=${now[1]}" "disk=${now[2]}" \
  "disk=$new3" "${speed[@]}" || fail "serve again, degraded mid-replace"
ctl_wait 's["job"]["kind"] == "replace"' 10
echo "   started again [$(ctl_get 's["health"]')]: $(ctl_get 's["job"]["kind"]') from stripe $(ctl_get 's["job"]["done_stripes"]')"
# Slot 2 rebuilt meanwhile: the copy is held for it, not dropped (it
# was: the replacement let go), and goes on from its point after.
new4=$tmpdir/new4.img
truncate -s ${MB}M "$new4"
ctl_ok rebuild 2 "$new4"
[ "$(ctl_get '"%s %s" % (s["job"]["kind"], s["members"][1]["replacement"])')" = "rebuild $new3" ] ||
  fail "the replace was not held for the rebuild: $(ctl_get 's["job"], s["members"][1], s["last_job"]')"
ctl speed --max 200000 >/dev/null
# --wait follows the held replace through the rebuild to its end.
timeout 120 "$RAID5CTL" --control "$CTL_SOCK" replace --wait 1 "$new3" \
  >"$tmpdir/wait2.out" 2>&1 || { cat "$tmpdir/wait2.out" >&2; fail "replace --wait while held"; }
grep -q "^replace: slot 1 ($new3) is active" "$tmpdir/wait2.out" ||
  fail "replace --wait while held said: $(cat "$tmpdir/wait2.out")"
ctl_wait 's["job"]["kind"] == "idle"' 60
[ "$(ctl_get '"%s %s %s" % (s["health"], s["members"][1]["path"], s["members"][2]["path"])')" = "[UUU] $new3 $new4" ] ||
  fail "after the rebuild and the replace: $(ctl_get 's["health"], s["members"][1], s["members"][2], s["last_job"]')"
"$RANDOM_IO" "$URI" auto --verify-only --model-in "$tmpdir/model" \
  >"$tmpdir/verify.out" 2>&1 ||
  { cat "$tmpdir/verify.out" >&2; fail "the array after the degraded replace"; }
stop_server
echo "test-replace: OK"
