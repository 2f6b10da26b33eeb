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
#   C  as A with no backup file: raid5ctl keeps the critical section's
#      backup on the new member, where mdadm keeps it without a file
#      (Grow.c reshape_prepare_fdlist); in the guest mdadm --assemble,
#      given no file, finds it there (Grow_restart), restores it, md
#      finishes: the data, check 0.
#   D  as B with no backup file (mdadm stopped past its critical
#      section, its backup no longer needed): raid5ctl grow with no file
#      finishes md's reshape: member-check, check 0, the pattern served.
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

# stopped_here CASE BACKUP-ARGS...: raid5ctl create 3, random data, the
# grow crashed after the first critical window's new stripes were written
# over its old bytes, before the line passed them.
stopped_here () {
    local c=$1 size; shift
    "$RAID5CTL" create --chunk 64K --bitmap none --data-offset 64K "$W/$c-m"{0,1,2} >/dev/null 2>&1 ||
        bad "$c: raid5ctl create"
    size=$(nbdkit -U - "$PLUGIN" disk="$W/$c-m"{0,1,2} --run 'nbdinfo --size "$uri"')
    head -c "$size" /dev/urandom >"$W/$c.pattern"
    nbdkit -U - "$PLUGIN" disk="$W/$c-m"{0,1,2} --run "nbdcopy '$W/$c.pattern' \"\$uri\"" ||
        bad "$c: writing through the plugin"
    RAID5_TEST_CRASH=grow-moved@1 "$RAID5CTL" grow --add "$W/$c-m3" "$@" \
        "$W/$c-m"{0,1,2} >"$W/$c.grow" 2>&1 && bad "$c: the grow was not stopped"
    say "$c: stopped at reshape position $(mdadm --examine "$W/$c-m0" | sed -n "s/^ *Reshape pos'n : //p")"
}

# finish_here CASE BACKUP-ARGS...: md's grow, stopped in the guest, goes
# on here and ends: member-check, check 0, the pattern served.
finish_here () {
    local c=$1 pos doff used stripes n; shift
    pos=$(mdadm --examine "$W/$c-m0" 2>/dev/null | sed -n "s/^ *Reshape pos'n : \([0-9]*\).*/\1/p")
    say "$c: md stopped with the reshape at ${pos:-none} KiB"
    if [[ -z $pos ]]; then
        bad "$c: md left no reshape under way"
    elif ! "$RAID5CTL" grow "$@" "$W/$c-m"{0,1,2,3} >"$W/$c.grow" 2>&1; then
        bad "$c: raid5ctl grow did not finish md's grow: $(tail -n 1 "$W/$c.grow")"
    else
        grep -q "restored the grow's critical section" "$W/$c.grow" &&
            say "$c: restored mdadm's backup of the critical section"
        doff=$(mdadm --examine "$W/$c-m0" | sed -n 's/^ *Data Offset : \([0-9]*\) sectors/\1/p')
        used=$(mdadm --examine "$W/$c-m0" | sed -n 's/^ *\(Used\|Avail\) Dev Size : \([0-9]*\) .*/\2/p' | tail -n 1)
        stripes=$(( used * 512 / CHUNK ))
        "$MEMBER_CHECK" --chunk 64K --data-offset $((doff * 512)) --stripes "$stripes" \
            "$W/$c-m"{0,1,2,3} >"$W/$c.mc" 2>&1 || bad "$c: member-check: $(tail -n 2 "$W/$c.mc")"
        "$RAID5CTL" check "$W/$c-m"{0,1,2,3} 2>/dev/null | grep -q "mismatch_cnt 0$" ||
            bad "$c: raid5ctl check after the grow"
        nbdkit -U - "$PLUGIN" disk="$W/$c-m"{0,1,2,3} --run "nbdcopy \"\$uri\" '$W/$c.back'" ||
            bad "$c: serving the grown array"
        n=$(cat "$W/$c.written" 2>/dev/null || echo 0)
        [[ $n -gt 0 ]] && cmp -n "$n" "$W/$c.back" "$W/$c.pattern" ||
            bad "$c: the plugin reads other data than md wrote ($n bytes)"
        say "$c: finished here, $n bytes as md wrote them"
    fi
}

for i in 0 1 2 3; do truncate -s 32M "$W/A-m$i" "$W/B-m$i" "$W/C-m$i" "$W/D-m$i"; done
stopped_here A --backup-file "$W/A.bk"
say "A: the backup file $(stat -c %s "$W/A.bk") bytes"
stopped_here C
grep -q "goes through the backup on the new member" "$W/C.grow" ||
    bad "C: the grow does not say its backup is on the new member: $(cat "$W/C.grow")"
head -c $((64 * 1048576)) /dev/urandom >"$W/B.pattern"
cp "$W/B.pattern" "$W/D.pattern"
say "host, before: $((SECONDS - t0))s"; t0=$SECONDS
vm_run "$VM_TESTS/guest-md-grow-backup.sh" "$W"/{A,B,C,D}-m{0,1,2,3} || fails=$((fails + 1))
say "guest: $((SECONDS - t0))s"; t0=$SECONDS

say "B: md's backup file: $(head -c 16 "$W/B.bk" 2>/dev/null | tr -d '\0')"
finish_here B --backup-file "$W/B.bk"
finish_here D
say "host, after: $((SECONDS - t0))s"
[[ $fails == 0 ]]
