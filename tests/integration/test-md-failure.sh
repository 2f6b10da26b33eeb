#!/usr/bin/env bash
# A member of an md v1.2 array (raid5ctl create) fails during a write load:
# the plugin's test-only fault injection (nbdkit -D raid5.fail_member=SLOT
# -D raid5.fail_after=N) makes every I/O of that member fail after N more.
# For several slots and N:
#   - the client sees no error (random-io passes, every read = the model)
#     and the plugin logs the failure once;
#   - on disk, the survivors' superblocks (mdadm --examine) are clean, with
#     a correct checksum, '.' in Array State for that slot and its role
#     0xfffe (faulty) in dev_roles; the failed member's own superblock is
#     older (fewer events);
#   - member-check with that member given as missing: the data are intact;
#   - served again with all members listed (in another order), the failed
#     member is left out with a log line, never written, reads return the
#     model, and more writes keep it so;
#   - killed right after a failure (the failed member one event behind,
#     within md's margin), its faulty role keeps it out, and the dirty
#     degraded array needs force=true;
#   - degraded, a member failing the flush at the stop fails the array,
#     and the member left is marked clean all the same, as md does.
# Then the metadata's own I/O, deterministically: one 4K write at offset 0
# of a 3-member array, then idle.  Member 1's I/Os are then: the flush
# and the superblock write marking the array dirty (every superblock write
# is preceded by a flush, as md's REQ_PREFLUSH), the read for
# reconstruct-write, the fdatasync, the flush and the superblock write
# marking it clean (200 ms later).  Each but the read in turn fails
# (fail_after 0, 1, 3, 4, 5): the client must see no error, and
# within a second of idling the survivors must say clean with member 1
# faulty, and the failure must be logged once (not once per idle tick).

. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
requires_plugin
requires_md
requires_nbd_python

# role_in SURVIVOR FAILED: the role (4 hex digits) that SURVIVOR's superblock
# gives FAILED's dev_number (v1.2: superblock at 4096, dev_number at +160,
# dev_roles at +256, little-endian).
role_in ()
{
  local dn
  dn=$(od -An -tu4 -j $(( 4096 + 160 )) -N 4 "$2" | tr -d ' ')
  od -An -tx2 -j $(( 4096 + 256 + 2 * dn )) -N 2 "$1" | tr -d ' '
}

# fail_case N SLOT AFTER RAID5CTL-OPTIONS...
fail_case ()
{
  local n=$1 slot=$2 after=$3 name i astate surv=() ev
  shift 3
  name=f$slot-$after
  echo "== $n members, member $slot fails after $after I/Os ($*)"
  md_create "$name" "$n" 16M --chunk 64K --assume-clean "$@"
  m=("${MEMBERS[@]}")
  mapfile -t disks < <(disk_args "${m[@]}")
  geom=(--chunk "$MD_CHUNK" --layout "$MD_LAYOUT" --data-offset "$MD_DOFF")
  allow_nbdkit_errors=1
  next_seed
  raid5_captive "${disks[@]}" -D raid5.fail_member="$slot" \
      -D raid5.fail_after="$after" -- \
    "$RANDOM_IO" @URI@ auto --seed "$RIO_SEED" --ops 1200 --chunk 64K \
      --disks "$n" --model-out "$tmpdir/model" ||
    fail "member $slot failing after $after I/Os: the client saw an error"
  [ "$(grep -c "member $slot (.*).*marked faulty" "$tmpdir/nbdkit.log")" = 1 ] ||
    fail "the failure of member $slot was not logged exactly once"

  astate=
  for (( i = 0; i < n; i++ )); do
    if [ $i = "$slot" ]; then astate+=.; else astate+=A; surv+=("${m[$i]}"); fi
  done
  echo "   survivors:"
  md_expect clean "$astate" "${surv[@]}"
  ev=$MD_EVENTS
  echo "   the failed member:"
  md_show "${m[$slot]}"
  [ "$(md_events "${m[$slot]}")" -lt "$ev" ] ||
    fail "the failed member's events ($(md_events "${m[$slot]}")) are not behind the survivors' ($ev)"
  for f in "${surv[@]}"; do
    [ "$(role_in "$f" "${m[$slot]}")" = fffe ] ||
      fail "${f##*/}: role of the failed member is $(role_in "$f" "${m[$slot]}"), not fffe (faulty)"
  done
  mapfile -t mm < <(with_missing "$slot" "${m[@]}")
  member_check "${geom[@]}" --model "$tmpdir/model" "${mm[@]}"

  echo "   served again with every member listed, in reverse order"
  sum=$(sha256sum < "${m[$slot]}")
  rev=()
  for (( i = n - 1; i >= 0; i-- )); do rev+=("${disks[$i]}"); done
  next_seed
  raid5_captive "${rev[@]}" -- sh -c '
    "$0" "$1" auto --verify-only --chunk 64K --disks "$2" --model-in "$3" &&
    "$0" "$1" auto --seed "$4" --ops 300 --chunk 64K --disks "$2" \
      --model-in "$3" --model-out "$3"' \
    "$RANDOM_IO" @URI@ "$n" "$tmpdir/model" "$RIO_SEED" ||
    fail "served again: reads or writes do not match the model"
  grep -E "member $(( n - 1 - slot )) \(.*/$name\.$slot\) is (stale|recorded as faulty).*left out" \
    "$tmpdir/nbdkit.log" || fail "no log line leaving the failed member out"
  [ "$(sha256sum < "${m[$slot]}")" = "$sum" ] || fail "the failed member was written to"
  md_expect clean "$astate" "${surv[@]}"
  member_check "${geom[@]}" --model "$tmpdir/model" "${mm[@]}"
  allow_nbdkit_errors=0
  rm -f "${m[@]}"
}

# idle_case AFTER WHAT: one write, idle; checked while still served.
idle_case ()
{
  local after=$1 what=$2 n
  echo "== member 1 fails after $after I/Os: on $what"
  md_create i$after 3 16M --chunk 64K --assume-clean --bitmap none
  m=("${MEMBERS[@]}")
  mapfile -t disks < <(disk_args "${m[@]}")
  allow_nbdkit_errors=1
  raid5_captive "${disks[@]}" -D raid5.fail_member=1 -D raid5.fail_after="$after" -- \
    sh -c '"$0" -c "
import nbd, sys, time
h = nbd.NBD(); h.connect_uri(sys.argv[1])
h.pwrite(b\"w\" * 4096, 0); time.sleep(1.2)
assert h.pread(4096, 0) == b\"w\" * 4096
" "$1" && mdadm --examine "$2" "$3" > "$4"' \
    "$NBD_PYTHON" @URI@ "${m[0]}" "${m[2]}" "$tmpdir/examine" ||
    fail "member 1 failing on $what: the client saw an error"
  echo "   survivors after 1.2 s idle, still served:"
  sed -n 's/^ *\(State\|Array State\|Events\) : /   \1: /p' "$tmpdir/examine"
  [ "$(grep -c '^ *State : clean' "$tmpdir/examine")" = 2 ] ||
    fail "member 1 failing on $what: the survivors are not marked clean after idling"
  [ "$(grep -c '^ *Array State : A\.A ' "$tmpdir/examine")" = 2 ] ||
    fail "member 1 failing on $what: the survivors do not record it as failed"
  n=$(grep -c 'error:' "$tmpdir/nbdkit.log" || :)
  [ "$n" -le 2 ] || fail "member 1 failing on $what: $n error lines (one per idle tick?)"
  allow_nbdkit_errors=0
  rm -f "${m[@]}"
}

# crash_after_failure: member 1 fails on the first write, kill -9 before
# the array is marked clean: the failed member is then one event behind
# (within md's margin), so it is its faulty role in the survivors'
# superblocks that must keep it out.  The array is dirty and degraded:
# refused, then started with force=true, reading what was written.
crash_after_failure ()
{
  echo "== member 1 fails, then kill -9 before the array is marked clean"
  md_create k 3 16M --chunk 64K --assume-clean --bitmap none
  m=("${MEMBERS[@]}")
  mapfile -t disks < <(disk_args "${m[@]}")
  serve_bg "$tmpdir/k.log" "${disks[@]}" -D raid5.fail_member=1 \
    -D raid5.fail_after=2 || fail "serve"
  # The kill comes from the client right after the reply, well within the
  # 200 ms after which the array would be marked clean.
  "$NBD_PYTHON" -c '
import nbd, os, signal, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1]); h.pwrite(b"q" * 4096, 0)
os.kill(int(sys.argv[2]), signal.SIGKILL)
' "$URI" "$SERVER" || fail "the client saw the failure"
  crash_server
  grep 'marked faulty' "$tmpdir/k.log" || fail "the failure was not logged"
  md_expect active A.A "${m[0]}" "${m[2]}"
  md_show "${m[1]}"
  [ "$(md_events "${m[1]}")" = $(( MD_EVENTS - 1 )) ] ||
    fail "expected the failed member exactly one event behind"
  "$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${disks[2]}" "${disks[1]}" "${disks[0]}" \
    --run 'echo SERVED' > "$tmpdir/out" 2> "$tmpdir/err" &&
    fail "dirty, member 1 faulty: started without force=true"
  cat "$tmpdir/err"
  grep -q 'dirty and degraded' "$tmpdir/err" || fail "not refused as dirty and degraded"
  allow_nbdkit_errors=1
  raid5_captive "${disks[2]}" "${disks[1]}" "${disks[0]}" force=true -- \
    "$NBD_PYTHON" -c '
import nbd, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1])
assert h.pread(4096, 0) == b"q" * 4096, "data written before the crash"
' @URI@ || fail "force=true: reads"
  grep -E "member 1 \(.*/k\.1\) is recorded as faulty.*left out" "$tmpdir/nbdkit.log" ||
    fail "no log line leaving the faulty member out"
  allow_nbdkit_errors=0
  rm -f "${m[@]}"
}

# stop_case: served degraded (member 0 missing), one 4K write, and the
# server stopped as soon as the client leaves.  Member 1's I/Os: the
# flush and the superblock write marking the array dirty, the read of the
# write's other data chunk, then the stop's flush before the clean mark,
# which fails (fail_after 3): the array fails at its stop.  md marks it
# clean there all the same (__md_stop_writes: in_sync = 1, md_update_sb
# to the members left): member 2 must say clean, member 1 faulty.
stop_case ()
{
  echo "== degraded, member 1 fails the flush at the stop"
  md_create st 3 16M --chunk 64K --assume-clean --bitmap none
  m=("${MEMBERS[@]}")
  mapfile -t disks < <(disk_args "${m[@]}")
  allow_nbdkit_errors=1
  raid5_captive disk=missing "${disks[1]}" "${disks[2]}" \
      -D raid5.fail_member=1 -D raid5.fail_after=3 -- "$NBD_PYTHON" -c '
import nbd, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1]); h.pwrite(b"s" * 4096, 0)
h.shutdown()
' @URI@ || fail "the client saw an error (the failure comes at the stop)"
  grep -q "member 1 (.*/st\.1): fdatasync at 0" "$tmpdir/nbdkit.log" ||
    fail "the stop's flush was not the I/O that failed, or it was not logged"
  md_expect clean ..A "${m[2]}"
  grep -q "marked clean at the stop all the same" "$tmpdir/nbdkit.log" ||
    fail "the log does not say the array was marked clean at its stop"
  allow_nbdkit_errors=0
  rm -f "${m[@]}"
}

start=$SECONDS
crash_after_failure
stop_case
fail_case 3 0 40 --bitmap none
fail_case 3 2 700 --bitmap internal
fail_case 4 1 2500 --bitmap none
fail_case 4 3 5 --bitmap internal
fail_case 3 1 1 --bitmap none
# With a partial parity log the failing member's log writes fail too (its
# own stripes' entries go there first): the same rules, the request redone
# degraded, no log kept for the stripes whose parity it held.
fail_case 3 2 3 --consistency-policy ppl
fail_case 4 0 900 --consistency-policy ppl
bad=0
for c in "0 the flush before the superblock write marking the array dirty" \
         "1 the superblock write marking the array dirty" \
         "3 the fdatasync before marking the array clean" \
         "4 the flush before the superblock write marking the array clean" \
         "5 the superblock write marking the array clean"; do
  ( idle_case "${c%% *}" "${c#* }" ) || bad=$(( bad + 1 ))
done
[ $bad = 0 ] || fail "$bad of 5 metadata I/O failure cases failed (see above)"
echo "$test_name: OK ($(( SECONDS - start )) s)"
