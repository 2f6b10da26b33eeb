#!/usr/bin/env bash
# md v1.2 metadata (metadata=auto) on an array made by raid5ctl create,
# checked with mdadm --examine, an independent reader of md's superblocks:
#   1. served with no geometry parameters, the random workload passes; after
#      a clean stop every superblock has a correct checksum, says clean,
#      all members active in their own slot, the events counter advanced;
#      the members hold the model where md's layout puts it (member-check
#      with mdadm's chunk, layout and data offset)
#   2. disk= order does not matter: a shuffled order serves the same bytes,
#      and disk=missing may stand anywhere
#   3. chunk=, layout= or data-offset= that contradict the superblocks are
#      refused with one error line naming the parameter, members unchanged;
#      the same parameters agreeing with them are accepted; a member of
#      another array, a copy claiming a taken slot, a member without a
#      superblock: one line each
#   4. a stale member (a copy from before more writes put back): mdadm
#      --examine shows its events counter behind; the others still record
#      it as working, so the array is refused as md refuses it without
#      --run (one line naming it, nothing written); with disk=missing in
#      its place, reads return the new data
#   5. a dirty array (kill -9 during writes: State active) with a member
#      missing is refused with one line, members unchanged; force=true
#      starts it

. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
requires_plugin
requires_md
requires nbdcopy --version

start=$SECONDS
N=4
md_create a $N 16M --chunk 64K --name mdtest
m=("${MEMBERS[@]}")
mapfile -t disks < <(disk_args "${m[@]}")
geom=(--chunk "$MD_CHUNK" --layout "$MD_LAYOUT" --data-offset "$MD_DOFF")
echo "== raid5ctl create: chunk $MD_CHUNK, $MD_LAYOUT, data offset $MD_DOFF, events $MD_EVENTS"
[ "$MD_CHUNK" = 64K ] || fail "raid5ctl create --chunk 64K made chunk $MD_CHUNK"
md_expect clean "$(all_a $N)" "${m[@]}"
ev0=$MD_EVENTS

echo "== 1. serve with no geometry parameters, random workload, clean stop"
next_seed
raid5_captive "${disks[@]}" -- "$RANDOM_IO" @URI@ auto --seed "$RIO_SEED" \
  --ops 1500 --chunk 64K --disks $N --model-out "$tmpdir/model" ||
  fail "random workload on the md array"
md_expect clean "$(all_a $N)" "${m[@]}"
[ "$MD_EVENTS" -gt "$ev0" ] || fail "events did not advance ($ev0 -> $MD_EVENTS)"
ev1=$MD_EVENTS
for i in "${!m[@]}"; do
  role=$(md_field "${m[$i]}" 'Device Role')
  [ "$role" = "Active device $i" ] || fail "${m[$i]##*/}: role '$role', expected slot $i"
done
member_check "${geom[@]}" --model "$tmpdir/model" "${m[@]}"

echo "== 2. shuffled disk= order: the same export"
raid5_captive "${disks[@]}" -- nbdcopy @URI@ "$tmpdir/export.inorder" ||
  fail "nbdcopy in order"
shuffled=("${disks[2]}" "${disks[0]}" "${disks[3]}" "${disks[1]}")
raid5_captive "${shuffled[@]}" -- nbdcopy @URI@ "$tmpdir/export.shuffled" ||
  fail "nbdcopy, shuffled order"
cmp "$tmpdir/export.inorder" "$tmpdir/export.shuffled" ||
  fail "a shuffled disk= order serves other bytes"
reversed=("${disks[3]}" "${disks[2]}" "${disks[1]}" "${disks[0]}")
raid5_captive "${reversed[@]}" -- "$RANDOM_IO" @URI@ auto --verify-only \
  --chunk 64K --disks $N --model-in "$tmpdir/model" ||
  fail "reversed disk= order does not read the model"
# disk=missing in any position: the superblocks say which slot is absent.
raid5_captive disk=missing "${disks[3]}" "${disks[0]}" "${disks[2]}" -- \
  "$RANDOM_IO" @URI@ auto --verify-only --chunk 64K --disks $N \
    --model-in "$tmpdir/model" ||
  fail "member 1 missing, listed first, others shuffled: reads differ"
rm -f "$tmpdir"/export.*

echo "== 3. geometry parameters that contradict the superblocks"
# refused PARAMETER=VALUE: one error line naming PARAMETER, no member changed.
refused ()
{
  local status=0 sums lines
  sums=$(checksum_members "${m[@]}")
  "$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${shuffled[@]}" "$1" --run 'echo SERVED' \
    >"$tmpdir/out" 2>"$tmpdir/err" || status=$?
  echo "$1 -> exit $status: $(cat "$tmpdir/err")"
  [ $status -ne 0 ] || fail "$1 contradicting the superblocks was accepted"
  ! grep -q SERVED "$tmpdir/out" || fail "$1: served before failing"
  lines=$(grep -c . "$tmpdir/err" || :)
  [ "$lines" -eq 1 ] || fail "$1: expected one line on stderr, got $lines"
  grep -q "${1%%=*}" "$tmpdir/err" || fail "$1: the error does not name ${1%%=*}"
  [ "$(checksum_members "${m[@]}")" = "$sums" ] || fail "$1: a member changed"
}
case $MD_LAYOUT in
  left-symmetric) other=right-asymmetric ;;
  *) other=left-symmetric ;;
esac
refused chunk=128K
refused chunk=512K
refused layout=$other
refused data-offset=0
refused data-offset=$(( MD_DOFF + 1048576 ))
# Members that cannot form the array: one line naming the culprit.
refused_members ()
{
  local re=$1 status=0 sums
  shift
  sums=$(checksum_members "${m[@]}")
  "$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "$@" --run 'echo SERVED' \
    >"$tmpdir/out" 2>"$tmpdir/err" || status=$?
  echo "${*//$tmpdir\//} -> exit $status: $(cat "$tmpdir/err")"
  [ $status -ne 0 ] && ! grep -q SERVED "$tmpdir/out" || fail "accepted: $*"
  [ "$(grep -c . "$tmpdir/err")" -eq 1 ] || fail "$*: expected one line on stderr"
  grep -Eq "$re" "$tmpdir/err" || fail "$*: the error does not say '$re'"
  [ "$(checksum_members "${m[@]}")" = "$sums" ] || fail "$*: a member changed"
}
make_members other 3 16M
"$RAID5CTL" create --chunk 64K --assume-clean "${MEMBERS[@]}" >/dev/null 2>&1 ||
  fail "raid5ctl create (a second array)"
refused_members 'another array' "${disks[0]}" "${disks[1]}" "disk=${MEMBERS[2]}" "${disks[3]}"
cp --sparse=always "${m[2]}" "$tmpdir/copy.2"
refused_members 'slot 2' "${disks[@]:0:3}" "disk=$tmpdir/copy.2"
truncate -s 16M "$tmpdir/raw"
refused_members 'no md superblock' "${disks[@]:0:3}" "disk=$tmpdir/raw"
rm -f "${MEMBERS[@]}" "$tmpdir/copy.2" "$tmpdir/raw"
# The same parameters, agreeing with the superblocks, are accepted.
raid5_captive "${disks[@]}" chunk=64K layout="$MD_LAYOUT" data-offset="$MD_DOFF" \
  -- nbdinfo --size @URI@ > "$tmpdir/size" ||
  fail "chunk/layout/data-offset equal to the superblocks' were refused"

echo "== 4. stale member: member 1 copied aside, more writes, the copy put back"
cp --sparse=always "${m[1]}" "$tmpdir/stale.1"
next_seed
raid5_captive "${disks[@]}" -- "$RANDOM_IO" @URI@ auto --seed "$RIO_SEED" \
  --ops 800 --chunk 64K --disks $N --model-in "$tmpdir/model" \
  --model-out "$tmpdir/model2" || fail "second workload"
md_expect clean "$(all_a $N)" "${m[@]}"
ev2=$MD_EVENTS
[ "$ev2" -gt $(( ev1 + 1 )) ] ||
  fail "events went from $ev1 to $ev2 only: the copy would not be stale"
cp --sparse=always "${m[1]}" "$tmpdir/fresh.1"
cp --sparse=always "$tmpdir/stale.1" "${m[1]}"
md_show "${m[@]}"
sev=$(md_events "${m[1]}")
[ "$sev" = "$ev1" ] && [ "$sev" -lt $(( ev2 - 1 )) ] ||
  fail "mdadm --examine: the old copy has events $sev, the others $ev2"
sum_stale=$(sha256sum < "${m[1]}")
# The stale member first: the freshest superblock must win, not the first.
# The others still record 4 working members, so md will not start the
# array without it unless told to (mdadm: "need all 4 to start it (use
# --run to insist)"): refused, nothing written.
refused_members 'member 0 \(.*/a\.1\) is stale.*give .missing. for that slot' \
  "${disks[1]}" "${disks[3]}" "${disks[0]}" "${disks[2]}"
[ "$(sha256sum < "${m[1]}")" = "$sum_stale" ] ||
  fail "the stale member was written to"
# Told (disk=missing for its slot, md's --run), it serves the new data.
allow_nbdkit_errors=1
raid5_captive disk=missing "${disks[3]}" "${disks[0]}" "${disks[2]}" -- \
  "$RANDOM_IO" @URI@ auto --verify-only --chunk 64K --disks $N \
    --model-in "$tmpdir/model2" ||
  fail "degraded without the stale member, reads do not return the new data"
allow_nbdkit_errors=0
# Put the current member back for what follows.
cp --sparse=always "$tmpdir/fresh.1" "${m[1]}"
rm -f "$tmpdir/fresh.1" "$tmpdir/stale.1"
member_check "${geom[@]}" --model "$tmpdir/model2" "${m[@]}"

echo "== 5. dirty and degraded: refused without force=true"
serve_bg "$tmpdir/crash.log" "${disks[@]}" || fail "the server did not start"
write_until_killed "$tmpdir/model2" "$tmpdir/model3" 6 --chunk 64K --disks $N
md_expect active "$(all_a $N)" "${m[@]}"
degraded=("${disks[0]}" "${disks[1]}" disk=missing "${disks[3]}")
sums=$(checksum_members "${m[@]}")
status=0
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${degraded[@]}" --run 'echo SERVED' \
  >"$tmpdir/out" 2>"$tmpdir/err" || status=$?
echo "dirty, slot 2 missing -> exit $status: $(cat "$tmpdir/err")"
[ $status -ne 0 ] || fail "a dirty degraded array was started without force=true"
! grep -q SERVED "$tmpdir/out" || fail "a dirty degraded array served"
[ "$(grep -c . "$tmpdir/err")" -eq 1 ] ||
  fail "dirty+degraded: expected one line on stderr"
grep -qi 'dirty' "$tmpdir/err" && grep -qi 'degraded' "$tmpdir/err" ||
  fail "dirty+degraded: the error does not say dirty and degraded"
grep -q 'force' "$tmpdir/err" || fail "dirty+degraded: the error does not mention force=true"
# ... and what follows it: the member back while it serves (an offline
# re-add, which the advice once suggested, meets the same refusal).
grep -q 'force=true starts it without that member, which can then be re-added or rebuilt while it serves' "$tmpdir/err" ||
  fail "dirty+degraded: the error does not say what comes after force=true"
[ "$(checksum_members "${m[@]}")" = "$sums" ] ||
  fail "dirty+degraded: a member changed though the array was refused"
allow_nbdkit_errors=1
raid5_captive "${degraded[@]}" force=true -- nbdcopy @URI@ null: ||
  fail "force=true did not start the dirty degraded array"
grep -qi 'dirty and degraded' "$tmpdir/nbdkit.log" ||
  fail "force=true: no log line warning about the dirty degraded start"
echo "$test_name: OK ($(( SECONDS - start )) s)"
