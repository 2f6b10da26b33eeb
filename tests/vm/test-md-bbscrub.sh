#!/bin/bash
# tests/vm/test-md-bbscrub.sh -- check, repair and resync over a row a
# member's bad-block log lists, kernel md as the oracle, both ways
# (tests/vm/guest-md-bbscrub.sh says what the guest does).  md counts a
# device that lists a stripe_head's sectors failed there (analyse_stripe);
# a sync -- check, repair or resync alike -- with one device failed in a
# stripe computes its block from the rest and writes it
# (handle_parity_checks5), and the good write clears the entry
# (R5_MadeGood); with two failed it leaves the row (handle_failed_sync).
# A raid5ctl array holding a pattern; member 1 lists row 2 of stripe 3
# (bb-put), its page there zeroed (stale).  Five copies of it:
#   c  a check;  r  a repair;  s  a resync (the superblocks made dirty);
#   t  a check, member 2 listing the same row too (two in the row);
#   w  a check, member 1 having failed a write (md's WriteErrorSeen: md
#      skips writes to its listed blocks): in the guest set through sysfs
#      (dev-vdb/state write_error), here by a client write that member 1
#      (through nbdkit-badsector-plugin) fails elsewhere, recorded.
#   A  md in the guest runs each;  B  here the plugin runs the check
#      (served, raid5ctl --control check), raid5ctl repair runs the repair
#      and the resync (offline: a repair of a dirty array is its resync).
# Both: c, r and s rewrite member 1's page from its row (it holds the
# pattern again) and list nothing after, mismatch_cnt 0; t leaves both
# listed and the page stale, and so does w on member 1.  Each member's
# data area ends the same byte for byte under md and here (but w's).
# One guest boot.
. "${0%/*}/lib.sh"
need_plugin
need_cmds mdadm cmp nbdkit nbdcopy
need_raid5ctl
need_badsector
BB_PUT=$(dirname "$RAID5CTL")/../tests/tools/bb-put
[[ -x $BB_PUT ]] || skip "bb-put is not built ($BB_PUT: make check builds it)"
# Stripe 3 (64K chunks, left-symmetric, 3 members): parity on member 2,
# member 1's data is array bytes 448K..512K; row 2 is member sectors
# 400..407 past the data offset, array bytes 456K..460K on member 1.
ROW_AT=400 PAGE_AT=$((456 << 10))

pattern_array base
BAD=$((DOFF + ROW_AT))
"$BB_PUT" "$W/base1.img" "$BAD+8" >/dev/null || fail "bb-put member 1"
dd if=/dev/zero of="$W/base1.img" bs=512 seek=$BAD count=8 conv=notrunc status=none

# dirty IMG: the superblock says the array stopped uncleanly
# (resync_offset 0), its checksum made again.
dirty () {
    /usr/bin/python3 - "$1" <<'EOF'
import struct, sys
with open(sys.argv[1], 'r+b') as f:
    f.seek(4096); sb = bytearray(f.read(4096))
    struct.pack_into('<Q', sb, 208, 0)
    sb[216:220] = b'\0\0\0\0'
    n = 256 + 2 * struct.unpack_from('<I', sb, 220)[0]
    acc = sum(struct.unpack_from('<%dI' % (n // 4), sb, 0))
    struct.pack_into('<I', sb, 216, ((acc & 0xffffffff) + (acc >> 32)) & 0xffffffff)
    f.seek(4096); f.write(sb)
EOF
}
for set in c r s t w; do
    for side in A B; do
        for i in 0 1 2; do cp "$W/base$i.img" "$W/$side$set$i.img"; done
        [[ $set == t ]] && { "$BB_PUT" "$W/${side}t2.img" "$BAD+8" >/dev/null || fail "bb-put member 2"; }
        [[ $set == s ]] && for i in 0 1 2; do dirty "$W/${side}s$i.img"; done
    done
done

# listed IMG: its bad-block list, one "SECTOR for N sectors" a line.
listed () { mdadm --examine-badblocks "$1" | sed -n 's/^ *\([0-9]* for [0-9]* sectors\)$/\1/p'; }
page () { dd if="$1" bs=512 skip=$BAD count=8 status=none | cmp -s - "$W/want"; }
dd if="$W/pattern" bs=4096 skip=$((PAGE_AT / 4096)) count=1 status=none >"$W/want"
# judge SIDE: each set's listing and page as md's rule has them.
judge () {
    local side=$1 set
    for set in c r s; do
        [[ -z $(listed "$W/$side${set}1.img") ]] ||
            fail "$side$set: member 1 still lists $(listed "$W/$side${set}1.img")"
        page "$W/$side${set}1.img" || fail "$side$set: member 1's page was not rewritten from its row"
    done
    [[ $(listed "$W/${side}t1.img") == "$BAD for 8 sectors" &&
       $(listed "$W/${side}t2.img") == "$BAD for 8 sectors" ]] ||
        fail "${side}t: members 1 and 2 list '$(listed "$W/${side}t1.img")' and '$(listed "$W/${side}t2.img")'"
    page "$W/${side}t1.img" && fail "${side}t: member 1's page was written though two members list the row"
    listed "$W/${side}w1.img" | grep -qx "$BAD for 8 sectors" ||
        fail "${side}w: member 1 lists '$(listed "$W/${side}w1.img")'"
    page "$W/${side}w1.img" && fail "${side}w: member 1's page was written though it failed a write"
    say "$side: check, repair and resync rewrote member 1's page and cleared it; the row two list, and the page of a member that failed a write, were left"
}

# B here.
for set in c t; do
    nbdkit -U - "$PLUGIN" disk="$W/B${set}0.img" disk="$W/B${set}1.img" \
        disk="$W/B${set}2.img" control="$W/b.ctl" \
        --run "'$RAID5CTL' --control '$W/b.ctl' check --wait" >"$W/B$set.out" 2>&1 ||
        { cat "$W/B$set.out"; fail "B$set: the plugin's check"; }
    grep -q 'mismatch_cnt 0$' "$W/B$set.out" || fail "B$set: $(cat "$W/B$set.out")"
done
grep -q '^8 sectors a member listed bad rewritten' "$W/Bc.out" ||
    fail "Bc: the check does not say it rewrote the page: $(cat "$W/Bc.out")"
grep -q '^1 stripes not wholly checked' "$W/Bt.out" ||
    fail "Bt: the check does not say it skipped the row: $(cat "$W/Bt.out")"
for set in r s; do
    "$RAID5CTL" repair "$W"/B${set}{0,1,2}.img >"$W/B$set.out" 2>&1 ||
        { cat "$W/B$set.out"; fail "B$set: raid5ctl repair"; }
    grep -q 'mismatch_cnt 0$' "$W/B$set.out" || fail "B$set: $(cat "$W/B$set.out")"
done
grep -q 'this repair was its resync' "$W/Bs.out" || fail "Bs: not a resync: $(cat "$W/Bs.out")"
# w: member 1 behind a server that fails writes of its page 2 of stripe
# 0 (array bytes 72K..76K); a client write there is recorded, member 1
# marked as having failed a write; then the check.
echo "write $((DOFF + 16)) 8" >"$W/Bw1.bad"
badsector_start Bw1 "$W/Bw1.img" "$W/Bw1.bad"
nbdkit -U - "$PLUGIN" disk="$W/Bw0.img" disk="nbd+unix:///?socket=$W/Bw1.sock" \
    disk="$W/Bw2.img" control="$W/b.ctl" --run "
    /usr/bin/python3 -c 'import nbd, sys; h = nbd.NBD(); h.connect_uri(sys.argv[1]);
h.pwrite(bytes(4096), 72 << 10); h.flush()' \"\$uri\" &&
    '$RAID5CTL' --control '$W/b.ctl' check --wait" >"$W/Bw.out" 2>&1 ||
    { cat "$W/Bw.out"; fail "Bw: the write and the check"; }
badsector_stop
grep -q '^2 stripes not wholly checked' "$W/Bw.out" ||
    fail "Bw: the check does not say it left both rows (the one recorded, the one listed): $(cat "$W/Bw.out")"
judge B

vm_run "$VM_TESTS/guest-md-bbscrub.sh" "$W"/A{c,r,s,t,w}{0,1,2}.img ||
    fail "kernel md's check, repair and resync over a listed row (see above)"
judge A

# Each member's data area, md's against ours.
for set in c r s t; do
    for i in 0 1 2; do
        cmp -s <(tail -c +$((DOFF * 512 + 1)) "$W/A$set$i.img") \
            <(tail -c +$((DOFF * 512 + 1)) "$W/B$set$i.img") ||
            fail "$set: member $i's data area differs between md and here"
    done
done
say "each member's data area is the same under md and here"
