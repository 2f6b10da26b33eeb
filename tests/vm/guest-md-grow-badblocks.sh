#!/bin/bash
# tests/vm/guest-md-grow-badblocks.sh -- in the guest, for
# test-md-grow-badblocks.sh.  Disks: vda..vdd = E (raid5ctl's 3-member
# array, grown here to 4 and killed mid-way; member 1, vdb, lists LOW and
# HIGH, spoiled), vde..vdh = F (blank).  Env: LOW, HIGH, LEN (E's ranges,
# device sectors), LOW_AT, HIGH_AT (F's, past its data offset).
#   E  md assembles, goes on with the reshape, and reads the pattern then
#      zeroes; check 0; vdb lists nothing once every row is written.
#   F  mdadm --create 3 (no bitmap), the pattern, LOW and HIGH added to
#      vdf's list through sysfs, written out, stopped; both spoiled on the
#      disk; assembled, vdh added, grown to 4 slowed down, stopped
#      mid-way (the host finishes it).
#   G  vdi..vdl: raid5ctl's 3-member array grown here to 4 over a row
#      members 1 and 2 listed (LOST: its data pages, LOST_LEN bytes, moved
#      as lost): md assembles it, a read of LOST fails, every other byte
#      of the pattern reads as written, two devices list pages, check 0.
. "${BASH_SOURCE[0]%/*}/guest-lib.sh"
PAT=$VM_WORK/pattern

spoil () {
    local dev=$1 s
    for s in "${@:2}"; do
        head -c $((LEN * 512)) /dev/zero | tr '\0' 'Z' |
            dd of="$dev" bs=512 seek="$s" oflag=direct conv=notrunc status=none
    done
}
doff_of () { examined_value "$(mdadm --examine "$1")" "Data Offset" | sed 's/ sectors.*//'; }

log "E: stopped here, md goes on"
if run mdadm --assemble /dev/md1 /dev/vd{a,b,c,d}; then
    read -r action </sys/block/md1/md/sync_action
    got=$(cat /sys/block/md1/md/dev-vdb/bad_blocks)
    [[ $got == "$HIGH $LEN" ]] && ok "E: md loads the list raid5ctl left: $got" ||
        not_ok "E: md's list for vdb is '$(echo $got)', want '$HIGH $LEN'"
    [[ $action == reshape ]] || not_ok "E: md does not go on with the reshape ($action)"
    wait_idle md1 300 || not_ok "E: md's reshape did not end"
    want=$(stat -c %s "$PAT")
    size=$(blockdev --getsize64 /dev/md1)
    if [[ $(cat /sys/block/md1/md/raid_disks) != 4 || $size != $((want * 3 / 2)) ]]; then
        not_ok "E: md has $(cat /sys/block/md1/md/raid_disks) raid disks, $size bytes"
    elif ! cmp -n "$want" /dev/md1 "$PAT"; then
        not_ok "E: md reads other data than the plugin wrote"
    elif [[ -n $(dd if=/dev/md1 bs=1M skip="$want" iflag=skip_bytes status=none | tr -d '\0' | head -c 1) ]]; then
        not_ok "E: the new space is not zero"
    else
        mm=$(md_check md1)
        [[ $mm == 0 ]] && ok "E: md reads the pattern, the new space zero, mismatch_cnt 0" ||
            not_ok "E: md check: mismatch_cnt '$mm'"
    fi
    got=$(cat /sys/block/md1/md/dev-vdb/bad_blocks)
    [[ -z $got ]] && ok "E: md lists nothing on vdb once its reshape wrote every row" ||
        not_ok "E: md still lists '$(echo $got)' on vdb after its reshape"
    md_stop md1
else
    not_ok "E: mdadm --assemble"
fi

log "F: md's grow with bad blocks listed, stopped mid-way"
if run mdadm --create /dev/md2 --run --assume-clean --metadata=1.2 --level=5 \
       --raid-devices=3 --chunk=64K --bitmap=none /dev/vd{e,f,g}; then
    run dd if="$PAT" of=/dev/md2 bs=1M oflag=direct status=none || not_ok "F: pattern"
    d=$(doff_of /dev/vdf)
    for s in $((d + LOW_AT)) $((d + HIGH_AT)); do
        echo "$s $LEN" >/sys/block/md2/md/dev-vdf/bad_blocks || not_ok "F: sysfs $s $LEN"
    done
    run dd if="$PAT" of=/dev/md2 bs=4096 count=1 oflag=direct status=none   # superblocks
    nap 1.5
    log "F: vdf lists $(cat /sys/block/md2/md/dev-vdf/bad_blocks | tr '\n' ' ')"
    md_stop md2
    spoil /dev/vdf $((d + LOW_AT)) $((d + HIGH_AT))
    run mdadm --assemble /dev/md2 /dev/vd{e,f,g} || not_ok "F: assemble again"
    run mdadm /dev/md2 --add /dev/vdh
    echo 500 >/proc/sys/dev/raid/speed_limit_min
    echo 500 >/proc/sys/dev/raid/speed_limit_max
    run mdadm --grow /dev/md2 --raid-devices=4
    nap 4
    log "F: reshape at $(cat /sys/block/md2/md/reshape_position), vdf lists $(cat /sys/block/md2/md/dev-vdf/bad_blocks | tr '\n' ' ')"
    md_stop md2
else
    not_ok "F: mdadm --create"
fi

log "G: grown here over a row two members listed"
echo 1000 >/proc/sys/dev/raid/speed_limit_min      # md's defaults again (F
echo 200000 >/proc/sys/dev/raid/speed_limit_max    # slowed its grow down)
if run mdadm --assemble /dev/md3 /dev/vd{i,j,k,l}; then
    want=$(stat -c %s "$PAT")
    rest=$((LOST + LOST_LEN))
    listing=0
    for d in vdi vdj vdk vdl; do
        [[ -n $(cat /sys/block/md3/md/dev-$d/bad_blocks) ]] && listing=$((listing + 1))
    done
    if [[ $(cat /sys/block/md3/md/raid_disks) != 4 ]]; then
        not_ok "G: md has $(cat /sys/block/md3/md/raid_disks) raid disks"
    elif [[ $(for ((at = LOST; at < rest; at += 4096)); do
                  dd if=/dev/md3 of=/dev/null bs=4096 skip=$((at / 4096)) count=1 \
                     iflag=direct status=none 2>/dev/null && echo "$at"; done) ]]; then
        not_ok "G: md reads some of the lost array bytes $LOST+$LOST_LEN"
    elif ! cmp <(dd if=/dev/md3 bs=4096 count=$((LOST / 4096)) iflag=direct status=none) \
               <(head -c "$LOST" "$PAT"); then
        not_ok "G: md reads other bytes than written below the lost page"
    elif ! cmp <(dd if=/dev/md3 bs=4096 skip=$((rest / 4096)) count=$(((want - rest) / 4096)) iflag=direct status=none) \
               <(tail -c +$((rest + 1)) "$PAT"); then
        not_ok "G: md reads other bytes than written above the lost pages"
    elif [[ $listing != 2 ]]; then
        not_ok "G: $listing devices list bad blocks, want 2 (the lost pages' and their rows' parity)"
    else
        mm=$(md_check md3)
        [[ $mm == 0 ]] && ok "G: md fails the lost bytes, reads the rest as written, two devices list them, mismatch_cnt 0" ||
            not_ok "G: md check: mismatch_cnt '$mm'"
    fi
    md_stop md3
else
    not_ok "G: mdadm --assemble"
fi
