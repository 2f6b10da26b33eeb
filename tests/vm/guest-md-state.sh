#!/bin/bash
# tests/vm/guest-md-state.sh -- the guest half of test-md-state.sh: kernel
# md's verdict on each story's members (mdadm --assemble, no --run, no
# --force), then on what the plugin left of it.  Results in
# $VM_WORK/md-NAME-before.txt and md-NAME-after.txt; for a story with a
# force marker also md-NAME-force.txt (mdadm --assemble --force on its
# members, whose superblocks stay as md forced them) and
# md-NAME-forced.txt (mdadm --assemble of what the plugin's force=true
# left); md-two-out-survivor.txt: md's own broken array's survivor.
. "${BASH_SOURCE[0]%/*}/guest-lib.sh"

# dev FILE PART: the partition of story member FILE (mK: disk K).
dev () { local k=${1#m}; echo "/dev/vd$(printf "\\x$(printf %x $((97 + k)))")$2"; }

# assemble NAME PART: mdadm --assemble of the story's given members.
assemble () {
    local f devs=()
    for f in $(cat "$VM_WORK/sc/$1/given"); do devs+=("$(dev "$f" "$2")"); done
    mdadm --assemble /dev/md0 "${devs[@]}" >"$VM_WORK/mdadm-$1-$2.log" 2>&1
    nap 1
    [[ -e /sys/block/md0/md/array_state &&
       $(cat /sys/block/md0/md/array_state) != inactive ]]
}

# forced NAME PART: mdadm --assemble --force of the story's members, into
# md-NAME-force.txt; md's forced superblocks stay for the host to read.
forced () {
    local f devs=() out=$VM_WORK/md-$1-force.txt
    for f in $(cat "$VM_WORK/sc/$1/given"); do devs+=("$(dev "$f" "$2")"); done
    mdadm --assemble --force /dev/md0 "${devs[@]}" >>"$VM_WORK/mdadm-$1-$2.log" 2>&1
    nap 1
    if [[ -e /sys/block/md0/md/array_state &&
          $(cat /sys/block/md0/md/array_state) != inactive ]]; then
        echo "start=yes health=$(health)" >"$out"
    else echo start=no >"$out"; fi
    md_stop md0 >/dev/null 2>&1
}

# plain NAME PART: mdadm --assemble (no --force) of what the plugin left
# after force=true, into md-NAME-forced.txt.
plain () {
    local out=$VM_WORK/md-$1-forced.txt
    if assemble "$1" "$2"; then echo "start=yes health=$(health)" >"$out"
    else echo start=no >"$out"; fi
    md_stop md0 >/dev/null 2>&1
}

health () { sed -n 's/.*\(\[[U_]*\]\).*/\1/p' /proc/mdstat | head -n1; }

job () {
    case $(cat /sys/block/md0/md/sync_action) in
        recover) echo rebuild ;; resync) echo resync ;; *) echo idle ;;
    esac
}

before () {
    local name=$1 part=$2 s out
    out=$VM_WORK/md-$name-before.txt
    echo 1000 >/proc/sys/dev/raid/speed_limit_max
    echo 1000 >/proc/sys/dev/raid/speed_limit_min
    if ! assemble "$name" "$part"; then
        echo start=no >"$out"; md_stop md0 >/dev/null 2>&1; return
    fi
    { echo start=yes; echo "health=$(health)"; echo "job=$(job)"; } >"$out"
    s=$(cat "$VM_WORK/sc/$name/readd")
    if [[ $s != - ]]; then
        if mdadm /dev/md0 --re-add "$(dev "m$s" "$part")" >>"$VM_WORK/mdadm-$name-$part.log" 2>&1
        then echo readd=ok; else echo readd=refused; fi >>"$out"
    fi
    cat /proc/mdstat >>"$VM_WORK/mdadm-$name-$part.log"
    md_stop md0
}

after () {
    local name=$1 part=$2 out mm
    out=$VM_WORK/md-$name-after.txt
    echo 2000000 >/proc/sys/dev/raid/speed_limit_max
    echo 200000 >/proc/sys/dev/raid/speed_limit_min
    if ! assemble "$name" "$part"; then echo start=no >"$out"; md_stop md0 >/dev/null 2>&1; return; fi
    wait_idle md0 120
    mm=$(md_check md0) || mm=none
    echo "start=yes health=$(health) mismatch_cnt=$mm" >"$out"
    md_stop md0
}

# What md itself writes into the survivors for a slot it ran without:
# dev_roles[1] of a member after a degraded write (0xffff on kernels with
# MD_DISK_ROLE_SPARE as the fill, 0xfffe on old ones).  Loop devices on
# guest tmpfs files.
role_fill () {
    local i l=() v
    for i in 0 1 2; do truncate -s 32M /tmp/rf$i; l+=("$(losetup -f --show /tmp/rf$i)"); done
    mdadm --create /dev/md1 --run --level=5 --raid-devices=3 --chunk=64 \
        --assume-clean --metadata=1.2 "${l[@]}" >/dev/null 2>&1 &&
        md_stop md1 && mdadm --assemble --run /dev/md1 "${l[0]}" "${l[2]}" >/dev/null 2>&1 &&
        dd if=/dev/urandom of=/dev/md1 bs=4k count=1 oflag=direct status=none &&
        md_stop md1 || { echo "role_fill=error" >"$VM_WORK/md-role-fill.txt"; return; }
    v=$(od -An -tx2 -j $((4096 + 256 + 2)) -N 2 /tmp/rf0 | tr -d ' ')
    echo "role_fill=$v" >"$VM_WORK/md-role-fill.txt"
    losetup -d "${l[@]}"; rm -f /tmp/rf?
}
role_fill

# What md records in the member left when a second member fails the
# array (two-out's story, played by md): its State and Array State after
# the stop.  mdadm --fail of the second returns EBUSY, but md marks it
# faulty all the same (md.c set_disk_faulty: md_error, then MD_BROKEN).
two_out_survivor () {
    local i l=() out=$VM_WORK/md-two-out-survivor.txt
    for i in 0 1 2; do truncate -s 32M /tmp/to$i; l+=("$(losetup -f --show /tmp/to$i)"); done
    if mdadm --create /dev/md1 --run --level=5 --raid-devices=3 --chunk=64 \
            --assume-clean --bitmap=none --metadata=1.2 "${l[@]}" >/dev/null 2>&1 &&
        md_stop md1 && mdadm --assemble --run /dev/md1 "${l[0]}" "${l[1]}" >/dev/null 2>&1 &&
        dd if=/dev/urandom of=/dev/md1 bs=64k count=1 seek=1 oflag=direct status=none; then
        mdadm /dev/md1 --fail "${l[1]}" >/dev/null 2>&1
        dd if=/dev/urandom of=/dev/md1 bs=64k count=1 seek=2 oflag=direct status=none 2>/dev/null
        md_stop md1
        echo "state=$(mdadm --examine "${l[0]}" | sed -n 's/^ *State : //p')" \
             "array=$(mdadm --examine "${l[0]}" | sed -n 's/^ *Array State : \([^ ]*\).*/\1/p')" >"$out"
    else echo "error=create" >"$out"; fi
    losetup -d "${l[@]}"; rm -f /tmp/to?
}
two_out_survivor

# md's rule for a resync cut short by a member failing, with a spare
# ("spare") or without ("none"): what is due once md is idle again, its
# last sync action, the health.  Loop devices on guest tmpfs files; the
# resync slowed down until the member fails.
resync_cut () {
    local i l=() out=$VM_WORK/md-resync-cut-$1.txt md=/sys/block/md1/md due
    for i in 0 1 2 3; do truncate -s 32M /tmp/rc$i; l+=("$(losetup -f --show /tmp/rc$i)"); done
    echo 300 >/proc/sys/dev/raid/speed_limit_max
    echo 300 >/proc/sys/dev/raid/speed_limit_min
    # --force: a resync of the whole array, not mdadm's degraded create
    if ! mdadm --create /dev/md1 --run --force --level=5 --raid-devices=3 --chunk=64 \
            --bitmap=none --metadata=1.2 "${l[@]:0:3}" >/dev/null 2>&1 ||
        { [[ $1 == spare ]] && ! mdadm /dev/md1 --add "${l[3]}" >/dev/null 2>&1; }; then
        echo "error=create" >"$out"
    else
        for ((i = 0; i < 100; i++)); do
            [[ $(cat $md/sync_action) == resync && $(cat $md/resync_start) =~ ^[1-9] ]] && break
            nap 0.1
        done
        mdadm /dev/md1 --fail "${l[1]}" >/dev/null 2>&1
        echo 2000000 >/proc/sys/dev/raid/speed_limit_max
        echo 200000 >/proc/sys/dev/raid/speed_limit_min
        nap 1
        wait_idle md1 120; nap 1; wait_idle md1 120   # a recovery, then the resync
        due=yes; [[ $(cat $md/resync_start) == none ]] && due=no
        echo "resync_due=$due last=$(cat $md/last_sync_action | sed 's/recover/rebuild/') health=$(health)" >"$out"
        md_stop md1
    fi
    losetup -d "${l[@]}"; rm -f /tmp/rc?
}
resync_cut none
resync_cut spare

while read -r g n l c s p name; do
    case $name in
        *-before) before "${name%-before}" $((g + 4))
                  [[ ! -e $VM_WORK/sc/${name%-before}/force ]] ||
                      forced "${name%-before}" $((g + 4)) ;;
        *-forced) plain "${name%-forced}" $((g + 4)) ;;
        *-after) after "${name%-after}" $((g + 4)) ;;
    esac
    log "$name: $(cat "$VM_WORK/md-$name.txt" 2>/dev/null | tr '\n' ' ')"
done <"$VM_WORK/geoms"
exit 0
