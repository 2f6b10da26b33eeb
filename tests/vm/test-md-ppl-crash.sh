#!/bin/bash
# tests/vm/test-md-ppl-crash.sh -- kernel md's partial parity log, after
# the guest was killed in the middle of writes, recovered here.  In the
# guest md makes a 3-member array with --consistency-policy=ppl (chunk
# 16K, 32 MiB disks), writes a pattern, and rewrites the first data chunk
# of random stripes until the host kills qemu (-9).  On the host:
#   - mdadm --examine says active (dirty), and md's log holds a header
#     with entries (md's multiple-log format, headers one after another);
#   - the plugin recovers from the newest header of each log, the one
#     md's walk finds (compared with a Python walk of the same areas);
#   - the plugin's start on a copy recovers from md's logs ("N entries
#     ... recovered", N > 0); raid5ctl check (which writes nothing) then
#     finds parity in sync;
#   - on copies with each member missing in turn, the plugin starts the
#     dirty degraded array without force, recovers, and every second data
#     chunk (never rewritten) reads back the pattern.
. "${0%/*}/lib.sh"
need_plugin
need_cmds mdadm nbdkit /usr/bin/python3
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "needs python3-libnbd"
need_raid5ctl
CHUNK=16384

for i in 0 1 2; do truncate -s 32M "$W/d$i.img"; done
head -c $((6 << 20)) /dev/urandom >"$W/gold"
VM_TIMEOUT=240 vm_run -e GOLD="$W/gold" -e CHUNK=$CHUNK \
    "$VM_TESTS/guest-md-ppl-write.sh" "$W"/d{0,1,2}.img >"$W/guest.out" 2>&1 &
guest=$!
for ((i = 0; i < 1200; i++)); do
    [[ -s $W/writing ]] && break
    kill -0 $guest 2>/dev/null || { cat "$W/guest.out"; fail "the guest ended before writing"; }
    sleep 0.1
done
[[ -s $W/writing ]] || { pkill -9 -f "raid5vm_work=$W" || :; fail "the guest's writers did not start"; }
sleep 2
pkill -9 -f "raid5vm_work=$W" || fail "no qemu to kill"
wait $guest || :
grep '^ok\|^not ok' "$W/guest.out" | sed 's/^/  guest: /'
grep -q '^not ok' "$W/guest.out" && fail "the guest's part failed"

mdadm --examine "$W/d0.img" >"$W/examine.txt"
grep -q 'State : active' "$W/examine.txt" ||
    { cat "$W/examine.txt"; fail "md's superblock is not active (dirty) after the kill"; }
/usr/bin/python3 - "$W"/d{0,1,2}.img <<'PY' || fail "md left no log entries"
import sys, struct
logged = 0
for slot, path in enumerate(sys.argv[1:]):
    d = open(path, "rb").read(4096 + 8192 + 2048 * 512)
    off, size = struct.unpack_from("<hH", d, 4096 + 96)
    area = d[4096 + off * 512:4096 + (off + size) * 512]
    at, best = 0, None
    while at + 4096 < len(area):
        h = area[at:at + 4096]
        gen, n = struct.unpack_from("<QI", h, 520)
        if n > 148 or (best and best[0] > gen) or h[:512] != b"\xff" * 512:
            break
        best = (gen, n, at)
        at += 4096 + sum(struct.unpack_from("<I", h, 536 + 24 * i + 8)[0] for i in range(n))
    print("  %s: newest log header at %d, generation %d, %d entries" %
          ((path.split("/")[-1],) + ((best[2], best[0], best[1]) if best else (0, 0, 0))))
    if best:
        with open(path.rsplit("/", 1)[0] + "/newest", "a") as f:
            print("slot %d: newest partial parity log header at byte %d of the area, "
                  "generation %d, %d entries" % (slot, best[2], best[0], best[1]), file=f)
    logged += bool(best and best[1])
sys.exit(0 if logged else 1)
PY

# The headers the plugin recovers from are the newest, as md's walk finds
# them (here: the Python walk above).
for i in 0 1 2; do cp "$W/d$i.img" "$W/c$i.img"; done
nbdkit -v -U - "$PLUGIN" disk="$W/c0.img" disk="$W/c1.img" disk="$W/c2.img" --run true >"$W/whole.out" 2>&1 ||
    { tail -n 20 "$W/whole.out"; fail "the plugin does not start the crashed md array"; }
grep -o 'slot [0-9]: newest partial parity log header.*' "$W/whole.out" >"$W/ours-newest"
diff "$W/newest" "$W/ours-newest" ||
    fail "the plugin did not recover from the headers md's walk finds newest"
n=$(sed -n 's/.* \([0-9]*\) entries of its partial parity logs recovered.*/\1/p' "$W/whole.out")
[[ ${n:-0} -gt 0 ]] || { tail -n 20 "$W/whole.out"; fail "no entries of md's logs recovered"; }
"$RAID5CTL" check "$W"/c{0,1,2}.img >"$W/check.out" 2>&1 || :
grep -q 'mismatch_cnt 0$' "$W/check.out" || { cat "$W/check.out"; fail "parity not in sync after recovery"; }
say "whole: $(grep -o '[0-9]* entries of its.*' "$W/whole.out" | head -n1); $(grep -o 'mismatch_cnt.*' "$W/check.out")"

for y in 0 1 2; do
    disks=()
    for i in 0 1 2; do
        cp "$W/d$i.img" "$W/e$i.img"
        if [[ $i == "$y" ]]; then disks+=(disk=missing); else disks+=("disk=$W/e$i.img"); fi
    done
    nbdkit -v -U - "$PLUGIN" "${disks[@]}" --run "/usr/bin/python3 -c '
import nbd, sys
gold, chunk = open(\"$W/gold\", \"rb\").read(), $CHUNK
h = nbd.NBD(); h.connect_uri(sys.argv[1])
bad = [s for s in range(len(gold) // (2 * chunk))
       if h.pread(chunk, s * 2 * chunk + chunk) != gold[s * 2 * chunk + chunk:(s + 1) * 2 * chunk]]
print(\"%d second data chunks wrong\" % len(bad))
sys.exit(1 if bad else 0)
' \"\$uri\"" >"$W/deg$y.out" 2>&1 ||
        { grep -v 'debug: .*: \(pread\|pwrite\|flush\|zero\|trim\)' "$W/deg$y.out" | tail -n 20
          fail "without member $y: not the pattern"; }
    say "without member $y: $(grep -o '[0-9]* entries of its partial parity logs recovered, [0-9]* not usable' "$W/deg$y.out"); $(grep -o "[0-9]* second data chunks wrong" "$W/deg$y.out")"
done
