#!/bin/bash
# tests/vm/test-md-recovery-read-error.sh -- a read error on a member in
# service while member 0 is being rebuilt, kernel md as the oracle
# (tests/vm/guest-md-recovery-read-error.sh says what the guest does).
# md counts a recovering device in sync for a stripe below its
# recovery_offset (raid5.c analyse_stripe), so there a read error on
# another member has one failed device and is corrected (R5_ReWrite, the
# recovered device's bytes used); past it the row has two and cannot be:
# md records the page in that member's bad-block log (set_bad) and fails
# only what needs the row.  A raid5ctl array holding a pattern, copied for
# md (A) and for the plugin (B); member 1 is a disk with bad sectors
# (nbdkit-badsector-plugin: a bad sector reads again once written);
# member 0 is rebuilt onto a blank disk and held part way (md's sync_max:
# 128 stripes, so that md's stripe cache (256 rows of 4 KiB) no longer
# holds stripe 3 and a read of it goes to the disk; the plugin's control
# socket: pause, after its first step of 64); then member 1's row 2 of
# stripe 3 (rebuilt) and row 4 of stripe 249 (not yet) fail reads:
#   - both read the pattern but the two pieces stripe 249's row holds
#     (member 1's and member 0's, computed from it), keep member 1,
#     rewrite its sector in stripe 3 (the disk remaps it) and list only
#     stripe 249's page in its log: mdadm --examine-badblocks prints the
#     same for both.
# One guest boot.
. "${0%/*}/lib.sh"
need_plugin
need_cmds mdadm cmp nbdkit nbdcopy
need_raid5ctl
need_badsector
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "python3-libnbd is not installed"
# Member sectors past the data offset: stripe 3's row 2 (member 1 holds
# array bytes 456K..460K there) and stripe 249's row 4 (64K chunks,
# left-symmetric over 3: parity on member 2, data on members 0 and 1).
BELOW_AT=$((3 * 128 + 16)) ABOVE_AT=$((249 * 128 + 32)) HELD=16384
S=$((249 * 128 << 10))
LOST="$((S + (16 << 10))) $((S + (80 << 10)))"

truncate -s 32M "$W/a0.img" "$W/b0new.img"
pattern_array r 32
cp "$W/r0.img" "$W/b0.img"
for i in 1 2; do cp "$W/r$i.img" "$W/a$i.img"; cp "$W/r$i.img" "$W/b$i.img"; done
BAD_LINES="read $((DOFF + BELOW_AT)) 8
read $((DOFF + ABOVE_AT)) 8"
# What md's dd reads: the first 4 MiB, and stripe 249 (conv=noerror,sync:
# the lost 4 KiB as zeros).
head -c $((4 << 20)) "$W/pattern" >"$W/expect-head"
dd if="$W/pattern" of="$W/expect-row" bs=128K skip=249 count=1 status=none
for x in $LOST; do
    dd if=/dev/zero of="$W/expect-row" bs=4096 seek=$(((x - S) / 4096)) count=1 conv=notrunc status=none
done

# B here: member 0 failed, rebuilt onto b0new.img at 1 MiB/s, paused past
# HELD sectors; then member 1's sectors go bad and the array is read.
cat >"$W/reads.py" <<PY
import nbd, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1])
pat, lost = open("$W/pattern", "rb").read(), [${LOST// /, }]
ranges = [range(0, 4 << 20, 4096), range($S, $S + (128 << 10), 4096)]
for x in lost:
    try:
        h.pread(4096, x)
        sys.exit("the lost 4 KiB at %d read" % x)
    except nbd.Error:
        pass
for off in (o for r in ranges for o in r):
    if off not in lost and h.pread(4096, off) != pat[off:off + 4096]:
        sys.exit("array bytes %d+4096 read wrong" % off)
PY
cat >"$W/b-run.sh" <<SH
set -e
ctl () { '$RAID5CTL' --control '$W/b.ctl' "\$@"; }
done_stripes () {
    ctl status --json | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["job"]["done_stripes"])'
}
ctl fail 0 >/dev/null
ctl rebuild 0 '$W/b0new.img' >/dev/null
for (( i = 0; i < 300; i++ )); do
    (( \$(done_stripes) * 128 >= $HELD )) && break
    sleep 0.1
done
ctl pause >/dev/null
mark=\$(done_stripes)
(( mark * 128 >= $HELD && mark < 249 )) || { echo "paused at stripe \$mark"; exit 1; }
printf '%s\n' "$BAD_LINES" >'$W/b.bad'
/usr/bin/python3 '$W/reads.py' "\$1"
ctl status --json >'$W/B.json'
SH
: >"$W/b.bad"
badsector_start b1 "$W/b1.img" "$W/b.bad"
nbdkit -U - "$PLUGIN" disk="$W/b0.img" disk="nbd+unix:///?socket=$W/b1.sock" \
    disk="$W/b2.img" control="$W/b.ctl" sync-speed-min=500 sync-speed-max=1000 \
    --run "bash '$W/b-run.sh' \"\$uri\"" >"$W/B.serve.log" 2>&1 ||
    { cat "$W/B.serve.log"; fail "B: the plugin rebuilding over member 1's read errors"; }
badsector_stop
state=$(/usr/bin/python3 -c 'import json, sys; s = json.load(open(sys.argv[1]));
m = s["members"][1]; print(s["job"]["kind"], m["state"], m["bad_blocks"]["sectors"])' "$W/B.json")
[[ $state == "rebuild active 8" ]] || fail "B: after the read errors the plugin says '$state'"
grep -q "^remapped $((DOFF + BELOW_AT)) 8\$" "$W/b1.badlog" ||
    fail "B: member 1's sector below the rebuild's mark was not rewritten: $(cat "$W/b1.badlog")"
mdadm --examine-badblocks "$W/b1.img" | grep ' for ' >"$W/B.bb" ||
    fail "B: mdadm lists no bad block of member 1"
say "B: below the mark corrected, past it lost: lists $(tr -s ' ' <"$W/B.bb")"

vm_run -e EXPECT_HEAD="$W/expect-head" -e EXPECT_ROW="$W/expect-row" -e ROW=249 -e HELD=$HELD -e BADSECTOR="$BADSECTOR" \
    -e BELOW="$((DOFF + BELOW_AT))" -e ABOVE="$((DOFF + ABOVE_AT))" \
    "$VM_TESTS/guest-md-recovery-read-error.sh" "$W/a2.img" "$W/a0.img" ||
    fail "kernel md recovering over a read error (see above)"
mdadm --examine-badblocks "$W/a1.img" | grep ' for ' >"$W/A.bb" ||
    fail "A: md listed no bad block of member 1"
cmp -s "$W/A.bb" "$W/B.bb" ||
    fail "A: md lists '$(tr -s ' ' <"$W/A.bb")', the plugin '$(tr -s ' ' <"$W/B.bb")'"
say "A: md corrects below its recovery_offset and lists the same page past it"
