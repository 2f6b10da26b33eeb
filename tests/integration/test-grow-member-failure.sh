#!/usr/bin/env bash
# raid5ctl grow when a member fails mid-reshape: members are NBD exports
# (nbdkit's file plugin; member 1 behind the error filter), the array
# holds random data, and half way through a 3 -> 4 grow member 1 starts
# answering EIO.  md's rule: the member is failed (recorded in the
# others' superblocks) and the reshape goes on degraded.  Afterwards:
# the grow succeeded, the superblocks say 4 raid disks with slot 1 out,
# every byte is where md puts it for 4 members (member-check, slot 1
# missing: its chunks computed from the others) and the plugin serves the
# data with slot 1 missing.  Then on files, the member being added cut
# short half way: it fails at its first write past the end (not extended
# again), the grow goes on degraded.
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
requires_plugin
requires_md
requires "$NBDKIT" --filter=error null --version
requires nbdcopy --version
requires_raid5ctl

SIZE=24M CHUNK=65536
declare -A URI_OF PID_OF
TRIGGER=$tmpdir/g1.errors
member_server g0
member_server g1 --filter=error error=EIO error-rate=100% "error-file=$TRIGGER"
member_server g2
uris=("${URI_OF[g0]}" "${URI_OF[g1]}" "${URI_OF[g2]}")
"$RAID5CTL" create --chunk 64K --bitmap none "${uris[@]}" >"$tmpdir/create.log" 2>&1 ||
  { cat "$tmpdir/create.log" >&2; fail "create over URIs"; }
md_geometry "$tmpdir/g0.img"
fill_random "$tmpdir/model" "${uris[@]/#/disk=}"
truncate -s "$SIZE" "$tmpdir/new.img"

# past_a_third MEMBER ERRFILE: wait (15 s at most) until MEMBER's
# superblock says the reshape is past a third of the array; p its KiB.
past_a_third ()
{
  local i
  for (( i = 0; i < 300; i++ )); do
    p=$(md_field "$1" "Reshape pos'n")
    p=${p%% *}
    [ -n "$p" ] && [ "$p" -gt $(( total_kib / 3 )) ] && return 0
    sleep 0.05
  done
  fail "no reshape under way: $(cat "$2")"
}

# grow_ends WHAT: the grow (pid) ends within 120 s; status its exit.
grow_ends ()
{
  local i
  status=0
  for (( i = 0; i < 1200; i++ )); do
    kill -0 $pid 2>/dev/null || break
    sleep 0.1
  done
  kill -0 $pid 2>/dev/null && { kill -9 $pid; fail "$1 did not end in 120 s"; }
  wait $pid || status=$?
}

echo "== 3 -> 4, member 1 failing half way"
"$RAID5CTL" grow --add "$tmpdir/new.img" --max-speed 4M "${uris[@]}" \
  >"$tmpdir/out" 2>"$tmpdir/err" &
pid=$!
total_kib=$(( size / 1024 ))
past_a_third "$tmpdir/g0.img" "$tmpdir/err"
touch "$TRIGGER"
echo "   member 1 answers EIO from array KiB $p on"
grow_ends "the grow"
cat "$tmpdir/err" "$tmpdir/out"
[ $status = 0 ] || fail "the grow stopped (exit $status)"
grep -q "^grow: the array has 4 members" "$tmpdir/out" || fail "grow said: $(cat "$tmpdir/out")"
grep -q "member 1 (.*: Input/output error; member marked faulty" "$tmpdir/err" ||
  fail "the failure of member 1 is not said"
rm -f "$TRIGGER"
members=("$tmpdir/g0.img" missing "$tmpdir/g2.img" "$tmpdir/new.img")
[ "$(md_field "$tmpdir/g0.img" 'Raid Devices')" = 4 ] || fail "Raid Devices: $(md_field "$tmpdir/g0.img" 'Raid Devices')"
[ "$(md_field "$tmpdir/g0.img" 'Array State' | cut -d' ' -f1)" = "A.AA" ] ||
  fail "Array State: $(md_field "$tmpdir/g0.img" 'Array State')"
stripes=$(( (24 * 1048576 - MD_DOFF) / CHUNK ))
truncate -s $(( stripes * 3 * CHUNK )) "$tmpdir/model"
member_check --chunk 64K --layout "$MD_LAYOUT" --data-offset $(( MD_DOFF - 3 * CHUNK )) \
  --stripes "$stripes" --model "$tmpdir/model" "${members[@]}"
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" disk="${URI_OF[g0]}" disk=missing disk="${URI_OF[g2]}" \
  disk="$tmpdir/new.img" --run "nbdcopy \"\$uri\" '$tmpdir/back'" ||
  fail "serving the grown, degraded array"
cmp "$tmpdir/model" "$tmpdir/back" || fail "read back through the plugin"
# Member 1 given too: it left before the grow ended, so it disagrees on
# the shape; as mdadm (compare_super1: "doesn't match others") the start
# is refused -- with the fields named, and what to do.
out=$("$NBDKIT" -U "$tmpdir/all.sock" "$PLUGIN" disk="${URI_OF[g0]}" disk="${URI_OF[g1]}" \
        disk="${URI_OF[g2]}" disk="$tmpdir/new.img" --run true 2>&1) &&
  fail "served with member 1 from before the grow"
echo "   all four given: $(grep -o 'disagrees.*' <<<"$out" | head -n 1)"
grep -q "disagrees with the other members' superblocks on.*; it is older (events [0-9]* < [0-9]*): it left before the array took its shape: give disk=missing in its place and rebuild it" <<<"$out" ||
  fail "the refusal does not say why and what to do: $out"

echo "== 3 -> 4 on files, the new member cut short half way"
# Nothing reads the member being added, so only its writes meet the cut:
# each went on, extending the file again with what had been copied
# before the cut as holes reading as zeroes (the grow ended with every
# member "in sync").  A job's write never makes a file longer now: the
# new member fails at its first write past the end, the grow goes on
# degraded, and the file keeps the size it was cut to.
files=("$tmpdir/f0.img" "$tmpdir/f1.img" "$tmpdir/f2.img")
for f in "${files[@]}" "$tmpdir/fnew.img"; do truncate -s "$SIZE" "$f"; done
"$RAID5CTL" create --chunk 64K --bitmap none "${files[@]}" >"$tmpdir/fcreate.log" 2>&1 ||
  { cat "$tmpdir/fcreate.log" >&2; fail "create over files"; }
fill_random "$tmpdir/fmodel" "${files[@]/#/disk=}"
"$RAID5CTL" grow --add "$tmpdir/fnew.img" --max-speed 4M "${files[@]}" \
  >"$tmpdir/fout" 2>"$tmpdir/ferr" &
pid=$!
past_a_third "$tmpdir/f0.img" "$tmpdir/ferr"
cut=$(( 2 << 20 ))
truncate -s $cut "$tmpdir/fnew.img"
echo "   the new member cut to 2 MiB at array KiB $p"
grow_ends "the grow on files"
cat "$tmpdir/ferr" "$tmpdir/fout"
[ $status = 0 ] || fail "the grow on files stopped (exit $status)"
# Its size: the cut, unless a window's write was under way at the cut
# (then that write's end, near the third of it where the cut came);
# extended again, it grew back to the grow's end.
now=$(stat -c %s "$tmpdir/fnew.img")
[ "$now" = $cut ] || [ "$now" -lt $(( $(to_bytes "$SIZE") / 2 )) ] ||
  fail "the new member was extended again to $now bytes"
grep -q "member 3 (.*it ends before that.*member marked faulty" "$tmpdir/ferr" ||
  fail "the new member's failure is not said"
[ "$(md_field "$tmpdir/f0.img" 'Array State' | cut -d' ' -f1)" = "AAA." ] ||
  fail "Array State: $(md_field "$tmpdir/f0.img" 'Array State')"
truncate -s $(( stripes * 3 * CHUNK )) "$tmpdir/fmodel"
member_check --chunk 64K --layout "$MD_LAYOUT" --data-offset $(( MD_DOFF - 3 * CHUNK )) \
  --stripes "$stripes" --model "$tmpdir/fmodel" "${files[@]}" missing
echo "test-grow-member-failure: OK"
