# tests/vm/guest-ext4.sh -- in the guest: nbdkit on a unix socket ->
# nbd-client -> /dev/nbd0 -> ext4 (the mission's path, through the real kernel
# nbd driver).  Run by tests/vm/test-nbd-memory.sh and test-nbd-ext4.sh.
#
# Environment: SCENARIO=memory|raid5; TREE (a file tree on the host, as TREE.tar;
# TREE.md5 lists its checksums); PLUGIN (raid5 only).  raid5 members: /dev/vda vdb vdc.

. "${BASH_SOURCE[0]%/*}/guest-lib.sh"
MNT=/tmp/mnt
mkdir -p $MNT

# mkfs_write STRIDE WIDTH: mkfs.ext4 matching the chunk, mount, copy TREE, umount.
mkfs_write () {
    run mkfs.ext4 -q -F -E stride=$1,stripe_width=$2 /dev/nbd0 || return 1
    dumpe2fs -h /dev/nbd0 2>/dev/null | grep -q "RAID stripe width: *$2\$" ||
        { echo "# mkfs.ext4 did not record stripe_width=$2"; return 1; }
    run mount /dev/nbd0 $MNT || return 1
    run tar -C $MNT -xf "$TREE.tar" || { umount $MNT; return 1; }
    run umount $MNT
}

# write_more DIR: one more copy of TREE into DIR on the file system.
write_more () {
    run mount /dev/nbd0 $MNT || return 1
    mkdir -p "$MNT/$1" && run tar -C "$MNT/$1" -xf "$TREE.tar" || { umount $MNT; return 1; }
    run umount $MNT
}

# fsck_verify [DIR...]: e2fsck -fn must be clean; then mount read-only and check
# the copy of TREE in each DIR (default: the root) against TREE.md5.
fsck_verify () {
    local d rc=0
    run e2fsck -fn /dev/nbd0 || return 1
    run mount -o ro /dev/nbd0 $MNT || return 1
    for d in "${@:-.}"; do
        (cd "$MNT/$d" && run md5sum -c --quiet "$TREE.md5") || { echo "# checksums differ in $d"; rc=1; }
    done
    [[ -L $MNT/link && $(readlink $MNT/link) == big/odd.bin ]] || { echo "# symlink lost"; rc=1; }
    umount $MNT
    return $rc
}

# fsck_verify_write DIRS... NEW: fsck_verify DIRS, then write_more NEW.
fsck_verify_write () {
    local n=$# dirs=("${@:1:$#-1}")
    fsck_verify "${dirs[@]}" && write_more "${!n}"
}

drop_caches () { sync; blockdev --flushbufs /dev/nbd0; echo 3 >/proc/sys/vm/drop_caches; }

# step NAME COMMAND...: ok/not ok line for one step.
step () {
    local name=$1; shift
    log "$name"
    if "$@"; then ok "$name"; else not_ok "$name"; fi
}

memory_scenario () {
    nbd_up memory 1 memory 128M || { not_ok "memory: attach"; return; }
    step "memory: mkfs.ext4 + write tree" mkfs_write 16 32
    drop_caches
    step "memory: e2fsck + checksums" fsck_verify
    nbd_down || not_ok "memory: nbdkit log clean"
}

# raid5_session NAME CONNS "PLUGIN ARGS" STEP-COMMAND...: one nbdkit + nbd-client
# session (a new server each time, so data comes back from the members).
raid5_session () {
    local name=$1 conns=$2 args=$3; shift 3
    # shellcheck disable=SC2086
    if ! nbd_up "${name%%:*}" "$conns" "$PLUGIN" $args; then not_ok "$name: serve + attach ($args, -C $conns)"; return 1; fi
    step "$name" "$@"
    # The members are block devices served through io_uring.
    [[ $(ls -l /proc/$NBDKIT_PID/fd | grep -c 'anon_inode:\[io_uring\]') -gt 0 ]] ||
        not_ok "$name: nbdkit has no io_uring instance"
    nbd_down || not_ok "$name: nbdkit log clean"
}

# Each session is a new nbdkit + nbd-client, so data comes back from the members.
raid5_scenario () {
    local d=disk=/dev/vda m=metadata=none
    local healthy="$d disk=/dev/vdb disk=/dev/vdc $m"
    local degraded="$d disk=missing disk=/dev/vdc $m"
    # chunk 64K: stride 16 blocks, stripe_width 2 x 16; 512K: 128 and 256.
    raid5_session "64K buffered: mkfs + write" 1 "$healthy chunk=64K direct=false" \
        mkfs_write 16 32
    raid5_session "64K direct -C 4: e2fsck + checksums, write more" 4 "$healthy chunk=64K direct=true" \
        fsck_verify_write . multi
    raid5_session "64K vdb missing: e2fsck + checksums (degraded reads), write more (degraded)" 1 \
        "$degraded chunk=64K direct=true" fsck_verify_write . multi degraded
    raid5_session "64K vdb missing -C 4: e2fsck + all checksums" 4 "$degraded chunk=64K direct=false" \
        fsck_verify . multi degraded
    raid5_session "512K direct: mkfs + write" 1 "$healthy direct=true" mkfs_write 128 256
    raid5_session "512K buffered -C 4: e2fsck + checksums" 4 "$healthy direct=false" fsck_verify
}

case ${SCENARIO:-} in
    memory) memory_scenario ;;
    raid5) raid5_scenario ;;
    *) echo "guest-ext4.sh: SCENARIO must be memory or raid5"; exit 2 ;;
esac
log "done, $GUEST_FAILS not ok"
[[ $GUEST_FAILS == 0 ]]
