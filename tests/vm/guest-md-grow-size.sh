# tests/vm/guest-md-grow-size.sh -- in the guest: the component size
# grown, by mdadm --grow --size=max under kernel md and by raid5ctl grow
# --size max, kernel md the oracle (run by tests/vm/test-md-grow-size.sh).
#
# Members are loop devices over files in the guest's tmpfs.  For no bitmap
# and an internal bitmap: md's array A and ours B, both 3 x 32 MiB, 64K
# chunks, the pattern written by md; every member then grows to 48 MiB of
# which the new 16 MiB are random (so the new space's parity is wrong
# until something makes it right), and A grows under md, B here.
#   same         mdadm --examine says the same of A's and B's members
#                (sizes, data offset, state, bitmap chunk and bits);
#   here -> md   md assembles B at the new size with nothing due, its
#                check finds mismatch_cnt 0 (the new space was resynced),
#                the pattern reads back, and a second pattern written at
#                the new end reads back;
#   md -> here   the plugin serves A at md's new size with both patterns;
#                raid5ctl check finds what md's own check finds: parity
#                right without a bitmap (md resynced from the old end), and
#                with a bitmap whose one chunk covers old and new space,
#                wrong in the new space (md resyncs only chunks wholly past
#                the old ones: a weakness this project does not share).
# Then 2 TiB sparse members grown to 4 TiB with --assume-clean, first to
# a size asked for (3 TiB: md records it as each member's data size),
# then max: the bitmap chunk doubles (its bits outgrow the sectors they
# filled), and ours must say what md's says.  Last, an internal bitmap added to an array made
# without (200 GiB members) by mdadm --grow --bitmap=internal
# and by raid5ctl grow --bitmap internal: the same superblock lines and
# bitmap (place, chunk, bits); md runs ours with it; removed again by
# both, the same lines.
# Env: PAT, PAT2 (4 MiB each), RAID5CTL, PLUGIN.

. "${BASH_SOURCE[0]%/*}/guest-lib.sh"
D=/tmp/gs
mkdir -p "$D"
MD=0
KEYS=('Avail Dev Size' 'Array Size' 'Used Dev Size' 'Data Offset'
      'Unused Space' 'State' 'Feature Map' 'Internal Bitmap' 'Bad Block Log'
      'Array State')
BKEYS=('Chunksize' 'Sync Size' 'Bitmap')

# loops NAME SIZE: three sparse files on loop devices (L).
loops () {
    local i
    L=()
    for i in 0 1 2; do
        truncate -s "$2" "$D/$1.$i" || return 1
        L+=("$(losetup -f --show "$D/$1.$i")") || return 1
    done
}

# grow_files NAME: each file 48 MiB, the new 16 MiB random; loops told.
grow_files () {
    local i
    for i in 0 1 2; do
        head -c $((16 << 20)) /dev/urandom >>"$D/$1.$i"
        losetup -c "${L[i]}"
    done
}

start () { MD=$((MD + 1)); run mdadm --assemble "/dev/md$MD" "$@"; }

for pol in none internal; do
    log "$pol"
    loops "a-$pol" 32M && A=("${L[@]}") || { not_ok "$pol: loops"; continue; }
    MD=$((MD + 1))
    run mdadm --create "/dev/md$MD" --run --metadata=1.2 --level=5 --raid-devices=3 \
        --chunk=64 --assume-clean --bitmap="$pol" --homehost=gs --name="$pol" "${A[@]}" ||
        { not_ok "$pol: mdadm --create"; continue; }
    run dd if="$PAT" of=/dev/md$MD bs=1M oflag=direct status=none || not_ok "$pol: A pattern"
    md_stop md$MD
    loops "b-$pol" 32M && B=("${L[@]}") || { not_ok "$pol: loops"; continue; }
    run "$RAID5CTL" create --assume-clean --chunk 64K --bitmap "$pol" --name "$pol" "${B[@]}" ||
        { not_ok "$pol: raid5ctl create"; continue; }
    start "${B[@]}" && run dd if="$PAT" of=/dev/md$MD bs=1M oflag=direct status=none ||
        not_ok "$pol: B pattern"
    md_stop md$MD

    L=("${A[@]}"); grow_files "a-$pol"
    L=("${B[@]}"); grow_files "b-$pol"
    start "${A[@]}" || { not_ok "$pol: assembling A"; continue; }
    run mdadm --grow /dev/md$MD --size=max || not_ok "$pol: mdadm --grow --size=max"
    wait_idle md$MD 120 || not_ok "$pol: md's resync did not end"
    end=$(( $(blockdev --getsize64 /dev/md$MD) / 1048576 - 4 ))
    run dd if="$PAT2" of=/dev/md$MD bs=1M seek=$end oflag=direct status=none ||
        not_ok "$pol: A's second pattern"
    md_stop md$MD
    run "$RAID5CTL" grow --size max "${B[@]}" && ok "$pol: raid5ctl grow --size max" ||
        not_ok "$pol: raid5ctl grow --size max"

    for i in 0 1 2; do md_same "$pol: member $i" --examine "${A[i]}" "${B[i]}" "${KEYS[@]}"; done
    [[ $pol == none ]] || md_same "$pol" --examine-bitmap "${A[0]}" "${B[0]}" "${BKEYS[@]}"

    # here -> md
    start "${B[@]}" || { not_ok "$pol: md does not assemble ours"; continue; }
    [[ $(blockdev --getsize64 /dev/md$MD) == $(( (end + 4) << 20 )) ]] &&
        ok "$pol: here -> md: md's size is the grown one" ||
        not_ok "$pol: here -> md: size $(blockdev --getsize64 /dev/md$MD)"
    read -r action </sys/block/md$MD/md/sync_action
    [[ $action == idle && $(cat /sys/block/md$MD/md/resync_start) == none ]] &&
        ok "$pol: here -> md: nothing due" || not_ok "$pol: here -> md: $action, resync_start $(cat /sys/block/md$MD/md/resync_start)"
    mm=$(md_check md$MD) && [[ $mm == 0 ]] &&
        ok "$pol: here -> md: md's check: mismatch_cnt 0 (the new space resynced)" ||
        not_ok "$pol: here -> md: md's check: mismatch_cnt $mm"
    cmp -s <(dd if=/dev/md$MD bs=1M count=4 iflag=direct status=none) "$PAT" &&
        ok "$pol: here -> md: the pattern reads back" || not_ok "$pol: here -> md: the pattern"
    run dd if="$PAT2" of=/dev/md$MD bs=1M seek=$end oflag=direct status=none
    cmp -s <(dd if=/dev/md$MD bs=1M skip=$end count=4 iflag=direct status=none) "$PAT2" &&
        ok "$pol: here -> md: a pattern at the new end reads back" ||
        not_ok "$pol: here -> md: the pattern at the new end"
    md_stop md$MD

    # md -> here
    if nbdkit -U - "$PLUGIN" disk="${A[0]}" disk="${A[1]}" disk="${A[2]}" --run "
         [ \$(nbdinfo --size \"\$uri\") = $(( (end + 4) << 20 )) ] &&
         nbdcopy \"\$uri\" $D/back" >"$VM_WORK/serve-$pol.log" 2>&1 &&
       cmp -s -n $((4 << 20)) "$D/back" "$PAT" &&
       cmp -s <(tail -c $((4 << 20)) "$D/back") "$PAT2"; then
        ok "$pol: md -> here: the plugin serves md's grown array, both patterns"
    else
        not_ok "$pol: md -> here: $(tail -n 3 "$VM_WORK/serve-$pol.log")"
    fi
    rm -f "$D/back"
    "$RAID5CTL" check "${A[@]}" >"$VM_WORK/check-$pol.out" 2>&1
    rc=$?
    mm=$(sed -n 's/.*mismatch_cnt \([0-9]*\)$/\1/p' "$VM_WORK/check-$pol.out")
    if [[ $pol == none ]]; then
        [[ $rc == 0 && $mm == 0 ]] && ok "$pol: md -> here: parity right (md resynced the new space)" ||
            not_ok "$pol: md -> here: raid5ctl check: $(cat "$VM_WORK/check-$pol.out")"
    else
        start "${A[@]}" && mdmm=$(md_check md$MD)
        md_stop md$MD
        [[ $rc == 2 && $mm -gt 0 && $mm == "${mdmm:-x}" ]] &&
            ok "$pol: md -> here: md left the new space unsynced (one bitmap chunk over old and new): raid5ctl check and md's both find mismatch_cnt $mm" ||
            not_ok "$pol: md -> here: raid5ctl check exit $rc mismatch_cnt '$mm', md's '${mdmm:-}'"
    fi
    for l in "${A[@]}" "${B[@]}"; do losetup -d "$l"; done
    rm -f "$D"/*
done

log "2 TiB -> 4 TiB, --assume-clean"
loops a-big 2T && A=("${L[@]}") && loops b-big 2T && B=("${L[@]}") || not_ok "big: loops"
MD=$((MD + 1))
run mdadm --create "/dev/md$MD" --run --metadata=1.2 --level=5 --raid-devices=3 \
    --chunk=512 --assume-clean --bitmap=internal --homehost=gs --name=big "${A[@]}" ||
    not_ok "big: mdadm --create"
md_stop md$MD
run "$RAID5CTL" create --assume-clean --bitmap internal --name big "${B[@]}" ||
    not_ok "big: raid5ctl create"
for i in 0 1 2; do
    truncate -s 4T "$D/a-big.$i" "$D/b-big.$i"
    losetup -c "${A[i]}"; losetup -c "${B[i]}"
done
# A size asked for (3 TiB): md records it as each member's data size.
start "${A[@]}" && run mdadm --grow /dev/md$MD --size=3T --assume-clean ||
    not_ok "big: mdadm --grow --size=3T --assume-clean"
md_stop md$MD
run "$RAID5CTL" grow --size 3T --assume-clean "${B[@]}" || not_ok "big: raid5ctl grow --size 3T"
md_same "big, 3 TiB: member 0" --examine "${A[0]}" "${B[0]}" "${KEYS[@]}"
start "${A[@]}" && run mdadm --grow /dev/md$MD --size=max --assume-clean ||
    not_ok "big: mdadm --grow --size=max --assume-clean"
md_stop md$MD
run "$RAID5CTL" grow --size max --assume-clean "${B[@]}" || not_ok "big: raid5ctl grow"
md_same "big: member 0" --examine "${A[0]}" "${B[0]}" "${KEYS[@]}"
# md cleared the bits mdadm --create set (it ran the array); ours never
# ran: the chunk and the number of bits are what must agree.
md_same "big" --examine-bitmap "${A[0]}" "${B[0]}" 'Chunksize' 'Sync Size'
a=$(mdadm --examine-bitmap "${A[0]}" | sed -n 's/^ *Bitmap : \([0-9]* bits\).*/\1/p')
b=$(mdadm --examine-bitmap "${B[0]}" | sed -n 's/^ *Bitmap : \([0-9]* bits\).*/\1/p')
[[ -n $a && $a == "$b" ]] && ok "big: the same $a" || not_ok "big: md has $a, ours $b"
mdadm --examine-bitmap "${A[0]}" | grep -E 'Chunksize|Bitmap :' | sed 's/^/#   md: /'
for l in "${A[@]}" "${B[@]}"; do losetup -d "$l"; done
rm -f "$D"/*

# An internal bitmap added and removed (mdadm --grow --bitmap=internal
# on md's running array, raid5ctl grow --bitmap internal on ours).
for sz in 200G; do
    log "bitmap added and removed, $sz members"
    loops "a-bm$sz" "$sz" && A=("${L[@]}") && loops "b-bm$sz" "$sz" && B=("${L[@]}") ||
        { not_ok "bitmap $sz: loops"; continue; }
    MD=$((MD + 1))
    run mdadm --create "/dev/md$MD" --run --metadata=1.2 --level=5 --raid-devices=3 \
        --chunk=64 --assume-clean --bitmap=none --homehost=gs --name=bm "${A[@]}" ||
        not_ok "bitmap $sz: mdadm --create"
    run mdadm --grow /dev/md$MD --bitmap=internal || not_ok "bitmap $sz: mdadm --grow --bitmap=internal"
    md_stop md$MD
    run "$RAID5CTL" create --assume-clean --chunk 64K --bitmap none --name bm "${B[@]}" ||
        not_ok "bitmap $sz: raid5ctl create"
    run "$RAID5CTL" grow --bitmap internal "${B[@]}" || not_ok "bitmap $sz: raid5ctl grow --bitmap internal"
    md_same "bitmap $sz: added" --examine "${A[0]}" "${B[0]}" 'Feature Map' 'Internal Bitmap' \
        'Bad Block Log' 'Data Offset' 'Avail Dev Size'
    md_same "bitmap $sz: added" --examine-bitmap "${A[0]}" "${B[0]}" 'Version' 'Chunksize' \
        'Sync Size' 'Daemon' 'Write Mode'
    a=$(mdadm --examine-bitmap "${A[0]}" | sed -n 's/^ *Bitmap : \([0-9]* bits\).*/\1/p')
    b=$(mdadm --examine-bitmap "${B[0]}" | sed -n 's/^ *Bitmap : \([0-9]* bits\).*/\1/p')
    [[ -n $a && $a == "$b" ]] && ok "bitmap $sz: the same $a" || not_ok "bitmap $sz: md has $a, ours $b"
    # md runs ours with the bitmap, and a write marks and clears it.
    start "${B[@]}" || not_ok "bitmap $sz: md does not assemble ours"
    [[ $(cat /sys/block/md$MD/md/bitmap/location 2>/dev/null) == +8 ]] &&
        ok "bitmap $sz: md runs ours with its bitmap (location +8)" ||
        not_ok "bitmap $sz: md's bitmap location: $(cat /sys/block/md$MD/md/bitmap/location 2>&1)"
    run dd if="$PAT" of=/dev/md$MD bs=1M count=1 oflag=direct status=none
    run mdadm --grow /dev/md$MD --bitmap=none || not_ok "bitmap $sz: md removes ours"
    md_stop md$MD
    start "${A[@]}" && run mdadm --grow /dev/md$MD --bitmap=none || not_ok "bitmap $sz: md removes its own"
    md_stop md$MD
    run "$RAID5CTL" grow --bitmap internal "${B[@]}" && run "$RAID5CTL" grow --bitmap none "${B[@]}" ||
        not_ok "bitmap $sz: raid5ctl grow --bitmap none"
    md_same "bitmap $sz: removed" --examine "${A[0]}" "${B[0]}" 'Feature Map' 'Internal Bitmap' \
        'Bad Block Log' 'State'
    # md leaves the superblock's bitmap_offset (bytes 96-99) as it was.
    a=$(od -An -tx1 -j $((4096 + 96)) -N 4 "${A[0]}"); b=$(od -An -tx1 -j $((4096 + 96)) -N 4 "${B[0]}")
    [[ $a == "$b" ]] && ok "bitmap $sz: removed: the same bitmap_offset bytes ($a)" ||
        not_ok "bitmap $sz: removed: bitmap_offset bytes md '$a', ours '$b'"
    for l in "${A[@]}" "${B[@]}"; do losetup -d "$l"; done
    rm -f "$D"/*
done
exit $((GUEST_FAILS > 0))
