# tests/vm/guest-ppl.sh -- in the guest: /dev/vda vdb vdc hold an array with a
# partial parity log made on the host (test-ppl-to-md.sh).  Assemble it, check
# its policy, write $PAT through it, check parity, read it back, stop.

. "${BASH_SOURCE[0]%/*}/guest-lib.sh"

if ! run mdadm --assemble /dev/md0 /dev/vda /dev/vdb /dev/vdc; then
    not_ok "mdadm --assemble of the array made with --consistency-policy ppl"
    exit 1
fi
read -r policy </sys/block/md0/md/consistency_policy
read -r state </sys/block/md0/md/array_state
[[ $policy == ppl ]] && ok "consistency_policy $policy" || not_ok "consistency_policy is $policy, not ppl"
[[ $state == clean || $state == active || $state == write-pending ]] &&
    ok "started ($state), $(cat /sys/block/md0/md/degraded) degraded" || not_ok "array_state $state"
size=$(blockdev --getsize64 /dev/md0)
# Odd pieces: 4 KiB at odd places first, then the pattern in 192 KiB writes
# (three 64K chunks: whole chunks, not whole stripes), all direct.
run dd if="$PAT" of=/dev/md0 bs=4096 count=64 seek=7 skip=7 oflag=direct conv=notrunc &&
    run dd if="$PAT" of=/dev/md0 bs=192K iflag=count_bytes count=$size oflag=direct conv=notrunc &&
    ok "pattern written through md" || not_ok "writing the pattern"
mm=$(md_check md0) && [[ $mm == 0 ]] && ok "md check: mismatch_cnt 0" || not_ok "md check: mismatch_cnt ${mm:-?}"
n=$(stat -c %s "$PAT")
if cmp -n "$n" /dev/md0 "$PAT" >/dev/null 2>&1; then ok "reads back the pattern"; else not_ok "does not read back the pattern"; fi
md_stop md0 && ok "stopped" || not_ok "mdadm --stop"
exit $((GUEST_FAILS > 0))
