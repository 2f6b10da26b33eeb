# tests/vm/guest-md-metadata.sh -- in the guest: kernel md and the plugin's
# md v1.2 metadata, both directions (run by tests/vm/test-md-metadata.sh).
#
# Disks: /dev/vda vdb vdc = array A (raid5ctl create on the host, ext4 with
# $TREE written through the plugin); vdd vde vdf = array B1, vdg vdh vdi =
# array B2 (made here by plain mdadm --create, B2 with an internal bitmap).
#
# MODE=first:  A: mdadm --assemble, no resync starts, check: mismatch_cnt
#              0, e2fsck -fn clean, $TREE intact.  (Skipped if $VM_WORK/A
#              does not exist.)  B1, B2: mdadm --create --level=5
#              --raid-devices=3 with mdadm's defaults (512K chunk,
#              left-symmetric, its data offset), wait for the initial
#              recovery, mkfs.ext4, $TREE in /tree, stop.
# MODE=second: B1, B2 (the host has served them, checked /tree and written
#              $TREE again into /more): mdadm --assemble, no resync starts,
#              check: mismatch_cnt 0, e2fsck -fn clean, /tree and /more
#              intact.

. "${BASH_SOURCE[0]%/*}/guest-lib.sh"
MNT=/tmp/mnt
mkdir -p $MNT

# assemble_check NAME MD DEVS... : assemble, expect no resync and no
# degradation, a check with mismatch_cnt 0, e2fsck -fn clean.
assemble_check () {
    local name=$1 md=$2 mm deg action; shift 2
    if ! run mdadm --assemble /dev/$md "$@"; then not_ok "$name: mdadm --assemble"; return 1; fi
    nap 1
    read -r deg </sys/block/$md/md/degraded
    read -r action </sys/block/$md/md/sync_action
    if [[ $deg != 0 || $action != idle ]]; then
        not_ok "$name: assembled with degraded=$deg sync_action=$action (expected 0, idle: clean members)"
        dmesg | grep -E "md/raid|$md|bitmap" | tail -n 8 | sed 's/^/#   /'
    else
        ok "$name: mdadm --assemble: all 3 members, no resync"
    fi
    if ! mm=$(md_check $md); then
        not_ok "$name: md check did not run"
    elif [[ $mm != 0 ]]; then
        not_ok "$name: md check: mismatch_cnt $mm"
    else
        ok "$name: md check: mismatch_cnt 0"
    fi
    if run e2fsck -fn /dev/$md; then ok "$name: e2fsck -fn clean"; else not_ok "$name: e2fsck -fn"; fi
}

# verify NAME MD DIR...: mount read-only, every DIR matches $TREE.md5.
verify () {
    local name=$1 md=$2 d rc=0; shift 2
    run mount -o ro /dev/$md $MNT || { not_ok "$name: mount -o ro"; return; }
    for d in "$@"; do
        if (cd "$MNT/$d" && run md5sum -c --quiet "$TREE.md5"); then
            ok "$name: files in /$d intact"
        else
            not_ok "$name: files in /$d differ"
        fi
    done
    umount $MNT
}

stop () { md_stop "$1" || not_ok "$2: mdadm --stop"; }

# create NAME MD BITMAP DEVS...: plain mdadm --create (defaults), ext4, $TREE.
create () {
    local name=$1 md=$2 bitmap=$3; shift 3
    log "$name: mdadm --create"
    if ! run mdadm --create /dev/$md --run --level=5 --raid-devices=3 --bitmap=$bitmap "$@"; then
        not_ok "$name: mdadm --create"; return
    fi
    wait_idle $md 120 || not_ok "$name: the initial recovery did not end"
    if run mkfs.ext4 -q -F /dev/$md && run mount /dev/$md $MNT; then
        mkdir $MNT/tree
        run tar -C $MNT/tree -xf "$TREE.tar" || not_ok "$name: tar"
        run umount $MNT || not_ok "$name: umount"
        ok "$name: mdadm --create (defaults, bitmap $bitmap), mkfs.ext4, files written"
        mdadm --examine "$1" >"$VM_WORK/$name.examine" 2>&1
    else
        not_ok "$name: mkfs.ext4 or mount"
    fi
    stop $md "$name"
}

case ${MODE:-} in
first)
    if [[ -e $VM_WORK/A ]]; then
        log "A: raid5ctl create + ext4 through the plugin -> md"
        if assemble_check A md0 /dev/vda /dev/vdb /dev/vdc; then
            verify A md0 tree
            stop md0 A
        fi
    fi
    create B1 md1 none /dev/vdd /dev/vde /dev/vdf
    create B2 md2 internal /dev/vdg /dev/vdh /dev/vdi
    ;;
second)
    for b in "B1 md1 /dev/vdd /dev/vde /dev/vdf" "B2 md2 /dev/vdg /dev/vdh /dev/vdi"; do
        set -- $b
        [[ -e $VM_WORK/$1.served ]] || { log "$1: skipped (the host failed)"; continue; }
        log "$1: written through the plugin -> md"
        if assemble_check "$@"; then
            verify $1 $2 tree more
            stop $2 $1
        fi
    done
    ;;
*) echo "guest-md-metadata.sh: MODE must be first or second"; exit 2 ;;
esac
log "done, $GUEST_FAILS not ok"
[[ $GUEST_FAILS == 0 ]]
