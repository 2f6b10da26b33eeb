#!/bin/bash
# tests/vm/test-md-replace.sh -- hot replace (md's want_replacement,
# mdadm --replace), kernel md as the oracle, both ways.  Members: 48 MiB
# image files, 64K chunks, one guest boot.
#   A  here -> md: raid5ctl create 3, random data through the plugin,
#      raid5ctl replace --slot 1 --with m3; md assembles the three current
#      members (m3 in slot 1) and reads the data, check 0; given the old
#      member too, md leaves it out (non-fresh).
#   B  stopped here, finished by md: the same, the replace killed (-9)
#      mid-way (m3's superblock: "Replacement device 1", a recovery offset
#      between 0 and the end); md assembles all four, takes m3 as slot 1's
#      replacement, goes on copying, and puts m3 in slot 1; the data reads
#      back, check 0.
#   C  stopped by md, finished here: in the guest mdadm --create 3, the
#      pattern written, mdadm --add m3, mdadm --replace m1 --with m3
#      slowed down, then mdadm --stop mid-way.  On the host raid5ctl
#      replace goes on with it; m3 holds slot 1, member-check finds every
#      byte where md puts it, raid5ctl check finds 0, the plugin serves the
#      pattern.
#   D  here -> md, the slot's member failing mid-replace: served, replace
#      slot 1 onto m3, held past stripe 100, slot 1 failed, new data
#      written below the copy's point, resumed: m3 takes slot 1 from the
#      copy's point (as md: see E) and is rebuilt; md assembles m0, m2, m3
#      and reads the data, check 0.
#   E  md -> here, the same in md: mdadm --replace m1 --with m3 slowed,
#      then --fail m1 mid-way: md goes on from the copy's point with m3 in
#      slot 1 (the rule D follows), stopped mid-way; on the host raid5ctl
#      rebuild goes on from m3's recovery offset, check 0, the pattern.
. "${0%/*}/lib.sh"
need_plugin
need_raid5ctl
need_cmds nbdinfo nbdcopy cmp mdadm
t0=$SECONDS
MEMBER_CHECK=$(dirname "$RAID5CTL")/../tests/integration/member-check
[[ -x $MEMBER_CHECK ]] || skip "member-check is not built ($MEMBER_CHECK)"
fails=0
bad () { echo "not ok $*"; fails=$((fails + 1)); }

# mk CASE: four 48 MiB members CASE-m0..3, a 3-member array of the first
# three with random data all over (CASE.pattern, the array's bytes).
mk () {
    local c=$1 i size
    for i in 0 1 2 3; do truncate -s 48M "$W/$c-m$i"; done
    "$RAID5CTL" create --chunk 64K --bitmap none "$W/$c-m"{0,1,2} >/dev/null 2>&1 ||
        { bad "$c: raid5ctl create"; return 1; }
    size=$(nbdkit -U - "$PLUGIN" disk="$W/$c-m"{0,1,2} --run 'nbdinfo --size "$uri"')
    head -c "$size" /dev/urandom >"$W/$c.pattern"
    nbdkit -U - "$PLUGIN" disk="$W/$c-m"{0,1,2} --run "nbdcopy '$W/$c.pattern' \"\$uri\"" ||
        { bad "$c: writing through the plugin"; return 1; }
}
recovery_sectors () { { mdadm --examine "$1" 2>/dev/null || :; } | sed -n 's/^ *Recovery Offset : \([0-9]*\) sectors/\1/p'; }

if mk A; then
    "$RAID5CTL" replace --slot 1 --with "$W/A-m3" "$W/A-m"{0,1,2} >"$W/A.rep" 2>&1 ||
        bad "A: raid5ctl replace: $(tail -n 1 "$W/A.rep")"
fi
if mk B; then
    "$RAID5CTL" replace --slot 1 --with "$W/B-m3" --max-speed 4M "$W/B-m"{0,1,2} >"$W/B.rep" 2>&1 &
    kill_past $! 16384 recovery_sectors "$W/B-m3"
    p=$(recovery_sectors "$W/B-m3")
    role=$(mdadm --examine "$W/B-m3" 2>/dev/null | sed -n 's/^ *Device Role : //p')
    if [[ -n $p && $p -gt 0 && $role == "Replacement device 1" ]]; then
        say "B: killed with the copy at sector $p ($role)"
    else
        bad "B: the replace was not stopped mid-way (recovery offset '${p:-none}', role '$role')"
    fi
fi
if mk D; then
    nbdkit -f -U "$W/D.sock" "$PLUGIN" disk="$W/D-m"{0,1,2} control="$W/D.ctl" \
        sync-speed-min=2000 sync-speed-max=2000 >"$W/D.log" 2>&1 &
    dpid=$!
    for ((i = 0; i < 100; i++)); do [[ -S $W/D.ctl ]] && break; sleep 0.05; done
    ctl_d () { "$RAID5CTL" --control "$W/D.ctl" "$@" >/dev/null; }
    json_d () { "$RAID5CTL" --control "$W/D.ctl" status --json |
                    /usr/bin/python3 -c "import json, sys; s = json.load(sys.stdin); print($1)"; }
    ctl_d replace 1 "$W/D-m3" || bad "D: raid5ctl replace"
    for ((i = 0; i < 300; i++)); do
        [[ $(json_d 's["job"]["done_stripes"]') -gt 100 ]] && break
        sleep 0.05
    done
    ctl_d pause && ctl_d fail 1 || bad "D: pause and fail"
    head -c $((4 * 1048576)) /dev/urandom >"$W/D.new"
    nbdcopy "$W/D.new" "nbd+unix:///?socket=$W/D.sock" || bad "D: writing while slot 1 is out"
    dd if="$W/D.new" of="$W/D.pattern" conv=notrunc status=none
    ctl_d resume && ctl_d speed --max 200000 || bad "D: resume"
    for ((i = 0; i < 600; i++)); do
        [[ $(json_d 's["job"]["kind"] + s["health"]') == "idle[UUU]" ]] && break
        sleep 0.1
    done
    kill $dpid; wait $dpid
    from=$(sed -n 's/.*takes the slot, rebuilt from stripe \([0-9]*\) on.*/\1/p' "$W/D.log")
    role=$(mdadm --examine "$W/D-m3" 2>/dev/null | sed -n 's/^ *Device Role : //p')
    if [[ ${from:-0} -gt 100 && $role == "Active device 1" ]]; then
        say "D: m3 took slot 1 rebuilt from stripe $from on ($role)"
    else
        bad "D: m3 did not take slot 1 from the copy's point (from '${from:-none}', role '$role'): $(tail -n 3 "$W/D.log")"
    fi
fi
for c in C E; do
    for i in 0 1 2 3; do truncate -s 48M "$W/$c-m$i"; done
    head -c $((96 * 1048576)) /dev/urandom >"$W/$c.pattern"
done
say "host, before: $((SECONDS - t0))s"; t0=$SECONDS
vm_run "$VM_TESTS/guest-md-replace.sh" "$W"/{A,B,C,D,E}-m{0,1,2,3} || fails=$((fails + 1))
say "guest: $((SECONDS - t0))s"; t0=$SECONDS

# C: md's replace, stopped; go on with it here.
p=$(recovery_sectors "$W/C-m3")
role=$(mdadm --examine "$W/C-m3" 2>/dev/null | sed -n 's/^ *Device Role : //p')
say "C: md stopped with the copy at sector ${p:-?} ($role)"
if [[ $role != "Replacement device 1" || -z $p ]]; then
    bad "C: md left no replace under way (role '$role')"
elif ! "$RAID5CTL" replace "$W/C-m"{0,1,2,3} >"$W/C.rep" 2>&1; then
    bad "C: raid5ctl replace did not finish md's replace: $(tail -n 1 "$W/C.rep")"
else
    grep -q "resumed at stripe [1-9]" "$W/C.rep" || bad "C: not resumed: $(cat "$W/C.rep")"
    [[ $(mdadm --examine "$W/C-m3" | sed -n 's/^ *Device Role : //p') == "Active device 1" ]] ||
        bad "C: m3 is not active device 1 after the replace"
    doff=$(mdadm --examine "$W/C-m0" | sed -n 's/^ *Data Offset : \([0-9]*\) sectors/\1/p')
    "$MEMBER_CHECK" --chunk 64K --data-offset $((doff * 512)) "$W/C-m"{0,3,2} >"$W/C.mc" 2>&1 ||
        bad "C: member-check: $(tail -n 2 "$W/C.mc")"
    "$RAID5CTL" check "$W/C-m"{0,3,2} 2>/dev/null | grep -q "mismatch_cnt 0$" ||
        bad "C: raid5ctl check after the replace"
    nbdkit -U - "$PLUGIN" disk="$W/C-m"{0,3,2} --run "nbdcopy \"\$uri\" '$W/C.back'" ||
        bad "C: serving the array"
    n=$(( $(stat -c %s "$W/C.back") / 1048576 * 1048576 ))  # md's dd wrote whole MiB
    cmp -n "$n" "$W/C.back" "$W/C.pattern" || bad "C: the plugin reads other data than md wrote"
    say "C: finished here, $n bytes as md wrote them"
fi
# E: md's replace, its source failed, stopped mid-recovery; go on here.
p=$(recovery_sectors "$W/E-m3")
role=$(mdadm --examine "$W/E-m3" 2>/dev/null | sed -n 's/^ *Device Role : //p')
say "E: md stopped with m3 at sector ${p:-?} ($role)"
if [[ $role != "Active device 1" || -z $p || $p == 0 ]]; then
    bad "E: md left no recovery of slot 1 under way on m3 (role '$role', recovery offset '${p:-none}')"
elif ! "$RAID5CTL" rebuild --slot 1 "$W/E-m"{0,2,3} >"$W/E.reb" 2>&1; then
    bad "E: raid5ctl rebuild did not finish md's recovery: $(tail -n 1 "$W/E.reb")"
else
    grep -q "resumed at stripe [1-9]" "$W/E.reb" || bad "E: not resumed: $(cat "$W/E.reb")"
    "$RAID5CTL" check "$W/E-m"{0,3,2} 2>/dev/null | grep -q "mismatch_cnt 0$" ||
        bad "E: raid5ctl check after the rebuild"
    nbdkit -U - "$PLUGIN" disk="$W/E-m"{0,3,2} --run "nbdcopy \"\$uri\" '$W/E.back'" ||
        bad "E: serving the array"
    n=$(( $(stat -c %s "$W/E.back") / 1048576 * 1048576 ))
    cmp -n "$n" "$W/E.back" "$W/E.pattern" || bad "E: the plugin reads other data than md wrote"
    say "E: finished here from md's point, $n bytes as md wrote them"
fi
say "host, after: $((SECONDS - t0))s"
[[ $fails == 0 ]]
