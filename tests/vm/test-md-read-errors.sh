#!/bin/bash
# tests/vm/test-md-read-errors.sh -- a read error md cannot correct, kernel
# md as the oracle, both directions (tests/vm/guest-md-read-errors.sh says
# what the guest does).  A raid5ctl array holding a pattern, copied twice
# (A for md, B for the plugin); each is run degraded (member 0 out) while
# member 1's 4 KiB row 2 of stripe 3 fails reads: with no member to
# compute it from, md records the page in member 1's bad-block log and
# fails only the reads that need it, member 1 kept in service
# (raid5_end_read_request: set_bad, rdev_set_badblocks).
#   B  here: the plugin, member 1 behind nbdkit-badsector-plugin, member 0
#      failed by hand: the lost 4 KiB pieces fail, every other byte reads right,
#      member 1 stays active with the page in its log;
#   A  md: member 1 behind dm's error target, assembled without member 0:
#      the same 4 KiB fails, the rest reads right, member 1 stays active;
#      md's log of member 1 lists what ours lists (mdadm
#      --examine-badblocks);
#   here -> md: md assembles B and fails the listed row, reads the rest;
#   md -> here: the plugin serves A (after C) and does the same.
#   C  a rebuild of member 0 over the row member 1 lists: md counts a
#      device failed in a stripe_head it lists and does not read it there
#      (analyse_stripe), so the row cannot be computed and is recorded on
#      the device being recovered (handle_failed_sync); md recovers A onto
#      a blank disk, raid5ctl rebuilds B's copy (member 1's page still
#      failing reads) onto a blank file: both go to the end and list the
#      same page on the new member; each array then reads as before (the
#      two lost pieces fail), md over ours and the plugin over md's.
# One guest boot.
. "${0%/*}/lib.sh"
need_plugin
need_cmds mdadm cmp nbdkit nbdcopy dmsetup
need_raid5ctl
need_badsector
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "python3-libnbd is not installed"
# Stripe 3 (64K chunks, left-symmetric, 3 members): parity on member 2,
# data on member 0 (array bytes 384K..448K) and member 1 (448K..512K).
# Member 1's row 2 (member sectors 400..407 past the data offset) holds
# array bytes 456K..460K; with member 0 out, its row 2 (392K..396K) is
# computed from member 1's and is lost with it.
BAD_AT=400 LOST="$((392 << 10)) $((456 << 10))"

pattern_array a
for i in 0 1 2; do cp "$W/a$i.img" "$W/b$i.img"; done
# What md's dd (conv=noerror,sync) reads: the pattern, the lost 4 KiB as
# zeros.
cp "$W/pattern" "$W/expect"
for x in $LOST; do
    dd if=/dev/zero of="$W/expect" bs=4096 seek=$((x / 4096)) count=1 conv=notrunc status=none
done

# reads.py URI: every byte of the pattern reads right but the lost
# 4 KiB pieces, whose reads fail.
cat >"$W/reads.py" <<PY
import nbd, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1])
pat, lost = open("$W/pattern", "rb").read(), [${LOST// /, }]
for x in lost:
    try:
        h.pread(4096, x)
        sys.exit("the lost 4 KiB at %d read" % x)
    except nbd.Error:
        pass
for off in range(0, len(pat), 4096):
    if off not in lost and h.pread(4096, off) != pat[off:off + 4096]:
        sys.exit("array bytes %d+4096 read wrong" % off)
PY

# B here: the plugin, degraded, member 1's row failing reads.
echo "read $((DOFF + BAD_AT)) 8" >"$W/b.bad"
badsector_start b1 "$W/b1.img" "$W/b.bad"
nbdkit -U - "$PLUGIN" disk="$W/b0.img" disk="nbd+unix:///?socket=$W/b1.sock" \
    disk="$W/b2.img" control="$W/b.ctl" --run "
    '$RAID5CTL' --control '$W/b.ctl' fail 0 >/dev/null &&
    /usr/bin/python3 '$W/reads.py' \"\$uri\" &&
    '$RAID5CTL' --control '$W/b.ctl' status --json >'$W/B.json'" >"$W/B.serve.log" 2>&1 ||
    { cat "$W/B.serve.log"; fail "B: the plugin degraded over member 1's read error"; }
badsector_stop
state=$(/usr/bin/python3 -c 'import json, sys; s = json.load(open(sys.argv[1]));
m = s["members"][1]; print(s["health"], m["state"], m["bad_blocks"]["sectors"])' "$W/B.json")
[[ $state == "[_UU] active 8" ]] || fail "B: after the read error the plugin says '$state'"
mdadm --examine-badblocks "$W/b1.img" | grep ' for ' >"$W/B.bb" ||
    fail "B: mdadm lists no bad block of member 1"
say "B: the plugin fails the lost rows only, keeps member 1, lists $(tr -s ' ' <"$W/B.bb")"

# C here: B's copy rebuilt offline onto a blank member 0, member 1's page
# still failing reads (a read of it would fail the rebuild).
for i in 1 2; do cp "$W/b$i.img" "$W/c$i.img"; done
truncate -s 32M "$W/c0.img" "$W/g.img"
badsector_start c1 "$W/c1.img" "$W/b.bad"
"$RAID5CTL" rebuild --slot 0 --new "$W/c0.img" "nbd+unix:///?socket=$W/c1.sock" \
    "$W/c2.img" >"$W/C.rebuild.log" 2>&1 ||
    { cat "$W/C.rebuild.log"; fail "C: the rebuild over member 1's listed row"; }
badsector_stop
grep -q "^read-error" "$W/c1.badlog" 2>/dev/null &&
    fail "C: the rebuild read member 1's listed page: $(cat "$W/c1.badlog")"
mdadm --examine-badblocks "$W/c0.img" | grep ' for ' >"$W/C.bb" ||
    fail "C: mdadm lists no bad block of the rebuilt member 0: $(cat "$W/C.rebuild.log")"
say "C: the rebuild goes past member 1's listed row, lists $(tr -s ' ' <"$W/C.bb") on member 0"

vm_run -e EXPECT="$W/expect" -e BAD_AT=$BAD_AT -e DOFF="$DOFF" \
    "$VM_TESTS/guest-md-read-errors.sh" "$W"/a{0,1,2}.img "$W"/b{0,1,2}.img \
    "$W/g.img" "$W"/c{0,1,2}.img ||
    fail "kernel md degraded over a read error (see above)"
[[ -s $W/A.bb ]] || fail "A: md listed no bad block of member 1"
cmp -s "$W/A.bb" "$W/B.bb" ||
    fail "A: md lists '$(tr -s ' ' <"$W/A.bb")', the plugin '$(tr -s ' ' <"$W/B.bb")'"
say "A: md lists the same page in member 1's log"

# C: md's recovery lists on its new member what the rebuild lists on ours.
[[ -s $W/AC.bb ]] || fail "C: md listed no bad block on the member it recovered"
cmp -s "$W/AC.bb" "$W/C.bb" ||
    fail "C: md lists '$(tr -s ' ' <"$W/AC.bb")' on its new member, the plugin '$(tr -s ' ' <"$W/C.bb")'"
say "C: md's recovery lists the same page on its new member"

# md -> here: md's array A, as md left it (recovered onto g.img).
nbdkit -U - "$PLUGIN" disk="$W/g.img" disk="$W/a1.img" disk="$W/a2.img" \
    control="$W/a.ctl" --run "
    /usr/bin/python3 '$W/reads.py' \"\$uri\" &&
    '$RAID5CTL' --control '$W/a.ctl' status --json >'$W/A.json'" >"$W/A.serve.log" 2>&1 ||
    { cat "$W/A.serve.log"; fail "md -> here: the plugin over md's recovered array"; }
state=$(/usr/bin/python3 -c 'import json, sys; s = json.load(open(sys.argv[1]));
print(s["health"], *("%s %s" % (m["state"], m["bad_blocks"]["sectors"]) for m in s["members"][:2]))' "$W/A.json")
[[ $state == "[UUU] active 8 active 8" ]] || fail "md -> here: the plugin says '$state'"
say "md -> here: the plugin fails md's listed row only, the rest reads right"
