#!/usr/bin/env bash
# Members in memory (tmpfs) are read and written through one mapping of
# each (io/memmap.c) where the range has no hole, and with pread/pwrite
# elsewhere (RAID5_MEMBER_ACCESS=read: always).  Three sparse members on a
# tmpfs this test mounts (root), metadata=none, 16K chunk (four chunks to
# a 64 KiB granule of the mapping's marks).  Asserts:
#   - a fresh array read whole allocates nothing on its members (a load
#     through a mapping of a hole would allocate a page);
#   - a verified random load (writes, zeroes, trims, flushes) served
#     mapped reads back as the model served with pread/pwrite, and one
#     served that way reads back as the model served mapped; parity and
#     data on the members are the model's (member-check); the mapping was
#     used (the server's RssShmem grew) and not used when told not to;
#   - a range zeroed with writes (NO_HOLE) is read through the mapping
#     after (written zeros are no hole: nothing to fall back to pread for);
#   - grown while served (raid5ctl grow --size), each member is mapped
#     at its new size, and the new end reads back what was written;
#   - on a tmpfs too small for the members, filling the array fails with
#     an error to the client and the server lives on (a store through a
#     mapping into a hole of a full tmpfs would kill it with SIGBUS); the
#     log names the member and ENOSPC.
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
requires_plugin
requires nbdcopy --version
requires /usr/bin/python3 -c "import nbd"
[ "$(id -u)" = 0 ] || skip "needs root to mount a tmpfs of its own"

mnt=$tmpdir/mem
mkdir "$mnt"
mount -t tmpfs -o size=256M tmpfs "$mnt" 2>/dev/null || skip "cannot mount a tmpfs"
cleanup_fn "umount -l '$mnt'"

members=("$mnt/m0.img" "$mnt/m1.img" "$mnt/m2.img")
for m in "${members[@]}"; do truncate -s 32M "$m"; done
disks=("${members[@]/#/disk=}")
args=("${disks[@]}" chunk=16K metadata=none)

allocated () { du -k --total "${members[@]}" | tail -n 1 | cut -f 1; }
shmem_kib () { awk '/^RssShmem:/ { print $2 }' "/proc/$SERVER/status"; }

echo "== a fresh array read whole: nothing allocated"
serve_bg "$tmpdir/serve1.log" "${args[@]}" || fail "serve"
before=$(allocated)
nbdcopy "$URI" - | cmp -s - <(head -c 64M /dev/zero) ||
  fail "a fresh array does not read as zeros"
after=$(allocated)
[ "$after" = "$before" ] ||
  fail "reading holes allocated them: $before KiB before, $after KiB after"
echo "   64 MiB read, members hold $after KiB"

echo "== a verified load, mapped"
"$RANDOM_IO" "$URI" auto --seed "$SEED" --ops 3000 --chunk 16K \
  --model-out "$tmpdir/model" >"$tmpdir/load1.out" 2>&1 ||
  { cat "$tmpdir/load1.out" >&2; fail "the load, mapped"; }
mapped=$(shmem_kib)
[ "${mapped:-0}" -gt 0 ] || fail "the mapping was not used: RssShmem ${mapped:-?} KiB"
echo "   $(tail -n 1 "$tmpdir/load1.out" | cut -c 1-70)...; RssShmem $mapped KiB"
stop_server

echo "== served with pread/pwrite: reads back, a load, then mapped again"
RAID5_MEMBER_ACCESS=read serve_bg "$tmpdir/serve2.log" "${args[@]}" ||
  fail "serve with pread/pwrite"
"$RANDOM_IO" "$URI" auto --seed "$((SEED + 1))" --ops 3000 --chunk 16K \
  --model-in "$tmpdir/model" --model-out "$tmpdir/model2" \
  >"$tmpdir/load2.out" 2>&1 ||
  { cat "$tmpdir/load2.out" >&2; fail "the load, with pread/pwrite"; }
[ "$(shmem_kib)" = 0 ] || fail "RAID5_MEMBER_ACCESS=read mapped $(shmem_kib) KiB"
stop_server
serve_bg "$tmpdir/serve3.log" "${args[@]}" || fail "serve mapped again"
"$RANDOM_IO" "$URI" auto --verify-only --model-in "$tmpdir/model2" \
  >"$tmpdir/verify.out" 2>&1 ||
  { cat "$tmpdir/verify.out" >&2; fail "served mapped, not the model"; }
stop_server
member_check --chunk 16K --model "$tmpdir/model2" "${members[@]}"

echo "== zeroes written (no hole) are read through the mapping"
for m in "${members[@]}"; do head -c 32M /dev/urandom >"$m"; done
serve_bg "$tmpdir/serve5.log" "${args[@]}" || fail "serve filled members"
/usr/bin/python3 - "$URI" "$SERVER" >"$tmpdir/zero.out" <<'PY' ||
import sys, nbd
def shmem():
    for line in open("/proc/%s/status" % sys.argv[2]):
        if line.startswith("RssShmem:"):
            return int(line.split()[1])
h = nbd.NBD()
h.connect_uri(sys.argv[1])
h.zero(4 << 20, 8 << 20, flags=nbd.CMD_FLAG_NO_HOLE)
before = shmem()
for off in range(8 << 20, 12 << 20, 1 << 20):
    if h.pread(1 << 20, off) != bytes(1 << 20):
        sys.exit("zeroed range at %d does not read as zeros" % off)
print(before, shmem())
PY
  fail "zero and read back: $(tail -n 1 "$tmpdir/zero.out")"
read -r before after <"$tmpdir/zero.out"
# 4 MiB of data lies on the members; a read through the mapping maps it.
[ $((after - before)) -ge 4096 ] ||
  fail "zeroed range read with pread, not mapped: RssShmem $before -> $after KiB"
echo "   4 MiB read after zeroing: RssShmem $before -> $after KiB"
stop_server

echo "== grown while served (grow --size): the mapping covers the new size"
RAID5CTL=${RAID5CTL:-$abs_top_builddir/tools/raid5ctl}
g=("$mnt/g0.img" "$mnt/g1.img" "$mnt/g2.img")
for m in "${g[@]}"; do truncate -s 16M "$m"; done
"$RAID5CTL" create --chunk 64K --bitmap none --assume-clean "${g[@]}" \
  >"$tmpdir/g.create" 2>&1 || { cat "$tmpdir/g.create" >&2; fail "raid5ctl create"; }
serve_bg "$tmpdir/serve6.log" "${g[@]/#/disk=}" control="$tmpdir/g.ctl" ||
  fail "serve the array to grow"
# map_mib FILE: the largest mapping of FILE in the server, MiB.
map_mib () {
  /usr/bin/python3 -c 'import sys
print(max([int(e, 16) - int(s, 16) >> 20 for s, e in (l.split()[0].split("-")
      for l in open("/proc/%s/maps" % sys.argv[1]) if l.split()[-1] == sys.argv[2])] or [0]))' \
    "$SERVER" "$1"
}
[ "$(map_mib "${g[0]}")" = 16 ] || fail "member 0 is mapped as $(map_mib "${g[0]}") MiB, not 16"
for m in "${g[@]}"; do truncate -s 32M "$m"; done
out=$("$RAID5CTL" --control "$tmpdir/g.ctl" grow --size max --wait 2>&1) ||
  fail "grow --size max while served: $out"
[ "$(map_mib "${g[0]}")" = 32 ] ||
  fail "after the grow member 0 is mapped as $(map_mib "${g[0]}") MiB, not 32"
size=$(nbdinfo --size "$URI")
head -c 1M /dev/urandom >"$tmpdir/end"
/usr/bin/python3 - "$URI" "$tmpdir/end" "$size" <<'PY' || fail "the grown end does not read back"
import sys, nbd
h = nbd.NBD(); h.connect_uri(sys.argv[1])
d = open(sys.argv[2], "rb").read(); off = int(sys.argv[3]) - len(d)
h.pwrite(d, off)
if h.pread(len(d), off) != d:
    sys.exit("1 MiB at the grown end reads back wrong")
PY
echo "   member 0 mapped 16 MiB, then 32 MiB after the grow; the new end reads back"
stop_server

echo "== a tmpfs too small for its members: errors, and the server lives"
small=$tmpdir/small
mkdir "$small"
mount -t tmpfs -o size=12M tmpfs "$small" || fail "mount a 12M tmpfs"
cleanup_fn "umount -l '$small'"
tiny=("$small/t0.img" "$small/t1.img" "$small/t2.img")
for m in "${tiny[@]}"; do truncate -s 16M "$m"; done
serve_bg "$tmpdir/serve4.log" "${tiny[@]/#/disk=}" chunk=64K metadata=none ||
  fail "serve on the small tmpfs"
head -c 32M /dev/urandom >"$tmpdir/fill"
nbdcopy "$tmpdir/fill" "$URI" 2>"$tmpdir/fill.err" &&
  fail "32 MiB went onto 12 MiB of tmpfs"
kill -0 "$SERVER" 2>/dev/null || fail "the server died filling a full tmpfs"
nbdinfo --size "$URI" >/dev/null || fail "the server does not answer after ENOSPC"
grep -q "No space left on device" "$tmpdir/serve4.log" ||
  fail "the log does not say ENOSPC: $(tail -n 3 "$tmpdir/serve4.log")"
echo "   client: $(head -n 1 "$tmpdir/fill.err")"
echo "   server: $(grep -m 1 'No space left' "$tmpdir/serve4.log" | cut -c 1-120)"
stop_server
echo "PASS: $test_name"
