#!/bin/bash
# tests/vm/guest-md-grow-backup.sh -- in the guest, for
# test-md-grow-backup.sh: case A's members are /dev/vda..vdd, B's vde..vdh.
#   A  stopped here in its critical section: mdadm --assemble
#      --backup-file restores it, md finishes; the pattern, check 0.
#   B  md's own grow with a backup file, stopped after its critical
#      section.
. "${BASH_SOURCE[0]%/*}/guest-lib.sh"

log "A: restored by mdadm from this project's backup"
if run mdadm --assemble /dev/md1 --backup-file "$VM_WORK/A.bk" /dev/vd{a,b,c,d}; then
    wait_idle md1 300 || not_ok "A: md's reshape did not end"
    want=$(stat -c %s "$VM_WORK/A.pattern")
    if [[ $(cat /sys/block/md1/md/raid_disks) != 4 ]]; then
        not_ok "A: md says $(cat /sys/block/md1/md/raid_disks) raid disks"
    elif ! cmp -n "$want" /dev/md1 "$VM_WORK/A.pattern"; then
        not_ok "A: md reads other data than the plugin wrote"
    else
        mm=$(md_check md1)
        if [[ $mm == 0 ]]; then ok "A: mdadm restored, md finished: the data, mismatch_cnt 0"
        else not_ok "A: md check: mismatch_cnt '$mm'"; fi
    fi
    md_stop md1
else
    not_ok "A: mdadm --assemble --backup-file"
fi

log "B: md's grow with a backup file, stopped"
if run mdadm --create /dev/md2 --run --assume-clean --metadata=1.2 --level=5 \
       --raid-devices=3 --chunk=64K --bitmap=none --data-offset=64K /dev/vd{e,f,g}; then
    size=$(blockdev --getsize64 /dev/md2)
    dd if="$VM_WORK/B.pattern" of=/dev/md2 bs=1M count=$((size / 1048576)) \
       oflag=direct status=none || not_ok "B: writing the pattern"
    echo $((size / 1048576 * 1048576)) >"$VM_WORK/B.written"
    run mdadm /dev/md2 --add /dev/vdh
    echo 10 >/proc/sys/dev/raid/speed_limit_min
    echo 10 >/proc/sys/dev/raid/speed_limit_max
    # mdadm copies the critical section itself before it returns (it
    # cannot be stopped inside it from here: case A covers a restore); md
    # is stopped in the reshape after it.
    run mdadm --grow /dev/md2 --raid-devices=4 --backup-file="$VM_WORK/B.bk"
    log "B: reshape at $(cat /sys/block/md2/md/reshape_position), sync_completed $(cat /sys/block/md2/md/sync_completed)"
    md_stop md2
else
    not_ok "B: mdadm --create"
fi
log "done, $GUEST_FAILS not ok"
[[ $GUEST_FAILS == 0 ]]
