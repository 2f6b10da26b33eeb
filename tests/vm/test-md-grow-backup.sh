#!/bin/bash
# tests/vm/test-md-grow-backup.sh -- a grow with mdadm's backup file (the
# members have no room before their data to move it), kernel md and
# mdadm as the oracle, both ways.  Members: 32 MiB image files, 64K
# chunks, the data offset 64 KiB (growing 3 -> 4 would move it 192 KiB).
#   A  stopped here, restored by mdadm: raid5ctl create 3, random data,
#      raid5ctl grow --add m3 --backup-file A.bk crashed (RAID5_TEST_CRASH)
#      after the first critical window's new stripes were written over its
#      old bytes, before the line passed them; in the guest mdadm
#      --assemble --backup-file A.bk restores the critical section from
#      this project's file, md finishes the reshape; the data reads back,
#      check 0.
#   B  stopped by md, finished here: in the guest mdadm --create 3 with
#      --data-offset 64K, the pattern written, --add m3, --grow
#      --raid-devices=4 --backup-file B.bk (mdadm moves the critical
#      section itself before it returns) slowed down, --stop.  On the host
#      raid5ctl grow --backup-file B.bk goes on with md's reshape that
#      keeps its data offset (no NEW_OFFSET) and finishes: member-check,
#      check 0, the pattern served.
. "${0%/*}/lib.sh"
need_plugin
need_raid5ctl
need_cmds nbdinfo nbdcopy cmp mdadm
t0=$SECONDS
MEMBER_CHECK=$(dirname "$RAID5CTL")/../tests/integration/member-check
[[ -x $MEMBER_CHECK ]] || skip "member-check is not built ($MEMBER_CHECK)"
fails=0
bad () { echo "not ok $*"; fails=$((fails + 1)); }
CHUNK=65536

for i in 0 1 2 3; do truncate -s 32M "$W/A-m$i" "$W/B-m$i"; done
"$RAID5CTL" create --chunk 64K --bitmap none --data-offset 64K "$W/A-m"{0,1,2} >/dev/null 2>&1 ||
    bad "A: raid5ctl create"
size=$(nbdkit -U - "$PLUGIN" disk="$W/A-m"{0,1,2} --run 'nbdinfo --size "$uri"')
head -c "$size" /dev/urandom >"$W/A.pattern"
nbdkit -U - "$PLUGIN" disk="$W/A-m"{0,1,2} --run "nbdcopy '$W/A.pattern' \"\$uri\"" ||
    bad "A: writing through the plugin"
RAID5_TEST_CRASH=grow-moved@1 "$RAID5CTL" grow --add "$W/A-m3" --backup-file "$W/A.bk" \
    "$W/A-m"{0,1,2} >"$W/A.grow" 2>&1 && bad "A: the grow was not stopped"
say "A: stopped at reshape position $(mdadm --examine "$W/A-m0" | sed -n "s/^ *Reshape pos'n : //p"), the backup $(stat -c %s "$W/A.bk") bytes"
head -c $((64 * 1048576)) /dev/urandom >"$W/B.pattern"
say "host, before: $((SECONDS - t0))s"; t0=$SECONDS
vm_run "$VM_TESTS/guest-md-grow-backup.sh" "$W"/{A,B}-m{0,1,2,3} || fails=$((fails + 1))
say "guest: $((SECONDS - t0))s"; t0=$SECONDS

pos=$(mdadm --examine "$W/B-m0" 2>/dev/null | sed -n "s/^ *Reshape pos'n : \([0-9]*\).*/\1/p")
say "B: md stopped with the reshape at ${pos:-none} KiB; its backup: $(head -c 16 "$W/B.bk" 2>/dev/null | tr -d '\0')"
if [[ -z $pos ]]; then
    bad "B: md left no reshape under way"
elif ! "$RAID5CTL" grow --backup-file "$W/B.bk" "$W/B-m"{0,1,2,3} >"$W/B.grow" 2>&1; then
    bad "B: raid5ctl grow did not finish md's grow: $(tail -n 1 "$W/B.grow")"
else
    grep -q "restored the grow's critical section" "$W/B.grow" &&
        say "B: restored mdadm's backup of the critical section"
    doff=$(mdadm --examine "$W/B-m0" | sed -n 's/^ *Data Offset : \([0-9]*\) sectors/\1/p')
    used=$(mdadm --examine "$W/B-m0" | sed -n 's/^ *\(Used\|Avail\) Dev Size : \([0-9]*\) .*/\2/p' | tail -n 1)
    stripes=$(( used * 512 / CHUNK ))
    "$MEMBER_CHECK" --chunk 64K --data-offset $((doff * 512)) --stripes "$stripes" \
        "$W/B-m"{0,1,2,3} >"$W/B.mc" 2>&1 || bad "B: member-check: $(tail -n 2 "$W/B.mc")"
    "$RAID5CTL" check "$W/B-m"{0,1,2,3} 2>/dev/null | grep -q "mismatch_cnt 0$" ||
        bad "B: raid5ctl check after the grow"
    nbdkit -U - "$PLUGIN" disk="$W/B-m"{0,1,2,3} --run "nbdcopy \"\$uri\" '$W/B.back'" ||
        bad "B: serving the grown array"
    n=$(cat "$W/B.written" 2>/dev/null || echo 0)
    [[ $n -gt 0 ]] && cmp -n "$n" "$W/B.back" "$W/B.pattern" ||
        bad "B: the plugin reads other data than md wrote ($n bytes)"
    say "B: finished here, $n bytes as md wrote them"
fi
say "host, after: $((SECONDS - t0))s"
[[ $fails == 0 ]]
