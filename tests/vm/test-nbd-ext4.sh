#!/bin/bash
# tests/vm/test-nbd-ext4.sh -- the mission's path for real, in the guest: the
# built raid5 plugin serves the guest's block devices /dev/vda vdb vdc (io_uring
# on block devices, direct=true and false) on a unix socket; nbd-client ->
# /dev/nbd0; mkfs.ext4 -E stride,stripe_width matching the chunk; mount, write a
# file tree, umount, e2fsck -fn, serve again and verify every checksum.  Also with
# nbd-client -C 4 (multi-conn) and with one member missing (degraded reads of a
# healthy file system, degraded writes, mkfs on a degraded array).
. "${0%/*}/lib.sh"
need_plugin
make_tree "$W/tree"
for i in 0 1 2; do truncate -s 32M "$W/m$i.img"; done
vm_run -e SCENARIO=raid5 -e TREE="$W/tree" -e PLUGIN="$PLUGIN" \
    "$VM_TESTS/guest-ext4.sh" "$W/m0.img" "$W/m1.img" "$W/m2.img"
