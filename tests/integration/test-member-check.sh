#!/usr/bin/env bash
# Test the member checker itself (no plugin needed): its layout maps
# against the hand-written tables of md-raid5-reference.md section 1.3,
# md's worked offset example, and that it passes good members and fails
# damaged ones with a message naming stripe, member and offsets.

. "${0%/*}/functions.sh"
requires_programs

# expect_map LAYOUT STRIPES EXPECTED MEMBER...
expect_map ()
{
  local got
  got=$("$MEMBER_CHECK" --layout "$1" --print-map "$2" "${@:4}")
  [ "$got" = "$3" ] || fail "layout $1, $(( $# - 3 )) members: got $got, expected $3"
}

# N=3: section 1.3 table and the listed patterns.  N=4: left-symmetric
# stripe 1 is [D4 D5 P D3] (section 1.3); the rest worked by hand from the
# formulas in section 1.2.
expect_map ls 6 '[D0 D1 P] [D3 P D2] [P D4 D5] [D6 D7 P] [D9 P D8] [P D10 D11]' a b c
expect_map la 3 '[D0 D1 P] [D2 P D3] [P D4 D5]' a b c
expect_map ra 3 '[P D0 D1] [D2 P D3] [D4 D5 P]' a b c
expect_map rs 3 '[P D0 D1] [D3 P D2] [D4 D5 P]' a b c
expect_map left-symmetric 4 '[D0 D1 D2 P] [D4 D5 P D3] [D8 P D6 D7] [P D9 D10 D11]' a b c d
expect_map left-asymmetric 4 '[D0 D1 D2 P] [D3 D4 P D5] [D6 P D7 D8] [P D9 D10 D11]' a b c d
expect_map right-asymmetric 4 '[P D0 D1 D2] [D3 P D4 D5] [D6 D7 P D8] [D9 D10 D11 P]' a b c d
expect_map right-symmetric 4 '[P D0 D1 D2] [D5 P D3 D4] [D7 D8 P D6] [D9 D10 D11 P]' a b c d
# parity-first (md 4): parity on member 0, data k on member k+1;
# parity-last (md 5): parity on member N-1, data k on member k.
expect_map parity-first 3 '[P D0 D1] [P D2 D3] [P D4 D5]' a b c
expect_map parity-last 3 '[D0 D1 P] [D2 D3 P] [D4 D5 P]' a b c
expect_map parity-first 4 '[P D0 D1 D2] [P D3 D4 D5] [P D6 D7 D8] [P D9 D10 D11]' a b c d
expect_map parity-last 4 '[D0 D1 D2 P] [D3 D4 D5 P] [D6 D7 D8 P] [D9 D10 D11 P]' a b c d

# md's worked example (section 1.3): N=3, 64K chunk, data_offset 2048
# sectors, array sector 600 -> member 1, member byte 1224704.
size=$(array_size 3 4M 64K 1M)
head -c "$size" /dev/zero > "$tmpdir/model"
printf 'MARK' | dd of="$tmpdir/model" bs=1 seek=$(( 600 * 512 )) conv=notrunc status=none
make_members w 3 4M
"$MEMBER_CHECK" -q --generate 4M --chunk 64K --data-offset 1M \
  --model "$tmpdir/model" "${MEMBERS[@]}"
got=$(dd if="${MEMBERS[1]}" bs=1 skip=1224704 count=4 status=none)
[ "$got" = MARK ] || fail "worked example: member 1 at 1224704 holds '$got'"

# A random array, every layout and width: generated members check clean,
# also with each member missing (rebuilt by XOR).
for n in 3 4 5; do
  for layout in parity-first parity-last ls la rs ra; do  # ra last: used below
    size=$(array_size $n 1M 16K 8K)
    head -c "$size" /dev/urandom > "$tmpdir/model"
    make_members g 1 0
    make_members g $n 1M
    geo=(--chunk 16K --layout $layout --data-offset 8K)
    "$MEMBER_CHECK" -q --generate 1M "${geo[@]}" --model "$tmpdir/model" "${MEMBERS[@]}"
    member_check -q "${geo[@]}" --outside-zero --model "$tmpdir/model" "${MEMBERS[@]}"
    for (( k = 0; k < n; k++ )); do
      mapfile -t m < <(with_missing $k "${MEMBERS[@]}")
      member_check -q "${geo[@]}" --model "$tmpdir/model" "${m[@]}"
    done
    # The wrong layout must fail (every pair of layouts differs for N>=3).
    for other in ls la rs ra parity-first parity-last; do
      [ $other = $layout ] && continue
      if "$MEMBER_CHECK" -q --chunk 16K --layout $other --data-offset 8K \
           --model "$tmpdir/model" "${MEMBERS[@]}" 2>/dev/null; then
        fail "N=$n: members made with $layout pass as $other"
      fi
    done
  done
done

# From here on: the last array made (N=5, right-asymmetric, 16K chunk, 8K
# data offset) and its model.  expect_fail REGEX ARGS... : the checker must exit 1 and
# print REGEX.
expect_fail ()
{
  local re=$1 status=0
  shift
  "$MEMBER_CHECK" -q "$@" 2>"$tmpdir/err" || status=$?
  sed "s/^/(expected) /" "$tmpdir/err"
  [ $status -eq 1 ] || fail "member-check $*: exit $status, expected 1"
  grep -Eq "$re" "$tmpdir/err" || fail "member-check $*: no '$re' in its message"
}

geo=(--chunk 16K --layout ra --data-offset 8K)
# Stripe 6 of 5 right-asymmetric members: parity on member 6%5 = 1, data
# index 0 on member 0; member offset 8K + 6*16K = 106496, array offset
# 6*4*16K = 393216.
# poke FILE OFFSET: flip every bit of one byte.
poke ()
{
  local b
  b=$(od -An -tu1 -j "$2" -N1 "$1")
  printf "\\x$(printf %02x $(( b ^ 255 )))" |
    dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
cp "${MEMBERS[0]}" "$tmpdir/saved0"; cp "${MEMBERS[1]}" "$tmpdir/saved1"
poke "${MEMBERS[0]}" $(( 106496 + 100 ))
expect_fail 'stripe 6, data index 0 on member 0 .*member offset 106496, array offset 393216' \
  "${geo[@]}" --model "$tmpdir/model" "${MEMBERS[@]}"
expect_fail 'stripe 6: parity on member 1' "${geo[@]}" "${MEMBERS[@]}"
# Damage to one member shows in the rebuilt data of another one missing.
mapfile -t m < <(with_missing 2 "${MEMBERS[@]}")
expect_fail 'data index 1 on member 2 .*rebuilt from the others' "${geo[@]}" \
  --model "$tmpdir/model" "${m[@]}"
cp "$tmpdir/saved0" "${MEMBERS[0]}"

poke "${MEMBERS[1]}" $(( 106496 + 7 ))
expect_fail 'stripe 6: parity on member 1 .* first at member offset 106503' \
  "${geo[@]}" "${MEMBERS[@]}"
cp "$tmpdir/saved1" "${MEMBERS[1]}"

# A byte the model does not know is not compared with it, but parity still is.
head -c $(( (size + 7) / 8 )) /dev/zero | tr '\0' '\377' > "$tmpdir/model.known"
printf '\x00' | dd of="$tmpdir/model.known" bs=1 seek=$(( 393216 / 8 + 12 )) conv=notrunc status=none
poke "${MEMBERS[0]}" $(( 106496 + 100 ))
expect_fail 'parity on member 1' "${geo[@]}" --model "$tmpdir/model" "${MEMBERS[@]}"
if grep -q 'data index' "$tmpdir/err"; then
  fail "an unknown byte of the model was compared"
fi
# --lenient-parity tolerates that stripe (it holds unknown bytes), but not
# stale parity in stripe 7, whose bytes are all known (parity on member 2).
member_check -q "${geo[@]}" --lenient-parity --model "$tmpdir/model" "${MEMBERS[@]}"
cp "${MEMBERS[2]}" "$tmpdir/saved2"
poke "${MEMBERS[2]}" $(( 8192 + 7 * 16384 + 3 ))
expect_fail 'stripe 7: parity on member 2' "${geo[@]}" --lenient-parity \
  --model "$tmpdir/model" "${MEMBERS[@]}"
cp "$tmpdir/saved2" "${MEMBERS[2]}"
cp "$tmpdir/saved0" "${MEMBERS[0]}"
rm "$tmpdir/model.known"

# Bytes outside the array area (before data-offset, after the last stripe).
poke "${MEMBERS[2]}" 100
expect_fail 'member 2 .*before data-offset.*member offset 100' "${geo[@]}" \
  --outside-zero "${MEMBERS[@]}"
"$MEMBER_CHECK" -q "${geo[@]}" "${MEMBERS[@]}" || fail "outside bytes checked without --outside-zero"

# A model whose size disagrees with md's formula.
head -c 4096 /dev/zero >> "$tmpdir/model"
expect_fail 'md.s formula gives' "${geo[@]}" --model "$tmpdir/model" "${MEMBERS[@]}"

echo "$test_name: OK"
