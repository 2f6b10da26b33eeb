#!/usr/bin/env bash
# Check, repair and rebuild take another path when every member is in
# memory (tmpfs): a chunk is read a slice at a time (128 KiB here) into a
# small scratch, not whole stripes into the step's buffer.  The same array
# (3 members, 1 MiB chunks: 8 slices a chunk) is built twice, on tmpfs
# (/dev/shm) and on the scratch folder's file system, and:
#  - the same parity bytes spoiled in both -- in the first slice, in the
#    sixth and in the last unit of a chunk -- are found the same in both:
#    stripes, parity member, first wrong offset, units (md's count);
#  - repair rewrites them in both; check then says 0; data is untouched;
#  - slot 1 rebuilt offline onto a blank file, in both, equals the
#    member it replaces (data area), byte for byte; on tmpfs also onto a
#    file of written zeroes (no holes: mapped, it is written in place;
#    read, with pwrite).
#  - a check of a fresh (sparse) array on tmpfs allocates none of its
#    holes, even with blocks fallocated past the members' ends.
# The scratch folder itself on tmpfs only runs the memory path twice:
# it says so, and still checks everything.
# Members in memory are read in place (mapped) or into a buffer, as a
# measurement at the job's start decides for the machine: the whole test
# runs once each way (RAID5_MEMBER_ACCESS), and check must say which.

if [ -z "${RAID5_MEMBER_ACCESS:-}" ]; then
  RAID5_MEMBER_ACCESS=mapped "$0" || exit
  exec env RAID5_MEMBER_ACCESS=read "$0"
fi
export RAID5_MEMBER_ACCESS
echo "== members in memory: $RAID5_MEMBER_ACCESS"
. "${0%/*}/functions.sh"
requires_raid5ctl
requires nbdcopy --version
[ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] ||
  skip "/dev/shm is not a tmpfs: no members in memory here"
[ "$(stat -f -c %T "$tmpdir")" = tmpfs ] &&
  echo "note: $tmpdir is on tmpfs too: both runs take the memory path"

N=3 CHUNK=$((1 << 20)) SLICE=$((128 << 10)) MIB=24
mem=$(mktemp -d /dev/shm/raid5-scrub.XXXXXX)
cleanup_fn rm -rf "$mem"
head -c 40M /dev/urandom > "$tmpdir/pattern"

# build DIR: an array of 3 members in DIR, filled with the pattern.
build ()
{
  local d=$1
  truncate -s ${MIB}M "$d/m0" "$d/m1" "$d/m2"
  "$RAID5CTL" create --chunk 1M --bitmap none "$d"/m? >/dev/null 2>&1 ||
    fail "raid5ctl create in $d"
  "$NBDKIT" -U "$(captive_sock)" "$PLUGIN" disk="$d/m0" disk="$d/m1" disk="$d/m2" --run \
    "nbdcopy '$tmpdir/pattern' \"\$uri\" 2>/dev/null || true" ||
    fail "filling the array in $d"
}

# report DIR: check's report, the folder's name taken out.
report ()
{
  local status=0 out
  out=$("$RAID5CTL" check "$1"/m? 2>"$tmpdir/check.err") || status=$?
  echo "exit $status"
  sed "s|$1/||g" <<<"$out"
}

# A fresh array on tmpfs is holes; blocks fallocated past the members'
# ends (--keep-size) make st_blocks cover their size all the same.  A
# check must read the holes, not load them through a mapping (which
# allocates them): nothing allocated after it.
sparse=$mem/sparse
mkdir "$sparse"
truncate -s ${MIB}M "$sparse/m0" "$sparse/m1" "$sparse/m2"
"$RAID5CTL" create --chunk 1M --bitmap none "$sparse"/m? >/dev/null 2>&1 ||
  fail "raid5ctl create in $sparse"
for m in "$sparse"/m?; do
  fallocate --keep-size -o ${MIB}M -l ${MIB}M "$m" || skip "fallocate on /dev/shm"
done
before=$(du -k --total "$sparse"/m? | tail -n 1 | cut -f 1)
grep -q "mismatch_cnt 0$" <<<"$(report "$sparse")" ||
  fail "a fresh sparse array: $(report "$sparse")"
after=$(du -k --total "$sparse"/m? | tail -n 1 | cut -f 1)
[ "$after" = "$before" ] ||
  fail "check of a sparse array allocated its holes: $before KiB before, $after KiB after"
rm -rf "$sparse"

build "$mem"
build "$tmpdir"
doff=$(( $("$RAID5CTL" examine --json "$mem/m0" |
           /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["data_offset_sectors"])') * 512 ))
[ "$(report "$mem")" = "$(report "$tmpdir")" ] ||
  fail "a clean array: check differs between tmpfs and disk"
grep -q "mismatch_cnt 0$" <<<"$(report "$mem")" || fail "a clean array: $(report "$mem")"
case $RAID5_MEMBER_ACCESS in
  mapped) said="members in memory read in place" ;;
  *) said="members in memory read into a buffer" ;;
esac
grep -q "$said, as RAID5_MEMBER_ACCESS says" "$tmpdir/check.err" ||
  fail "check on tmpfs did not say '$said': $(cat "$tmpdir/check.err")"

# Spoil parity of stripes 2 (first slice), 5 (sixth slice: bytes
# 5*SLICE+..) and 7 (first slice and the chunk's last unit), the same
# bytes in both copies.  Left-symmetric: parity of stripe s on N-1-s%N.
for s in 2 5 7; do
  p=$(( N - 1 - s % N )) base=$(( doff + s * CHUNK ))
  case $s in
    2) offs=($(( base + 10 ))) ;;
    5) offs=($(( base + 5 * SLICE + 4096 + 3 ))) ;;
    7) offs=($(( base + 1 )) $(( base + CHUNK - 4096 + 9 ))) ;;
  esac
  for o in "${offs[@]}"; do
    flip_byte "$mem/m$p" "$o" >/dev/null
    flip_byte "$tmpdir/m$p" "$o" >/dev/null
  done
done
got=$(report "$mem")
echo "$got"
[ "$got" = "$(report "$tmpdir")" ] ||
  fail "spoiled parity: check on tmpfs and on disk differ: $(diff <(echo "$got") <(report "$tmpdir"))"
grep -q "^exit 2$" <<<"$got" || fail "spoiled parity: check did not exit 2"
grep -q "3 with wrong parity, mismatch_cnt 32$" <<<"$got" ||
  fail "expected 3 stripes, 4 units (32 sectors)"
grep -q "stripe 5: .*parity on member 0 from offset $(( doff + 5 * CHUNK + 5 * SLICE + 4096 )), 1 x 4 KiB wrong" <<<"$got" ||
  fail "stripe 5: the wrong unit in the sixth slice is not named"
grep -q "stripe 7: .*parity on member 1 from offset $(( doff + 7 * CHUNK )), 2 x 4 KiB wrong" <<<"$got" ||
  fail "stripe 7: two units, from the chunk's first"

for d in "$mem" "$tmpdir"; do
  "$RAID5CTL" repair "$d"/m? >/dev/null 2>&1 || fail "repair in $d"
  grep -q "mismatch_cnt 0$" <<<"$(report "$d")" || fail "after repair in $d: $(report "$d")"
  "$NBDKIT" -U "$(captive_sock)" "$PLUGIN" disk="$d/m0" disk="$d/m1" disk="$d/m2" --run \
    "nbdcopy \"\$uri\" '$tmpdir/back'" || fail "reading back $d"
  cmp -s -n 40M "$tmpdir/pattern" "$tmpdir/back" || fail "repair in $d changed data"
done

# Rebuild slot 1 onto a blank file; it must equal the member it replaces.
for d in "$mem" "$tmpdir"; do
  truncate -s ${MIB}M "$d/new"
  "$RAID5CTL" rebuild --slot 1 --new "$d/new" "$d/m0" missing "$d/m2" \
    >/dev/null 2>"$tmpdir/rebuild.err" ||
    fail "rebuild in $d: $(tail -n 1 "$tmpdir/rebuild.err")"
  size=$(( $(stat -c %s "$d/m1") - doff ))
  cmp -s -i "$doff:$doff" -n "$size" "$d/m1" "$d/new" ||
    fail "rebuild in $d: the new member's data differs from the old one's"
done
# ... and onto written zeroes: no hole, so written in place when mapped.
dd if=/dev/zero of="$mem/new" bs=1M count=$MIB status=none ||
  fail "cannot write zeroes over $mem/new"
"$RAID5CTL" rebuild --force --slot 1 --new "$mem/new" "$mem/m0" missing "$mem/m2" \
  >/dev/null 2>"$tmpdir/rebuild.err" ||
  fail "rebuild onto zeroes: $(tail -n 1 "$tmpdir/rebuild.err")"
cmp -s -i "$doff:$doff" -n "$size" "$mem/m1" "$mem/new" ||
  fail "rebuild onto zeroes: the new member's data differs from the old one's"
echo "test-scrub-memory: OK"
