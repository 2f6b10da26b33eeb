#!/bin/bash
# tests/vm/guest-md-replace.sh -- in the guest, for test-md-replace.sh: the
# members of case A are /dev/vda..vdd, B vde..vdh, C vdi..vdl.
#   A  replaced here: assemble the current three (vdd in slot 1), the
#      pattern, check 0; with the old member given too, md kicks it out.
#   B  replace stopped here: assemble all four, md goes on copying, puts
#      vdh in slot 1; the pattern, check 0.
#   C  md's own replace, stopped: create 3, the pattern, add vdl, replace
#      vdj with it slowed down, stop mid-way.
#   D  (vdm..vdp) replaced here, its slot's member failed mid-way: md
#      assembles vdm, vdo and vdp (vdp in slot 1), the pattern, check 0.
#   E  (vdq..vdt) md's replace of vdr with vdt, slowed down, and vdr
#      failed mid-way: md goes on from the copy's point with vdt in slot
#      1 (no longer a replacement), then stops mid-way for the host.
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

# md_replacing CASE MD D0 D1 D2 NEW: md's array of D0..D2 with CASE's
# pattern, NEW added and replacing D1, slowed down to 500 KiB/s.
md_replacing () {
    local c=$1 md=$2 size
    run mdadm --create /dev/$md --run --assume-clean --metadata=1.2 --level=5 \
        --raid-devices=3 --chunk=64K --bitmap=none /dev/{$3,$4,$5} || return 1
    size=$(blockdev --getsize64 /dev/$md)
    dd if="$VM_WORK/$c.pattern" of=/dev/$md bs=1M count=$((size / 1048576)) \
       oflag=direct status=none || not_ok "$c: writing the pattern"
    run mdadm /dev/$md --add /dev/$6
    echo 500 >/proc/sys/dev/raid/speed_limit_min
    echo 500 >/proc/sys/dev/raid/speed_limit_max
    run mdadm /dev/$md --replace /dev/$4 --with /dev/$6
}

log "D: replaced here, the slot's member failed mid-way"
if run mdadm --assemble /dev/md4 /dev/vd{m,o,p}; then
    wait_idle md4 60 || not_ok "D: md is busy after assembling"
    [[ $(role_of md4 vdp) == 1 ]] || not_ok "D: vdp is not in slot 1 ($(role_of md4 vdp))"
    same D md4
    md_stop md4
else
    not_ok "D: mdadm --assemble"
fi

log "C: md's replace, stopped mid-way"
if md_replacing C md3 vd{i,j,k,l}; then
    nap 4
    read -r st </sys/block/md3/md/dev-vdl/state
    log "C: vdl: $st, sync_completed $(cat /sys/block/md3/md/sync_completed)"
    md_stop md3
else
    not_ok "C: mdadm --create"
fi
# sync_completed's first number (sectors), or 0.  It moves in steps (md
# updates it every sixteenth of the device), and a recovery started again
# begins at its starting point: so right after a restart it says where.
done_sectors () {
    local d
    read -r d _ </sys/block/$1/md/sync_completed
    [[ $d =~ ^[0-9]+$ ]] && echo "$d" || echo 0
}

log "E: md's replace, its source failed mid-way"
if md_replacing E md5 vd{q,r,s,t}; then
    # sync_completed moves in steps of a sixteenth of the device.
    for ((i = 0; i < 300; i++)); do
        [[ $(done_sectors md5) -gt 0 ]] && break
        nap 0.1
    done
    before=$(done_sectors md5)
    run mdadm /dev/md5 --fail /dev/vdr
    nap 3
    after=$(done_sectors md5)
    read -r st </sys/block/md5/md/dev-vdt/state
    log "E: copy at $before sectors when vdr failed, $after after; vdt: $st, slot $(role_of md5 vdt)"
    if [[ $before -gt 0 && $after -ge $before && $(role_of md5 vdt) == 1 &&
          $st != *replacement* ]]; then
        ok "E: md went on from the copy's point with vdt in slot 1"
    else
        not_ok "E: md did not go on from the copy's point ($before -> $after, vdt: $st)"
    fi
    md_stop md5
else
    not_ok "E: mdadm --create"
fi
log "done, $GUEST_FAILS not ok"
[[ $GUEST_FAILS == 0 ]]
