# tests/vm/guest-md-grow-readonly.sh -- in the guest: kernel md's
# read-only array in the middle of a grow, members 1 and 2 failing reads
# (run by tests/vm/test-md-grow-readonly.sh).
#
# Disks: vda vdb vdc vdd = the array raid5ctl grew from 3 to 4 members,
#        killed part way (its pattern written before the grow).
# Env: PAT (the pattern: the array's bytes), BAD1 and BAD2 (device sectors
#      of members 1 and 2, 8 each, that fail reads), RESHAPE_KIB (the
#      reshape position the superblocks hold).
#
# A  members 1 and 2 behind device-mapper tables failing those sectors
#    (dm's error target), assembled --readonly: md reads the pattern (each
#    failed row from the rest of it), keeps all four (4 active, 0 failed)
#    and leaves the reshape position as it was.

. "${BASH_SOURCE[0]%/*}/guest-lib.sh"
export DM_DISABLE_UDEV=1   # no udev here: dmsetup makes its own nodes

# failing NAME DEV SECTOR...: DEV as /dev/mapper/NAME, 8 sectors from each
# SECTOR (ascending) failing reads.
failing () {
    local name=$1 dev=$2 size at=0 s
    shift 2
    size=$(blockdev --getsz "$dev")
    for s in "$@"; do
        echo "$at $((s - at)) linear $dev $at"
        echo "$s 8 error"
        at=$((s + 8))
    done >/tmp/$name.table
    echo "$at $((size - at)) linear $dev $at" >>/tmp/$name.table
    run dmsetup create --noudevsync "$name" /tmp/$name.table
}

log "A: members 1 and 2 fail reads at $BAD1 and $BAD2"
failing e1 /dev/vdb $BAD1 && failing e2 /dev/vdc $BAD2 ||
    { not_ok "A: dmsetup create"; exit 1; }
run mdadm --assemble --readonly /dev/md1 /dev/vda /dev/mapper/e1 /dev/mapper/e2 /dev/vdd ||
    { not_ok "A: mdadm --assemble --readonly mid-grow"; exit 1; }
grep -A2 '^md1' /proc/mdstat | sed 's/^/# /'
size=$(stat -c %s "$PAT")
if cmp -s <(dd if=/dev/md1 bs=64K count=$((size / 65536)) iflag=direct status=none 2>/tmp/dd.err) "$PAT"; then
    ok "A: md reads the pattern around the read errors"
else
    not_ok "A: the bytes differ; dd: $(head -n 2 /tmp/dd.err)"
fi
detail=$(mdadm --detail /dev/md1)
active=$(sed -n 's/^ *Active Devices : //p' <<<"$detail")
failed=$(sed -n 's/^ *Failed Devices : //p' <<<"$detail")
[[ $active == 4 && $failed == 0 ]] && ok "A: md keeps all four (4 active, 0 failed)" ||
    not_ok "A: md has $active active, $failed failed"
md_stop md1
run dmsetup remove e1; run dmsetup remove e2
p=$(mdadm --examine /dev/vda | sed -n "s/^ *Reshape pos'n : \([0-9]*\) .*/\1/p")
[[ $p == "$RESHAPE_KIB" ]] && ok "A: the reshape is still at $p KiB" ||
    not_ok "A: the reshape moved read-only: $RESHAPE_KIB -> ${p:-none} KiB"
exit $((GUEST_FAILS > 0))
