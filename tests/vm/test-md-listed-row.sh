#!/bin/bash
# tests/vm/test-md-listed-row.sh -- a read error in a row another member
# lists bad, kernel md as the oracle (tests/vm/guest-md-listed-row.sh says
# what the guest does).  md counts a device that lists a stripe_head's
# sectors as failed there (analyse_stripe), so a read error on another
# member of that row makes two: md fails the read and sets a bad block on
# the member that failed it (handle_failed_stripe); it does not compute the
# page from the listed member's bytes, which may be stale.  A raid5ctl
# array holding a pattern; member 2 lists row 2 of stripe 3 (bb-put; it
# holds parity there), then member 1 fails reads of its page in that row
# (nbdkit-badsector-plugin here, dm's error target in the guest):
#   B  here: the read of member 1's 4 KiB there fails, every other byte
#      reads right, member 1 stays in service with the page listed, and it
#      is not rewritten;
#   A  md: the same, and mdadm --examine-badblocks lists on member 1 what
#      the plugin lists.
# One guest boot.
. "${0%/*}/lib.sh"
need_plugin
need_cmds mdadm cmp nbdkit nbdcopy dmsetup
need_raid5ctl
need_badsector
BB_PUT=$(dirname "$RAID5CTL")/../tests/tools/bb-put
[[ -x $BB_PUT ]] || skip "bb-put is not built ($BB_PUT: make check builds it)"
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "python3-libnbd is not installed"
# Stripe 3 (64K chunks, left-symmetric, 3 members): parity on member 2,
# data on member 0 (array bytes 384K..448K) and member 1 (448K..512K).
# Row 2: member sectors 400..407 past the data offset; member 1's page
# there holds array bytes 456K..460K.
ROW_AT=400 LOST=$((456 << 10))

pattern_array a
"$BB_PUT" "$W/a2.img" "$((DOFF + ROW_AT))+8" >/dev/null || fail "bb-put member 2"
for i in 0 1 2; do cp "$W/a$i.img" "$W/b$i.img"; done
cp "$W/pattern" "$W/expect"
dd if=/dev/zero of="$W/expect" bs=4096 seek=$((LOST / 4096)) count=1 conv=notrunc status=none

# B here.
echo "read $((DOFF + ROW_AT)) 8" >"$W/b1.bad"
badsector_start b1 "$W/b1.img" "$W/b1.bad"
nbdkit -U - "$PLUGIN" disk="$W/b0.img" disk="nbd+unix:///?socket=$W/b1.sock" \
    disk="$W/b2.img" control="$W/b.ctl" --run "
    /usr/bin/python3 - \"\$uri\" <<'PY' &&
import nbd, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1])
pat, lost = open('$W/pattern', 'rb').read(), $LOST
try:
    h.pread(4096, lost)
    sys.exit('the 4 KiB of member 1 in the listed row read')
except nbd.Error:
    pass
for off in range(0, len(pat), 4096):
    if off != lost and h.pread(4096, off) != pat[off:off + 4096]:
        sys.exit('array bytes %d+4096 read wrong' % off)
PY
    '$RAID5CTL' --control '$W/b.ctl' status --json >'$W/B.json'" >"$W/B.serve.log" 2>&1 ||
    { cat "$W/B.serve.log"; fail "B: the plugin over a read error in a listed row"; }
badsector_stop
state=$(/usr/bin/python3 -c 'import json, sys; s = json.load(open(sys.argv[1]));
m = s["members"][1]; print(s["health"], m["state"], m["bad_blocks"]["sectors"])' "$W/B.json")
[[ $state == "[UUU] active 8" ]] || fail "B: after the read error the plugin says '$state'"
grep -q '^remapped' "$W/b1.badlog" && fail "B: member 1's page was rewritten: $(cat "$W/b1.badlog")"
mdadm --examine-badblocks "$W/b1.img" | grep ' for ' >"$W/B.bb" ||
    fail "B: mdadm lists no bad block of member 1"
say "B: the read fails, member 1 kept, lists $(tr -s ' ' <"$W/B.bb")"

vm_run -e EXPECT="$W/expect" -e BAD="$((DOFF + ROW_AT))" \
    "$VM_TESTS/guest-md-listed-row.sh" "$W"/a{0,1,2}.img ||
    fail "kernel md over a read error in a listed row (see above)"
mdadm --examine-badblocks "$W/a1.img" | grep ' for ' >"$W/A.bb" ||
    fail "A: md listed no bad block of member 1"
cmp -s "$W/A.bb" "$W/B.bb" ||
    fail "A: md lists '$(tr -s ' ' <"$W/A.bb")', the plugin '$(tr -s ' ' <"$W/B.bb")'"
say "A: md fails the same read and lists the same page on member 1"
