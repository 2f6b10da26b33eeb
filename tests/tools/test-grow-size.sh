#!/usr/bin/env bash
# raid5ctl grow --size (mdadm --grow --size=max|SIZE), offline:
#  - with no room to grow it says so, exits 0 and writes nothing;
#  - refusals are one line and write nothing: a size below the one in use
#    (shrinking), above the smallest member's room, --size with --add, a
#    degraded array, --assume-clean without --size;
#  - members grown (random bytes appended) under an array holding random
#    data: --size
#    40M, then max; each time mdadm --examine gives the new Used and
#    Avail Dev Size, the array is clean with no resync due, the bitmap
#    covers the new size; raid5ctl check finds parity right over the new
#    space (resynced from the old end); the plugin serves the new size,
#    the old bytes intact, and new bytes written at the end read back;
#  - a grow killed during its resync: the superblocks hold the new size
#    and a resync due; the plugin serving the array finishes it, and
#    check then finds 0;
#  - grow --bitmap internal|none: added offline (8 sectors after the
#    superblock, covering the component), said when there is one already,
#    refused with a partial parity log; removed and added again while
#    served, the array clean after; --size refused with a partial parity
#    log (md's raid5_resize refuses it);
#  - killed after the bitmap was written and before the superblocks
#    (RAID5_TEST_CRASH=bitmap-written), a --size and a --bitmap leave the
#    array as it was (mdadm writes a bitmap first too), and run again;
#  - grown twice (2 -> 3 -> 4 TiB, sparse members, each grow its own
#    process): the bitmap keeps md's chunk (its recorded room) and a
#    write at the array's end sets a bit that reaches the disk;
#  - a hot spare (spare=) counts as a member: a size past its room is
#    refused, max is its room (md's update_size walks spares too);
#  - while served (--control ... --wait), a client rewriting blocks of
#    the old space throughout: no write lost, a new connection sees the
#    new size, check --wait finds parity right, the superblocks clean
#    after the server stops.
. "${0%/*}/functions.sh"
requires_raid5ctl
requires nbdcopy --version

g=("$tmpdir"/g0 "$tmpdir"/g1 "$tmpdir"/g2)
truncate -s 32M "${g[@]}"
"$RAID5CTL" create --chunk 64K --bitmap internal "${g[@]}" >/dev/null 2>&1 ||
  fail "create"
fill_random "$tmpdir/model" "${g[@]/#/disk=}"
DISKS=("${g[@]}")

# examined KEY: what mdadm --examine says of member 0.
examined () { mdadm --examine "${g[0]}" | sed -n "s/^ *$1 : //p"; }

echo "== no room: said, nothing written"
sums=$(checksum_members "${g[@]}")
out=$("$RAID5CTL" grow --size max "${g[@]}" 2>&1) || fail "grow --size max with no room: $out"
grep -q 'component size stays 63488 sectors' <<<"$out" || fail "no room: $out"
[ "$(checksum_members "${g[@]}")" = "$sums" ] || fail "grow with no room wrote"

# members_grow MIB: each member made MIB long, the space past its end
# random (different on each: the new space's parity is wrong until the
# resync makes it right).
members_grow ()
{
  local m
  for m in "${g[@]}"; do
    head -c $(( ($1 << 20) - $(stat -c %s "$m") )) /dev/urandom >>"$m"
  done
}

echo "== refusals"
members_grow 48
expect_refused "less than the 63488 the array uses: shrinking" grow --size 20M "${g[@]}"
expect_refused "member 0 .* has room for 96256 sectors after its data offset, not 204800" \
  grow --size 100M "${g[@]}"
expect_refused "--add, --size and --bitmap change one thing each: one at a time" \
  grow --size max --add "$tmpdir/x" "${g[@]}"
expect_refused "--assume-clean goes with --size" grow --assume-clean "${g[@]}"
expect_refused "cannot grow the component size: the array is degraded" \
  grow --size max "${g[0]}" missing "${g[2]}"
[ "$failures" -eq 0 ] || fail "$failures refusals were wrong"

# grown KIB AVAIL: the checks after a grow to KIB per member, each
# member's data size (Avail Dev Size) AVAIL sectors: what --size asked
# for, or with max all its room (as md records it).
grown ()
{
  local sectors=$(( $1 * 2 )) cap used
  # mdadm leaves out Used Dev Size when it is all of Avail Dev Size.
  used=$(examined 'Used Dev Size' | cut -d' ' -f1)
  [ "${used:-$(examined 'Avail Dev Size' | cut -d' ' -f1)}" = $sectors ] ||
    fail "Used Dev Size: '$used', want $sectors"
  [ "$(examined 'Avail Dev Size' | cut -d' ' -f1)" = "$2" ] ||
    fail "Avail Dev Size: $(examined 'Avail Dev Size'), want $2"
  [ "$(examined State)" = clean ] && [ -z "$(examined 'Resync Offset')" ] ||
    fail "after the grow: State $(examined State), Resync Offset $(examined 'Resync Offset')"
  dd if="${g[0]}" of="$tmpdir/bm" bs=4096 skip=2 count=1 status=none
  mdadm --examine-bitmap "$tmpdir/bm" | grep -q "Sync Size : $(( sectors / 2 )) " ||
    fail "the bitmap does not cover $sectors sectors: $(mdadm --examine-bitmap "$tmpdir/bm" | grep 'Sync Size')"
  "$RAID5CTL" check "${g[@]}" >"$tmpdir/check" 2>&1 ||
    fail "check after the grow: $(cat "$tmpdir/check")"
  cap=$("$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${g[@]/#/disk=}" --run 'nbdinfo --size "$uri"')
  [ "$cap" = $(( sectors * 512 * 2 )) ] || fail "served size $cap, want $(( sectors * 1024 ))"
  head -c $(( cap - size )) /dev/urandom >"$tmpdir/tail"
  cat "$tmpdir/model" "$tmpdir/tail" >"$tmpdir/model2"
  "$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${g[@]/#/disk=}" --run "
    nbdcopy '$tmpdir/model2' \"\$uri\" && nbdcopy \"\$uri\" '$tmpdir/back'" ||
    fail "writing the new space"
  cmp "$tmpdir/model2" "$tmpdir/back" || fail "the grown array reads back wrong"
  echo "   $sectors sectors of each member, served $cap bytes, parity right"
}

echo "== --size 40M, then max"
out=$("$RAID5CTL" grow --size 40M "${g[@]}" 2>&1) || fail "grow --size 40M: $out"
grep -q 'resync: .* (resumed at stripe 496 of 640)' <<<"$out" ||
  fail "the resync did not begin at the old end: $out"
grown 40960 81920
size=$(( 40960 * 1024 * 2 )); cp "$tmpdir/model2" "$tmpdir/model"
out=$("$RAID5CTL" grow --size max "${g[@]}" 2>&1) || fail "grow --size max: $out"
grown 48128 96256

echo "== without a bitmap"
n=("$tmpdir"/n0 "$tmpdir"/n1 "$tmpdir"/n2)
truncate -s 16M "${n[@]}"
"$RAID5CTL" create --chunk 64K --bitmap none "${n[@]}" >/dev/null 2>&1 || fail "create n"
for m in "${n[@]}"; do head -c $((8 << 20)) /dev/urandom >>"$m"; done
"$RAID5CTL" grow --size max "${n[@]}" >"$tmpdir/n.out" 2>&1 ||
  fail "grow --size max without a bitmap: $(cat "$tmpdir/n.out")"
"$RAID5CTL" check "${n[@]}" >"$tmpdir/check" 2>&1 ||
  fail "check after the grow without a bitmap: $(cat "$tmpdir/check")"
grep -q '^check: 368 stripes checked, 0 with wrong parity' "$tmpdir/check" ||
  fail "without a bitmap: $(cat "$tmpdir/check")"
echo "   grown to 368 stripes, parity right"

echo "== killed during its resync, finished by the plugin"
members_grow 160
"$RAID5CTL" grow --size max --max-speed 8M "${g[@]}" >"$tmpdir/slow" 2>&1 &
pid=$!
for _ in $(seq 100); do
  [ "$(examined 'Avail Dev Size' | cut -d' ' -f1)" = 325632 ] && break
  sleep 0.05
done
sleep 0.5
kill -9 $pid; wait $pid 2>/dev/null || :
kill -0 $pid 2>/dev/null && fail "the grow was not killed"
[ -z "$(examined 'Used Dev Size')" ] &&
  [ "$(examined 'Avail Dev Size' | cut -d' ' -f1)" = 325632 ] &&
  [ "$(examined State)" = active ] ||
  fail "after the kill: Used $(examined 'Used Dev Size'), Avail $(examined 'Avail Dev Size'), State $(examined State) ($(cat "$tmpdir/slow"))"
echo "   killed with the new size recorded and a resync due"
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${g[@]/#/disk=}" control="$tmpdir/ctl" --run "
  for i in \$(seq 300); do
    '$RAID5CTL' --control '$tmpdir/ctl' status | grep -q 'last resync: done' && exit 0
    sleep 0.1
  done; exit 1" || fail "the plugin did not finish the resync"
[ "$(examined State)" = clean ] || fail "still due: State $(examined State)"
"$RAID5CTL" check "${g[@]}" >"$tmpdir/check" 2>&1 ||
  fail "check after the finished resync: $(cat "$tmpdir/check")"
echo "== while served: clients writing throughout"
s=("$tmpdir"/s0 "$tmpdir"/s1 "$tmpdir"/s2)
truncate -s 32M "${s[@]}"
"$RAID5CTL" create --chunk 64K --bitmap internal "${s[@]}" >/dev/null 2>&1 || fail "create s"
sock=$tmpdir/s.sock ctl=$tmpdir/s.ctl
"$NBDKIT" -U "$sock" -P "$tmpdir/s.pid" "$PLUGIN" "${s[@]/#/disk=}" control="$ctl" ||
  fail "serving s"
cleanup_fn 'kill $(cat '"$tmpdir/s.pid"') 2>/dev/null'
for _ in $(seq 100); do [ -S "$ctl" ] && break; sleep 0.05; done
uri="nbd+unix:///?socket=$sock"
old=$(nbdinfo --size "$uri")
head -c "$old" /dev/urandom >"$tmpdir/s.model"
nbdcopy "$tmpdir/s.model" "$uri" || fail "filling s"
DISKS=()     # the server itself may mark the array clean meanwhile
expect_refused "--assume-clean goes with --size" --control "$ctl" grow --assume-clean
expect_refused "--add, --size and --bitmap change one thing each" \
  --control "$ctl" grow --size max --add "$tmpdir/x"
[ "$failures" -eq 0 ] || fail "$failures refusals were wrong"
for m in "${s[@]}"; do head -c $((16 << 20)) /dev/urandom >>"$m"; done
# A client rewrites 4 KiB blocks of the old space at random while the
# size changes; the model follows it.
/usr/bin/python3 - "$uri" "$tmpdir/s.model" "$tmpdir/s.go" <<'EOF' &
import nbd, os, random, sys, time
h = nbd.NBD(); h.connect_uri(sys.argv[1])
model = bytearray(open(sys.argv[2], 'rb').read())
blocks = len(model) // 4096
end = time.time() + 20
while not os.path.exists(sys.argv[3]) and time.time() < end:
    b = random.randrange(blocks); d = os.urandom(4096)
    h.pwrite(d, b * 4096); model[b * 4096:(b + 1) * 4096] = d
h.flush()
open(sys.argv[2], 'wb').write(model)
EOF
writer=$!
sleep 0.3
out=$("$RAID5CTL" --control "$ctl" grow --size max --wait 2>&1) ||
  { touch "$tmpdir/s.go"; fail "grow --size max while served: $out"; }
sleep 0.3
touch "$tmpdir/s.go"
wait $writer || fail "the client writing during the grow failed"
grep -q 'grow: 96256 sectors of each member, 98566144 bytes (was 65011712): the new space is being resynced' <<<"$out" &&
  grep -q 'grow: the array has 3 members, 94 MiB (98566144 bytes)' <<<"$out" ||
  fail "grow --size max while served said: $out"
[ "$(nbdinfo --size "$uri")" = 98566144 ] || fail "a new client sees $(nbdinfo --size "$uri") bytes"
nbdcopy "$uri" "$tmpdir/s.back" || fail "reading s"
cmp -n "$old" "$tmpdir/s.model" "$tmpdir/s.back" || fail "bytes written during the grow were lost"
out=$("$RAID5CTL" --control "$ctl" check --wait 2>&1) || fail "check after the grow while served: $out"
grep -q 'check: 752 stripes checked, 0 with wrong parity' <<<"$out" || fail "check: $out"
# No room left: said, and --wait has no resync to follow (it returns).
out=$(timeout 10 "$RAID5CTL" --control "$ctl" grow --size max --wait 2>&1) &&
  grep -q '^grow: unchanged: the component size stays 96256 sectors' <<<"$out" ||
  fail "grow --size max --wait with no room while served: $out"
kill "$(cat "$tmpdir/s.pid")"
for _ in $(seq 100); do kill -0 "$(cat "$tmpdir/s.pid")" 2>/dev/null || break; sleep 0.05; done
[ -z "$(mdadm --examine "${s[0]}" | sed -n 's/^ *Used Dev Size : //p')" ] &&
  [ "$(mdadm --examine "${s[0]}" | sed -n 's/^ *State : //p')" = clean ] ||
  fail "after the server stopped: $(mdadm --examine "${s[0]}" | grep -E 'Size|State')"
echo "   grown while a client wrote: every byte kept, new size served, parity right"
echo "== a bitmap added and removed (grow --bitmap), offline and served"
DISKS=("${n[@]}")
expect_refused "--add, --size and --bitmap change one thing each" \
  grow --bitmap internal --size max "${n[@]}"
expect_refused "--bitmap on: internal or none" grow --bitmap on "${n[@]}"
out=$("$RAID5CTL" grow --bitmap internal "${n[@]}" 2>&1) || fail "grow --bitmap internal: $out"
mdadm --examine "${n[0]}" | grep -q 'Internal Bitmap : 8 sectors from superblock' ||
  fail "no bitmap after grow --bitmap internal: $(mdadm --examine "${n[0]}" | grep -E 'Feature|Bitmap')"
dd if="${n[0]}" of="$tmpdir/bm" bs=4096 skip=2 count=1 status=none
mdadm --examine-bitmap "$tmpdir/bm" | grep -q 'Sync Size : 23552 ' ||
  fail "the bitmap added: $(mdadm --examine-bitmap "$tmpdir/bm" 2>&1 | grep -E 'Sync|Bitmap')"
# md takes a new bitmap as stale: the array's events (before the add's
# own) are those cleared.
[ "$(mdadm --examine-bitmap "$tmpdir/bm" | sed -n 's/^ *Events Cleared : //p')" = \
  $(( $(mdadm --examine "${n[0]}" | sed -n 's/^ *Events : //p') - 1 )) ] ||
  fail "the bitmap added: $(mdadm --examine-bitmap "$tmpdir/bm" | grep Events), $(mdadm --examine "${n[0]}" | grep Events)"
out=$("$RAID5CTL" grow --bitmap internal "${n[@]}" 2>&1) &&
  grep -q 'has an internal bitmap already' <<<"$out" || fail "added twice: $out"
p=("$tmpdir"/p0 "$tmpdir"/p1 "$tmpdir"/p2)
truncate -s 16M "${p[@]}"
"$RAID5CTL" create --chunk 64K --consistency-policy ppl "${p[@]}" >/dev/null 2>&1 || fail "create p"
DISKS=("${p[@]}")
expect_refused "cannot add a bitmap: the array keeps a partial parity log \\(md keeps one or the other\\)$" \
  grow --bitmap internal "${p[@]}"
truncate -s 32M "${p[@]}"
expect_refused "cannot grow the component size: the array keeps a partial parity log, and md does not grow such an array" \
  grow --size max "${p[@]}"
[ "$failures" -eq 0 ] || fail "$failures refusals were wrong"
head -c $((4 << 20)) /dev/urandom >"$tmpdir/four"
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${n[@]/#/disk=}" control="$tmpdir/n.ctl" --run "
  '$RAID5CTL' --control '$tmpdir/n.ctl' grow --bitmap none &&
  '$RAID5CTL' --control '$tmpdir/n.ctl' status | grep -q 'consistency policy: bitmap' && exit 1
  nbdcopy '$tmpdir/four' \"\$uri\" &&
  '$RAID5CTL' --control '$tmpdir/n.ctl' grow --bitmap internal &&
  '$RAID5CTL' --control '$tmpdir/n.ctl' status | grep -q 'consistency policy: bitmap' &&
  nbdcopy '$tmpdir/four' \"\$uri\"" >"$tmpdir/n.serve" 2>&1 ||
  fail "the bitmap removed and added while served: $(cat "$tmpdir/n.serve")"
mdadm --examine "${n[0]}" | grep -q 'Internal Bitmap : 8 sectors from superblock' &&
  [ "$(mdadm --examine "${n[0]}" | sed -n 's/^ *State : //p')" = clean ] ||
  fail "after serving: $(mdadm --examine "${n[0]}" | grep -E 'Feature|Bitmap|State')"
"$RAID5CTL" check "${n[@]}" >"$tmpdir/check" 2>&1 || fail "check: $(cat "$tmpdir/check")"
echo "   added offline, removed and added again while served, parity right"
echo "== grown twice (2 -> 3 -> 4 TiB, sparse): the bitmap outgrows the buffer it was loaded into"
# The first grow (offline) records the bitmap's room (sectors_reserved,
# 9 sectors here: md's rule); the server then loads 4 KiB of bitmap and,
# grown again while it serves, keeps the 128 MiB chunk and needs 4352
# bytes.  A write at the array's end, the server killed: its bit must be
# on the disk (the bits raid5ctl create set stay: no server cleared them).
t=("$tmpdir"/t0 "$tmpdir"/t1 "$tmpdir"/t2)
truncate -s 2T "${t[@]}"
"$RAID5CTL" create --assume-clean --bitmap internal "${t[@]}" >/dev/null 2>&1 || fail "create t"
truncate -s 3T "${t[@]}"
"$RAID5CTL" grow --size max --assume-clean "${t[@]}" >"$tmpdir/t.out" 2>&1 ||
  fail "grow t to 3T: $(cat "$tmpdir/t.out")"
dd if="${t[0]}" of="$tmpdir/bm" bs=4096 skip=2 count=2 status=none
dirty=$(mdadm --examine-bitmap "$tmpdir/bm" | sed -n 's/^ *Bitmap : 24575 bits (chunks), \([0-9]*\) dirty.*/\1/p')
[ -n "$dirty" ] || fail "grown to 3T: $(mdadm --examine-bitmap "$tmpdir/bm" | grep -E 'Chunksize|Bitmap :')"
"$NBDKIT" -f -U "$tmpdir/t.sock" -P "$tmpdir/t.pid" "$PLUGIN" "${t[@]/#/disk=}" \
  control="$tmpdir/t.ctl" &
tpid=$!
for _ in $(seq 100); do [ -S "$tmpdir/t.ctl" ] && break; sleep 0.05; done
truncate -s 4T "${t[@]}"
"$RAID5CTL" --control "$tmpdir/t.ctl" grow --size max --assume-clean >"$tmpdir/t.out" 2>&1 ||
  { kill -9 $tpid; fail "grow t to 4T while served: $(cat "$tmpdir/t.out")"; }
/usr/bin/python3 -c '
import nbd, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1])
h.pwrite(b"x" * 4096, h.get_size() - 4096); h.flush()
' "nbd+unix:///?socket=$tmpdir/t.sock" || { kill -9 $tpid; fail "a write at the end of t"; }
kill -9 $tpid; wait $tpid 2>/dev/null || :
dd if="${t[0]}" of="$tmpdir/bm" bs=4096 skip=2 count=2 status=none
mdadm --examine-bitmap "$tmpdir/bm" | grep -q 'Chunksize : 128 MB' &&
  mdadm --examine-bitmap "$tmpdir/bm" | grep -Eq "Bitmap : 32767 bits \(chunks\), $(( dirty + 1 )) dirty" ||
  fail "the bit of the array's last chunk is not on the disk: $(mdadm --examine-bitmap "$tmpdir/bm" | grep -E 'Chunksize|Bitmap :')"
rm -f "${t[@]}"
echo "   the last chunk's bit on the disk (a bitmap of 4352 bytes)"
echo "== a hot spare: the new size fits it too (md: every rdev, spares too)"
q=("$tmpdir"/q0 "$tmpdir"/q1 "$tmpdir"/q2)
truncate -s 16M "${q[@]}" "$tmpdir/qs"
"$RAID5CTL" create --chunk 64K --bitmap internal --assume-clean "${q[@]}" >/dev/null 2>&1 ||
  fail "create q"
doff=$(mdadm --examine "${q[0]}" | sed -n 's/^ *Data Offset : \([0-9]*\) sectors/\1/p')
truncate -s 32M "${q[@]}"
truncate -s 24M "$tmpdir/qs"
spare_room=$(( (24 * 2048 - doff) / 128 * 128 ))
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${q[@]/#/disk=}" spare="$tmpdir/qs" control="$tmpdir/q.ctl" --run "
  '$RAID5CTL' --control '$tmpdir/q.ctl' grow --size 28M --assume-clean && exit 1
  '$RAID5CTL' --control '$tmpdir/q.ctl' grow --size max --assume-clean || exit 1
  '$RAID5CTL' --control '$tmpdir/q.ctl' grow --size max --wait" >"$tmpdir/q.serve" 2>&1 ||
  fail "a grow with a spare: $(cat "$tmpdir/q.serve")"
grep -Eq "the spare \(.*/qs\) has room for $(( 24 * 2048 - doff )) sectors after its data offset, not 57344" \
  "$tmpdir/q.serve" || fail "a size the spare cannot hold was not refused: $(cat "$tmpdir/q.serve")"
grep -q "grow: $spare_room sectors of each member" "$tmpdir/q.serve" &&
  grep -Eq "grow: unchanged: the component size stays $spare_room sectors: the spare \(.*/qs\) has no whole chunk more of room" \
  "$tmpdir/q.serve" || fail "max is not the spare's room ($spare_room): $(cat "$tmpdir/q.serve")"
echo "   a size past the spare's room refused, max the spare's room"
echo "== killed between the bitmap and the superblocks: the array as before"
c=("$tmpdir"/c0 "$tmpdir"/c1 "$tmpdir"/c2)
truncate -s 16M "${c[@]}"
"$RAID5CTL" create --chunk 64K --bitmap internal --assume-clean "${c[@]}" >/dev/null 2>&1 ||
  fail "create c"
before=$(mdadm --examine "${c[0]}" | sed -n 's/^ *Array Size : //p')
truncate -s 24M "${c[@]}"
st=0
RAID5_TEST_CRASH=bitmap-written "$RAID5CTL" grow --size max --assume-clean "${c[@]}" \
  >"$tmpdir/c.out" 2>&1 || st=$?
[ $st = 137 ] || fail "grow --size was not killed at bitmap-written (exit $st): $(cat "$tmpdir/c.out")"
[ "$(mdadm --examine "${c[0]}" | sed -n 's/^ *Array Size : //p')" = "$before" ] ||
  fail "the superblocks were written before the bitmap: $(mdadm --examine "${c[0]}" | grep 'Array Size')"
"$RAID5CTL" check "${c[@]}" >"$tmpdir/check" 2>&1 ||
  fail "the array after the kill does not check: $(cat "$tmpdir/check")"
"$RAID5CTL" grow --size max --assume-clean "${c[@]}" >"$tmpdir/c.out" 2>&1 ||
  fail "grow --size after the kill: $(cat "$tmpdir/c.out")"
d=("$tmpdir"/d0 "$tmpdir"/d1 "$tmpdir"/d2)
truncate -s 16M "${d[@]}"
"$RAID5CTL" create --chunk 64K --bitmap none --assume-clean "${d[@]}" >/dev/null 2>&1 ||
  fail "create d"
st=0
RAID5_TEST_CRASH=bitmap-written "$RAID5CTL" grow --bitmap internal "${d[@]}" \
  >"$tmpdir/d.out" 2>&1 || st=$?
[ $st = 137 ] || fail "grow --bitmap was not killed at bitmap-written (exit $st): $(cat "$tmpdir/d.out")"
mdadm --examine "${d[0]}" | grep -q 'Internal Bitmap' &&
  fail "the superblocks point to the bitmap before it was written"
"$RAID5CTL" check "${d[@]}" >"$tmpdir/check" 2>&1 ||
  fail "the array after the kill does not check: $(cat "$tmpdir/check")"
"$RAID5CTL" grow --bitmap internal "${d[@]}" >"$tmpdir/d.out" 2>&1 ||
  fail "grow --bitmap after the kill: $(cat "$tmpdir/d.out")"
echo "   the size and a bitmap: the superblocks as before, done again after"
echo "test-grow-size: OK"
