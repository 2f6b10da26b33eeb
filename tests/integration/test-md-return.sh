#!/usr/bin/env bash
# A member that missed writes never comes back as current (md's rule:
# super_1_sync records an absent slot in the survivors, super_1_validate
# takes a returning member's role from the freshest superblock).
#
# For 3, 4 and 5 members, every slot -- with 3, each without and with an
# internal bitmap; with 4 and 5, the two alternating over the slots --
# the story outside testing found:
#   1. 0x11 into a chunk on member S, clean stop;
#   2. served with member S missing: 0x22 into the same chunk, flush, and
#      the server killed at once (kill -9, within the safe-mode delay);
#      the survivors' superblocks must say active with slot S not working;
#   3. all members given again: refused, as md refuses it ("cannot start
#      dirty degraded array"), one line naming member S and why, and no
#      byte of any member changed;
#   4. force=true: served degraded without member S (left out with a log
#      line), and the chunk reads 0x22;
#   5. member S brought back while serving: re-added (bitmap) or rebuilt
#      (none) through the control socket; then the chunk reads 0x22, every
#      superblock is clean with all slots active, raid5ctl check finds
#      mismatch_cnt 0 and member-check finds parity right.
# Then the same with a clean stop in step 2 (3 members): the member is
# left out with a line (md: "kicking non-fresh"), and a bitmap re-add
# rebuilds only the regions written while it was away.
# Then RETURN_ROUNDS (14) rounds: a random slot missing, random writes killed at a
# random point, the member back: every acknowledged write reads back,
# before and after the member is re-added or rebuilt.
# Environment: RETURN_ROUNDS; RETURN_MEMBERS, the member counts of the
# every-slot walk (default "3 4 5").

. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
requires_plugin
requires_md
requires_nbd_python

ROUNDS=${RETURN_ROUNDS:-14}
read -r -a WALK_MEMBERS <<<"${RETURN_MEMBERS:-3 4 5}"
C=65536
fast=(sync-speed-min=500000 sync-speed-max=2000000)

# chunk_on N SLOT: the array offset of a chunk on member SLOT
# (left-symmetric: stripe 0 holds data index d on member d, parity on N-1;
# stripe 1's first data chunk is on member N-1).
chunk_on ()
{
  local n=$1 s=$2 off
  if (( s < n - 1 )); then off=$(( s * C )); else off=$(( (n - 1) * C )); fi
  [ "$("$RAID5CTL" map "$off" --disks "$n" --chunk 64K --json |
        tr -d ' \n' | sed 's/.*"member":\([0-9]*\),.*/\1/')" = "$s" ] ||
    fail "chunk_on $n $s: raid5ctl map disagrees about $off"
  echo "$off"
}

# poke URI OFF BYTE [PID]: write 64K of BYTE at OFF, flush; then kill -9
# PID at once (the server) if given.  peek URI OFF BYTE: they are BYTE.
POKE=${0%/*}/poke.py
poke () { "$NBD_PYTHON" "$POKE" "$1" write "${@:2}" 2>/dev/null; }
peek () { "$NBD_PYTHON" "$POKE" "$1" read "${@:2}"; }

# survivors_record_out SLOT FILE...: every FILE (a survivor) has a
# correct checksum, State active and slot SLOT not working ('.').
survivors_record_out ()
{
  local slot=$1 f st
  shift
  for f in "$@"; do
    st=$(md_field "$f" 'Array State' | cut -d' ' -f1)
    [ "$(md_field "$f" State)" = active ] ||
      fail "${f##*/}: State $(md_field "$f" State) after the kill, not active"
    [ "${st:$slot:1}" = . ] ||
      fail "${f##*/}: Array State $st: slot $slot written without its member is not recorded"
    md_field "$f" Checksum | grep -q correct || fail "${f##*/}: checksum"
  done
}

# ctl_wait CMD SLOT [PATH]: raid5ctl --control ... CMD --wait SLOT.
ctl_wait ()
{
  "$RAID5CTL" --control "$tmpdir/ctl" "$1" --wait "${@:2}" >"$tmpdir/ctl.out" 2>&1 ||
    { cat "$tmpdir/ctl.out" >&2; fail "raid5ctl --control $*"; }
}

# finish_return N SLOT OFF BM: step 5 on a server running degraded.
finish_return ()
{
  local n=$1 s=$2 off=$3 bm=$4 out
  if [ "$bm" = internal ]; then ctl_wait re-add "$s"
  else ctl_wait rebuild "$s" "${m[$s]}"
  fi
  peek "$URI" "$off" 0x22 || fail "n $n slot $s: after bringing member $s back, the chunk is not 0x22"
  stop_server
  md_expect clean "$(all_a "$n")" "${m[@]}"
  out=$("$RAID5CTL" check "${m[@]}" 2>&1) || fail "raid5ctl check: $out"
  grep -q "mismatch_cnt 0$" <<<"$out" || fail "raid5ctl check: $out"
  member_check --chunk 64K --layout "$MD_LAYOUT" --data-offset "$MD_DOFF" "${m[@]}"
}

# crash_return N SLOT BM: steps 1 to 5.
crash_return ()
{
  local n=$1 s=$2 bm=$3 off sums st i
  local -a deg
  md_create "r$n$s$bm" "$n" 16M --chunk 64K --assume-clean --bitmap "$bm"
  m=("${MEMBERS[@]}")
  mapfile -t disks < <(disk_args "${m[@]}")
  off=$(chunk_on "$n" "$s")
  raid5_captive "${disks[@]}" -- "$NBD_PYTHON" "$POKE" @URI@ write "$off" 0x11 ||
    fail "n $n slot $s: writing 0x11"
  deg=("${disks[@]}"); deg[$s]=disk=missing
  serve_bg "$tmpdir/deg.log" "${deg[@]}" || fail "serve without member $s"
  poke "$URI" "$off" 0x22 "$SERVER" || fail "n $n slot $s: writing 0x22"
  wait "$SERVER" 2>/dev/null || :
  survivors_record_out "$s" "${m[@]:0:$s}" "${m[@]:$((s + 1))}"
  sums=$(checksum_members "${m[@]}")
  st=0
  "$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${disks[@]}" --run 'echo SERVED' \
    >"$tmpdir/out" 2>"$tmpdir/err" || st=$?
  [ $st -ne 0 ] && ! grep -q SERVED "$tmpdir/out" ||
    fail "n $n slot $s bitmap $bm: the array with the member that missed writes was served"
  [ "$(grep -c . "$tmpdir/err")" -eq 1 ] || { cat "$tmpdir/err" >&2; fail "expected one line on stderr"; }
  grep -q "dirty and degraded.*member $s (.*/r$n$s$bm\.$s) missed writes" "$tmpdir/err" ||
    { cat "$tmpdir/err" >&2; fail "n $n slot $s: the refusal does not name member $s and why"; }
  [ "$(checksum_members "${m[@]}")" = "$sums" ] || fail "n $n slot $s: a refused start changed a member"
  serve_bg "$tmpdir/force.log" "${disks[@]}" force=true control="$tmpdir/ctl" "${fast[@]}" ||
    fail "n $n slot $s: force=true"
  grep -q "member $s (.*) missed writes.*left out" "$tmpdir/force.log" ||
    { cat "$tmpdir/force.log" >&2; fail "n $n slot $s: no line leaving member $s out"; }
  [ "$bm" = none ] || grep -q "member $s (.*) missed writes.*re-add it" "$tmpdir/force.log" ||
    fail "n $n slot $s: with a bitmap the line does not say re-add"
  peek "$URI" "$off" 0x22 || fail "n $n slot $s bitmap $bm: the flushed 0x22 was lost"
  finish_return "$n" "$s" "$off" "$bm"
  rm -f "${m[@]}"
}

# walk_bitmap N SLOT: the bitmap of slot SLOT's walk on N members (3:
# both, one after the other; more: alternating, each way at least twice).
walk_bitmap ()
{
  if (( $1 == 3 )); then echo none internal
  elif (( ($1 + $2) % 2 )); then echo internal
  else echo none
  fi
}
for n in "${WALK_MEMBERS[@]}"; do
  echo "== degrade, write, crash, return: $n members, every slot"
  for (( s = 0; s < n; s++ )); do
    for bm in $(walk_bitmap "$n" "$s"); do crash_return "$n" "$s" "$bm"; done
  done
done

# Clean stop: the survivors are two events ahead, the member is stale.
stop_return ()
{
  local s=$1 bm=$2 off rebuilt
  local -a deg
  md_create "s$s$bm" 3 16M --chunk 64K --assume-clean --bitmap "$bm"
  m=("${MEMBERS[@]}")
  mapfile -t disks < <(disk_args "${m[@]}")
  off=$(chunk_on 3 "$s")
  deg=("${disks[@]}"); deg[$s]=disk=missing
  raid5_captive "${deg[@]}" -- "$NBD_PYTHON" "$POKE" @URI@ write "$off" 0x22 ||
    fail "degraded write"
  serve_bg "$tmpdir/back.log" "${disks[@]}" control="$tmpdir/ctl" "${fast[@]}" ||
    fail "slot $s: the array did not start with the stale member given"
  grep -q "member $s (.*) is stale.*left out" "$tmpdir/back.log" ||
    { cat "$tmpdir/back.log" >&2; fail "slot $s: no line leaving the stale member out"; }
  peek "$URI" "$off" 0x22 || fail "slot $s: the degraded write was lost"
  "$RAID5CTL" --control "$tmpdir/ctl" status --json >"$tmpdir/st.json"
  /usr/bin/python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); assert [m["slot"] for m in s["left_out"]] == [int(sys.argv[2])]' \
    "$tmpdir/st.json" "$s" ||
    fail "status does not show the member left out: $(cat "$tmpdir/st.json")"
  finish_return 3 "$s" "$off" "$bm"
  rm -f "${m[@]}"
}
for bm in none internal; do
  echo "== degrade, write, clean stop, return: 3 members, bitmap $bm"
  for s in 0 1 2; do stop_return "$s" "$bm"; done
done

# A re-add rebuilds only what the bitmap marks: 256M members, 64M per bit,
# writes only in the first 32M of the array while member 2 is away.
echo "== re-add rebuilds only the marked regions"
md_create big 3 256M --chunk 64K --assume-clean --bitmap internal
m=("${MEMBERS[@]}")
mapfile -t disks < <(disk_args "${m[@]}")
# create sets every bit; a first clean session clears them (as md does).
raid5_captive "${disks[@]}" -- \
  "$NBD_PYTHON" "$POKE" @URI@ write 0 0x11 ||
  fail "first session on the 256M members"
raid5_captive "${disks[0]}" "${disks[1]}" disk=missing -- \
  "$NBD_PYTHON" "$POKE" @URI@ write 0 0x22 ||
  fail "degraded write on the 256M members"
serve_bg "$tmpdir/big.log" "${disks[@]}" control="$tmpdir/ctl" "${fast[@]}" ||
  fail "serve the 256M members"
ctl_wait re-add 2
"$RAID5CTL" --control "$tmpdir/ctl" status --json >"$tmpdir/st.json"
rebuilt=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["counters"]["rebuilt_bytes"])' "$tmpdir/st.json")
echo "  re-add rebuilt $(( rebuilt >> 20 )) MiB of a 256M member"
(( rebuilt > 0 && rebuilt <= 64 << 20 )) ||
  fail "re-add rebuilt $rebuilt bytes: expected the one 64M bit's region"
peek "$URI" 0 0x22 || fail "after the re-add"
stop_server
md_expect clean AAA "${m[@]}"
out=$("$RAID5CTL" check "${m[@]}" 2>&1) || fail "raid5ctl check: $out"
grep -q "mismatch_cnt 0$" <<<"$out" || fail "raid5ctl check after the re-add: $out"
rm -f "${m[@]}"

echo "== $ROUNDS rounds: kill -9 during degraded writes, then the member's return"
for (( r = 1; r <= ROUNDS; r++ )); do
  bm=none; (( r % 2 )) && bm=internal
  md_create "k$r" 3 16M --chunk 64K --assume-clean --bitmap "$bm"
  m=("${MEMBERS[@]}")
  mapfile -t disks < <(disk_args "${m[@]}")
  next_seed
  s=$(( RIO_SEED % 3 ))
  deg=("${disks[@]}"); deg[$s]=disk=missing
  serve_bg "$tmpdir/k.log" "${deg[@]}" || fail "round $r: serve degraded"
  WATCH=${m[$(( (s + 1) % 3 ))]}
  # Degraded writes cut short leave the write hole in their stripes (the
  # missing member's chunks there are computed from parity that may be
  # stale): the model forgets those stripes, nothing else.
  write_until_killed "" "$tmpdir/model.$r" $(( RIO_SEED % 8 )) --chunk 64K \
    --disks 3 --threads 4 --write-hole
  # Back with every member: refused (dirty and degraded) or, if the kill
  # came after the array went clean, started without the stale member.
  extra=()
  serve_bg "$tmpdir/k2.log" "${disks[@]}" control="$tmpdir/ctl" "${fast[@]}" ||
    { grep -q 'dirty and degraded.*missed writes' "$tmpdir/k2.log" ||
        fail "round $r: refused for another reason: $(cat "$tmpdir/k2.log")"
      extra=(force=true)
      serve_bg "$tmpdir/k2.log" "${disks[@]}" force=true control="$tmpdir/ctl" "${fast[@]}" ||
        fail "round $r: force=true"; }
  grep -Eq "member $s \(.*\) (missed writes|is stale).*left out" "$tmpdir/k2.log" ||
    fail "round $r: member $s was not left out: $(cat "$tmpdir/k2.log")"
  "$RANDOM_IO" "$URI" auto --verify-only --chunk 64K --disks 3 \
    --model-in "$tmpdir/model.$r" ||
    fail "round $r (slot $s, bitmap $bm, ${extra[*]:-not forced}): acknowledged writes lost"
  if [ "$bm" = internal ]; then ctl_wait re-add "$s"; else ctl_wait rebuild "$s" "${m[$s]}"; fi
  "$RANDOM_IO" "$URI" auto --verify-only --chunk 64K --disks 3 \
    --model-in "$tmpdir/model.$r" ||
    fail "round $r: acknowledged writes lost after member $s came back"
  stop_server
  md_expect clean AAA "${m[@]}"
  rm -f "${m[@]}" "$tmpdir/model.$r"*
done
echo "test-md-return: OK ($(( SECONDS )) s)"
