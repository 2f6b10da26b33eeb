#!/usr/bin/env bash
# Numbers on raid5ctl's command line are decimal digits within a range
# (raid/number.h), nothing strtoul() would also take:
#  - check --list -1, 99999999999, 4294967296, 1000001, 1e3, 0x10, ' 5',
#    '5 ' and +5, on a real array: each refused with exit 1 and one line
#    "raid5ctl check: --list ARG: ..." (before: -1 and 99999999999 ended
#    in "out of memory", 4294967296 wrapped to 0 and ran, ' 5' was 5);
#    --list 0 and 1000000 (the range's ends) run the check;
#  - the same for --list with --control (refused before any socket is
#    tried), monitor --delay (a decimal: 1e1, 0x1, ' 1', inf refused),
#    explain --stripes -1, layout --disks 4294967299 and rebuild
#    --max-speed 2T (above 1T), each naming its option.

. "${0%/*}/functions.sh"
[ -x "$RAID5CTL" ] || skip "not built: $RAID5CTL"

DISKS=()
for i in 0 1 2; do
  truncate -s 4M "$tmpdir/d$i"
  DISKS+=("$tmpdir/d$i")
done
"$RAID5CTL" create --chunk 64K "${DISKS[@]}" >/dev/null 2>&1 ||
  fail "raid5ctl create failed"

# refused PREFIX ARGS...: raid5ctl ARGS exits 1 with one line on stderr
# that starts with PREFIX and does not say "out of memory"; the members
# are unchanged (functions.sh's check_refused_prefix).
refused ()
{
  ( check_refused_prefix "$@" ) || failures=$(( failures + 1 ))
}

for n in -1 99999999999 4294967296 1000001 1e3 0x10 ' 5' '5 ' +5 ''; do
  refused "raid5ctl check: --list $n: " check --list "$n" "${DISKS[@]}"
done
for n in 0 1000000; do
  "$RAID5CTL" check --list "$n" "${DISKS[@]}" >"$tmpdir/out" 2>&1 ||
    fail "check --list $n: exit $?: $(cat "$tmpdir/out")"
done

refused "raid5ctl check: --list 4294967296: " \
  --control "$tmpdir/none.sock" check --wait --list 4294967296
for d in 1e1 0x1 ' 1' inf; do
  refused "raid5ctl monitor: --delay $d: " monitor --oneshot --delay "$d" \
    "$tmpdir/none.sock"
done
refused "raid5ctl explain: --stripes -1: " explain write 0 4K --stripes -1
refused "raid5ctl layout: --disks 4294967299: " layout --disks 4294967299
refused "raid5ctl rebuild: --max-speed 2T: " \
  rebuild --slot 1 --max-speed 2T "${DISKS[@]}"

[ $failures -eq 0 ] || fail "$failures case(s) failed (see above)"
echo "$test_name: OK"
