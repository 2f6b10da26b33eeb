# tests/vm/guest-md-grow-read-errors.sh -- in the guest: kernel md in the
# middle of a grow, member 1 failing reads until written (run by
# tests/vm/test-md-grow-read-errors.sh).
#
# Disks: vda vdb vdc = members 0, 2 and 3 of the array raid5ctl grew from
#        3 to 4 members, killed part way (its pattern written before).
#        Member 1 is $VM_WORK/a1.img served here by nbdkit-badsector-plugin
#        on /dev/nbd0 (its list $VM_WORK/a1.bad, its log $VM_WORK/a1.badlog).
# Env: PAT (the pattern: the array's bytes), BAD (member 1's device
#      sectors, 8 each, that fail reads until written), BADSECTOR.
#
# A  assembled, its reshape going on: md reads the pattern, rewriting
#    both sectors (R5_ReWrite, by the read or by the reshape, whichever
#    meets a sector first; the disk remaps them), keeps member 1 (4
#    active, 0 failed); the reshape ends and md's check finds
#    mismatch_cnt 0.

. "${BASH_SOURCE[0]%/*}/guest-lib.sh"

for s in $BAD; do echo "read $s 8"; done >"$VM_WORK/a1.bad"
nbd_up a1 1 "$BADSECTOR" file="$VM_WORK/a1.img" bad="$VM_WORK/a1.bad" \
    log="$VM_WORK/a1.badlog" || { not_ok "A: serving member 1"; exit 1; }
# The reshape goes on as md assembles it: frozen, md would hold reads in
# the window it moves until it moved it (make_stripe_request).
run mdadm --assemble /dev/md1 /dev/vda /dev/nbd0 /dev/vdb /dev/vdc ||
    { not_ok "A: mdadm --assemble"; nbd_down; exit 1; }
grep -A2 '^md1' /proc/mdstat | sed 's/^/# /'
size=$(stat -c %s "$PAT")
if cmp -s <(dd if=/dev/md1 bs=64K count=$((size / 65536)) iflag=direct status=none 2>/tmp/dd.err) "$PAT"; then
    ok "A: md reads the pattern over member 1's read errors"
else
    not_ok "A: the bytes differ; dd: $(head -n 2 /tmp/dd.err)"
fi
detail=$(mdadm --detail /dev/md1)
active=$(sed -n 's/^ *Active Devices : //p' <<<"$detail")
failed=$(sed -n 's/^ *Failed Devices : //p' <<<"$detail")
[[ $active == 4 && $failed == 0 ]] && ok "A: md keeps member 1 (4 active, 0 failed)" ||
    not_ok "A: md has $active active, $failed failed"
for s in $BAD; do
    grep -q "^remapped $s 8\$" "$VM_WORK/a1.badlog" &&
        ok "A: md rewrote member 1's sector $s" ||
        not_ok "A: member 1's sector $s was not rewritten: $(tr '\n' ';' <"$VM_WORK/a1.badlog")"
done
log "A: the reshape goes on to its end"
nap 0.5
wait_idle md1 300 || not_ok "A: the reshape did not end"
mm=$(md_check md1) && [[ $mm == 0 ]] && ok "A: md's check after the grow: mismatch_cnt 0" ||
    not_ok "A: md's check after the grow: mismatch_cnt ${mm:-?}"
md_stop md1
nbd_down || :     # its log has the bad sectors' errors, as it should
exit $((GUEST_FAILS > 0))
