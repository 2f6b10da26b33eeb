#!/bin/bash
# tests/vm/test-md-badblocks.sh -- md's bad-block log, kernel md as the
# oracle, both directions (tests/vm/guest-md-badblocks.sh says what the
# guest does):
#   A  md -> here: bad blocks added to a member through sysfs, written out
#      by md; raid5ctl examine --badblocks prints what mdadm
#      --examine-badblocks prints, the plugin refuses the array naming the
#      member; md reads around them in device sectors (spoiled listed
#      sectors read right, a spoiled unlisted one wrong: the control).
#   B  here -> md: raid5ctl create on the host; in the guest md writes a
#      pattern, bb-put (raid/badblocks.c's encoder) writes a list into a
#      member's log; mdadm --examine-badblocks prints it as raid5ctl does
#      and as it was written, md loads it (sysfs) and reads around it.
#   C  where mdadm puts the log next to a partial parity log: mdadm
#      --create --consistency-policy=ppl in the guest, raid5ctl create
#      --consistency-policy ppl on the host, 32 MiB members: the same
#      Data Offset, PPL and Bad Block Log lines.
# One guest boot.
. "${0%/*}/lib.sh"
need_plugin
need_cmds mdadm cmp
need_raid5ctl
BB_PUT=$(dirname "$RAID5CTL")/../tests/tools/bb-put
[[ -x $BB_PUT ]] || skip "bb-put is not built ($BB_PUT: make check builds it)"

for i in 0 1 2; do
    truncate -s 32M "$W/a$i.img" "$W/b$i.img" "$W/c$i.img" "$W/x$i.img"
done
"$RAID5CTL" create --assume-clean --chunk 64K "$W"/b{0,1,2}.img >"$W/create-b.out" 2>&1 ||
    { cat "$W/create-b.out"; fail "raid5ctl create"; }
"$RAID5CTL" create --assume-clean --chunk 64K --consistency-policy ppl \
    "$W"/x{0,1,2}.img >"$W/create-x.out" 2>&1 ||
    { cat "$W/create-x.out"; fail "raid5ctl create --consistency-policy ppl"; }
head -c $((4 << 20)) /dev/urandom >"$W/pattern"
# What md_bb_add makes of the guest's ranges: 3048+600 cut at 512 blocks,
# 5048+1 and 5049+3 joined.
want=$'2148 8\n3048 512\n3560 88\n5048 4'
vm_run -e PAT="$W/pattern" -e RAID5CTL="$(readlink -f "$RAID5CTL")" \
    -e BB_PUT="$(readlink -f "$BB_PUT")" -e PLUGIN="$PLUGIN" -e "WANT_OURS=$want" \
    "$VM_TESTS/guest-md-badblocks.sh" "$W"/a{0,1,2}.img "$W"/b{0,1,2}.img \
    "$W"/c{0,1,2}.img || fail "kernel md and the bad-block log (see above)"

# C: mdadm's placement next to a PPL, and ours.
for k in 'Data Offset' 'PPL' 'Bad Block Log'; do
    theirs=$(mdadm --examine "$W/c0.img" | sed -n "s/^ *$k : //p")
    ours=$(mdadm --examine "$W/x0.img" | sed -n "s/^ *$k : //p")
    [[ -n $theirs && $theirs == "$ours" ]] ||
        fail "C: $k: mdadm wrote '$theirs', raid5ctl '$ours'"
done
say "C: with a PPL both put the log at $(mdadm --examine "$W/x0.img" | sed -n 's/^ *Bad Block Log : .* at offset //p')"
# B's member on the host too: the host's mdadm reads what the guest's did.
diff <(mdadm --examine-badblocks "$W/b1.img") <("$RAID5CTL" examine --badblocks "$W/b1.img") ||
    fail "B: raid5ctl examine --badblocks and mdadm --examine-badblocks differ on the host"
say "A, B, C: md and raid5ctl agree on the bad-block log both ways"
