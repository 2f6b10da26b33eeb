# tests/vm/guest-md-listed-row.sh -- in the guest: kernel md over a read
# error in a row another member lists bad (run by
# tests/vm/test-md-listed-row.sh).
#
# Disks: vda vdb vdc = raid5ctl's array, the pattern written, member 2's
#        log listing row 2 of stripe 3 (bb-put).
# Env: EXPECT (the pattern with member 1's 4 KiB of that row zeroed: what
#      dd conv=noerror,sync reads), BAD (member 1's device sector, 8 of
#      them, that fail reads: dm's error target).
#
# A  md loads member 2's list, member 1's page fails: the read of it
#    fails, the rest reads right, md keeps member 1 (3 active, 0 failed);
#    the host then reads member 1's log (mdadm --examine-badblocks).

. "${BASH_SOURCE[0]%/*}/guest-lib.sh"
export DM_DISABLE_UDEV=1   # no udev here: dmsetup makes its own nodes

size=$(blockdev --getsz /dev/vdb)
printf '%s\n' "0 $BAD linear /dev/vdb 0" "$BAD 8 error" \
    "$((BAD + 8)) $((size - BAD - 8)) linear /dev/vdb $((BAD + 8))" |
    run dmsetup create --noudevsync e1 || { not_ok "A: dmsetup create"; exit 1; }
run mdadm --assemble /dev/md1 /dev/vda /dev/mapper/e1 /dev/vdc ||
    { not_ok "A: mdadm --assemble"; exit 1; }
dd if=/dev/md1 of=/tmp/md1.out bs=4096 count=1024 iflag=direct \
    conv=noerror,sync status=none 2>/tmp/md1.err
if cmp -s /tmp/md1.out "$EXPECT"; then
    ok "A: member 1's 4 KiB in the listed row fails, the rest reads right"
else
    not_ok "A: $(cmp /tmp/md1.out "$EXPECT" 2>&1 | head -n 1); dd: $(head -n 2 /tmp/md1.err)"
fi
detail=$(mdadm --detail /dev/md1)
active=$(sed -n 's/^ *Active Devices : //p' <<<"$detail")
failed=$(sed -n 's/^ *Failed Devices : //p' <<<"$detail")
[[ $active == 3 && $failed == 0 ]] && ok "A: md keeps member 1 (3 active, 0 failed)" ||
    not_ok "A: md has $active active, $failed failed"
md_stop md1
run dmsetup remove e1 || not_ok "A: dmsetup remove"
exit $((GUEST_FAILS > 0))
