#!/usr/bin/env bash
# Re-adding a member that left part-way through a rebuild onto it.  Its
# own superblock then records a recovery that was not bitmap-guided
# (MD_FEATURE_RECOVERY_OFFSET without MD_FEATURE_RECOVERY_BITMAP): past
# its recovery offset it holds what the file held before, and no bitmap
# marks that.  md rebuilds such a device whole (super_1_validate:
# saved_raid_disk -1; raid5_add_disk: conf->fullsync).  A re-add that
# followed the bitmap alone served those bytes: wrong, 13 MB of 31.
#   - served: slot 2 failed, rebuilt onto a file at a low speed, failed
#     again part-way (its superblock says a recovery offset; status says
#     why the rebuild stopped, not 'Operation canceled'), re-added
#     through the control socket: the reply says it is rebuilt whole; the
#     array then reads as written, and a check finds parity right;
#   - offline: the same cut, the server stopped; served with it, status
#     says to rebuild it (not that the bitmap covers what it missed);
#     raid5ctl re-add with the members says it rebuilds it whole, and the
#     array reads as written;
#   - a bitmap-guided re-add cut part-way stays bitmap-guided (both flags:
#     the bits are not cleared while the member is out), and is right;
#     once it is done and the array idle, the bits are cleared (md's
#     bitmap daemon), with no write to make the array dirty first.
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
. "${0%/*}/job-functions.sh"
requires_jobs
requires_raid5ctl

slow=(sync-speed-min=1000 sync-speed-max=2000)

# cut_rebuild LOG: a new array a.0..a.2 served (bitmap internal), filled;
# slot 2 failed and rebuilt onto $tmpdir/new.img, failed again once 64
# stripes are done.  The server stays up.
cut_rebuild ()
{
  md_create a 3 32M --chunk 64K --bitmap internal --assume-clean
  m=("${MEMBERS[@]}")
  serve_ctl "$1" "${m[@]/#/disk=}" "${slow[@]}" || fail "serve"
  size=$(ctl_get 's["size_bytes"]')
  head -c "$size" /dev/urandom >"$tmpdir/model"
  nbdcopy "$tmpdir/model" "$URI" || fail "filling the array"
  # Idle, the array is marked clean and the bitmap's bits cleared: only
  # what is written after the failure is marked.
  ctl_wait "s['metadata'] == 'clean'" 20
  ctl_ok fail 2
  truncate -s 32M "$tmpdir/new.img"
  ctl_ok rebuild 2 "$tmpdir/new.img"
  ctl_wait "s['job']['kind'] == 'rebuild' and s['job']['done_stripes'] >= 64" 60
  ctl_ok fail 2
  ctl_wait "s['job']['kind'] == 'idle'" 30
  [ -n "$(md_field "$tmpdir/new.img" 'Recovery Offset')" ] ||
    fail "the cut rebuild left no recovery offset: $(mdadm --examine "$tmpdir/new.img")"
  "$RAID5CTL" status --control "$CTL_SOCK" |
    grep -q "last rebuild: stopped: the member being rebuilt failed, or another job took over" ||
    fail "status does not say why the rebuild stopped: $("$RAID5CTL" status --control "$CTL_SOCK" | grep last)"
}

echo "== served: re-added after its rebuild was cut"
cut_rebuild "$tmpdir/online.log"
out=$(ctl re-add 2) || fail "re-add: $out"
grep -q "it is rebuilt whole" <<<"$out" || fail "the re-add does not say it rebuilds whole: $out"
ctl_ok speed --min 200000 --max 400000
ctl_wait "s['job']['kind'] == 'idle' and s['health'] == '[UUU]'" 60
reads_as_model "after the re-add"
ctl_ok check
ctl_wait "s['job']['kind'] == 'idle' and s['last_job']['kind'] == 'check'" 60
[ "$(ctl_get 's["last_job"]["mismatch_sectors"]')" = 0 ] ||
  fail "a check after the re-add: $(ctl_get 's["last_job"]')"
echo "   $out"
stop_server

echo "== offline: raid5ctl re-add after the rebuild was cut"
rm -f "$tmpdir"/a.* "$tmpdir/new.img"
cut_rebuild "$tmpdir/offline.log"
stop_server
# Served with it, assembly leaves it out: status says to rebuild it (it
# said the bitmap covers what it missed, which no bitmap does here).
serve_ctl "$tmpdir/leftout.log" "disk=${m[0]}" "disk=${m[1]}" "disk=$tmpdir/new.img" ||
  fail "serve with the cut member"
left=$("$RAID5CTL" status --control "$CTL_SOCK" | grep 'left out of slot 2')
[ "$(ctl_get 's["left_out"][0]["re_addable"]')" = False ] &&
  grep -q "(missed writes; rebuild it)" <<<"$left" ||
  fail "status of the member whose rebuild was cut: $left"
echo "  $left"
stop_server
out=$("$RAID5CTL" re-add "${m[0]}" "${m[1]}" "$tmpdir/new.img" 2>&1) ||
  fail "raid5ctl re-add: $out"
grep -q "it is rebuilt whole" <<<"$out" || fail "raid5ctl re-add does not say it rebuilds whole: $out"
serve_ctl "$tmpdir/offline2.log" "disk=${m[0]}" "disk=${m[1]}" "disk=$tmpdir/new.img" ||
  fail "serve after the re-add"
[ "$(ctl_get 's["health"]')" = "[UUU]" ] || fail "after the offline re-add: $(ctl_get 's["health"]')"
reads_as_model "after the offline re-add"
echo "   $(grep 'rebuilt whole' <<<"$out")"
stop_server

echo "== a bitmap-guided re-add cut part-way stays bitmap-guided"
rm -f "$tmpdir"/a.* "$tmpdir/new.img"
md_create a 3 32M --chunk 64K --bitmap internal --assume-clean
m=("${MEMBERS[@]}")
serve_ctl "$tmpdir/bitmap.log" "${m[@]/#/disk=}" "${slow[@]}" || fail "serve"
size=$(ctl_get 's["size_bytes"]')
ctl_ok fail 2
head -c "$size" /dev/urandom >"$tmpdir/model"
nbdcopy "$tmpdir/model" "$URI" || fail "writing the array degraded"
out=$(ctl re-add 2) || fail "re-add: $out"
grep -q "rebuilding what the bitmap marks" <<<"$out" || fail "the first re-add: $out"
ctl_wait "s['job']['kind'] == 'rebuild' and s['job']['done_stripes'] >= 64" 60
ctl_ok fail 2
ctl_wait "s['job']['kind'] == 'idle'" 30
out=$(ctl re-add 2) || fail "re-add again: $out"
grep -q "rebuilding what the bitmap marks" <<<"$out" ||
  fail "a bitmap-guided re-add cut short was not bitmap-guided again: $out"
ctl_ok speed --min 200000 --max 400000
ctl_wait "s['job']['kind'] == 'idle' and s['health'] == '[UUU]'" 60
reads_as_model "after the second re-add"
echo "   $out"
# No write since: the bits the re-add rebuilt by are cleared once idle,
# as md's bitmap daemon clears them (they stayed until the next write).
for (( i = 0; i < 50; i++ )); do
  bits=$("$RAID5CTL" examine "${m[0]}" | sed -n 's/.*Bitmap : .*, \([0-9]*\) set.*/\1/p')
  [ "$bits" = 0 ] && break
  sleep 0.1
done
[ "$bits" = 0 ] || fail "the bitmap keeps $bits bits set after the re-add's rebuild: $("$RAID5CTL" examine "${m[0]}" | grep " Bitmap :")"
echo "   then idle: the bitmap's bits cleared"
stop_server
echo "PASS: $test_name"
