#!/bin/bash
# tests/vm/test-md-badblocks.sh -- md's bad-block log, kernel md as the
# oracle, both directions (tests/vm/guest-md-badblocks.sh says what the
# guest does):
#   A  md -> here: bad blocks added to a member through sysfs, written out
#      by md; raid5ctl examine --badblocks prints what mdadm
#      --examine-badblocks prints; md reads around them in device sectors
#      (spoiled listed sectors read right, a spoiled unlisted one wrong:
#      the control); the plugin, serving a copy of the disks, does the
#      same, and rewrites the listed sectors it read (the member never
#      failed a write) and clears them from the log, as md does.
#   B  here -> md: raid5ctl create on the host; in the guest md writes a
#      pattern, bb-put (raid/badblocks.c's encoder) writes a list into a
#      member's log; mdadm --examine-badblocks prints it as raid5ctl does
#      and as it was written, md loads it (sysfs) and reads around it; the
#      plugin reads around it on a copy, as in A.
#   C  where mdadm puts the log next to a partial parity log: mdadm
#      --create --consistency-policy=ppl in the guest, raid5ctl create
#      --consistency-policy ppl on the host, 32 MiB members: the same
#      Data Offset, PPL and Bad Block Log lines.
#   D  here -> md, written while serving: the plugin writes the pattern to
#      a raid5ctl array whose member 1 (through a server that fails writes
#      of sector 2148) cannot take it there; the plugin records the page
#      in that member's log (the member stays in service); mdadm lists it,
#      md loads it and reads those array sectors from the rest of the row.
# One guest boot.
. "${0%/*}/lib.sh"
need_plugin
need_cmds mdadm cmp
need_raid5ctl
BB_PUT=$(dirname "$RAID5CTL")/../tests/tools/bb-put
[[ -x $BB_PUT ]] || skip "bb-put is not built ($BB_PUT: make check builds it)"
need_badsector
need_cmds nbdkit nbdcopy
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "python3-libnbd is not installed"

for i in 0 1 2; do
    truncate -s 32M "$W/a$i.img" "$W/b$i.img" "$W/c$i.img" "$W/x$i.img" "$W/d$i.img"
done
"$RAID5CTL" create --assume-clean --chunk 64K "$W"/b{0,1,2}.img >"$W/create-b.out" 2>&1 ||
    { cat "$W/create-b.out"; fail "raid5ctl create"; }
"$RAID5CTL" create --assume-clean --chunk 64K --consistency-policy ppl \
    "$W"/x{0,1,2}.img >"$W/create-x.out" 2>&1 ||
    { cat "$W/create-x.out"; fail "raid5ctl create --consistency-policy ppl"; }
head -c $((4 << 20)) /dev/urandom >"$W/pattern"

# D, on the host: the pattern written through the plugin, member 1 behind
# a server whose sector 2148 fails writes.  The plugin writes each failed
# page again alone, and records the ones that fail again: one 4 KiB page
# holds sector 2148 (2144..2151), the next its neighbours (2152..2159).
"$RAID5CTL" create --assume-clean --chunk 64K "$W"/d{0,1,2}.img >"$W/create-d.out" 2>&1 ||
    { cat "$W/create-d.out"; fail "raid5ctl create (D)"; }
echo "write 2148 8" >"$W/d.bad"
badsector_start d1 "$W/d1.img" "$W/d.bad"
nbdkit -U - "$PLUGIN" disk="$W/d0.img" disk="nbd+unix:///?socket=$W/d1.sock" \
    disk="$W/d2.img" --run "nbdcopy '$W/pattern' \"\$uri\"" >"$W/d.serve.log" 2>&1 ||
    { cat "$W/d.serve.log"; fail "D: writing the pattern with a sector that fails writes"; }
badsector_stop
grep -q '^write-error 2144 8$' "$W/d1.badlog" || fail "D: the failed page was not written again alone: $(cat "$W/d1.badlog")"
grep -q 'recorded in its md bad-block log' "$W/d.serve.log" ||
    fail "D: the plugin did not say it recorded the bad block: $(cat "$W/d.serve.log")"
want_d=$'2144 16'
got_d=$(mdadm --examine-badblocks "$W/d1.img" | sed -n 's/^ *\([0-9]*\) for \([0-9]*\) sectors$/\1 \2/p')
[[ $got_d == "$want_d" ]] || fail "D: the plugin's log holds '$got_d', want '$want_d'"
say "D: the plugin recorded $(echo $got_d) in member 1's log while serving"
# What md_bb_add makes of the guest's ranges: 3048+600 cut at 512 blocks,
# 5048+1 and 5049+3 joined.
want=$'2148 8\n3048 512\n3560 88\n5048 4'
vm_run -e PAT="$W/pattern" -e RAID5CTL="$(readlink -f "$RAID5CTL")" \
    -e BB_PUT="$(readlink -f "$BB_PUT")" -e PLUGIN="$PLUGIN" -e "WANT_OURS=$want" \
    -e "WANT_D=$want_d" \
    "$VM_TESTS/guest-md-badblocks.sh" "$W"/a{0,1,2}.img "$W"/b{0,1,2}.img \
    "$W"/c{0,1,2}.img "$W"/d{0,1,2}.img || fail "kernel md and the bad-block log (see above)"

# A and B served here, from the guest's copies (spoiled listed sectors
# 2148..2155 of member 1, spoiled unlisted 2068): array sectors 228..235
# read as the pattern, 148 not (the control); reading the listed ones
# rewrote them (the member never failed a write), so the log lists them
# no more, and still lists the rest (3048...).
cat >"$W/read-around.py" <<'PY'
import nbd, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1])
pat = open(sys.argv[2], 'rb').read()
if h.pread(4096, 228 * 512) != pat[228 * 512:236 * 512]:
    sys.exit("array sectors 228..235 (listed on member 1) read wrong")
if h.pread(512, 148 * 512) == pat[148 * 512:149 * 512]:
    sys.exit("control: array sector 148 (spoiled, not listed) read right")
PY
for x in A B; do
    set -- "$W/$x"-vd?.img
    [[ $# == 3 ]] || fail "$x: the guest kept $# copies"
    nbdkit -U - "$PLUGIN" disk="$1" disk="$2" disk="$3" --run \
        "/usr/bin/python3 '$W/read-around.py' \"\$uri\" '$W/pattern'" >"$W/$x.serve.log" 2>&1 ||
        { cat "$W/$x.serve.log"; fail "$x: the plugin's reads around md's bad blocks"; }
    left=$(mdadm --examine-badblocks "$2" | sed -n 's/^ *\([0-9]*\) for \([0-9]*\) sectors$/\1 \2/p')
    grep -q '^2148 ' <<<"$left" && fail "$x: 2148 is still listed after the plugin rewrote it: $(echo $left)"
    grep -q '^3048 ' <<<"$left" || fail "$x: the log lost entries the plugin did not read: $(echo $left)"
    say "$x: the plugin read around md's bad blocks, rewrote the ones it read; left: $(echo $left)"
done

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
