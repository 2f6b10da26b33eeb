#!/bin/bash
# tests/vm/test-md-grow-readonly.sh -- read errors on an array read-only in
# the middle of a grow, kernel md as the oracle
# (tests/vm/guest-md-grow-readonly.sh says what the guest does).  raid5ctl
# grows a 3-member array holding a pattern to 4, killed part way (the
# superblocks keep the reshape position); then members 1 and 2 fail reads
# in data rows behind the reshape line and past it:
#   B  here: the plugin serves a copy readonly=true, the two members behind
#      nbdkit-badsector-plugin: the pattern reads back, each failed row
#      from the rest of it, every member stays in service (status
#      [UUUU]), each bad sector was met, no member byte changes;
#   A  md: mdadm --assemble --readonly of another copy, members 1 and 2
#      behind device-mapper tables failing the same sectors (dm's error
#      target): md reads the pattern, keeps all four (4 active, 0 failed)
#      and leaves the reshape where it was.
# One guest boot.
. "${0%/*}/lib.sh"
need_plugin
need_cmds mdadm cmp nbdkit nbdcopy nbdinfo dmsetup
need_raid5ctl
need_badsector
grown_part_way
# Data rows: behind the line (4 members, left-symmetric: parity on member
# 3 - s % 4) stripe 5 holds data on member 1, stripe 7 on member 2; past
# it (3 members: parity on member 2 - s % 3) stripe 401 on member 1,
# stripe 400 on member 2.  Device sectors, 8 each.
BAD1="$((NEW + 5 * CHUNK_SECTORS + 8)) $((OLD + 401 * CHUNK_SECTORS + 16))"
BAD2="$((NEW + 7 * CHUNK_SECTORS + 24)) $((OLD + 400 * CHUNK_SECTORS + 40))"
for i in 0 1 2 3; do cp "$W/g$i.img" "$W/a$i.img"; cp "$W/g$i.img" "$W/b$i.img"; done

# B here.
before=$(cksum "$W"/b{0,1,2,3}.img)
for s in $BAD1; do echo "read $s 8"; done >"$W/b1.bad"
for s in $BAD2; do echo "read $s 8"; done >"$W/b2.bad"
badsector_start b1 "$W/b1.img" "$W/b1.bad"
badsector_start b2 "$W/b2.img" "$W/b2.bad"
nbdkit -U - "$PLUGIN" disk="$W/b0.img" disk="nbd+unix:///?socket=$W/b1.sock" \
    disk="nbd+unix:///?socket=$W/b2.sock" disk="$W/b3.img" readonly=true \
    control="$W/b.ctl" --run "
    nbdcopy \"\$uri\" '$W/B.back' &&
    '$RAID5CTL' --control '$W/b.ctl' status --json >'$W/B.json'" >"$W/B.serve.log" 2>&1 ||
    { cat "$W/B.serve.log"; fail "B: the plugin read-only mid-grow over read errors"; }
badsector_stop
cmp -s "$W/B.back" "$W/pattern" || fail "B: $(cmp "$W/B.back" "$W/pattern" | head -n 1)"
state=$(/usr/bin/python3 -c 'import json, sys; s = json.load(open(sys.argv[1]));
print(s["health"], s["grow"]["from_members"], s["grow"]["to_members"])' "$W/B.json")
[[ $state == "[UUUU] 3 4" ]] || fail "B: the plugin says '$state'"
for x in "1 $BAD1" "2 $BAD2"; do
    set -- $x
    i=$1; shift
    for s in "$@"; do
        badsector_met "$W/b$i.badlog" "$s" || fail "B: member $i's sector $s was never read: $(cat "$W/b$i.badlog")"
    done
done
[[ $(cksum "$W"/b{0,1,2,3}.img) == "$before" ]] || fail "B: a member changed read-only"
say "B: the plugin reads the pattern around four read errors, keeps every member, writes nothing"

vm_run -e PAT="$W/pattern" -e BAD1="$BAD1" -e BAD2="$BAD2" -e RESHAPE_KIB="$P" \
    "$VM_TESTS/guest-md-grow-readonly.sh" "$W"/a{0,1,2,3}.img ||
    fail "kernel md read-only mid-grow over read errors (see above)"
say "A: md does the same"
