#!/usr/bin/env bash
# raid5ctl check / repair on member files (offline).
#  - a freshly created array: mismatch_cnt 0, exit 0;
#  - chosen parity bytes spoiled in chosen stripes (each parity member in
#    turn): check names exactly those stripes, the parity member and the
#    4 KiB unit, and counts md's way (8 sectors per wrong unit); exit 2,
#    nothing written;
#  - a spoiled DATA byte is also a mismatch (parity cannot say which
#    member is wrong); repair rewrites parity, never data: afterwards the
#    spoiled data byte is still there and check says 0;
#  - the array's data, read through the plugin, is unchanged by repair
#    where the data was intact;
#  - --json agrees with the text; a served array is refused (its lock);
#  - a dirty array (the server killed during a write): check runs, says
#    the array is dirty and leaves it so (State active); repair runs as its
#    resync: a parity byte spoiled meanwhile is rewritten and the array is
#    clean afterwards (State clean, mismatch_cnt 0).

. "${0%/*}/functions.sh"
requires_raid5ctl
requires /usr/bin/python3 --version

N=4 CHUNK=65536 DOFF=1048576
DISKS=()
for i in $(seq 0 $((N - 1))); do
  truncate -s 40M "$tmpdir/d$i"
  DISKS+=("$tmpdir/d$i")
done
"$RAID5CTL" create --chunk 64K "${DISKS[@]}" >/dev/null 2>&1 ||
  fail "raid5ctl create failed"

# Fill with data through the plugin, then keep a copy of the export.
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${DISKS[@]/#/disk=}" --run \
  "head -c 30M /dev/urandom > '$tmpdir/pattern' && nbdcopy '$tmpdir/pattern' \"\$uri\" && nbdcopy \"\$uri\" '$tmpdir/before'" ||
  fail "writing the pattern"

out=$("$RAID5CTL" check "${DISKS[@]}" 2>/dev/null) || fail "check of a clean array: exit $?"
grep -q "mismatch_cnt 0$" <<<"$out" || fail "clean array: $out"

# parity_member STRIPE: left-symmetric, written out here (md's formula).
parity_member () { echo $(( (N - 1) - $1 % N )); }
spoil () { flip_byte "${DISKS[$1]}" "$2"; }   # member offset; prints the new byte
# Stripes 3, 4, 5, 6: each parity member once; stripe 6 twice in one unit
# and once in another unit (2 units -> 16 sectors).
expect=""
total=0
for s in 3 4 5 6; do
  p=$(parity_member $s)
  base=$(( DOFF + s * CHUNK ))
  spoil "$p" $(( base + 100 )) >/dev/null
  units=1
  if [ $s = 6 ]; then
    spoil "$p" $(( base + 200 )) >/dev/null
    spoil "$p" $(( base + 3 * 4096 + 7 )) >/dev/null; units=2
  fi
  expect+="stripe $s: array bytes [$(( s * CHUNK * (N - 1) )), $(( (s + 1) * CHUNK * (N - 1) ))), parity on member $p from offset $base, $units x 4 KiB wrong"$'\n'
  total=$(( total + 8 * units ))
done
sums=$(checksum_members "${DISKS[@]}")
status=0
out=$("$RAID5CTL" check "${DISKS[@]}" 2>/dev/null) || status=$?
[ $status = 2 ] || fail "check with wrong parity: exit $status, expected 2"
echo "$out"
grep -q "4 with wrong parity, mismatch_cnt $total$" <<<"$out" ||
  fail "expected 4 stripes and mismatch_cnt $total"
diff <(printf '%s' "$expect") <(grep '^  stripe' <<<"$out" | sed 's/^  //') ||
  fail "check named other stripes or offsets"
[ "$(checksum_members "${DISKS[@]}")" = "$sums" ] || fail "check wrote to a member"

# JSON says the same.
"$RAID5CTL" check --json "${DISKS[@]}" 2>/dev/null > "$tmpdir/json" || :
/usr/bin/python3 - "$tmpdir/json" "$total" <<'PY' || fail "check --json disagrees"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["mismatch_sectors"] == int(sys.argv[2]), r
assert [m["stripe"] for m in r["mismatches"]] == [3, 4, 5, 6], r
PY

# A served array is refused.
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${DISKS[@]/#/disk=}" --run \
  "! '$RAID5CTL' check ${DISKS[*]} 2>'$tmpdir/err'" || fail "check ran while served"
grep -q "in use" "$tmpdir/err" || fail "refusal does not say the member is in use: $(cat "$tmpdir/err")"
# 'missing' is refused, as the manual says (an extra one was taken quietly).
for cmd in check repair; do
  out=$("$RAID5CTL" $cmd "${DISKS[@]}" missing 2>&1) && fail "$cmd with 'missing' ran: $out"
  [ "$out" = "raid5ctl $cmd: 'missing' is not taken here: a degraded array has no parity to $cmd" ] ||
    fail "$cmd with 'missing': $out"
done

# A spoiled data byte in stripe 9 (data index 0 of stripe 9 lives on
# member (pd + 1) % N for left-symmetric).
s=9; p=$(parity_member $s); d=$(( (p + 1) % N ))
new=$(spoil "$d" $(( DOFF + s * CHUNK + 5 )))
"$RAID5CTL" repair "${DISKS[@]}" >/dev/null 2>&1 || fail "repair failed"
out=$("$RAID5CTL" check "${DISKS[@]}" 2>/dev/null) || fail "check after repair: exit $?"
grep -q "mismatch_cnt 0$" <<<"$out" || fail "after repair: $out"
b=$(od -An -tx1 -j $(( DOFF + s * CHUNK + 5 )) -N1 "${DISKS[$d]}" | tr -d ' ')
[ "$b" = "$new" ] || fail "repair changed data (byte is $b, not $new)"

# Read back: everything but the spoiled data byte equals the old export.
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${DISKS[@]/#/disk=}" --run \
  "nbdcopy \"\$uri\" '$tmpdir/after'" || fail "reading back"
cmp -l "$tmpdir/before" "$tmpdir/after" > "$tmpdir/diff" || :
[ "$(wc -l < "$tmpdir/diff")" = 1 ] && [ "$(awk '{print $1}' "$tmpdir/diff")" = $(( s * CHUNK * (N - 1) + 5 + 1 )) ] ||
  fail "repair changed data read through the plugin: $(head -3 "$tmpdir/diff")"
# state DISK: the superblock's State (mdadm --examine's words).
state () { "$RAID5CTL" examine "$1" | sed -n 's/^ *State : //p'; }

# A dirty array: the server killed right after a flushed write.
rm -f "$tmpdir/sock" "$tmpdir/pid"
"$NBDKIT" -f -U "$tmpdir/sock" -P "$tmpdir/pid" "$PLUGIN" "${DISKS[@]/#/disk=}" \
  >/dev/null 2>&1 &
srv=$!
for (( i = 0; i < 100; i++ )); do [ -s "$tmpdir/pid" ] && [ -S "$tmpdir/sock" ] && break; sleep 0.05; done
/usr/bin/python3 -c '
import nbd, os, sys
h = nbd.NBD(); h.connect_uri("nbd+unix:///?socket=" + sys.argv[1])
h.pwrite(b"d" * 4096, 0); h.flush(); os.kill(int(sys.argv[2]), 9)
' "$tmpdir/sock" "$srv" || fail "the write before the kill"
wait $srv 2>/dev/null || :
[ "$(state "${DISKS[0]}")" = active ] || fail "not dirty after the kill"
p=$(parity_member 2)
spoil "$p" $(( DOFF + 2 * CHUNK + 100 )) >/dev/null
st=0; out=$("$RAID5CTL" check "${DISKS[@]}" 2>&1) || st=$?
[ $st = 2 ] || fail "check of a dirty array with a spoiled parity byte: exit $st: $out"
grep -q "stripe 2:" <<<"$out" && grep -q "the array is dirty" <<<"$out" ||
  fail "check of a dirty array: $out"
[ "$(state "${DISKS[0]}")" = active ] || fail "check cleaned the dirty array"
out=$("$RAID5CTL" repair "${DISKS[@]}" 2>&1) || fail "repair of a dirty array: exit $?: $out"
grep -q "this repair was its resync" <<<"$out" || fail "repair of a dirty array: $out"
for d in "${DISKS[@]}"; do
  [ "$(state "$d")" = clean ] || fail "${d##*/}: not clean after the repair"
done
out=$("$RAID5CTL" check "${DISKS[@]}" 2>/dev/null) || fail "check after the dirty repair: exit $?"
grep -q "mismatch_cnt 0$" <<<"$out" && ! grep -q dirty <<<"$out" ||
  fail "after the dirty repair: $out"
echo "test-check: OK"
