#!/bin/bash
# tests/vm/test-md-readonly.sh -- the plugin's readonly=true against md's
# read-only array (mdadm --assemble --readonly), kernel md as the oracle,
# both directions (tests/vm/guest-md-readonly.sh says what the guest does):
#   M  md -> here: md's array, read-only in md and then here: the pattern
#      reads back, nothing is written; with sectors of member 1 and of
#      member 2 failing reads, in different rows of one 256 KiB request
#      (dm's error target in the guest, nbdkit-badsector-plugin here),
#      both read the pattern, each row from the rest of it, keep both in
#      service and rewrite nothing.
#   R  here -> md: an array raid5ctl made and the plugin left dirty (its
#      server killed after a write): md assembles it read-only without
#      resyncing or writing a byte, and reads what the plugin wrote; the
#      plugin read-only the same, and the array is still dirty after.
# One guest boot.
. "${0%/*}/lib.sh"
need_plugin
need_cmds mdadm cmp nbdkit nbdcopy dmsetup
need_raid5ctl
need_badsector
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "python3-libnbd is not installed"
BAD_AT=96    # member 1's sectors 96..103 past the data offset: array 224..231
# Member 2's sectors 168..175 past the data offset: stripe 1 (its data
# chunk 0), row 5 -- in the same 256 KiB request as member 1's, another
# row: each is read around its own member.
BAD2_AT=168

for i in 0 1 2; do truncate -s 32M "$W/a$i.img" "$W/r$i.img"; done
head -c $((4 << 20)) /dev/urandom >"$W/pattern"
head -c $((4 << 20)) /dev/urandom >"$W/model"
sums () { cksum "$@"; }

# R, on the host: written through the plugin, its server killed at once.
"$RAID5CTL" create --assume-clean --chunk 64K "$W"/r{0,1,2}.img >"$W/create-r.out" 2>&1 ||
    { cat "$W/create-r.out"; fail "raid5ctl create"; }
nbdkit -f -U "$W/r.sock" "$PLUGIN" disk="$W/r0.img" disk="$W/r1.img" \
    disk="$W/r2.img" >"$W/r.nbdkit.log" 2>&1 &
srv=$!
for (( i = 0; i < 100; i++ )); do [[ -S $W/r.sock ]] && break; sleep 0.05; done
/usr/bin/python3 - "nbd+unix:///?socket=$W/r.sock" "$W/model" <<'PY' ||
import nbd, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1])
h.pwrite(open(sys.argv[2], 'rb').read(), 0); h.flush()
h.pwrite(h.pread(4096, 0), 0); h.flush()
PY
    { kill -9 $srv; cat "$W/r.nbdkit.log"; fail "R: writing the model"; }
kill -9 $srv; wait $srv 2>/dev/null || :
"$RAID5CTL" examine "$W/r0.img" | grep -q 'State : active' ||
    fail "R: the array was left clean (the test proves nothing): $("$RAID5CTL" examine "$W/r0.img" | grep State)"

vm_run -e PAT="$W/pattern" -e MODEL="$W/model" -e BAD_AT=$BAD_AT -e BAD2_AT=$BAD2_AT \
    "$VM_TESTS/guest-md-readonly.sh" "$W"/a{0,1,2}.img "$W"/r{0,1,2}.img ||
    fail "kernel md read-only (see above)"
[[ -s $W/M.info ]] || fail "the guest left no M.info"
DOFF='' MD_ACTIVE='' MD_FAILED=''
# shellcheck disable=SC1091
. "$W/M.info"
[[ -n $DOFF && $MD_FAILED == 0 ]] || fail "M: md says: $(tr '\n' ' ' <"$W/M.info")"

# serve_ro NAME DISK...: served readonly=true with a control socket; the
# first 4 MiB of the array into $W/NAME.back, status JSON into
# $W/NAME.json.
serve_ro () {
    local name=$1 ctl=$W/$1.ctl; shift
    nbdkit -U - "$PLUGIN" "$@" readonly=true control="$ctl" --run "
        nbdcopy --requests=4 \"\$uri\" - | head -c $((4 << 20)) >'$W/$name.back' &&
        '$RAID5CTL' --control '$ctl' status --json >'$W/$name.json'" \
        >"$W/$name.serve.log" 2>&1
}

# M here: md's array, members 1 and 2 failing reads at the sectors md's
# did.
before=$(sums "$W"/a{0,1,2}.img)
for i in 1 2; do
    at=$BAD_AT; [[ $i == 2 ]] && at=$BAD2_AT
    echo "read $((DOFF + at)) 8" >"$W/a$i.bad"
    badsector_start a$i "$W/a$i.img" "$W/a$i.bad"
done
serve_ro M disk="$W/a0.img" disk="nbd+unix:///?socket=$W/a1.sock" \
    disk="nbd+unix:///?socket=$W/a2.sock" ||
    { cat "$W/M.serve.log"; fail "M: serving md's array read-only"; }
badsector_stop
for i in 1 2; do
    at=$BAD_AT; [[ $i == 2 ]] && at=$BAD2_AT
    badsector_met "$W/a$i.badlog" $((DOFF + at)) ||
        fail "M: control: no read of member $i's failing sectors failed: $(cat "$W/a$i.badlog")"
done
cmp "$W/pattern" "$W/M.back" || fail "M: the plugin read-only read md's array wrong"
state=$(/usr/bin/python3 -c 'import json, sys; s = json.load(open(sys.argv[1]));
print(s["health"], s["members"][1]["state"], s["members"][2]["state"], s["read_only"])' "$W/M.json")
[[ $state == "[UUU] active active True" ]] ||
    fail "M: after the read errors the plugin says '$state'; md kept members 1 and 2 ($MD_ACTIVE active, $MD_FAILED failed)"
[[ $(sums "$W"/a{0,1,2}.img) == "$before" ]] || fail "M: the plugin wrote to md's members read-only"
say "M: md and the plugin both read around members 1's and 2's read errors read-only, keep them, write nothing"

# R here: the dirty array, read-only, after md's read-only look at it.
before=$(sums "$W"/r{0,1,2}.img)
serve_ro R disk="$W/r0.img" disk="$W/r1.img" disk="$W/r2.img" ||
    { cat "$W/R.serve.log"; fail "R: serving the dirty array read-only"; }
cmp "$W/model" "$W/R.back" || fail "R: the plugin read-only read wrong bytes"
[[ $(sums "$W"/r{0,1,2}.img) == "$before" ]] || fail "R: the plugin wrote to the members read-only"
"$RAID5CTL" examine "$W/r0.img" | grep -q 'State : active' ||
    fail "R: the array is no longer dirty after two read-only looks"
say "R: md and the plugin both serve the dirty array read-only without a resync or a write"
