#!/usr/bin/env bash
# raid5ctl grow on members with no room before their data to move it
# (made with --data-offset 64K; growing 3 -> 4 with 64K chunks moves it
# by 192 KiB): md's grow with mdadm's backup, the data offset kept and
# the critical section's windows through the backup file (--backup-file)
# or, with none, through the new member (where mdadm keeps it without a
# file: Grow.c reshape_prepare_fdlist, Grow_restart).
#  - without --backup-file, killed at each step of each critical window
#    and resumed: as below, restored from the new member;
#  - with it, killed (a crash: RAID5_TEST_CRASH) at each step of a
#    critical window's move -- its bytes backed up, its new stripes
#    written, the line past it recorded -- in each critical window, then
#    resumed: every byte where md puts it for 4 members (member-check at
#    the same data offset), check 0, mdadm reads 4 devices; the backup
#    file gone at the end;
#  - a grow stopped with its new stripes written over old bytes and the
#    line not yet past them: refused without the backup file (members
#    untouched), restored from it (the log says so);
#  - a geometry whose windows the new member cannot hold (mdadm refuses
#    it too): refused without a file, grown with one;
#  - a backup restored, then the next window's bytes saved and the grow
#    stopped before their header: the restore emptied the header, so the
#    next start restores nothing wrong;
#  - a backup file that exists already -- a member, the disk being
#    added, any file -- refused in one line, every one of them kept as
#    it was (mdadm makes it anew, O_EXCL); a grow with room to move its
#    data does not use the file given, and leaves it as it was;
#  - room counted from md's lowest data offset (36 KiB past the
#    superblock, past the bad-block log), not the superblock's end:
#    data at 200K kept (moving it would pass the log), at 232K moved to
#    40K.
. "${0%/*}/functions.sh"
. "${0%/*}/../integration/md-functions.sh"
requires_raid5ctl
requires nbdcopy --version

CHUNK=65536
BK=$tmpdir/grow.backup

# fresh: 3 members with little room, random data through the plugin.
fresh ()
{
  local size
  rm -f "$tmpdir"/b.* "$BK"
  md_create b 3 24M --chunk 64K --bitmap none --data-offset 64K
  m=("${MEMBERS[@]}")
  truncate -s 24M "$tmpdir/b.new"
  fill_random "$tmpdir/model" "${m[@]/#/disk=}"
}

# grown: 4 members, the data offset kept, every byte where md puts it.
grown ()
{
  local all=("${m[@]}" "$tmpdir/b.new") stripes
  stripes=$(( (24 * 1048576 - MD_DOFF) / CHUNK ))
  truncate -s $(( stripes * 3 * CHUNK )) "$tmpdir/model"
  member_check --chunk 64K --layout "$MD_LAYOUT" --data-offset "$MD_DOFF" \
    --stripes "$stripes" --model "$tmpdir/model" "${all[@]}"
  "$RAID5CTL" check "${all[@]}" 2>/dev/null | grep -q "mismatch_cnt 0$" ||
    fail "raid5ctl check after the grow"
  md_expect clean AAAA "${all[@]}"
  [ "$(md_field "${m[0]}" 'Raid Devices')" = 4 ] || fail "mdadm: not 4 devices"
  [ ! -e "$BK" ] || fail "the backup file is left after the grow"
}

echo "== no room, no backup file: the backup on the new member; killed, resumed"
for point in grow-backed-up grow-moved grow-recorded; do
  for k in 1 2; do
    fresh
    st=0
    RAID5_TEST_CRASH=$point@$k "$RAID5CTL" grow --add "$tmpdir/b.new" "${m[@]}" \
      >"$tmpdir/grow.out" 2>&1 || st=$?
    [ $st = 137 ] || { cat "$tmpdir/grow.out" >&2; fail "$point@$k: not killed (exit $st)"; }
    grep -q "goes through the backup on the new member" "$tmpdir/grow.out" ||
      fail "$point@$k: the grow does not say where its backup is: $(cat "$tmpdir/grow.out")"
    "$RAID5CTL" grow "${m[@]}" "$tmpdir/b.new" >"$tmpdir/resume.out" 2>&1 ||
      { cat "$tmpdir/resume.out" >&2; fail "$point@$k: the resume"; }
    if [ $point = grow-moved ]; then
      grep -q "restored the grow's critical section from $tmpdir/b.new" "$tmpdir/resume.out" ||
        fail "$point@$k: not restored from the new member: $(cat "$tmpdir/resume.out")"
    fi
    echo "   $point@$k: resumed$(grep -q 'restored the grow' "$tmpdir/resume.out" && echo ', the critical section restored from the new member')"
    grown
  done
done

echo "== restored, then stopped again with the next window's bytes saved but not its header"
# The restore empties the header once the line is past what it restored:
# else the next window's bytes, saved where those were, would be taken
# for them by a start after a crash before the next header.
for how in member file; do
  fresh
  bk=(); [ $how = file ] && bk=(--backup-file "$BK")
  RAID5_TEST_CRASH=grow-moved@1 "$RAID5CTL" grow --add "$tmpdir/b.new" "${bk[@]}" "${m[@]}" \
    >/dev/null 2>&1 && fail "$how: not killed"
  st=0
  RAID5_TEST_CRASH=grow-backup-bytes@1 "$RAID5CTL" grow "${bk[@]}" "${m[@]}" "$tmpdir/b.new" \
    >"$tmpdir/resume.out" 2>&1 || st=$?
  [ $st = 137 ] || { cat "$tmpdir/resume.out" >&2; fail "$how: the resume was not killed (exit $st)"; }
  grep -q "restored the grow's critical section" "$tmpdir/resume.out" ||
    fail "$how: the first resume did not restore: $(cat "$tmpdir/resume.out")"
  "$RAID5CTL" grow "${bk[@]}" "${m[@]}" "$tmpdir/b.new" >"$tmpdir/resume2.out" 2>&1 ||
    { cat "$tmpdir/resume2.out" >&2; fail "$how: the second resume"; }
  echo "   $how: restored, stopped in the next window's backup, resumed"
  grown
done

echo "== windows too big for the new member's room: refused without a file"
# 4 -> 5 members with 512K chunks: 6 MiB windows, three of them critical;
# mdadm's backup on an 8 MiB new member would lie over rows the critical
# windows write (mdadm refuses it too: "reshape aborted").
rm -f "$tmpdir"/w.*
md_create w 4 8M --chunk 512K --bitmap none --assume-clean --data-offset 64K
truncate -s 8M "$tmpdir/w.new"
DISKS=("${MEMBERS[@]}" "$tmpdir/w.new")
check_refused "cannot keep the critical section's backup.*--backup-file" \
  grow --add "$tmpdir/w.new" "${MEMBERS[@]}"
"$RAID5CTL" grow --add "$tmpdir/w.new" --backup-file "$tmpdir/w.bk" "${MEMBERS[@]}" \
  >"$tmpdir/w.out" 2>&1 || { cat "$tmpdir/w.out" >&2; fail "the same with a backup file"; }
"$RAID5CTL" check "${MEMBERS[@]}" "$tmpdir/w.new" 2>/dev/null | grep -q "mismatch_cnt 0$" ||
  fail "check after the grow with a backup file"
echo "   refused without a file; grown with one"

echo "== a backup file that exists already (a member, the new disk, any file): refused, kept"
fresh
echo "notes: not a backup" >"$tmpdir/notes.txt"
DISKS=("${m[@]}" "$tmpdir/b.new" "$tmpdir/notes.txt")
check_refused "backup file ${m[0]}: it exists already" \
  grow --add "$tmpdir/b.new" --backup-file "${m[0]}" "${m[@]}"
check_refused "backup file $tmpdir/b.new: it exists already" \
  grow --add "$tmpdir/b.new" --backup-file "$tmpdir/b.new" "${m[@]}"
check_refused "backup file $tmpdir/notes.txt: it exists already" \
  grow --add "$tmpdir/b.new" --backup-file "$tmpdir/notes.txt" "${m[@]}"
[ -e "${m[0]}" ] && [ -e "$tmpdir/notes.txt" ] || fail "a refused backup file was removed"

echo "== killed at each step of each critical window, resumed"
for point in grow-backed-up grow-moved grow-recorded; do
  for k in 1 2; do
    fresh
    st=0
    RAID5_TEST_CRASH=$point@$k "$RAID5CTL" grow --add "$tmpdir/b.new" \
      --backup-file "$BK" "${m[@]}" >"$tmpdir/grow.out" 2>&1 || st=$?
    [ $st = 137 ] || { cat "$tmpdir/grow.out" >&2; fail "$point@$k: not killed (exit $st)"; }
    pos=$(md_field "${m[0]}" "Reshape pos'n")
    "$RAID5CTL" grow --backup-file "$BK" "${m[@]}" "$tmpdir/b.new" \
      >"$tmpdir/resume.out" 2>&1 ||
      { cat "$tmpdir/resume.out" >&2; fail "$point@$k: the resume"; }
    echo "   $point@$k: killed with the reshape at ${pos:-?}; resumed$(grep -q 'restored the grow' "$tmpdir/resume.out" && echo ', the critical section restored from the backup')"
    grown
  done
done

echo "== stopped with old bytes overwritten: the backup file is needed"
fresh
RAID5_TEST_CRASH=grow-moved@1 "$RAID5CTL" grow --add "$tmpdir/b.new" \
  --backup-file "$BK" "${m[@]}" >/dev/null 2>&1 && fail "not killed"
DISKS=("${m[@]}" "$tmpdir/b.new")
check_refused 'critical section.*if the grow began with a backup file, give it again' grow "${m[@]}" "$tmpdir/b.new"
"$RAID5CTL" grow --backup-file "$BK" "${m[@]}" "$tmpdir/b.new" \
  >"$tmpdir/resume.out" 2>&1 || { cat "$tmpdir/resume.out" >&2; fail "the resume"; }
grep -q "restored the grow's critical section from $BK" "$tmpdir/resume.out" ||
  fail "the resume does not say it restored: $(cat "$tmpdir/resume.out")"
grown
echo "== served: grow --control --backup-file, the server crashed mid-window"
fresh
sock=$tmpdir/ctl
RAID5_TEST_CRASH=grow-moved@2 "$NBDKIT" -f -U "$tmpdir/sock" "$PLUGIN" \
  "${m[@]/#/disk=}" control="$sock" >"$tmpdir/nbdkit.log" 2>&1 &
srv=$!
for (( i = 0; i < 100; i++ )); do [ -S "$sock" ] && break; sleep 0.05; done
"$RAID5CTL" --control "$sock" grow --add "$tmpdir/b.new" --backup-file "$BK" \
  >"$tmpdir/grow.out" 2>&1 || { cat "$tmpdir/grow.out" >&2; fail "grow --control"; }
st=0
timeout 60 tail --pid=$srv -f /dev/null || :
wait $srv || st=$?
[ $st = 137 ] || fail "the server was not crashed (exit $st)"
"$NBDKIT" -f -U "$tmpdir/sock" "$PLUGIN" "${m[@]/#/disk=}" "disk=$tmpdir/b.new" \
  control="$sock" >"$tmpdir/nbdkit2.log" 2>&1 &&
  fail "served without its backup file, the grow stopped in its critical section"
grep -q "critical section.*backup file" "$tmpdir/nbdkit2.log" ||
  fail "the refusal: $(cat "$tmpdir/nbdkit2.log")"
CTL_PY=$abs_top_srcdir/tests/integration/ctl.py
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${m[@]/#/disk=}" "disk=$tmpdir/b.new" backup-file="$BK" \
  control="$sock" --run "/usr/bin/python3 $CTL_PY $sock wait \
    's[\"grow\"] is None and s[\"job\"][\"kind\"] == \"idle\"' 60" \
  >"$tmpdir/wait.out" 2>&1 ||
  { cat "$tmpdir/wait.out" >&2; fail "the grow goes on, served with backup-file="; }
grown

echo "== room to move the data: a backup file given is not used, and kept"
rm -f "$tmpdir"/r.*
md_create r 3 24M --chunk 64K --bitmap none
truncate -s 24M "$tmpdir/r.new"
echo "notes: not a backup" >"$tmpdir/notes.txt"
sum=$(sha256sum <"$tmpdir/notes.txt")
"$RAID5CTL" grow --add "$tmpdir/r.new" --backup-file "$tmpdir/notes.txt" \
  "${MEMBERS[@]}" >"$tmpdir/room.out" 2>&1 ||
  { cat "$tmpdir/room.out" >&2; fail "grow with room and a backup file"; }
grep -q "data moves down" "$tmpdir/room.out" ||
  fail "with room the data offset moves: $(cat "$tmpdir/room.out")"
[ -e "$tmpdir/notes.txt" ] && [ "$(sha256sum <"$tmpdir/notes.txt")" = "$sum" ] ||
  fail "a backup file the grow did not use was changed or removed"
echo "   grown, moving the data; the file given stays as it was"
echo "== room by the superblock's end, not by md's lowest: the data offset kept"
# Data at 200K moving by 192K would start at 8K, over the bad-block log
# (at 12K): mdadm's space before the data ends 36 KiB past the superblock
# and past the log (super1.c getinfo_super1; the kernel's
# super_1_allow_new_offset), at byte 40960 here.
rm -f "$tmpdir"/l.*
md_create l 3 24M --chunk 64K --bitmap none --data-offset 200K
truncate -s 24M "$tmpdir/l.new"
"$RAID5CTL" grow --add "$tmpdir/l.new" "${MEMBERS[@]}" >"$tmpdir/kept.out" 2>&1 ||
  { cat "$tmpdir/kept.out" >&2; fail "grow keeping data at 200K"; }
grep -q "to byte 40960, md's lowest.*the data offset stays" "$tmpdir/kept.out" ||
  fail "the grow does not say why the data stays: $(cat "$tmpdir/kept.out")"
[ "$(md_field "${MEMBERS[0]}" 'Data Offset')" = "400 sectors" ] ||
  fail "data at 200K moved to $(md_field "${MEMBERS[0]}" 'Data Offset')"
rm -f "$tmpdir"/l.*
md_create l 3 24M --chunk 64K --bitmap none --data-offset 232K
truncate -s 24M "$tmpdir/l.new"
"$RAID5CTL" grow --add "$tmpdir/l.new" "${MEMBERS[@]}" >"$tmpdir/low.out" 2>&1 ||
  { cat "$tmpdir/low.out" >&2; fail "grow to md's lowest data offset"; }
[ "$(md_field "${MEMBERS[0]}" 'Data Offset')" = "80 sectors" ] ||
  fail "grown to data at $(md_field "${MEMBERS[0]}" 'Data Offset'), not md's lowest (80 sectors)"
echo "   data at 200K kept; at 232K moved to 40K, md's lowest"
echo "test-grow-backup: OK"
