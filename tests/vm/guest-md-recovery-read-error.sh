# tests/vm/guest-md-recovery-read-error.sh -- in the guest: kernel md
# recovering member 0 while member 1 fails reads (run by
# tests/vm/test-md-recovery-read-error.sh).
#
# Disks: vda = member 2 of array A (raid5ctl's, the pattern written),
#        vdb = a blank disk to recover member 0 onto.  Member 1 is
#        $VM_WORK/a1.img served here by nbdkit-badsector-plugin on
#        /dev/nbd0 (its list $VM_WORK/a.bad, its log $VM_WORK/a.badlog).
# Env: EXPECT_HEAD (the array's first 4 MiB), EXPECT_ROW (stripe ROW's
#      128 KiB, the two lost 4 KiB pieces zeroed: what dd conv=noerror,sync
#      reads), HELD (the recovery is held there:
#      sync_max, sectors), BADSECTOR (the plugin), BELOW and ABOVE (member
#      1's device sectors, 8 each, that go bad once the recovery is held:
#      below its mark and past it).
#
# A  md assembles members 1 and 2 degraded, holds the recovery onto vdb at
#    HELD sectors (sync_max; recovery_start says how far it got), then member 1's sectors go bad: md
#    reads the pattern but the two lost pieces, keeps member 1 (0 failed),
#    rewrites its sector below the mark (the disk remaps it); the log of
#    member 1 is looked at on the host (mdadm --examine-badblocks).

. "${BASH_SOURCE[0]%/*}/guest-lib.sh"

: >"$VM_WORK/a.bad"
nbd_up a1 1 "$BADSECTOR" file="$VM_WORK/a1.img" bad="$VM_WORK/a.bad" \
    log="$VM_WORK/a.badlog" || { not_ok "A: serving member 1"; exit 1; }
run mdadm --assemble --run /dev/md1 /dev/nbd0 /dev/vda ||
    { not_ok "A: mdadm --assemble --run without member 0"; nbd_down; exit 1; }
echo "$HELD" >/sys/block/md1/md/sync_max || not_ok "A: sync_max"
run mdadm /dev/md1 --add /dev/vdb || not_ok "A: mdadm --add"
start=0
for (( i = 0; i < 600; i++ )); do
    read -r start </sys/block/md1/md/dev-vdb/recovery_start 2>/dev/null || start=0
    [[ $start =~ ^[0-9]+$ ]] && (( start >= HELD / 2 )) && break
    nap 0.1
done
[[ $start =~ ^[0-9]+$ ]] && (( start >= HELD / 2 )) &&
    ok "A: the recovery is held (at sector $start, sync_max $HELD)" ||
    not_ok "A: the recovery did not get past sector $((HELD / 2)) (recovery_start: $start)"

log "A: member 1's sectors go bad, one below the recovery's mark, one past it"
printf 'read %s 8\n' "$BELOW" "$ABOVE" >"$VM_WORK/a.bad"
dd if=/dev/md1 of=/tmp/head.out bs=64K count=64 iflag=direct status=none 2>/tmp/head.err
if cmp -s /tmp/head.out "$EXPECT_HEAD"; then
    ok "A: the first 4 MiB read right (member 1's sector below the mark corrected)"
else
    not_ok "A: the first 4 MiB: $(cmp /tmp/head.out "$EXPECT_HEAD" 2>&1 | head -n 1); dd: $(head -n 2 /tmp/head.err)"
fi
dd if=/dev/md1 of=/tmp/row.out bs=4096 skip=$((ROW * 32)) count=32 iflag=direct \
    conv=noerror,sync status=none 2>/tmp/row.err
if cmp -s /tmp/row.out "$EXPECT_ROW"; then
    ok "A: past the mark the two lost 4 KiB pieces fail, the rest of stripe $ROW reads right"
else
    not_ok "A: stripe $ROW: $(cmp /tmp/row.out "$EXPECT_ROW" 2>&1 | head -n 1); dd: $(head -n 2 /tmp/row.err)"
fi
detail=$(mdadm --detail /dev/md1)
[[ $(sed -n 's/^ *Failed Devices : //p' <<<"$detail") == 0 ]] &&
    ok "A: md keeps member 1 (0 failed)" ||
    not_ok "A: md: $(grep -E 'State :|Devices :' <<<"$detail" | tr -s ' ')"
grep -q "^remapped $BELOW 8\$" "$VM_WORK/a.badlog" &&
    ok "A: md rewrote member 1's sector below the mark" ||
    not_ok "A: member 1's sector $BELOW was not rewritten: $(tr '\n' ';' <"$VM_WORK/a.badlog")"
md_stop md1
nbd_down || :     # its log has the bad sectors' errors, as it should
exit $((GUEST_FAILS > 0))
