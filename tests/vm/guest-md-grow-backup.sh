#!/bin/bash
# tests/vm/guest-md-grow-backup.sh -- in the guest, for
# test-md-grow-backup.sh: case A's members are /dev/vda..vdd, B's vde..vdh,
# C's vdi..vdl, D's vdm..vdp.
#   A  stopped here in its critical section: mdadm --assemble
#      --backup-file restores it, md finishes; the pattern, check 0.
#   B  md's own grow with a backup file, stopped after its critical
#      section.
#   C  as A with the backup on the new member (vdl): mdadm --assemble
#      with no file finds it there.
#   D  as B with no backup file (mdadm's backup on the new disk, vdp).
. "${BASH_SOURCE[0]%/*}/guest-lib.sh"

# restored C MD DISKS [--backup-file FILE]: mdadm --assemble restores the
# critical section raid5ctl backed up, md finishes: the pattern, check 0.
restored () {
    local c=$1 md=$2 disks=$3 want mm; shift 3
    if run mdadm --assemble /dev/$md "$@" $disks; then
        wait_idle $md 300 || not_ok "$c: md's reshape did not end"
        want=$(stat -c %s "$VM_WORK/$c.pattern")
        if [[ $(cat /sys/block/$md/md/raid_disks) != 4 ]]; then
            not_ok "$c: md says $(cat /sys/block/$md/md/raid_disks) raid disks"
        elif ! cmp -n "$want" /dev/$md "$VM_WORK/$c.pattern"; then
            not_ok "$c: md reads other data than the plugin wrote"
        else
            mm=$(md_check $md)
            if [[ $mm == 0 ]]; then ok "$c: mdadm restored, md finished: the data, mismatch_cnt 0"
            else not_ok "$c: md check: mismatch_cnt '$mm'"; fi
        fi
        md_stop $md
    else
        not_ok "$c: mdadm --assemble $*"
    fi
}

# grown_by_md C MD 'DISKS3' NEW [--backup-file FILE]: mdadm --create 3
# with no room to move the data, the pattern, NEW added, grown slowed
# down, stopped after the critical section (mdadm copies it itself
# before it returns: it cannot be stopped inside it from here -- A and C
# cover a restore).
grown_by_md () {
    local c=$1 md=$2 disks=$3 new=$4 size; shift 4
    if run mdadm --create /dev/$md --run --assume-clean --metadata=1.2 --level=5 \
           --raid-devices=3 --chunk=64K --bitmap=none --data-offset=64K $disks; then
        size=$(blockdev --getsize64 /dev/$md)
        dd if="$VM_WORK/$c.pattern" of=/dev/$md bs=1M count=$((size / 1048576)) \
           oflag=direct status=none || not_ok "$c: writing the pattern"
        echo $((size / 1048576 * 1048576)) >"$VM_WORK/$c.written"
        run mdadm /dev/$md --add $new
        echo 10 >/proc/sys/dev/raid/speed_limit_min
        echo 10 >/proc/sys/dev/raid/speed_limit_max
        run mdadm --grow /dev/$md --raid-devices=4 "$@"
        log "$c: reshape at $(cat /sys/block/$md/md/reshape_position), sync_completed $(cat /sys/block/$md/md/sync_completed)"
        md_stop $md
    else
        not_ok "$c: mdadm --create"
    fi
}

log "A: restored by mdadm from this project's backup file"
restored A md1 "/dev/vda /dev/vdb /dev/vdc /dev/vdd" --backup-file "$VM_WORK/A.bk"
log "C: restored by mdadm from this project's backup on the new member"
restored C md3 "/dev/vdi /dev/vdj /dev/vdk /dev/vdl"
echo 200000 >/proc/sys/dev/raid/speed_limit_max
log "B: md's grow with a backup file, stopped"
grown_by_md B md2 "/dev/vde /dev/vdf /dev/vdg" /dev/vdh --backup-file="$VM_WORK/B.bk"
log "D: md's grow with no backup file, stopped"
grown_by_md D md4 "/dev/vdm /dev/vdn /dev/vdo" /dev/vdp
log "done, $GUEST_FAILS not ok"
[[ $GUEST_FAILS == 0 ]]
