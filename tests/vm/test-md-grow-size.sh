#!/bin/bash
# tests/vm/test-md-grow-size.sh -- the component size grown (mdadm --grow
# --size=max under kernel md; raid5ctl grow --size max here), kernel md the
# oracle, both directions (tests/vm/guest-md-grow-size.sh says what the
# guest does): the same superblocks and bitmap after either, md takes
# ours at the new size with its new space in sync, the plugin serves md's,
# and md's own check confirms where md leaves new space unsynced (a
# bitmap chunk over old and new space) that ours does not.  The bitmap's
# chunk doubling (2 TiB -> 4 TiB sparse members) agrees with md's, and
# so does a bitmap added to an array made without one, and removed
# (mdadm --grow --bitmap=internal|none; raid5ctl grow --bitmap).
# One guest boot; the members are loop devices inside it.
. "${0%/*}/lib.sh"
need_plugin
need_cmds mdadm
need_raid5ctl
head -c $((4 << 20)) /dev/urandom >"$W/pattern"
head -c $((4 << 20)) /dev/urandom >"$W/pattern2"
vm_run -e PAT="$W/pattern" -e PAT2="$W/pattern2" -e PLUGIN="$PLUGIN" \
    -e RAID5CTL="$(readlink -f "$RAID5CTL")" \
    "$VM_TESTS/guest-md-grow-size.sh" ||
    fail "the component size grown (see above)"
say "mdadm --grow --size=max and raid5ctl grow --size max agree; md takes ours in sync"
