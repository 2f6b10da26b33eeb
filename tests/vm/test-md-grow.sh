#!/bin/bash
# tests/vm/test-md-grow.sh -- growing an array by a member, kernel md as the
# oracle, both ways.  Members: 48 MiB image files, 64K chunks, one guest boot.
#   A  here -> md: raid5ctl create 3, random data through the plugin,
#      raid5ctl grow --add; md assembles 4 members, its array is the data
#      then zeroes, and its check finds mismatch_cnt 0.
#   B  stopped here, finished by md: the same with a write-intent bitmap,
#      the grow killed (-9) mid-way (the superblocks hold a
#      reshape_position between 0 and the end); md assembles it, finishes
#      the reshape, and reads the data; check 0; the bitmap on all four.
#   C  stopped by md, finished here: in the guest mdadm --create 3 with a
#      write-intent bitmap, mkfs.ext4
#      and a tree of files, mdadm --add, --grow --raid-devices=4 slowed down,
#      then mdadm --stop mid-way.  On the host raid5ctl grow goes on with it;
#      member-check finds every byte where md puts it for 4 members and the
#      plugin serves the new size; through nbdfuse e2fsck finds the file
#      system clean, resize2fs grows it to the array, e2fsck is clean again
#      and every file reads back as md wrote it.
#   D  how low the data may move (mdadm's space before the data: 36 KiB
#      past the superblock as the kernel's super_1_allow_new_offset, past
#      the bitmap and the bad-block log, super1.c getinfo_super1).  D1
#      (48 MiB members, data at 200K, 64K chunks: the grow would move it to
#      8K, over the bad-block log) and D2 (9 GiB sparse members, data at
#      264K, the log at 72K): here, on copies, the grow keeps their data
#      offset, each naming its lowest offset, its critical section backed
#      up on the new member (D1's copy stopped there and resumed: restored
#      from it); in the guest mdadm --grow without a backup
#      file finds no room to move either and keeps their data offset
#      (backing its critical section up), and the kernel takes D1's
#      lowest as a new_offset and refuses a page less.  D3 (data at 232K) is grown here
#      to exactly D1's lowest, 40K; a copy of it before, D4, is grown by
#      mdadm in the guest without a backup file, its data moved to 40K too.
. "${0%/*}/lib.sh"
need_plugin
need_raid5ctl
need_cmds nbdinfo nbdcopy nbdfuse e2fsck resize2fs debugfs cmp
t0=$SECONDS
MEMBER_CHECK=$(dirname "$RAID5CTL")/../tests/integration/member-check
[[ -x $MEMBER_CHECK ]] || skip "member-check is not built ($MEMBER_CHECK)"
fails=0
bad () { echo "not ok $*"; fails=$((fails + 1)); }
CHUNK=65536

# mk CASE: four 48 MiB members CASE-m0..3, a 3-member array of the first
# three with random data all over (CASE.pattern, the array's bytes).
mk () {
    local c=$1 i size
    for i in 0 1 2 3; do truncate -s 48M "$W/$c-m$i"; done
    "$RAID5CTL" create --chunk 64K --bitmap "${2:-none}" "$W/$c-m"{0,1,2} >/dev/null 2>&1 ||
        { bad "$c: raid5ctl create"; return 1; }
    size=$(nbdkit -U - "$PLUGIN" disk="$W/$c-m"{0,1,2} --run 'nbdinfo --size "$uri"')
    head -c "$size" /dev/urandom >"$W/$c.pattern"
    nbdkit -U - "$PLUGIN" disk="$W/$c-m"{0,1,2} --run "nbdcopy '$W/$c.pattern' \"\$uri\"" ||
        { bad "$c: writing through the plugin"; return 1; }
}

if mk A; then
    "$RAID5CTL" grow --add "$W/A-m3" "$W/A-m"{0,1,2} >"$W/A.grow" 2>&1 ||
        bad "A: raid5ctl grow: $(tail -n 1 "$W/A.grow")"
fi
if mk B internal; then
    "$RAID5CTL" grow --add "$W/B-m3" --max-speed 4M "$W/B-m"{0,1,2} >"$W/B.grow" 2>&1 &
    kill_past $! 16384 reshape_kib "$W/B-m0"
    p=$(reshape_kib "$W/B-m0")
    if [[ -n $p && $p -gt 0 ]]; then
        say "B: killed with the reshape at $p KiB of the array"
    else
        bad "B: the grow was not stopped mid-way (reshape at '${p:-none}')"
    fi
fi
for i in 0 1 2 3; do truncate -s 48M "$W/C-m$i"; done
# floor CASE SIZE DOFF: a 3-member array of SIZE members, its data at
# DOFF, whose data raid5ctl finds no room to move: on a copy (CASE-h*)
# the grow keeps the data offset, as mdadm does, its critical section
# backed up on the new member, and is stopped there (RAID5_TEST_CRASH,
# its first window backed up); FLOOR, the lowest data offset it names
# (bytes).  The array itself is left for mdadm in the guest.
floor () {
    local c=$1 i
    for i in 0 1 2 3; do truncate -s "$2" "$W/$c-m$i"; done
    "$RAID5CTL" create --assume-clean --chunk 64K --bitmap none --data-offset "$3" \
        "$W/$c-m"{0,1,2} >/dev/null 2>&1 || { bad "$c: raid5ctl create"; return 1; }
    for i in 0 1 2 3; do cp --sparse=always "$W/$c-m$i" "$W/$c-h$i"; done
    RAID5_TEST_CRASH=grow-backed-up@1 "$RAID5CTL" grow --add "$W/$c-h3" "$W/$c-h"{0,1,2} \
        >"$W/$c.grow" 2>&1 && { bad "$c: the grow was not stopped"; return 1; }
    grep -q "goes through the backup on the new member" "$W/$c.grow" ||
        bad "$c: the grow does not keep the data offset with its backup on the new member: $(cat "$W/$c.grow")"
    [[ $(mdadm --examine "$W/$c-h0" | sed -n 's/^ *Data Offset : \([0-9]*\) sectors/\1/p') == $(( $(numfmt --from=iec "$3") / 512 )) ]] ||
        bad "$c: the grow moved the data: $(mdadm --examine "$W/$c-h0" | grep 'Offset')"
    FLOOR=$(sed -n 's/.* to byte \([0-9]*\), md.s lowest.*/\1/p' "$W/$c.grow")
    [[ -n $FLOOR ]] || { bad "$c: the grow names no lowest offset: $(cat "$W/$c.grow")"; return 1; }
    say "$c: data at $3 kept (md's lowest at byte $FLOOR), the critical section backed up on the new member"
}
floor D1 48M 200K && D1_FLOOR=$FLOOR
floor D2 9G 264K && D2_FLOOR=$FLOOR
rm -f "$W"/D2-h*
# D1's copy, stopped in its critical section, resumed: restored from the
# new member, grown.
if "$RAID5CTL" grow "$W/D1-h"{0,1,2,3} >"$W/D1.resume" 2>&1; then
    grep -q "restored the grow's critical section from $W/D1-h3" "$W/D1.resume" ||
        bad "D1: the resume did not restore from the new member: $(cat "$W/D1.resume")"
    "$RAID5CTL" check "$W/D1-h"{0,1,2,3} 2>/dev/null | grep -q "mismatch_cnt 0$" ||
        bad "D1: raid5ctl check after the resumed grow"
else
    bad "D1: the resume: $(tail -n 1 "$W/D1.resume")"
fi
rm -f "$W"/D1-h*
[[ ${D2_FLOOR:-0} -gt ${D1_FLOOR:-0} ]] ||
    bad "D2: its bad-block log (past 36 KiB) does not raise the lowest offset (${D2_FLOOR:-?} <= ${D1_FLOOR:-?})"
for i in 0 1 2 3; do truncate -s 48M "$W/D3-m$i"; done
if "$RAID5CTL" create --chunk 64K --bitmap none --data-offset 232K "$W/D3-m"{0,1,2} >/dev/null 2>&1 &&
   for i in 0 1 2 3; do cp --sparse=always "$W/D3-m$i" "$W/D4-m$i"; done &&
   "$RAID5CTL" grow --add "$W/D3-m3" "$W/D3-m"{0,1,2} >"$W/D3.grow" 2>&1; then
    [[ $(mdadm --examine "$W/D3-m0" | sed -n 's/^ *Data Offset : \([0-9]*\) sectors/\1/p') == $((${D1_FLOOR:-0} / 512)) ]] ||
        bad "D3: grown to data at $(mdadm --examine "$W/D3-m0" | grep 'Data Offset'), not D1's lowest"
else
    bad "D3: raid5ctl grow to md's lowest offset: $(tail -n 1 "$W/D3.grow")"
fi
say "host, before: $((SECONDS - t0))s"; t0=$SECONDS
vm_run -e D1_FLOOR="${D1_FLOOR:-0}" -e D2_FLOOR="${D2_FLOOR:-0}" "$VM_TESTS/guest-md-grow.sh" \
    "$W"/{A,B,C,D1,D2,D4}-m{0,1,2,3} || fails=$((fails + 1))
say "guest: $((SECONDS - t0))s"; t0=$SECONDS

# C: md's reshape, stopped; go on with it here.
if [[ -s $W/C.sums ]]; then
    doff=$(mdadm --examine "$W/C-m0" | sed -n 's/^ *New Offset : \([0-9]*\) sectors/\1/p')
    p=$(reshape_kib "$W/C-m0")
    say "C: md stopped with the reshape at ${p:-?} KiB, new data offset ${doff:-?} sectors"
    [[ -n $p && -n $doff ]] || bad "C: md left no reshape under way"
    if ! "$RAID5CTL" grow "$W/C-m"{0,1,2,3} >"$W/C.grow" 2>&1; then
        bad "C: raid5ctl grow did not finish md's reshape: $(tail -n 1 "$W/C.grow")"
    else
        grep -q "resumed at stripe [1-9]" "$W/C.grow" || bad "C: not resumed: $(cat "$W/C.grow")"
        for i in 0 1 2 3; do
            mdadm --examine "$W/C-m$i" | grep -q "Internal Bitmap : 8 sectors from superblock" ||
                bad "C: member $i has no bitmap after the grow"
        done
        stripes=$(( $(mdadm --examine "$W/C-m0" | sed -n 's/^ *Used Dev Size : \([0-9]*\) .*/\1/p') * 512 / CHUNK ))
        "$MEMBER_CHECK" --chunk 64K --data-offset $((doff * 512)) --stripes "$stripes" \
            "$W/C-m"{0,1,2,3} >"$W/C.mc" 2>&1 || bad "C: member-check: $(tail -n 2 "$W/C.mc")"
        "$RAID5CTL" check "$W/C-m"{0,1,2,3} 2>/dev/null | grep -q "mismatch_cnt 0$" ||
            bad "C: raid5ctl check after the grow"
        mkdir -p "$W/fuse"
        nbdfuse -P "$W/fuse.pid" "$W/fuse" --command nbdkit -s "$PLUGIN" disk="$W/C-m"{0,1,2,3} &
        for ((i = 0; i < 100; i++)); do [[ -s $W/fuse.pid ]] && break; sleep 0.1; done
        img=$W/fuse/nbd
        if [[ $(stat -c %s "$img") != $((stripes * CHUNK * 3)) ]]; then
            bad "C: the plugin serves $(stat -c %s "$img") bytes, not $((stripes * CHUNK * 3))"
        # -fy rather than -fn: a clean pass also records the check time,
        # which resize2fs wants later than the last mount (the guest's
        # clock set that one); exit status 0 still means nothing fixed.
        elif ! e2fsck -fy "$img" >"$W/C.fsck1" 2>&1; then
            bad "C: e2fsck after the grow: $(tail -n 3 "$W/C.fsck1")"
        elif ! resize2fs "$img" >"$W/C.resize" 2>&1 || ! e2fsck -fn "$img" >"$W/C.fsck2" 2>&1; then
            bad "C: resize2fs or e2fsck after it: $(tail -n 3 "$W/C.resize" "$W/C.fsck2")"
        else
            blocks=$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Block count: *//p')
            say "C: e2fsck clean, resize2fs grew ext4 to $blocks blocks of 4K"
            [[ $((blocks * 4096)) -gt $((stripes * CHUNK * 2)) ]] ||
                bad "C: resize2fs did not grow the file system ($blocks blocks)"
            n=0
            while read -r sum path; do
                got=$(debugfs -R "cat $path" "$img" 2>/dev/null | md5sum | cut -d' ' -f1)
                [[ $got == "$sum" ]] || { bad "C: $path reads back wrong"; break; }
                n=$((n + 1))
            done <"$W/C.sums"
            say "C: $n files read back as md wrote them"
        fi
        fusermount3 -u "$W/fuse" 2>/dev/null || fusermount -u "$W/fuse" 2>/dev/null || umount "$W/fuse"
        wait || :
    fi
else
    bad "C: the guest left no file list"
fi
say "host, after: $((SECONDS - t0))s"
[[ $fails == 0 ]]
