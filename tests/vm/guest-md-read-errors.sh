# tests/vm/guest-md-read-errors.sh -- in the guest: kernel md degraded over
# a read error it cannot correct (run by tests/vm/test-md-read-errors.sh).
#
# Disks: vda vdb vdc = array A (raid5ctl's, the pattern written), as made;
#        vdd vde vdf = array B, the same after the plugin ran it degraded
#        (member 0 failed) and recorded member 1's failing page;
#        vdg = a blank disk for md to recover A's member 0 onto;
#        vdh vdi vdj = array C: B rebuilt by raid5ctl onto a blank member 0.
# Env: EXPECT (the pattern with the lost 4 KiB pieces zeroed: what dd
#      conv=noerror,sync reads), BAD_AT (member sectors past the data
#      offset, 8, failing reads on A's member 1), DOFF (data offset).
#
# A  md: member 1 behind a device-mapper table whose sectors fail reads
#    (dm's error target), assembled without member 0: the pattern reads
#    but the lost 4 KiB, which fails; md keeps member 1 (2 active, 0
#    failed) and lists the page in its bad-block log ($VM_WORK/A.bb: the
#    lines of mdadm --examine-badblocks).
# B  here -> md: md assembles B (member 0 failed in its superblocks) and
#    reads it as A: the row the plugin listed fails, the rest reads.
# C  md recovers A onto vdg over the row member 1 lists: it goes to the
#    end and lists the row on vdg ($VM_WORK/AC.bb); A then reads as
#    before.  here -> md: md assembles C (all three in service) and reads
#    it as A.

. "${BASH_SOURCE[0]%/*}/guest-lib.sh"
export DM_DISABLE_UDEV=1   # no udev here: dmsetup makes its own nodes

# reads_as MD WHAT: MD's first 4 MiB, read past errors, are EXPECT.
reads_as () {
    dd if=/dev/$1 of=/tmp/$1.out bs=4096 count=1024 iflag=direct \
        conv=noerror,sync status=none 2>/tmp/$1.err
    if cmp -s /tmp/$1.out "$EXPECT"; then
        ok "$2: the two lost 4 KiB pieces fail, the rest reads right"
    else
        not_ok "$2: $(cmp /tmp/$1.out "$EXPECT" 2>&1 | head -n 1); dd: $(head -n 2 /tmp/$1.err)"
    fi
}

# kept MD WHAT: md keeps member 1 (2 active, 0 failed).
kept () {
    local detail active failed
    detail=$(mdadm --detail /dev/$1)
    active=$(sed -n 's/^ *Active Devices : //p' <<<"$detail")
    failed=$(sed -n 's/^ *Failed Devices : //p' <<<"$detail")
    [[ $active == 2 && $failed == 0 ]] && ok "$2: md keeps member 1 (2 active, 0 failed)" ||
        not_ok "$2: md has $active active, $failed failed"
}

log "A: degraded, member 1's sectors $BAD_AT+8 past the data offset fail reads"
size=$(blockdev --getsz /dev/vdb)
bad=$((DOFF + BAD_AT))
printf '%s\n' "0 $bad linear /dev/vdb 0" "$bad 8 error" \
    "$((bad + 8)) $((size - bad - 8)) linear /dev/vdb $((bad + 8))" |
    run dmsetup create --noudevsync e1 || { not_ok "A: dmsetup create"; exit 1; }
run mdadm --assemble --run /dev/md1 /dev/mapper/e1 /dev/vdc ||
    { not_ok "A: mdadm --assemble --run without member 0"; exit 1; }
reads_as md1 "A"
kept md1 "A"
md_stop md1
run dmsetup remove e1 || not_ok "A: dmsetup remove"
mdadm --examine-badblocks /dev/vdb | grep ' for ' >"$VM_WORK/A.bb"
[[ -s $VM_WORK/A.bb ]] && ok "A: md lists $(tr -s ' ' <"$VM_WORK/A.bb")" ||
    not_ok "A: md recorded no bad block"

log "B: here -> md, the plugin's degraded array with its listed page"
run mdadm --assemble --run /dev/md2 /dev/vdd /dev/vde /dev/vdf ||
    { not_ok "B: mdadm --assemble --run"; exit 1; }
reads_as md2 "B"
kept md2 "B"
md_stop md2

log "C: md recovers A's member 0 onto a blank disk over member 1's listed row"
run mdadm --assemble --run /dev/md3 /dev/vdb /dev/vdc ||
    { not_ok "C: mdadm --assemble --run A"; exit 1; }
run mdadm /dev/md3 --add /dev/vdg || not_ok "C: mdadm --add"
nap 0.5
wait_idle md3 120 || not_ok "C: the recovery did not end"
detail=$(mdadm --detail /dev/md3)
[[ $(sed -n 's/^ *Active Devices : //p' <<<"$detail") == 3 ]] &&
    ok "C: md recovered onto vdg (3 active)" ||
    not_ok "C: after the recovery: $(grep -E 'State :|Devices :' <<<"$detail" | tr -s ' ')"
reads_as md3 "C, md"
md_stop md3
mdadm --examine-badblocks /dev/vdg | grep ' for ' >"$VM_WORK/AC.bb"
[[ -s $VM_WORK/AC.bb ]] && ok "C: md lists $(tr -s ' ' <"$VM_WORK/AC.bb") on vdg" ||
    not_ok "C: md recorded no bad block on the recovered member"

log "C: here -> md, the array raid5ctl rebuilt"
run mdadm --assemble --run /dev/md4 /dev/vdh /dev/vdi /dev/vdj ||
    { not_ok "C: mdadm --assemble --run of raid5ctl's rebuilt array"; exit 1; }
detail=$(mdadm --detail /dev/md4)
[[ $(sed -n 's/^ *Active Devices : //p' <<<"$detail") == 3 ]] &&
    ok "C: md runs raid5ctl's rebuilt array (3 active)" ||
    not_ok "C: md4: $(grep -E 'State :|Devices :' <<<"$detail" | tr -s ' ')"
reads_as md4 "C, here -> md"
md_stop md4
exit $((GUEST_FAILS > 0))
