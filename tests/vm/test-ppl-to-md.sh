#!/bin/bash
# tests/vm/test-ppl-to-md.sh -- a partial parity log written here, used by
# kernel md.  On the host, raid5ctl create --consistency-policy ppl (64K
# chunk, parity synced) on three 64 MiB images.  In the guest: mdadm
# --assemble (no --run, no --force) must start it whole and clean, with
# consistency_policy ppl; a random pattern is written through /dev/md0
# (partial-stripe writes: md logs their partial parity), a check must find
# mismatch_cnt 0 and the array must read back the pattern; stopped.  On the
# host again: md switched the log to its multiple-log flavour (feature
# 0x800, as ppl_init_child_log does for a 1 MiB area), raid5ctl examine
# prints what mdadm --examine prints, and raid5ctl check of the members
# finds parity in sync.
. "${0%/*}/lib.sh"
need_plugin
need_cmds mdadm cmp
need_raid5ctl

for i in 0 1 2; do truncate -s 64M "$W/p$i.img"; done
"$RAID5CTL" create --consistency-policy ppl --chunk 64K "$W"/p{0,1,2}.img >"$W/create.out" 2>&1 ||
    { cat "$W/create.out"; fail "raid5ctl create --consistency-policy ppl"; }
head -c $((24 << 20)) /dev/urandom >"$W/pattern"
vm_run -e PAT="$W/pattern" "$VM_TESTS/guest-ppl.sh" "$W"/p{0,1,2}.img ||
    fail "kernel md and the array made here (see above)"
mdadm --examine "$W/p0.img" >"$W/mdadm.txt"
grep -q "Feature Map : 0x800" "$W/mdadm.txt" ||
    { cat "$W/mdadm.txt"; fail "md did not switch to multiple logs (feature 0x800)"; }
"$RAID5CTL" examine "$W/p0.img" >"$W/ours.txt" 2>&1 || :
n=$(wc -l <"$W/mdadm.txt")
diff <(sed 1d "$W/mdadm.txt") <(head -n "$n" "$W/ours.txt" | sed 1d) ||
    fail "raid5ctl examine and mdadm --examine differ after md used the log"
"$RAID5CTL" check "$W"/p{0,1,2}.img >"$W/check.out" 2>&1 && grep -q "mismatch_cnt 0$" "$W/check.out" ||
    { cat "$W/check.out"; fail "raid5ctl check after md wrote through the log"; }
say "md assembled and wrote it; here: $(grep -o 'Feature Map : .*' "$W/mdadm.txt"), $(grep mismatch_cnt "$W/check.out")"
