#!/bin/bash
# tests/vm/guest-md-grow.sh -- in the guest, for test-md-grow.sh: the
# members of case A are /dev/vda..vdd, B vde..vdh, C vdi..vdl.
#   A  grown here: assemble, 4 members, the array = A.pattern then zeroes,
#      check mismatch_cnt 0.
#   B  grow stopped here: assemble, md finishes the reshape, then as A.
#   C  md's own grow, stopped: create 3, ext4 with files (C.sums: their
#      md5 and path), add the 4th, grow slowed, stop mid-way.
. "${BASH_SOURCE[0]%/*}/guest-lib.sh"

# grown CASE MD: 4 raid disks, the pattern, zeroes after it, check 0.
grown () {
    local c=$1 md=$2 size want
    want=$(stat -c %s "$VM_WORK/$c.pattern")
    size=$(blockdev --getsize64 /dev/$md)
    if [[ $(cat /sys/block/$md/md/raid_disks) != 4 ]]; then
        not_ok "$c: md says $(cat /sys/block/$md/md/raid_disks) raid disks, not 4"
    elif [[ $size != $((want * 3 / 2)) ]]; then
        not_ok "$c: md's array is $size bytes, not $((want * 3 / 2))"
    elif ! cmp -n "$want" /dev/$md "$VM_WORK/$c.pattern"; then
        not_ok "$c: md reads other data than the plugin wrote"
    elif [[ -n $(dd if=/dev/$md bs=1M skip="$want" iflag=skip_bytes status=none | tr -d '\0' | head -c 1) ]]; then
        not_ok "$c: the new space is not zero"
    else
        mm=$(md_check $md)
        if [[ $mm == 0 ]]; then ok "$c: md reads the data, the new space zero, mismatch_cnt 0"
        else not_ok "$c: md check: mismatch_cnt '$mm'"; fi
    fi
}

log "A: grown here"
if run mdadm --assemble /dev/md1 /dev/vd{a,b,c,d}; then
    wait_idle md1 60 || not_ok "A: md is busy after assembling"
    grown A md1
    md_stop md1
else
    not_ok "A: mdadm --assemble"
fi

log "B: stopped here"
if run mdadm --assemble /dev/md2 /dev/vd{e,f,g,h}; then
    read -r action </sys/block/md2/md/sync_action
    log "B: md's sync_action after assembly: $action"
    [[ $action == reshape ]] || not_ok "B: md does not go on with the reshape ($action)"
    wait_idle md2 300 || not_ok "B: md's reshape did not end"
    grown B md2
    md_stop md2
else
    not_ok "B: mdadm --assemble"
fi

log "C: md's grow, stopped mid-way"
if run mdadm --create /dev/md3 --run --assume-clean --metadata=1.2 --level=5 \
       --raid-devices=3 --chunk=64K --bitmap=none /dev/vd{i,j,k}; then
    run mkfs.ext4 -q -b 4096 -E stride=16,stripe_width=32 /dev/md3
    mkdir -p /tmp/mnt-c && run mount /dev/md3 /tmp/mnt-c || not_ok "C: mount"
    # A tree of files big and small, from the host's /usr.
    cp -a /usr/share/doc/bash /usr/share/doc/e2fsprogs /tmp/mnt-c/ 2>/dev/null
    head -c 20M /dev/urandom >/tmp/mnt-c/big
    (cd /tmp/mnt-c && find . -type f -exec md5sum {} + | sed 's| \./| /|') >"$VM_WORK/C.sums"
    log "C: $(wc -l <"$VM_WORK/C.sums") files"
    [[ $(wc -l <"$VM_WORK/C.sums") -gt 10 ]] || not_ok "C: too few files written"
    run umount /tmp/mnt-c
    run mdadm /dev/md3 --add /dev/vdl
    echo 500 >/proc/sys/dev/raid/speed_limit_min
    echo 500 >/proc/sys/dev/raid/speed_limit_max
    run mdadm --grow /dev/md3 --raid-devices=4
    nap 4
    log "C: reshape at $(cat /sys/block/md3/md/reshape_position)"
    md_stop md3
else
    not_ok "C: mdadm --create"
fi
log "done, $GUEST_FAILS not ok"
[[ $GUEST_FAILS == 0 ]]
