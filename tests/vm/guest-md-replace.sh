#!/bin/bash
# tests/vm/guest-md-replace.sh -- in the guest, for test-md-replace.sh: the
# members of case A are /dev/vda..vdd, B vde..vdh, C vdi..vdl.
#   A  replaced here: assemble the current three (vdd in slot 1), the
#      pattern, check 0; with the old member given too, md kicks it out.
#   B  replace stopped here: assemble all four, md goes on copying, puts
#      vdh in slot 1; the pattern, check 0.
#   C  md's own replace, stopped: create 3, the pattern, add vdl, replace
#      vdj with it slowed down, stop mid-way.
. "${BASH_SOURCE[0]%/*}/guest-lib.sh"

# same CASE MD: the pattern reads back, check 0.
same () {
    local c=$1 md=$2 want mm
    want=$(stat -c %s "$VM_WORK/$c.pattern")
    if ! cmp -n "$want" /dev/$md "$VM_WORK/$c.pattern"; then
        not_ok "$c: md reads other data than the plugin wrote"
        return
    fi
    mm=$(md_check $md)
    if [[ $mm == 0 ]]; then ok "$c: md reads the data, mismatch_cnt 0"
    else not_ok "$c: md check: mismatch_cnt '$mm'"; fi
}
# role_of MD DEV: the slot md gives DEV ("" if none), from sysfs.
role_of () {
    local s
    read -r s <"/sys/block/$1/md/dev-$2/slot" 2>/dev/null || s=
    echo "$s"
}

log "A: replaced here"
if run mdadm --assemble /dev/md1 /dev/vd{a,b,c,d}; then
    wait_idle md1 60 || not_ok "A: md is busy after assembling"
    [[ $(role_of md1 vdd) == 1 ]] || not_ok "A: vdd is not in slot 1 ($(role_of md1 vdd))"
    [[ -e /sys/block/md1/md/dev-vdb ]] && not_ok "A: md took the old member back"
    same A md1
    md_stop md1
else
    not_ok "A: mdadm --assemble"
fi

log "B: stopped here"
if run mdadm --assemble /dev/md2 /dev/vd{e,f,g,h}; then
    read -r action </sys/block/md2/md/sync_action
    read -r st </sys/block/md2/md/dev-vdh/state
    log "B: md's sync_action after assembly: $action; vdh: $st"
    [[ $st == *replacement* ]] || not_ok "B: md does not take vdh as a replacement ($st)"
    wait_idle md2 300 || not_ok "B: md's replace did not end"
    nap 1
    [[ $(role_of md2 vdh) == 1 ]] || not_ok "B: vdh is not in slot 1 after md's copy ($(role_of md2 vdh))"
    same B md2
    md_stop md2
else
    not_ok "B: mdadm --assemble"
fi

log "C: md's replace, stopped mid-way"
if run mdadm --create /dev/md3 --run --assume-clean --metadata=1.2 --level=5 \
       --raid-devices=3 --chunk=64K --bitmap=none /dev/vd{i,j,k}; then
    size=$(blockdev --getsize64 /dev/md3)
    dd if="$VM_WORK/C.pattern" of=/dev/md3 bs=1M count=$((size / 1048576)) \
       oflag=direct status=none || not_ok "C: writing the pattern"
    run mdadm /dev/md3 --add /dev/vdl
    echo 500 >/proc/sys/dev/raid/speed_limit_min
    echo 500 >/proc/sys/dev/raid/speed_limit_max
    run mdadm /dev/md3 --replace /dev/vdj --with /dev/vdl
    nap 4
    read -r st </sys/block/md3/md/dev-vdl/state
    log "C: vdl: $st, sync_completed $(cat /sys/block/md3/md/sync_completed)"
    md_stop md3
else
    not_ok "C: mdadm --create"
fi
log "done, $GUEST_FAILS not ok"
[[ $GUEST_FAILS == 0 ]]
