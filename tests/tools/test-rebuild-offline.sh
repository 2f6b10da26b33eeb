#!/usr/bin/env bash
# raid5ctl rebuild, offline (no server):
#  - slot 1's old member left out ('missing'), rebuilt onto a blank file:
#    member-check (an independent reading of md's layout) finds every data
#    chunk where md puts it, equal to what was written, and parity = XOR;
#    raid5ctl check says 0; mdadm --examine shows the new member as
#    'Active device 1', every superblock clean, AAA, same events;
#  - refusals are one line and write nothing: a slot in service, a bad
#    slot, a disk too small, a member as the new disk, another array's
#    disk, no --new when nothing is partly rebuilt, a served member;
#  - a new disk with an md v1.0 superblock (outside the data area) is
#    refused, and with --force the v1.0 superblock is wiped;
#  - a rebuild killed (-9) half way leaves 'Recovery Offset' in the new
#    member's superblock; `raid5ctl rebuild --slot K DISK...` resumes
#    there, not at 0: a byte spoiled below the offset before resuming is
#    still wrong afterwards (check names its stripe), and the rest is right.

. "${0%/*}/functions.sh"
. "${0%/*}/../integration/md-functions.sh"
requires_raid5ctl
requires nbdcopy --version
start=$SECONDS

N=3 CHUNK=65536
md_create r $N 32M --chunk 64K --bitmap none
m=("${MEMBERS[@]}")
geom=(--chunk 64K --layout "$MD_LAYOUT" --data-offset "$MD_DOFF")
STRIPES=$(( (32 * 1048576 - MD_DOFF) / CHUNK ))

# The data: 24 MiB of random bytes, then zeros (the created array's).
head -c 24M /dev/urandom > "$tmpdir/model"
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${m[@]/#/disk=}" --run \
  "nbdcopy '$tmpdir/model' \"\$uri\" && nbdinfo --size \"\$uri\" > '$tmpdir/size'"
truncate -s "$(cat "$tmpdir/size")" "$tmpdir/model"

echo "== refusals"
new=$tmpdir/new1
truncate -s 32M "$new"
truncate -s 16M "$tmpdir/small"
truncate -s 32M "$tmpdir/o.0" "$tmpdir/o.1" "$tmpdir/o.2"
"$RAID5CTL" create --chunk 64K --assume-clean "$tmpdir"/o.? >/dev/null 2>&1 ||
  fail "creating the other array"
DISKS=("${m[@]}" "$new" "$tmpdir/o.0")
expect_refused 'slot 1 \(.*r\.1\) is in service' rebuild --slot 1 --new "$new" "${m[@]}"
# re-add of a whole array: said as a re-add, no slot picked at random.
expect_refused '^raid5ctl re-add: every slot is in service: nothing to re-add$' \
  re-add "${m[@]}"
expect_refused 'slot 0 .* is in service; slot 1 is the one out of service' \
  rebuild --slot 0 --new "$new" "${m[0]}" missing "${m[2]}"
expect_refused '--slot 3: the array has slots 0 to 2' \
  rebuild --slot 3 --new "$new" "${m[0]}" missing "${m[2]}"
expect_refused 'small is too small' \
  rebuild --slot 1 --new "$tmpdir/small" "${m[0]}" missing "${m[2]}"
expect_refused 'r\.2 is member 2 already' \
  rebuild --slot 1 --new "${m[2]}" "${m[0]}" missing "${m[2]}"
expect_refused 'o\.0 already holds an md superblock \(v1\.2, at byte 4096\): it belongs to array UUID .*--force overwrites it' \
  rebuild --slot 1 --new "$tmpdir/o.0" "${m[0]}" missing "${m[2]}"
truncate -s 40M "$tmpdir/fs"
mkfs.ext4 -q -F -L keep "$tmpdir/fs"
DISKS+=("$tmpdir/fs")
expect_refused "fs holds an ext4 file system \\(label 'keep'.*--force overwrites it" \
  rebuild --slot 1 --new "$tmpdir/fs" "${m[0]}" missing "${m[2]}"
expect_refused 'slot 1 has no member to rebuild onto: give --new' \
  rebuild --slot 1 "${m[0]}" missing "${m[2]}"
expect_refused 'which slot' rebuild --new "$new" "${m[0]}" missing "${m[2]}"
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${m[@]/#/disk=}" --run \
  "$(sh_quote "$RAID5CTL" rebuild --slot 1 --new "$new" "${m[0]}" missing "${m[2]}") 2>'$tmpdir/err'; test \$? = 1" ||
  fail "rebuild of a served array was not refused"
[ "$(grep -c . "$tmpdir/err")" = 1 ] && grep -q "in use" "$tmpdir/err" ||
  fail "served: $(cat "$tmpdir/err")"
echo "   served -> $(cat "$tmpdir/err")"
[ "$failures" = 0 ] || fail "$failures refusals went wrong"

echo "== slot 1 onto a blank file"
"$RAID5CTL" rebuild --slot 1 --new "$new" "${m[0]}" missing "${m[2]}" \
  >"$tmpdir/out" 2>"$tmpdir/err" || fail "rebuild: $(cat "$tmpdir/err")"
cat "$tmpdir/out" "$tmpdir/err"
grep -qxF "rebuild: slot 1 ($new) is active: the array has all its members" "$tmpdir/out" ||
  fail "rebuild said: $(cat "$tmpdir/out")"
grep -q "^raid5ctl rebuild: rebuild: $(( STRIPES / 16 )) MiB of each member in " "$tmpdir/err" ||
  fail "no final progress line"
ms=("${m[0]}" "$new" "${m[2]}")
member_check "${geom[@]}" --model "$tmpdir/model" "${ms[@]}"
"$RAID5CTL" check "${ms[@]}" 2>/dev/null | grep -q "mismatch_cnt 0$" ||
  fail "raid5ctl check after the rebuild"
md_expect clean AAA "${ms[@]}"
[ "$(md_field "$new" 'Device Role')" = "Active device 1" ] ||
  fail "new member's role: $(md_field "$new" 'Device Role')"
! mdadm --examine "$new" | grep -q 'Recovery Offset' ||
  fail "a recovery offset is left on the rebuilt member"

echo "== slot 2, onto a disk with an old v1.0 superblock: killed half way, then resumed"
new2=$tmpdir/new2
truncate -s 40M "$new2"
plant_md 1.0 "$tmpdir/o.0" "$new2" >/dev/null
DISKS=("${ms[@]}" "$new2")
expect_refused 'new2 already holds an md superblock \(v1\.0, at byte [0-9]*\): it belongs to array UUID .*--force overwrites it' \
  rebuild --slot 2 --new "$new2" "${ms[0]}" "${ms[1]}" missing
[ "$failures" = 0 ] || fail "a disk with a v1.0 superblock was not refused"
"$RAID5CTL" rebuild --slot 2 --new "$new2" --force --max-speed 8M "${ms[0]}" "${ms[1]}" missing \
  2>"$tmpdir/err" &
pid=$!
ro=0
for (( i = 0; i < 100; i++ )); do
  sleep 0.1
  ro=$(md_field "$new2" 'Recovery Offset' || :)   # mdadm may catch a superblock mid-write
  ro=${ro% sectors}
  [ "${ro:-0}" -gt 0 ] && break
done
kill -9 $pid 2>/dev/null || :
wait $pid 2>/dev/null || :
ro=$(md_field "$new2" 'Recovery Offset')
ro=${ro% sectors}
[ -n "$ro" ] && [ "$ro" -gt 0 ] || fail "no Recovery Offset after the kill"
at=$(( ro * 512 / CHUNK ))
echo "   killed with Recovery Offset $ro sectors (stripe $at)"
[ "$at" -lt "$STRIPES" ] || fail "the rebuild was over before the kill"
[ "$at" -gt 3 ] || fail "too little progress before the kill"
# Stripe 3's parity is on slot 2 (left-symmetric: 2 - 3 % 3); spoil it.
flip_byte "$new2" $(( MD_DOFF + 3 * CHUNK + 10 )) >/dev/null
"$RAID5CTL" rebuild --slot 2 "${ms[1]}" "$new2" "${ms[0]}" \
  >"$tmpdir/out" 2>"$tmpdir/err" || fail "resume: $(cat "$tmpdir/err")"
cat "$tmpdir/err"
grep -q "(resumed at stripe $at of $STRIPES)$" "$tmpdir/err" ||
  fail "the rebuild did not resume at stripe $at"
ms=("${m[0]}" "$new" "$new2")
status=0
"$RAID5CTL" check "${ms[@]}" >"$tmpdir/check" 2>/dev/null || status=$?
cat "$tmpdir/check"
[ $status = 2 ] && grep -q "1 with wrong parity" "$tmpdir/check" &&
  grep -q "^  stripe 3: .*parity on member 2 from offset $(( MD_DOFF + 3 * CHUNK ))," "$tmpdir/check" ||
  fail "the spoiled byte below the recovery offset was rewritten (resumed from 0?)"
"$RAID5CTL" repair "${ms[@]}" >/dev/null 2>&1 || fail "repair"
member_check "${geom[@]}" --model "$tmpdir/model" "${ms[@]}"
md_expect clean AAA "${ms[@]}"
! mdadm --examine "$new2" | grep -q 'Recovery Offset' ||
  fail "a recovery offset is left on the resumed member"
# (mdadm --examine -e 1.0 exits 0 either way: look at what it says.)
mdadm --examine -e 1.0 "$new2" 2>&1 | grep -q 'No super block found' ||
  fail "--force left the v1.0 superblock on $new2"

echo "== --max-speed holds on a small member (steps were up to 32 MiB, then a sleep)"
# In memory (where a step was biggest: 32 MiB, read in place), if there.
shm=$tmpdir
if [ -d /dev/shm ] && shm=$(mktemp -d /dev/shm/r5-rebuild-offline.XXXXXX); then
  cleanup_fn "rm -rf '$shm'"
else
  shm=$tmpdir
fi
MEMBERS_DIR=$shm md_create p 3 16M --chunk 64K --bitmap none --assume-clean
mp=("${MEMBERS[@]}")
fill_random "$tmpdir/p.model" "${mp[@]/#/disk=}"
truncate -s 16M "$shm/p.new"
"$RAID5CTL" rebuild --slot 0 --new "$shm/p.new" --max-speed 1M missing "${mp[@]:1}" \
  >/dev/null 2>&1 &
pid=$!
sleep 1.5
# The last MiB of data, rebuilt at the end: still zeroes at 1.5 s.
[ -z "$(tail -c 1M "$shm/p.new" | tr -d '\0' | head -c 1)" ] ||
  fail "a 15 MiB rebuild at 1M/s had written its last MiB within 1.5 s"
kill -9 $pid 2>/dev/null || :
wait $pid 2>/dev/null || :
echo "   at 1.5 s: the last MiB not rebuilt yet"

echo "== a row member 1 lists bad: the rebuild says which bytes it lost"
BB_PUT=$abs_top_builddir/tests/tools/bb-put
[ -x "$BB_PUT" ] || fail "not built: $BB_PUT"
md_create l 3 16M --chunk 64K --bitmap none --assume-clean
ml=("${MEMBERS[@]}")
"$BB_PUT" "${ml[1]}" "$(( MD_DOFF / 512 + 400 ))+8" >/dev/null || fail "bb-put"
truncate -s 16M "$tmpdir/l.new"
"$RAID5CTL" rebuild --slot 0 --new "$tmpdir/l.new" missing "${ml[@]:1}" >"$tmpdir/l.out" 2>&1 ||
  { cat "$tmpdir/l.out" >&2; fail "rebuild over a listed row"; }
grep -q '^rebuild: 1 stripes not wholly rebuilt: .* those bytes are lost' "$tmpdir/l.out" &&
  grep -q 'array bytes lost: ' "$tmpdir/l.out" ||
  fail "the rebuild does not say what it lost: $(cat "$tmpdir/l.out")"
echo "   $(grep -o 'array bytes lost: .*' "$tmpdir/l.out")"
echo "test-rebuild-offline: OK ($(( SECONDS - start )) s)"
