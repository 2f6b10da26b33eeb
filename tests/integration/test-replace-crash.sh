#!/usr/bin/env bash
# A crash in the middle of a hot replace must not let the two copies of
# the slot disagree where a write was in flight.  A write goes to the
# slot's member first and then to its replacement (array/writepath.c,
# wp_run_writes), so kill -9 between the two leaves the member with it
# and the replacement without, below the copy's recorded point.  After the
# restart the array serves that stripe from the member; if the replace
# then went on from its recorded point, the replacement would take the
# slot without that write, and a byte read once would read otherwise
# afterwards -- with no write in between.  (Found by scripts/soak.sh
# --members local --seed 9: a kill -9 mid-replace, one byte of a zero in
# flight changed after the replace ended.)  As md reads a slot's
# replacement wherever it is in sync (R5_ReadRepl), what it serves does
# not change when it takes the slot.
#
# The state the crash leaves is made here for sure: the replace of slot 0
# has recorded a point past stripe S, the array is killed while it is
# dirty, and then bytes of slot 0's data chunk of stripe S are changed on
# the member only (a write that reached it and not the replacement).
# Started again, the array reads them; once the replace is over, they
# must read the same, and the replacement must hold them.
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
. "${0%/*}/job-functions.sh"
requires_jobs
requires_nbd_python

MB=8 CHUNK=65536
m=()
for i in 0 1 2; do
  m+=("$tmpdir/r$i.img")
  truncate -s ${MB}M "${m[$i]}"
done
new=$tmpdir/new0.img
truncate -s ${MB}M "$new"
"$RAID5CTL" create --chunk 64K --bitmap none "${m[@]}" >"$tmpdir/create.log" 2>&1 ||
  { cat "$tmpdir/create.log" >&2; fail "create"; }
md_geometry "${m[0]}"
[ "$MD_LAYOUT" = left-symmetric ] || fail "layout $MD_LAYOUT"
speed=(sync-speed-min=200 sync-speed-max=200)
serve_ctl "$tmpdir/nbdkit.log" "${m[@]/#/disk=}" "${speed[@]}" || fail "serve"
next_seed
"$RANDOM_IO" "$URI" auto --seed "$RIO_SEED" --ops 400 --chunk 64K \
  --model-out "$tmpdir/model" >"$tmpdir/fill.out" 2>&1 ||
  { cat "$tmpdir/fill.out" >&2; fail "filling the array"; }

# Stripe S with data of slot 0 (left-symmetric, 3 members: parity on
# 2 - S % 3), well below where the copy has recorded its point.
S=4 K=1                       # slot 0 holds data index S % 3 of stripe S
read -r mem off < <(data_byte_off $S $K 3 $CHUNK "$MD_DOFF" left-symmetric)
[ "$mem" = 0 ] || fail "data index $K of stripe $S is on slot $mem, not 0"
array_off=$(( (S * 2 + K) * CHUNK ))

echo "== replace slot 0, then kill -9 while the array is dirty"
ctl_ok replace 0 "$new"
for (( i = 0; i < 200; i++ )); do
  rec=$(md_field "$new" 'Recovery Offset')
  rec=${rec%% *}
  [ "${rec:-0}" -gt $(( (S + 1) * CHUNK / 512 )) ] && break
  sleep 0.1
done
[ "${rec:-0}" -gt $(( (S + 1) * CHUNK / 512 )) ] ||
  fail "the replacement never recorded a point past stripe $S (recovery offset ${rec:-none})"
echo "   the replacement's recovery offset: $rec sectors"
# Writes elsewhere keep the array dirty (md: active) until the kill.
"$NBD_PYTHON" - "$URI" >/dev/null 2>&1 <<'EOF' &
import nbd, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1])
b = h.pread(4096, 4096 * 1000)
while True:
    h.pwrite(b, 4096 * 1000)
EOF
writer=$!
cleanup_fn "kill_ours -9 $writer"
wait_active "${m[1]}"
crash_server
wait $writer 2>/dev/null || :
[ "$(md_field "${m[0]}" State)" = active ] || fail "the array was not dirty at the kill"
# raid5ctl examine of the replacement, alone and with its array (it
# crashed on one alone: no member to judge it by).
"$RAID5CTL" examine "$new" >"$tmpdir/ex1" 2>&1 || fail "examine the replacement alone: $(tail -n 2 "$tmpdir/ex1")"
grep -q 'raid5 plugin : not alone: it is a replacement' "$tmpdir/ex1" ||
  fail "examine alone: $(grep plugin "$tmpdir/ex1")"
"$RAID5CTL" examine "${m[@]}" "$new" >"$tmpdir/ex2" 2>&1 || fail "examine with its array"
grep -q 'raid5 plugin : yes, as the replacement of slot 0 of 3 (the array was not stopped cleanly: the copy starts over)' "$tmpdir/ex2" ||
  fail "examine with its array: $(grep plugin "$tmpdir/ex2")"

echo "== a write that reached slot 0's member and not its replacement"
printf 'IN-FLIGHT WRITE %.0s' $(seq 1 64) |
  dd of="${m[0]}" bs=1 seek=$(( off + 4096 )) conv=notrunc status=none
serve_ctl "$tmpdir/nbdkit.log" "${m[@]/#/disk=}" "disk=$new" "${speed[@]}" ||
  fail "serve after the kill"
! grep -q 'left out\|(null)' "$tmpdir/nbdkit.log" ||
  fail "the replacement taken is said to be left out: $(grep 'left out' "$tmpdir/nbdkit.log")"
"$NBD_PYTHON" - "$URI" "$(( array_off + 4096 ))" "$tmpdir/before" <<'EOF' || fail "read"
import nbd, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1])
open(sys.argv[3], "wb").write(h.pread(1024, int(sys.argv[2])))
EOF
grep -q 'IN-FLIGHT WRITE' "$tmpdir/before" ||
  fail "the array does not serve the member's bytes: $(head -c 64 "$tmpdir/before" | od -c | head -n 2)"
echo "   read before the replace ends: $(head -c 32 "$tmpdir/before")"

echo "== the replace ends: the bytes read the same, the replacement holds them"
ctl speed --min 100000 --max 100000 >/dev/null
ctl_wait 's["job"]["kind"] == "idle" and s["members"][0]["path"] == "'"$new"'"' 60
"$NBD_PYTHON" - "$URI" "$(( array_off + 4096 ))" "$tmpdir/after" <<'EOF' || fail "read"
import nbd, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1])
open(sys.argv[3], "wb").write(h.pread(1024, int(sys.argv[2])))
EOF
cmp -s "$tmpdir/before" "$tmpdir/after" ||
  fail "the bytes changed when the replacement took slot 0: '$(head -c 32 "$tmpdir/before")' became '$(head -c 32 "$tmpdir/after" | tr -c '[:print:]' .)'"
cmp -s <(dd if="${m[0]}" bs=1 skip=$(( off + 4096 )) count=1024 status=none) \
       <(dd if="$new" bs=1 skip=$(( off + 4096 )) count=1024 status=none) ||
  fail "the replacement does not hold what the member held there"
"$RAID5CTL" --control "$CTL_SOCK" check --wait >"$tmpdir/check.out" 2>&1 ||
  { cat "$tmpdir/check.out" >&2; fail "check"; }
grep -q 'mismatch_cnt 0$' "$tmpdir/check.out" || fail "check: $(cat "$tmpdir/check.out")"
echo "   $(tail -n 1 "$tmpdir/check.out")"
stop_server
echo "test-replace-crash: OK"
