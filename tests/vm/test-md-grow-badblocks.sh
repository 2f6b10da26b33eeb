#!/bin/bash
# tests/vm/test-md-grow-badblocks.sh -- growing an array one of whose
# members lists bad blocks, kernel md as the oracle, both ways.  md grows
# such an array: a device bad in a stripe is not in sync there, so the
# reshape computes its block from the others (raid5.c analyse_stripe), and
# a good write of a listed block clears it (R5_MadeGood).  Members 48 MiB,
# 64K chunks, member 1 listing LOW (a range the grow reaches early) and
# HIGH (one it reaches last), both spoiled on the disk; one guest boot
# (tests/vm/guest-md-grow-badblocks.sh says what the guest does).
#   E  here -> md: raid5ctl create 3, a pattern through the plugin, the two
#      ranges put in member 1's log (bb-put) and spoiled; raid5ctl grow
#      --add killed mid-way: it said it read around member 1, and LOW is
#      no longer listed (its new rows were written), HIGH is.  md
#      assembles, goes on reading around HIGH, and reads the pattern then
#      zeroes; check 0; nothing listed at the end.
#   F  md -> here: mdadm --create 3, the pattern, the two ranges added to
#      member 1's list through sysfs and spoiled, mdadm --grow slowed and
#      stopped mid-way.  Here the plugin serves it read-only mid-grow and
#      reads the pattern (the old shape read around HIGH); raid5ctl grow
#      finishes it, saying it read around member 1; the plugin reads the
#      pattern then zeroes, raid5ctl check finds 0, nothing is listed.
#   G  here -> md: raid5ctl create 3, the pattern, one row's LEN sectors
#      listed on members 1 and 2 and spoiled (md's reshape hangs on such a
#      row); raid5ctl grow --add moves it, saying which array bytes are
#      lost.  md assembles it, fails a read of them and reads every other
#      byte as written; two devices list them; check 0.
. "${0%/*}/lib.sh"
need_plugin
need_raid5ctl
need_cmds mdadm nbdkit nbdinfo nbdcopy cmp
BB_PUT=$(dirname "$RAID5CTL")/../tests/tools/bb-put
[[ -x $BB_PUT ]] || skip "bb-put is not built ($BB_PUT: make check builds it)"
fails=0
bad () { echo "not ok $*"; fails=$((fails + 1)); }
# Member sectors past the data offset: LOW is in the first windows, HIGH
# in rows the reshape writes last (its new rows reach the member's end).
# Both in data chunks of member 1 in the old shape (stripes 3 and 626 of
# 128 sectors, left-symmetric: parity on member 2 - s % 3), so that
# reading them -- not around them -- would show.
LOW_AT=400 HIGH_AT=80128 LEN=16
listed () { "$RAID5CTL" examine --badblocks "$1" 2>&1 | sed -n 's/^ *\([0-9]*\) for \([0-9]*\) sectors$/\1 \2/p'; }
spoil () {
    local f=$1 s
    for s in "${@:2}"; do
        head -c $((LEN * 512)) /dev/zero | tr '\0' 'Z' |
            dd of="$f" bs=512 seek="$s" conv=notrunc status=none
    done
}

# ---- E, on the host: ours, stopped mid-way ----
for i in 0 1 2 3; do truncate -s 48M "$W/e$i.img" "$W/f$i.img"; done
"$RAID5CTL" create --assume-clean --chunk 64K --bitmap none "$W"/e{0,1,2}.img \
    >"$W/create.out" 2>&1 || { cat "$W/create.out"; fail "raid5ctl create"; }
size=$(nbdkit -U - "$PLUGIN" disk="$W"/e{0,1,2}.img --run 'nbdinfo --size "$uri"')
head -c "$size" /dev/urandom >"$W/pattern"
nbdkit -U - "$PLUGIN" disk="$W"/e{0,1,2}.img --run "nbdcopy '$W/pattern' \"\$uri\"" ||
    fail "E: writing the pattern"
D=$(doff_of "$W/e1.img")
LOW=$((D + LOW_AT)) HIGH=$((D + HIGH_AT))
"$BB_PUT" "$W/e1.img" "$LOW+$LEN" "$HIGH+$LEN" || fail "E: bb-put"
spoil "$W/e1.img" "$LOW" "$HIGH"
"$RAID5CTL" grow --add "$W/e3.img" --max-speed 4M "$W"/e{0,1,2}.img >"$W/E.grow" 2>&1 &
kill_past $! 16384 reshape_kib "$W/e0.img"
p=$(reshape_kib "$W/e0.img")
[[ -n $p && $p -gt 0 && $p -lt $((size / 1024)) ]] ||
    bad "E: the grow was not stopped mid-way (reshape at '${p:-none}' KiB)"
say "E: killed with the reshape at ${p:-?} KiB; member 1 lists $(listed "$W/e1.img" | tr '\n' ' ')"
grep -q "reshape: member 1 lists bad blocks in the window" "$W/E.grow" ||
    bad "E: the grow did not say it read around member 1: $(tail -n 2 "$W/E.grow")"
[[ $(listed "$W/e1.img") == "$HIGH $LEN" ]] ||
    bad "E: member 1 lists '$(listed "$W/e1.img" | tr '\n' ' ')', want only HIGH ($HIGH $LEN): LOW's new rows were written"

# ---- G, on the host: ours, grown over a row two members list ----
for i in 0 1 2 3; do truncate -s 48M "$W/g$i.img"; done
"$RAID5CTL" create --assume-clean --chunk 64K --bitmap none "$W"/g{0,1,2}.img \
    >"$W/create.out" 2>&1 || { cat "$W/create.out"; fail "G: raid5ctl create"; }
nbdkit -U - "$PLUGIN" disk="$W"/g{0,1,2}.img --run "nbdcopy '$W/pattern' \"\$uri\"" ||
    fail "G: writing the pattern"
GLOW=$(( $(doff_of "$W/g1.img") + LOW_AT ))
for i in 1 2; do
    "$BB_PUT" "$W/g$i.img" "$GLOW+$LEN" || fail "G: bb-put member $i"
    spoil "$W/g$i.img" "$GLOW"
done
# LOW_AT is old stripe 3 (parity on member 2 - 3 % 3 = 2), data 1 on
# member 1, 16 sectors into its chunk.
LOST=$(( 3 * 131072 + 65536 + (LOW_AT - 3 * 128) * 512 ))
"$RAID5CTL" grow --add "$W/g3.img" "$W"/g{0,1,2}.img >"$W/G.grow" 2>&1 ||
    bad "G: raid5ctl grow over the lost row: $(tail -n 2 "$W/G.grow")"
for ((at = LOST; at < LOST + LEN * 512; at += 4096)); do
    grep -q "reshape: array bytes $at+4096 lost" "$W/G.grow" ||
        bad "G: the grow does not name array bytes $at+4096 lost: $(grep lost "$W/G.grow" | head -n 2)"
done
say "G: grown over the row; $(grep -c 'reshape: array bytes .* lost' "$W/G.grow") pages moved as lost"

# ---- the guest: E finished by md, F made and stopped by md, G read ----
vm_run -e LOW="$LOW" -e HIGH="$HIGH" -e LEN="$LEN" -e LOW_AT=$LOW_AT -e HIGH_AT=$HIGH_AT \
    -e LOST=$LOST -e LOST_LEN=$((LEN * 512)) \
    "$VM_TESTS/guest-md-grow-badblocks.sh" \
    "$W"/e{0,1,2,3}.img "$W"/f{0,1,2,3}.img "$W"/g{0,1,2,3}.img || fails=$((fails + 1))

# ---- F, on the host: md's, stopped mid-way, finished here ----
p=$(reshape_kib "$W/f0.img")
if [[ -z $p ]]; then
    bad "F: md left no reshape under way"
else
    say "F: md stopped with the reshape at $p KiB; member 1 lists $(listed "$W/f1.img" | tr '\n' ' ')"
    FHIGH=$(( $(doff_of "$W/f1.img") + HIGH_AT ))
    listed "$W/f1.img" | grep -q "^$FHIGH " || bad "F: HIGH ($FHIGH) is not listed on member 1 as md stopped"
    nbdkit -U - "$PLUGIN" disk="$W"/f{0,1,2,3}.img readonly=true \
        --run "nbdcopy \"\$uri\" '$W/F.read'" >"$W/F.serve" 2>&1 ||
        bad "F: serving md's array mid-grow: $(tail -n 2 "$W/F.serve")"
    cmp -s -n "$size" "$W/F.read" "$W/pattern" ||
        bad "F: the plugin, read-only mid-grow, reads other bytes than md wrote"
    if ! "$RAID5CTL" grow "$W"/f{0,1,2,3}.img >"$W/F.grow" 2>&1; then
        bad "F: raid5ctl grow did not finish md's reshape: $(tail -n 1 "$W/F.grow")"
    else
        grep -q "reshape: member 1 lists bad blocks in the window" "$W/F.grow" ||
            bad "F: the grow did not say it read around member 1"
        nbdkit -U - "$PLUGIN" disk="$W"/f{0,1,2,3}.img --run "nbdcopy \"\$uri\" '$W/F.after'" ||
            bad "F: serving the grown array"
        if ! cmp -s -n "$size" "$W/F.after" "$W/pattern"; then
            bad "F: the grown array reads other bytes than md wrote"
        elif [[ -n $(tail -c +$((size + 1)) "$W/F.after" | tr -d '\0' | head -c 1) ]]; then
            bad "F: the new space is not zero"
        fi
        "$RAID5CTL" check "$W"/f{0,1,2,3}.img 2>/dev/null | grep -q "mismatch_cnt 0$" ||
            bad "F: raid5ctl check after the grow"
        [[ -z $(listed "$W/f1.img") ]] ||
            bad "F: member 1 still lists '$(listed "$W/f1.img" | tr '\n' ' ')' after the grow wrote every row"
        say "F: finished here: the pattern, zeroes, check 0, nothing listed"
    fi
fi
[[ $fails == 0 ]]
