#!/bin/bash
# vm-test: diagnostic (runs when nbd-ext4 fails, or when named)
# tests/vm/test-nbd-memory.sh -- the harness itself, without our plugin: in the
# guest, nbdkit's memory plugin -> nbd-client -> /dev/nbd0 -> mkfs.ext4, write a
# file tree, e2fsck -fn, verify checksums.  If this fails, the VM layer (not the
# plugin) is broken.
. "${0%/*}/lib.sh"
make_tree "$W/tree"
vm_run -e SCENARIO=memory -e TREE="$W/tree" "$VM_TESTS/guest-ext4.sh"
