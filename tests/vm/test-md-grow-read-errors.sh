#!/bin/bash
# tests/vm/test-md-grow-read-errors.sh -- read errors on an array in the
# middle of a grow, served writable, kernel md as the oracle
# (tests/vm/guest-md-grow-read-errors.sh says what the guest does).
# raid5ctl grows a 3-member array holding a pattern to 4 and is killed
# part way; member 1 is then a disk whose sectors in two data rows, one
# behind the reshape line and one past it, fail reads until written
# (nbdkit-badsector-plugin; over nbd-client in the guest).  md corrects
# a read error in the stripe's own shape (R5_ReWrite), so:
#   B  here: the plugin, the reshape paused as it starts again: the
#      pattern reads back, both sectors are rewritten, member 1 stays in
#      service; the grow then ends and the array checks clean;
#   A  md: assembled, its reshape going on (frozen, md holds reads in the
#      window it moves): the same, both sectors rewritten by the read or
#      the reshape; the reshape ends and md's check finds mismatch_cnt 0.
# One guest boot.
. "${0%/*}/lib.sh"
need_plugin
need_cmds mdadm cmp nbdkit nbdcopy nbdinfo
need_raid5ctl
need_badsector
grown_part_way
# Member 1's data rows: behind the line stripe 5 of the new shape (4
# members, left-symmetric: parity on member 3 - s % 4), past it stripe
# 401 of the old (parity on member 2 - s % 3).  Device sectors, 8 each.
BAD="$((NEW + 5 * CHUNK_SECTORS + 8)) $((OLD + 401 * CHUNK_SECTORS + 16))"
for i in 0 1 2 3; do cp "$W/g$i.img" "$W/a$i.img"; cp "$W/g$i.img" "$W/b$i.img"; done

# B here.
for s in $BAD; do echo "read $s 8"; done >"$W/b1.bad"
badsector_start b1 "$W/b1.img" "$W/b1.bad"
cat >"$W/b-run.sh" <<SH
set -e
ctl () { '$RAID5CTL' --control '$W/b.ctl' "\$@"; }
ctl pause >/dev/null
nbdcopy "\$1" '$W/B.back'
ctl status --json >'$W/B.json'
ctl resume >/dev/null
ctl speed --min 100000 --max 200000 >/dev/null
timeout 60 '$RAID5CTL' --control '$W/b.ctl' grow --wait >/dev/null
ctl status --json >'$W/B.end.json'
SH
nbdkit -U - "$PLUGIN" disk="$W/b0.img" disk="nbd+unix:///?socket=$W/b1.sock" \
    disk="$W/b2.img" disk="$W/b3.img" control="$W/b.ctl" sync-speed-min=500 \
    sync-speed-max=1000 --run "bash '$W/b-run.sh' \"\$uri\"" >"$W/B.serve.log" 2>&1 ||
    { cat "$W/B.serve.log"; fail "B: the plugin mid-grow over member 1's read errors"; }
badsector_stop
cmp -s "$W/B.back" "$W/pattern" || fail "B: $(cmp "$W/B.back" "$W/pattern" | head -n 1)"
state=$(/usr/bin/python3 -c 'import json, sys; a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
print(a["health"], a["grow"]["to_members"], b["health"], b["grow"], b["last_job"]["kind"], b["last_job"]["result"])' \
    "$W/B.json" "$W/B.end.json")
[[ $state == "[UUUU] 4 [UUUU] None reshape 0" ]] || fail "B: the plugin says '$state'"
for s in $BAD; do
    grep -q "^remapped $s 8\$" "$W/b1.badlog" ||
        fail "B: member 1's sector $s was not rewritten: $(cat "$W/b1.badlog")"
done
"$RAID5CTL" check "$W"/b{0,1,2,3}.img >"$W/B.check" 2>&1 ||
    fail "B: check after the grow: $(cat "$W/B.check")"
say "B: the plugin rewrites both sectors, keeps member 1, ends the grow, checks clean"

vm_run -e PAT="$W/pattern" -e BAD="$BAD" -e BADSECTOR="$BADSECTOR" \
    "$VM_TESTS/guest-md-grow-read-errors.sh" "$W/a0.img" "$W/a2.img" "$W/a3.img" ||
    fail "kernel md mid-grow over read errors (see above)"
say "A: md does the same"
