#!/bin/bash
# tests/vm/test-md-create-missing.sh -- an array created with one slot
# "missing" (mdadm --create's degraded create), kernel md the oracle, both
# directions (tests/vm/guest-md-create-missing.sh says what the guest
# does): for no bitmap, an internal bitmap and a partial parity log,
# raid5ctl create writes what mdadm --create writes (mdadm --examine and
# the superblock bytes), md starts ours degraded and clean, and after
# raid5ctl rebuild fills slot 1 -- of ours and of md's array -- md
# assembles it whole with nothing to recover and mismatch_cnt 0.
# One guest boot; the members are loop devices inside it.
. "${0%/*}/lib.sh"
need_plugin
need_cmds mdadm
need_raid5ctl
head -c $((4 << 20)) /dev/urandom >"$W/pattern"
vm_run -e PAT="$W/pattern" -e RAID5CTL="$(readlink -f "$RAID5CTL")" \
    "$VM_TESTS/guest-md-create-missing.sh" ||
    fail "an array created with a slot missing (see above)"
say "mdadm --create and raid5ctl create with 'missing' agree; md takes ours, raid5ctl rebuilds both"
