#!/usr/bin/env bash
# Nothing that holds data is overwritten unless the user says so: the
# disks a served array would write -- its hot spare and the new member of
# an online rebuild -- are probed as raid5ctl create probes them, and a
# member may be named by an NBD URI wherever raid5ctl takes one.
# Asserts:
#   - spare=DISK holding another array's md member, or an ext4 file
#     system, is refused at start with one line naming DISK, what it holds
#     (the other array's UUID; the file system's label) and
#     spare-force=true; no byte of DISK changes;
#   - a blank spare that gets a file system while the array serves is
#     probed again when a member fails: not rebuilt onto, no longer the
#     spare, the log says why, no byte of it changes;
#   - spare-force=true: the same ext4 spare is taken and rebuilt onto, and
#     afterwards holds no ext4 signature (wipefs), parity clean;
#   - raid5ctl rebuild --control SOCKET SLOT DISK with DISK another
#     array's member or an ext4 file system: exit 1, one line with
#     "--force overwrites it", the slot still out of service, DISK
#     unchanged; re-add of the same disks refused too; with --force the
#     rebuild runs and the file system's signature is wiped;
#   - raid5ctl rebuild --control SOCKET SLOT nbd+unix:///?socket=...: the
#     URI reaches the server as it is (no working directory in front of
#     it), and the slot is rebuilt onto that export.
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
. "${0%/*}/job-functions.sh"
requires_jobs
command -v mkfs.ext4 >/dev/null || skip "needs mkfs.ext4"
command -v wipefs >/dev/null || skip "needs wipefs"
start=$SECONDS
SIZE=16M

# new_array NAME: members m[] and disks[] of a new array NAME.
new_array ()
{
  md_create "$1" 3 "$SIZE" --chunk 64K --assume-clean --bitmap none
  m=("${MEMBERS[@]}")
  mapfile -t disks < <(disk_args "${m[@]}")
}

# ext4_disk PATH: a file holding an ext4 file system labelled keep.
ext4_disk ()
{
  truncate -s "$SIZE" "$1"
  mkfs.ext4 -q -F -L keep "$1" >/dev/null 2>&1 || fail "mkfs.ext4 $1"
}

# has_ext4 PATH: does wipefs still find an ext4 signature on PATH?
has_ext4 () { wipefs --no-act "$1" 2>/dev/null | grep -qw ext4; }

# one_line FILE REGEX WHAT: FILE has exactly one error line (nbdkit's
# "error:", or raid5ctl's whole output), matching REGEX.
one_line ()
{
  local n
  n=$(grep -Eci '^raid5ctl|error' "$1") || :
  [ "$n" = 1 ] || { cat "$1" >&2; fail "$3: not one error line"; }
  grep -Eq "$2" "$1" || { cat "$1" >&2; fail "$3: the line does not say '$2'"; }
  echo "   $3: $(grep -Ei '^raid5ctl|error' "$1")"
}

md_create other 3 "$SIZE" --chunk 64K --assume-clean --bitmap none
theirs=${MEMBERS[0]}
their_uuid=$(md_field "$theirs" 'Array UUID')
fs=$tmpdir/fs.img
ext4_disk "$fs"
victims_sum=$(checksum_members "$theirs" "$fs")

echo "== spare= holding data is refused at start"
new_array arr
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${disks[@]}" spare="$theirs" --run true \
  >"$tmpdir/bad.out" 2>&1 && fail "spare=$theirs (another array's member) was accepted"
one_line "$tmpdir/bad.out" "spare=$theirs already holds an md superblock \(v1\.2, at byte 4096\): it belongs to array UUID $their_uuid.*\(spare-force=true overwrites it\)" \
  "another array's member"
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${disks[@]}" spare="$fs" --run true \
  >"$tmpdir/bad.out" 2>&1 && fail "spare=$fs (ext4) was accepted"
one_line "$tmpdir/bad.out" "spare=$fs holds an ext4 file system \(label 'keep'.*\(spare-force=true overwrites it\)" \
  "an ext4 file system"
[ "$(checksum_members "$theirs" "$fs")" = "$victims_sum" ] ||
  fail "a refused spare was written"

echo "== a spare that gets a file system while served is probed again"
spare=$tmpdir/late.spare
truncate -s "$SIZE" "$spare"
serve_ctl "$tmpdir/late.log" "${disks[@]}" spare="$spare" ||
  fail "a blank spare was refused"
[ "$(ctl_get 's["spare"]')" = "$spare" ] || fail "status does not list the spare"
mkfs.ext4 -q -F -L late "$spare" >/dev/null 2>&1 || fail "mkfs.ext4 on the spare"
late_sum=$(checksum_members "$spare")
ctl_ok fail 1
ctl_wait "s['spare'] is None and s['members'][1]['state'] == 'faulty'" 10
sleep 1
[ "$(ctl_get 's["job"]["kind"]')" = idle ] ||
  fail "a job started after the spare was refused: $(ctl_get 's["job"]')"
[ "$(ctl_get 's["members"][1]["path"]')" = "${m[1]}" ] ||
  fail "slot 1 took the refused spare: $(ctl_get 's["members"][1]')"
grep -q "spare=$spare holds an ext4 file system.*not used as the spare any more" \
  "$tmpdir/late.log" || { cat "$tmpdir/late.log" >&2; fail "the log does not say why the spare was not used"; }
[ "$(checksum_members "$spare")" = "$late_sum" ] || fail "the refused spare was written"
echo "   refused: $(grep -o 'spare=.*any more' "$tmpdir/late.log" | head -n 1)"
stop_server

echo "== spare-force=true: an ext4 spare is rebuilt onto and wiped"
new_array forced
spare=$tmpdir/forced.spare
ext4_disk "$spare"
serve_ctl "$tmpdir/forced.log" "${disks[@]}" spare="$spare" spare-force=true ||
  fail "spare-force=true did not take the ext4 spare"
ctl_ok fail 2
ctl_wait "s['health'] == '[UUU]' and s['members'][2]['path'] == '$spare'" 30
stop_server
! has_ext4 "$spare" || fail "the forced spare still holds an ext4 signature"
ms=("${m[0]}" "${m[1]}" "$spare")
raid5ctl_clean "${ms[@]}"

echo "== raid5ctl rebuild --control onto a disk holding data is refused"
new_array online
serve_ctl "$tmpdir/online.log" "${disks[@]}" || fail "serve"
ctl_ok fail 1
for d in "$theirs" "$fs"; do
  status=0
  "$RAID5CTL" rebuild --control "$CTL_SOCK" 1 "$d" >"$tmpdir/rb.out" 2>&1 || status=$?
  [ $status = 1 ] || { cat "$tmpdir/rb.out" >&2; fail "rebuild onto $d: exit $status"; }
  one_line "$tmpdir/rb.out" "$d (already holds an md superblock|holds an ext4 file system).*--force overwrites it" \
    "rebuild onto ${d##*/}"
  status=0
  "$RAID5CTL" re-add --control "$CTL_SOCK" 1 "$d" >"$tmpdir/ra.out" 2>&1 || status=$?
  [ $status = 1 ] || { cat "$tmpdir/ra.out" >&2; fail "re-add of $d: exit $status"; }
done
[ "$(ctl_get 's["members"][1]["state"]')" = faulty ] ||
  fail "slot 1 after the refusals: $(ctl_get 's["members"][1]')"
[ "$(checksum_members "$theirs" "$fs")" = "$victims_sum" ] ||
  fail "a refused rebuild wrote its disk"
"$RAID5CTL" rebuild --control "$CTL_SOCK" --force --wait 1 "$fs" \
  >"$tmpdir/rb.out" 2>&1 || { cat "$tmpdir/rb.out" >&2; fail "rebuild --force onto $fs"; }
ctl_wait "s['health'] == '[UUU]' and s['members'][1]['path'] == '$fs'" 10
stop_server
! has_ext4 "$fs" || fail "rebuild --force left the ext4 signature on $fs"
raid5ctl_clean "${m[0]}" "$fs" "${m[2]}"

echo "== raid5ctl rebuild --control onto an NBD URI"
new_array uri
blank=$tmpdir/uri.export
truncate -s "$SIZE" "$blank"
"$NBDKIT" -f -U "$tmpdir/member.sock" -P "$tmpdir/member.pid" file "$blank" \
  >"$tmpdir/member.log" 2>&1 &
member_server=$!
cleanup_fn "kill_ours -9 $member_server"
for (( i = 0; i < 100; i++ )); do
  [ -S "$tmpdir/member.sock" ] && break
  sleep 0.05
done
serve_ctl "$tmpdir/uri.log" "${disks[@]}" || fail "serve"
ctl_ok fail 0
member_uri="nbd+unix:///?socket=$tmpdir/member.sock"
(cd / && "$RAID5CTL" rebuild --control "$CTL_SOCK" --wait 0 "$member_uri") \
  >"$tmpdir/rb.out" 2>&1 || { cat "$tmpdir/rb.out" >&2; fail "rebuild onto $member_uri"; }
ctl_wait "s['health'] == '[UUU]' and s['members'][0]['path'] == '$member_uri'" 10
echo "   slot 0: $(ctl_get 's["members"][0]["path"]')"
stop_server
kill_ours "$member_server"
wait "$member_server" 2>/dev/null || :
raid5ctl_clean "$blank" "${m[1]}" "${m[2]}"
echo "$test_name: OK ($(( SECONDS - start )) s)"
