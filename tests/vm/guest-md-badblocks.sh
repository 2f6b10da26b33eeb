# tests/vm/guest-md-badblocks.sh -- in the guest: md's bad-block log between
# kernel md and this project (run by tests/vm/test-md-badblocks.sh).
#
# Disks: vda vdb vdc (32 MiB, blank) = array A, made here by mdadm;
#        vdd vde vdf = array B, made on the host by raid5ctl create;
#        vdg vdh vdi (blank) = array C, mdadm --consistency-policy=ppl;
#        vdj vdk vdl = array D, made and written on the host by the plugin
#        with a sector of its member 1 that could not be written.
# Env: PAT (4 MiB pattern), RAID5CTL, BB_PUT, PLUGIN, WANT_D (D's list).
#
# Both A and B: 64K chunks, left-symmetric, data offset 2048.  Sector 100
# past the data offset of member 1 holds array sector 228 (stripe 0, data
# chunk 1), sector 20 array sector 148.
#
# A  md -> here: mdadm --create; the pattern written; bad blocks added
#    through sysfs (device sectors: 2148+8, 3048+600, 5048+1, 5049+3) and
#    written out by md; sysfs's list saved; stopped.  mdadm
#    --examine-badblocks and raid5ctl examine --badblocks of vdb must print
#    the same.  Then vdb's sectors 2148..2155 (listed) and 2068 (not
#    listed) are spoiled on the disk, and the three disks copied to
#    $VM_WORK/A-vd?.img for the host to serve with the plugin; md
#    assembles again and must list the same, read
#    array sectors 228..235 right (it reads around its bad blocks, counted
#    from the disk's start) and 148 wrong (the control: spoiled and not
#    listed).
# B  here -> md: mdadm --assemble of raid5ctl's array, the pattern written,
#    stopped; bb-put (raid/badblocks.c's encoder) writes the same ranges
#    into vde's log; mdadm --examine-badblocks must print what raid5ctl
#    examine --badblocks prints, and md, assembling it, must list them in
#    sysfs and read around them as in A (the disks copied first to
#    $VM_WORK/B-vd?.img, as A's).
# C  mdadm --create --consistency-policy=ppl --assume-clean, stopped (the
#    host compares where mdadm put its bad-block log with raid5ctl's).
# D  here -> md, the log written by the plugin while serving: md lists
#    WANT_D for vdk, and reads the pattern's array sectors 224..239, whose
#    bytes on vdk were never written, from the rest of their row (and then
#    rewrites them, as the plugin would: vdk never failed a write here).

. "${BASH_SOURCE[0]%/*}/guest-lib.sh"
BB="2148 8
3048 600
5048 1
5049 3"
LISTED=2148 UNLISTED=2068 DOFF=2048

# list_of DEV: mdadm --examine-badblocks DEV and raid5ctl examine
# --badblocks DEV must print the same; LIST gets mdadm's list as
# "SECTOR LEN" lines, in the order stored.
list_of () {
    local dev=$1 md ours
    md=$(mdadm --examine-badblocks "$dev" 2>&1)
    ours=$("$RAID5CTL" examine --badblocks "$dev" 2>&1)
    if [[ $md == "$ours" ]]; then
        ok "$dev: raid5ctl examine --badblocks prints what mdadm --examine-badblocks prints"
    else
        not_ok "$dev: raid5ctl examine --badblocks differs from mdadm:"
        diff <(echo "$md") <(echo "$ours") | sed 's/^/#   /'
    fi
    LIST=$(sed -n 's/^ *\([0-9]*\) for \([0-9]*\) sectors$/\1 \2/p' <<<"$md")
}

# keep_copies NAME DEV...: each DEV copied to $VM_WORK/NAME-DEV.img (the
# host serves the copies with the plugin).
keep_copies () {
    local name=$1 dev; shift
    for dev; do
        dd if="$dev" of="$VM_WORK/$name-${dev##*/}.img" bs=1M status=none ||
            not_ok "$name: copying $dev"
    done
}

# spoil DEV SECTOR...: 512 bytes of 0x5a over each sector of DEV.
spoil () {
    local dev=$1 s; shift
    for s; do
        printf 'Z%.0s' {1..512} | dd of="$dev" bs=512 seek="$s" oflag=direct conv=notrunc status=none
    done
}

# read_around WHAT MD DEV: md (assembled) lists $BB's table for DEV in
# sysfs, reads array sectors 228..235 as the pattern and 148 not.
read_around () {
    local what=$1 md=$2 dev=$3 got want
    got=$(sort -n /sys/block/$md/md/dev-${dev##*/}/bad_blocks)
    [[ $got == "$(sort -n <<<"$WANT_SYSFS")" ]] && ok "$what: md loaded the list: $(echo $got)" ||
        not_ok "$what: md's list is '$(echo $got)', want '$(echo $WANT_SYSFS)'"
    if cmp -s <(dd if=/dev/$md bs=512 skip=228 count=8 iflag=direct status=none) \
              <(dd if="$PAT" bs=512 skip=228 count=8 status=none); then
        ok "$what: md reads the listed sectors from the rest of the row (device sectors, not data-relative)"
    else
        not_ok "$what: md returned the spoiled bytes of listed sectors"
    fi
    if cmp -s <(dd if=/dev/$md bs=512 skip=148 count=1 iflag=direct status=none) \
              <(dd if="$PAT" bs=512 skip=148 count=1 status=none); then
        not_ok "$what: control: the spoiled sector that is not listed read right (the test proves nothing)"
    else
        ok "$what: control: the spoiled sector that is not listed reads spoiled"
    fi
}

# ---- A: md's list, read here ----
log "A: mdadm --create, bad blocks through sysfs"
run mdadm --create /dev/md1 --run --metadata=1.2 --level=5 --raid-devices=3 \
    --chunk=64 --assume-clean --homehost=bb --name=a /dev/vda /dev/vdb /dev/vdc ||
    { not_ok "A: mdadm --create"; exit 1; }
run dd if="$PAT" of=/dev/md1 bs=1M oflag=direct status=none || not_ok "A: pattern"
while read -r s l; do
    echo "$s $l" >/sys/block/md1/md/dev-vdb/bad_blocks || not_ok "A: sysfs $s $l"
done <<<"$BB"
run dd if="$PAT" of=/dev/md1 bs=4096 count=1 oflag=direct status=none   # superblocks
nap 1.5
WANT_SYSFS=$(cat /sys/block/md1/md/dev-vdb/bad_blocks)
md_stop md1
list_of /dev/vdb
[[ $LIST == "$WANT_SYSFS" ]] && ok "A: the log holds md's list: $(echo $LIST)" ||
    not_ok "A: mdadm lists '$(echo $LIST)', md's sysfs said '$(echo $WANT_SYSFS)'"
"$RAID5CTL" examine /dev/vda /dev/vdb /dev/vdc >"$VM_WORK/A.examine" 2>&1
grep -q 'Bad Blocks : 4 ranges, 612 sectors' "$VM_WORK/A.examine" &&
    ok "A: raid5ctl examine: $(grep -o 'Bad Blocks : .*sectors' "$VM_WORK/A.examine")" ||
    not_ok "A: raid5ctl examine: $(grep 'Bad Blocks' "$VM_WORK/A.examine")"
spoil /dev/vdb $LISTED $((LISTED + 7)) $UNLISTED
keep_copies A /dev/vda /dev/vdb /dev/vdc
run mdadm --assemble /dev/md1 /dev/vda /dev/vdb /dev/vdc || not_ok "A: assemble again"
read_around A md1 /dev/vdb
md_stop md1

# ---- B: our list, read by md ----
log "B: raid5ctl's array, bb-put"
run mdadm --assemble /dev/md2 /dev/vdd /dev/vde /dev/vdf || { not_ok "B: assemble"; exit 1; }
run dd if="$PAT" of=/dev/md2 bs=1M oflag=direct status=none || not_ok "B: pattern"
md_stop md2
if run "$BB_PUT" /dev/vde $(sed 's/ /+/' <<<"$BB"); then
    ok "B: bb-put wrote the list into vde's log"
else
    not_ok "B: bb-put"
fi
list_of /dev/vde
[[ $LIST == "$WANT_OURS" ]] && ok "B: mdadm lists ours: $(echo $LIST)" ||
    not_ok "B: mdadm lists '$(echo $LIST)', we wrote '$(echo $WANT_OURS)'"
spoil /dev/vde $LISTED $((LISTED + 7)) $UNLISTED
keep_copies B /dev/vdd /dev/vde /dev/vdf
WANT_SYSFS=$WANT_OURS
run mdadm --assemble /dev/md2 /dev/vdd /dev/vde /dev/vdf || not_ok "B: assemble again"
read_around B md2 /dev/vde
md_stop md2

# ---- C: where mdadm puts the log with a partial parity log ----
run mdadm --create /dev/md3 --run --metadata=1.2 --level=5 --raid-devices=3 \
    --chunk=64 --assume-clean --consistency-policy=ppl --homehost=bb --name=c \
    /dev/vdg /dev/vdh /dev/vdi && md_stop md3 && ok "C: mdadm --create with ppl" ||
    not_ok "C: mdadm --create --consistency-policy=ppl"
# ---- D: the log the plugin wrote while serving, read by md ----
log "D: the plugin's recorded write error"
list_of /dev/vdk
[[ $LIST == "$WANT_D" ]] && ok "D: mdadm lists what the plugin recorded: $(echo $LIST)" ||
    not_ok "D: mdadm lists '$(echo $LIST)', the plugin recorded '$(echo $WANT_D)'"
if cmp -s <(dd if=/dev/vdk bs=512 skip=2144 count=16 status=none) \
          <(dd if="$PAT" bs=512 skip=224 count=16 status=none); then
    not_ok "D: control: vdk holds the pattern there (the write did not fail: the test proves nothing)"
else
    ok "D: control: before md reads them, vdk's own bytes there are not the pattern's"
fi
run mdadm --assemble /dev/md4 /dev/vdj /dev/vdk /dev/vdl || { not_ok "D: assemble"; exit 1; }
got=$(cat /sys/block/md4/md/dev-vdk/bad_blocks)
[[ $got == "$WANT_D" ]] && ok "D: md loaded the plugin's list: $(echo $got)" ||
    not_ok "D: md's list is '$(echo $got)', want '$(echo $WANT_D)'"
if cmp -s <(dd if=/dev/md4 bs=512 skip=224 count=16 iflag=direct status=none) \
          <(dd if="$PAT" bs=512 skip=224 count=16 status=none); then
    ok "D: md reads the sectors the plugin recorded from the rest of their row"
else
    not_ok "D: md read array sectors 224..239 wrong"
fi
md_stop md4
exit $((GUEST_FAILS > 0))
