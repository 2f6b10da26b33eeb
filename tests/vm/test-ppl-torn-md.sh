#!/bin/bash
# tests/vm/test-ppl-torn-md.sh -- stripes torn with our partial parity
# log, recovered by kernel md.  On the host, tests/integration/ppl-torn.py
# makes a clean array with a log (3 x 8 MiB, chunk 16K, every byte known),
# serves it over members that are NBD servers of their own, rewrites the
# first data chunk of random stripes, freezes one member's server and
# kills everything: stripes torn as a power cut tears them.  Checked here
# that the hole is open: with some member Y missing, parity as it is would
# bring back N > 0 second data chunks (never written) wrong (ppl-hole.py;
# torn again, up to 12 times, until it would).  In the guest, with the
# same images:
#   - mdadm --assemble of all three (no --run, no --force): md reads our
#     logs and starts; a check gives mismatch_cnt 0;
#   - copies without Y, mdadm --assemble --run: md starts the dirty
#     degraded array ("with PPL"), recovers from our logs, and every
#     second data chunk reads back its old bytes -- the N included.
. "${0%/*}/lib.sh"
need_plugin
need_cmds mdadm nbdkit /usr/bin/python3
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "needs python3-libnbd"
need_raid5ctl
export RAID5CTL PLUGIN CHUNK=16384
torn=$TOP/tests/integration/ppl-torn.py
seed=${RAID5_SEED:-$(( $(date +%s) % 100000 ))}
say "seed $seed"

/usr/bin/python3 "$torn" golden "$W/t" ppl "$seed" || fail "making the array"
doff=$(mdadm --examine "$W/t/golden0" | sed -n 's/.*Data Offset : \([0-9]*\) sectors.*/\1/p')
[[ -n $doff ]] || fail "no data offset in mdadm --examine"
n=0
for try in $(seq 1 12); do
    x=$(/usr/bin/python3 "$torn" tear "$W/t" $((seed + try))) || fail "tearing"
    read -r y n < <(/usr/bin/python3 "$VM_TESTS/ppl-hole.py" "$CHUNK" $((doff * 512)) \
                    "$W/t/golden.img" "$W"/t/m{0,1,2})
    say "try $try: froze member $x; without member $y, $n second data chunks would come back wrong"
    [[ $n -gt 0 ]] && break
done
[[ $n -gt 0 ]] || fail "12 tries tore nothing the hole would show"
for i in 0 1 2; do cp "$W/t/m$i" "$W/a$i.img"; done
deg=()
for i in 0 1 2; do
    [[ $i == "$y" ]] && continue
    cp "$W/t/m$i" "$W/b$i.img"; deg+=("$W/b$i.img")
done
vm_run -e GOLD="$W/t/golden.img" -e CHUNK="$CHUNK" \
    "$VM_TESTS/guest-ppl-torn.sh" "$W"/a{0,1,2}.img "${deg[@]}" ||
    fail "kernel md and the torn array (see above)"
say "md recovered our logs: mismatch_cnt 0 whole; without member $y every second data chunk right ($n would not be)"
