#!/bin/bash
# tests/vm/guest-md-grow.sh -- in the guest, for test-md-grow.sh: the
# members of case A are /dev/vda..vdd, B vde..vdh, C vdi..vdl.
#   A  grown here: assemble, 4 members, the array = A.pattern then zeroes,
#      check mismatch_cnt 0.
#   B  grow stopped here: assemble, md finishes the reshape, then as A.
#   C  md's own grow, stopped: create 3 with a bitmap, ext4 with files (C.sums: their
#      md5 and path), add the 4th, grow slowed, stop mid-way.
#   D  D1 on vdm..vdp, D2 on vdq..vdt: mdadm --grow without a backup file
#      finds no room to move the data either (it would pass D1_FLOOR /
#      D2_FLOOR, bytes, the lowest raid5ctl names) and keeps the data
#      offset, backing up its critical section; the kernel takes D1_FLOOR
#      as a new_offset and refuses a page less.  D4 on vdu..vdx: mdadm
#      moves the data to D1_FLOOR, where raid5ctl moved D3's.
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
    bm=$(mdadm -X /dev/vdh 2>&1)
    if [[ $(cat /sys/block/md2/md/bitmap/location 2>/dev/null) == +8 &&
          $bm == *"State : OK"* ]]; then
        ok "B: md keeps the bitmap, the new member's too"
    else
        not_ok "B: md's bitmap: location $(cat /sys/block/md2/md/bitmap/location 2>&1), $bm"
    fi
    md_stop md2
else
    not_ok "B: mdadm --assemble"
fi

log "C: md's grow, stopped mid-way"
if run mdadm --create /dev/md3 --run --assume-clean --metadata=1.2 --level=5 \
       --raid-devices=3 --chunk=64K --bitmap=internal /dev/vd{i,j,k}; then
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
# kernel_lowest CASE MD FLOOR: each member of MD takes new_offset FLOOR
# (bytes) and refuses a page less (md.c new_offset_store: E2BIG when
# super_1_allow_new_offset says no); its data offset set back after.
kernel_lowest () {
    local c=$1 md=$2 floor=$(($3 / 512)) d doff took=0 refused=0
    for d in /sys/block/$md/md/dev-*; do
        doff=$(cat "$d/offset")
        echo $((floor - 8)) >"$d/new_offset" 2>/dev/null || refused=$((refused + 1))
        echo "$floor" >"$d/new_offset" 2>/dev/null && took=$((took + 1))
        echo "$doff" >"$d/new_offset" 2>/dev/null || not_ok "$c: ${d##*/}: new_offset back to $doff"
    done
    if [[ $floor -gt 8 && $took == 3 && $refused == 3 ]]; then
        ok "$c: the kernel takes new_offset $floor sectors and refuses $((floor - 8)), as raid5ctl's lowest"
    else
        not_ok "$c: of 3 members the kernel took new_offset $floor on $took, refused $((floor - 8)) on $refused"
    fi
}
# grown_to CASE MD NEW SECTORS WHY: mdadm --grow MD by NEW without a backup
# file records a new data offset of SECTORS on every member (new_offset:
# its own choice of where the data moves, or the offset kept when it
# finds no room and backs up its critical section instead); the reshape
# is then stopped where it is (the guest's disks are thrown away).
grown_to () {
    local d wrong=0
    if ! mdadm --grow /dev/$2 --raid-devices=4 --add /dev/$3 >"/tmp/$1.grow" 2>&1; then
        not_ok "$1: mdadm --grow failed: $(tr '\n' ' ' <"/tmp/$1.grow")"
        return
    fi
    for d in /sys/block/$2/md/dev-*; do
        [[ $(cat "$d/new_offset") == "$4" ]] || wrong=$((wrong + 1))
    done
    if [[ $wrong == 0 ]]; then
        ok "$1: mdadm's new data offset is sector $4: $5"
    else
        not_ok "$1: mdadm's new_offset is $(cat /sys/block/$2/md/dev-$3/new_offset), not $4 ($5)"
    fi
    echo frozen >/sys/block/$2/md/sync_action
    pkill -f "mdadm --grow" || :
    nap 1
}
# d_case CASE MD "DEVS" NEW SECTORS WHY [FLOOR]: MD assembled from DEVS,
# the kernel's lowest checked against FLOOR if given, then grown_to by NEW
# (SECTORS "keep": the data offset it has).
d_case () {
    local c=$1 md=$2 devs=$3 new=$4 want=$5 why=$6 floor=${7:-} d list=()
    for d in $devs; do list+=("/dev/$d"); done
    if run mdadm --assemble /dev/$md "${list[@]}"; then
        wait_idle $md 60 || not_ok "$c: md is busy after assembling"
        [[ -z $floor ]] || kernel_lowest "$c" $md "$floor"
        [[ $want == keep ]] && want=$(cat /sys/block/$md/md/dev-${devs%% *}/offset)
        grown_to "$c" $md $new "$want" "$why"
        md_stop $md
    else
        not_ok "$c: mdadm --assemble"
    fi
}
log "D: how low a reshape may move the data"
d_case D1 md4 "vdm vdn vdo" vdp keep \
    "it keeps it, no room below sector $((D1_FLOOR / 512)) either" "$D1_FLOOR"
d_case D2 md5 "vdq vdr vds" vdt keep \
    "it keeps it, no room below sector $((D2_FLOOR / 512)) either"
d_case D4 md6 "vdu vdv vdw" vdx $((D1_FLOOR / 512)) "as raid5ctl moves it"
log "done, $GUEST_FAILS not ok"
[[ $GUEST_FAILS == 0 ]]
