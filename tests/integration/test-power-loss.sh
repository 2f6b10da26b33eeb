#!/usr/bin/env bash
# What a power cut keeps: a trim is a write like any other.  Two members
# are NBD exports behind nbdkit's cache filter in writeback mode (a disk
# with a volatile write cache: what it was not asked to flush is lost
# when its server dies), the third an image file, as in scripts/soak.sh.
#
# A trim acknowledged without FUA and never flushed may be undone by a
# power cut (the array's server and the member servers killed at once):
# the array punches the members, the punches sit in their caches, and the
# old bytes come back.  NBD allows it -- only FUA or a later flush makes a
# write, zero or trim durable -- so whatever a read of the trimmed range
# returned before the cut is not durable either.  A trim flushed, or sent
# with FUA, must stay.  (scripts/soak.sh --seed 1, event 28: a power cut
# of a whole array after a round that trimmed and then read the trimmed
# bytes; random-io --power-loss had learned them as zeroes and counted
# 476441 bytes lost when the old data came back on the two NBD members.
# random-io now keeps an unflushed trim's range with the writes not yet
# durable, and forgets it at the cut.)
#
# Then the same with random-io: one connection, no flushes, trims and
# reads over 1 MiB of a filled array, a power cut; every byte the model
# still knows must read back (fails without trims counted as not durable).
#
# Last, what the array writes by itself: a member rebuilt onto a disk
# behind the same volatile cache, the rebuild's end recorded (the slot in
# sync in the superblocks), no client flush, then a power cut.  The array
# must start whole and read back every byte: a superblock that records
# progress may reach the disk only once what it vouches for has -- md
# writes every superblock and bitmap page with REQ_PREFLUSH (md.c,
# md_super_write).  Without that flush the record survives (FUA) and the
# rebuilt bytes do not.
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
. "${0%/*}/job-functions.sh"
[ -x "$RAID5CTL" ] || skip "raid5ctl is not built yet ($RAID5CTL)"
requires_nbd_python
requires_programs
"$NBDKIT" --filter=cache null --version >/dev/null 2>&1 ||
  skip "needs nbdkit's cache filter"

SIZE=8M CHUNK=65536
declare -A URI_OF PID_OF
m=("$tmpdir/m0.img" "$tmpdir/m1.img" "$tmpdir/m2.img")
for f in "${m[@]}"; do truncate -s "$SIZE" "$f"; done
"$RAID5CTL" create --chunk 64K --bitmap none "${m[@]}" >"$tmpdir/create.log" 2>&1 ||
  { cat "$tmpdir/create.log" >&2; fail "create"; }

members_up ()
{
  member_server m1 --filter=cache cache=writeback
  member_server m2 --filter=cache cache=writeback
}

array_up ()
{
  serve_bg "$tmpdir/nbdkit.log" "disk=${m[0]}" "disk=${URI_OF[m1]}" \
    "disk=${URI_OF[m2]}" || fail "serve"
}

# power_cut: the array's server and every member server killed at once.
power_cut ()
{
  kill -9 "$SERVER" "${PID_OF[@]}" 2>/dev/null || :
  wait "$SERVER" "${PID_OF[@]}" 2>/dev/null || :
  SERVER=
}

# nbd_py CODE...: run CODE with h connected to the array and
# OFF, LEN = the range under test (two whole stripes at 2 MiB).
nbd_py ()
{
  "$NBD_PYTHON" -c "
import nbd, sys
h = nbd.NBD()
h.connect_uri('$URI')
OFF, LEN = 2 << 20, 4 * $CHUNK
$1
h.shutdown()
"
}

members_up
array_up
echo "== a pattern written and flushed, trimmed without FUA, read back as zeroes"
nbd_py "
h.pwrite(b'P' * LEN, OFF)
h.flush()
h.trim(LEN, OFF)
got = h.pread(LEN, OFF)
print('   read after the trim: %d of %d bytes zero' % (got.count(0), LEN))
sys.exit(0 if got == bytes(LEN) else 1)" || fail "the trim does not read as zeroes"

echo "== power cut before any flush: the trim may be undone"
power_cut
members_up
array_up
nbd_py "
got = h.pread(LEN, OFF)
print('   after the cut: %d bytes of the pattern back, %d zero' %
      (got.count(ord('P')), got.count(0)))
sys.exit(0 if got.count(ord('P')) + got.count(0) == LEN and
         got.count(ord('P')) > 0 else 1)" ||
  fail "after the cut the trimmed range is neither the pattern nor zeroes"

echo "== trimmed and flushed, trimmed with FUA: both kept by a power cut"
nbd_py "
h.pwrite(b'Q' * LEN, OFF)
h.pwrite(b'R' * LEN, OFF + LEN)
h.flush()
h.trim(LEN, OFF)
h.flush()
h.trim(LEN, OFF + LEN, nbd.CMD_FLAG_FUA)"
power_cut
members_up
array_up
nbd_py "
a, b = h.pread(LEN, OFF), h.pread(LEN, OFF + LEN)
print('   flushed trim: %d of %d bytes zero; FUA trim: %d zero' %
      (a.count(0), LEN, b.count(0)))
sys.exit(0 if a == bytes(LEN) and b == bytes(LEN) else 1)" ||
  fail "a durable trim was undone by the power cut"

echo "== random-io --power-loss: trims and reads, no flush, a power cut"
# Fixed seeds and one connection: the same requests every time, cut after
# the 80th has been sent (each is printed before it is sent).
"$RANDOM_IO" "$URI" auto --seed 801 --ops 600 --chunk 64K \
  --model-out "$tmpdir/model" >"$tmpdir/fill.out" 2>&1 ||
  { cat "$tmpdir/fill.out" >&2; fail "filling the array"; }
"$RANDOM_IO" "$URI" auto --seed 802 --ops 100000000 --threads 1 \
  --chunk 64K --max-len 2M --no-flush --crash-ok --power-loss --no-final \
  --verbose --model-in "$tmpdir/model" --model-out "$tmpdir/model.cut" \
  >"$tmpdir/cut.out" 2>&1 &
rio=$!
for (( i = 0; i < 600; i++ )); do
  [ "$(grep -c '^op ' "$tmpdir/cut.out")" -ge 80 ] && break
  kill -0 "$rio" 2>/dev/null || break
  sleep 0.02
done
power_cut
wait "$rio" || { cat "$tmpdir/cut.out" >&2; fail "random-io before the cut"; }
grep 'power went' "$tmpdir/cut.out" || fail "the run ended before the cut"
members_up
array_up
"$RANDOM_IO" "$URI" auto --verify-only --model-in "$tmpdir/model.cut" \
  >"$tmpdir/verify.out" 2>&1 ||
  { cat "$tmpdir/verify.out" >&2; fail "bytes the model knows read back wrong after the cut"; }
grep 'verified' "$tmpdir/verify.out"
stop_server

echo "== slot 2 rebuilt onto a disk behind a volatile cache, a power cut: the array reads back whole"
# A model with every byte known: the array read after a clean stop.
serve_bg "$tmpdir/nbdkit.log" "disk=${m[0]}" "disk=${URI_OF[m1]}" \
  "disk=${URI_OF[m2]}" || fail "serve"
nbdcopy "$URI" "$tmpdir/model" || fail "reading the array"
stop_server
member_server m3 --filter=cache cache=writeback
serve_ctl "$tmpdir/rebuild.log" "disk=${m[0]}" "disk=${URI_OF[m1]}" \
  "disk=${URI_OF[m2]}"
ctl_ok fail 2
ctl_ok rebuild 2 "${URI_OF[m3]}"
ctl_wait "s['state'] == 'healthy' and s['last_job']['kind'] == 'rebuild' and s['last_job']['result'] == 0" 60
sleep 0.5                     # past the safe-mode delay: nothing else to write
power_cut
member_server m1 --filter=cache cache=writeback
member_server m3 --filter=cache cache=writeback
serve_bg "$tmpdir/after.log" "disk=${m[0]}" "disk=${URI_OF[m1]}" \
  "disk=${URI_OF[m3]}" || fail "the array does not start after the cut: $(tail -n 3 "$tmpdir/after.log")"
reads_as_model "after the power cut that followed the rebuild"
echo "   the rebuilt member's bytes outlived the cut"
stop_server
echo "PASS"
