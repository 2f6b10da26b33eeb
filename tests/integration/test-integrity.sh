#!/usr/bin/env bash
# The integrity record (integrity=FILE) under every kind of request: the
# random workload (unaligned reads, writes, zeroes, trims, flushes, 4
# connections, each read checked against the model) on md arrays served
# with a record -- bitmap, ppl, and degraded (a member missing, whose
# units are not verified, and which is then rebuilt) -- then:
#   - the server verified units and none failed (status --json);
#   - the members are as the model says (member-check);
#   - offline, check --integrity verifies every unit of every member:
#     parity right and no unit fails its checksum (so every write's
#     checksums were set: a write path that left one stale fails here);
# and kill -9 in the middle of the workload: the next start computes the
# record's marked regions again, and no unit fails after (a full read,
# the resync, a check); members written without the record make it
# stale (every checksum computed again at the next start, none fails); a
# rebuild from a survivor whose unit fails gives the rebuilt unit a
# checksum that fails too (reads of the row fail, the rest read right);
# a check meeting a read error whose row has a rotten unit records the
# page and keeps the member (nothing written there); another array's record, a file that is no
# record, and raw members are refused with one line, nothing written.
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
requires_plugin
requires /usr/bin/python3 --version

: "${OPS:=1200}"

# jq_py FILE EXPR: a python expression over s = the JSON in FILE.
jq_py ()
{
  /usr/bin/python3 -c "import json, sys; s = json.load(open(sys.argv[1])); print($2)" "$1"
}

# verified_clean REC: offline check --integrity of the members: no wrong
# parity, no unit that fails its checksum.
verified_clean ()
{
  local st=0
  "$RAID5CTL" check --integrity "$1" --json "${MEMBERS[@]}" \
    >"$tmpdir/check.json" 2>"$tmpdir/check.err" || st=$?
  [ $st = 0 ] || { cat "$tmpdir/check.err" "$tmpdir/check.json" >&2; fail "check --integrity: exit $st"; }
  ! grep -q "fails its checksum" "$tmpdir/check.err" ||
    { cat "$tmpdir/check.err" >&2; fail "a unit fails its checksum after the workload"; }
  echo "   offline check --integrity: $(jq_py "$tmpdir/check.json" 's["stripes_checked"]') stripes, every unit verified"
}

# workload NAME N SIZE CHUNK [CREATE_ARGS...] -- [PLUGIN_ARGS...]
workload ()
{
  local name=$1 n=$2 msize=$3 chunk=$4 cargs=() pargs=() size rec
  shift 4
  while [ $# -gt 0 ] && [ "$1" != -- ]; do cargs+=("$1"); shift; done
  shift
  pargs=("$@")
  echo "== $name: $n x $msize, chunk $chunk ${cargs[*]} ${pargs[*]}"
  md_create "$name" "$n" "$msize" --chunk "$chunk" "${cargs[@]}"
  rec=$tmpdir/$name.integrity
  size=$("$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${MEMBERS[@]/#/disk=}" --run 'nbdinfo --size "$uri"')
  disks=("${MEMBERS[@]/#/disk=}")
  if [ "${pargs[0]:-}" = missing ]; then
    disks[1]=disk=missing
    pargs=("${pargs[@]:1}")
  fi
  next_seed
  raid5_captive "${disks[@]}" integrity="$rec" control="$tmpdir/ctl" "${pargs[@]}" -- \
    sh -c '"$1" "$2" "$3" --seed "$4" --ops "$5" --threads 4 --chunk "$6" \
             --disks "$7" --model-out "$8" &&
           "$9" status --control "${10}" --json >"${11}"' _ \
      "$RANDOM_IO" @URI@ "$size" "$RIO_SEED" "$OPS" "$chunk" "$n" \
      "$tmpdir/model" "$RAID5CTL" "$tmpdir/ctl" "$tmpdir/status.json" ||
    fail "random-io with integrity=, $name"
  local v f
  v=$(jq_py "$tmpdir/status.json" 's["integrity"]["verified_units"]')
  f=$(jq_py "$tmpdir/status.json" 's["integrity"]["failed_units"]')
  echo "   served: $v units verified, $f failed"
  [ "$v" -gt 0 ] || fail "$name: the server verified no unit"
  [ "$f" = 0 ] || fail "$name: $f units failed their checksum under the workload"
  if [ "${disks[1]}" = disk=missing ]; then
    member_check --chunk "$MD_CHUNK" --layout "$MD_LAYOUT" \
      --data-offset "$MD_DOFF" --model "$tmpdir/model" \
      "${MEMBERS[0]}" missing "${MEMBERS[@]:2}"
  else
    member_check --chunk "$MD_CHUNK" --layout "$MD_LAYOUT" \
      --data-offset "$MD_DOFF" --model "$tmpdir/model" "${MEMBERS[@]}"
    verified_clean "$rec"
  fi
}

start=$SECONDS
workload bitmap 3 32M 64K --bitmap internal --

echo "== the members written without the record: at the next start it is stale, every checksum computed again"
head -c 1M /dev/urandom >"$tmpdir/1M"
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${MEMBERS[@]/#/disk=}" \
  --run "nbdcopy '$tmpdir/1M' \"\$uri\"" || fail "writing without the record"
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${MEMBERS[@]/#/disk=}" integrity="$tmpdir/bitmap.integrity" \
  control="$tmpdir/ctl" --run "nbdcopy \"\$uri\" null: &&
    '$RAID5CTL' status --control '$tmpdir/ctl' --json >'$tmpdir/status.json'" \
  2>"$tmpdir/stale.log" || { cat "$tmpdir/stale.log" >&2; fail "serving with the stale record"; }
n=$(jq_py "$tmpdir/status.json" 's["integrity"]["recomputed_regions_at_start"]')
f=$(jq_py "$tmpdir/status.json" 's["integrity"]["failed_units"]')
echo "   $n regions computed again, $f units failed in a full read"
[ "$n" = 24 ] || fail "$n regions computed again, not all 24 (3 members x 31 MiB)"
[ "$f" = 0 ] || fail "$f units failed their checksum: the stale record was trusted"
workload ppl 4 16M 16K --consistency-policy ppl --
workload degraded 3 24M 32K --bitmap internal -- missing

echo "== the degraded array's slot 1 rebuilt onto a new member: its checksums set by the rebuild"
truncate -s 24M "$tmpdir/new1"
serve_bg "$tmpdir/rebuild.log" "${MEMBERS[0]/#/disk=}" disk=missing \
  "${MEMBERS[2]/#/disk=}" integrity="$tmpdir/degraded.integrity" \
  control="$tmpdir/ctl" || fail "the server did not start"
"$RAID5CTL" rebuild --control "$tmpdir/ctl" --wait 1 "$tmpdir/new1" >/dev/null ||
  fail "rebuild --control --wait"
stop_server
MEMBERS[1]=$tmpdir/new1
verified_clean "$tmpdir/degraded.integrity"

echo "== a rebuild from a survivor whose unit fails its checksum: the rebuilt unit fails too, reads of the row fail, others work"
md_create poison 3 16M --chunk 64K --bitmap internal
head -c 2M /dev/urandom >"$tmpdir/2M"
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${MEMBERS[@]/#/disk=}" integrity="$tmpdir/poison.rec" \
  --run "nbdcopy '$tmpdir/2M' \"\$uri\"" || fail "writing the poison array"
# Array bytes [0, 4K) are stripe 0's D0 on member 0 (left-symmetric).
printf '\x01\x02\x03\x04' | dd of="${MEMBERS[0]}" bs=1 seek=$(( MD_DOFF + 8 )) conv=notrunc status=none
truncate -s 16M "$tmpdir/poison.new"
serve_bg "$tmpdir/poison.log" "${MEMBERS[0]/#/disk=}" disk=missing \
  "${MEMBERS[2]/#/disk=}" integrity="$tmpdir/poison.rec" control="$tmpdir/ctl" ||
  fail "the server did not start"
"$RAID5CTL" rebuild --control "$tmpdir/ctl" --wait 1 "$tmpdir/poison.new" >/dev/null ||
  fail "rebuild --control --wait"
/usr/bin/python3 - "$URI" "$tmpdir/2M" <<'PY' || fail "reads after a rebuild from a bad unit"
import nbd, sys
h = nbd.NBD()
h.connect_uri(sys.argv[1])
data = open(sys.argv[2], "rb").read()
# [0, 4K): the spoiled unit of member 0; [64K, 68K): the unit of the
# new member 1 rebuilt from it (same row).
for off in (0, 65536):
    try:
        h.pread(4096, off)
        sys.exit("array bytes [%d, +4K) read back: wrong bytes returned as right" % off)
    except nbd.Error as e:
        print("   array bytes [%d, +4K): %s" % (off, e.string.split(": ")[-1]))
assert h.pread(4096, 4096) == data[4096:8192], "the next unit is wrong"
assert h.pread(65536, 131072) == data[131072:196608], "stripe 1 is wrong"
print("   the rest of stripe 0's chunks and stripe 1 read back right")
PY
stop_server
grep -q "member 0 (.*): 4 KiB at member offset $MD_DOFF fails its checksum: the unit rebuilt from it into slot 1 is wrong too" \
  "$tmpdir/poison.log" || { cat "$tmpdir/poison.log" >&2; fail "the rebuild did not say the unit it rebuilt is wrong"; }

echo "== a check meets a read error whose row has a rotten unit: the page recorded, not rewritten, the member kept"
# Member 1 fails reads of its first page of stripe 0 (the badsector
# plugin) and member 0's unit of that row is spoiled: what the row
# computes for member 1 fails member 1's checksum, so nothing is written;
# the page is recorded in member 1's bad-block log, and the check runs
# the stripe again around it rather than read it again until the member
# is failed.
md_create rot 3 16M --chunk 64K --bitmap internal
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${MEMBERS[@]/#/disk=}" integrity="$tmpdir/rot.rec" \
  --run "nbdcopy '$tmpdir/2M' \"\$uri\"" || fail "writing the rot array"
printf '\x01\x02\x03\x04' | dd of="${MEMBERS[0]}" bs=1 seek=$(( MD_DOFF + 8 )) conv=notrunc status=none
: >"$tmpdir/rot1.list"
"$NBDKIT" -f -U "$tmpdir/rot1.sock" "$abs_top_builddir/tests/integration/.libs/nbdkit-badsector-plugin.so" \
  file="${MEMBERS[1]}" bad="$tmpdir/rot1.list" log="$tmpdir/rot1.log" >"$tmpdir/rot1.out" 2>&1 &
cleanup_fn "kill_ours -9 $!"
for (( k = 0; k < 100; k++ )); do [ -S "$tmpdir/rot1.sock" ] && break; sleep 0.05; done
serve_bg "$tmpdir/rot.log" "${MEMBERS[0]/#/disk=}" "disk=nbd+unix:///?socket=$tmpdir/rot1.sock" \
  "${MEMBERS[2]/#/disk=}" integrity="$tmpdir/rot.rec" control="$tmpdir/ctl" ||
  fail "the server did not start"
echo "read $(( MD_DOFF / 512 )) 8" >"$tmpdir/rot1.list"
"$RAID5CTL" check --control "$tmpdir/ctl" --wait >"$tmpdir/rot.check" 2>&1 ||
  { cat "$tmpdir/rot.check" >&2; fail "check over the rotten row"; }
"$RAID5CTL" status --control "$tmpdir/ctl" --json >"$tmpdir/rot.json" ||
  fail "status"
[ "$(jq_py "$tmpdir/rot.json" 's["health"], s["members"][1]["bad_blocks"]["sectors"]')" = "[UUU] 8" ] ||
  fail "after the check: $(jq_py "$tmpdir/rot.json" 's["health"], s["members"][1]["bad_blocks"]')"
grep -q "NOT corrected: what the other members compute fails its checksum" "$tmpdir/rot.log" ||
  { cat "$tmpdir/rot.log" >&2; fail "the log does not say why the read error was not corrected"; }
grep -q '^remapped' "$tmpdir/rot1.log" && fail "member 1's page was written: $(cat "$tmpdir/rot1.log")"
stop_server

echo "== kill -9 mid-workload, then a start that settles the record"
md_create crash 3 32M --chunk 64K --bitmap internal
rec=$tmpdir/crash.integrity
serve_bg "$tmpdir/crash.log" "${MEMBERS[@]/#/disk=}" integrity="$rec" ||
  fail "the server did not start"
next_seed
"$RANDOM_IO" "$URI" auto --seed "$RIO_SEED" --ops 100000000 --threads 4 \
  --chunk 65536 --disks 3 --crash-ok --model-out "$tmpdir/model.crash" \
  >"$tmpdir/rio.out" &
rio=$!
for (( i = 0; i < 300; i++ )); do
  grep -q running "$tmpdir/rio.out" && break
  sleep 0.05
done
sleep 1
kill -9 "$SERVER"
wait "$rio" 2>/dev/null || :
wait "$SERVER" 2>/dev/null || :
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${MEMBERS[@]/#/disk=}" integrity="$rec" \
  control="$tmpdir/ctl" --run "nbdcopy \"\$uri\" null: &&
    '$RAID5CTL' status --control '$tmpdir/ctl' --json >'$tmpdir/status.json'" \
  2>"$tmpdir/restart.log" ||
  { cat "$tmpdir/restart.log" >&2; fail "the restart after kill -9"; }
n=$(jq_py "$tmpdir/status.json" 's["integrity"]["recomputed_regions_at_start"]')
f=$(jq_py "$tmpdir/status.json" 's["integrity"]["failed_units"]')
v=$(jq_py "$tmpdir/status.json" 's["integrity"]["verified_units"]')
echo "   restart: $n regions of 4 MiB computed again; a full read verified $v units, $f failed"
[ "$n" -gt 0 ] || fail "the restart did not compute the marked regions again"
[ "$f" = 0 ] || fail "$f units failed their checksum after the crash"
# The crash left parity stale where writes were in flight (the array is
# dirty): its resync, offline, with the record -- no unit fails.
"$RAID5CTL" repair --integrity "$rec" "${MEMBERS[@]}" >/dev/null 2>"$tmpdir/resync.err" ||
  { cat "$tmpdir/resync.err" >&2; fail "repair --integrity after the crash"; }
! grep -q "checksum" "$tmpdir/resync.err" ||
  { cat "$tmpdir/resync.err" >&2; fail "a unit failed its checksum in the resync"; }
verified_clean "$rec"

echo "== refused, with one line and nothing written: another array's record, a file that is no record, raw members"
# refused ARGS... -- REGEX: nbdkit raid5 ARGS fails, one error line
# matching REGEX.
refused ()
{
  local args=() re st=0
  while [ "$1" != -- ]; do args+=("$1"); shift; done
  re=$2
  "$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${args[@]}" --run true 2>"$tmpdir/refused.err" || st=$?
  [ $st != 0 ] || fail "nbdkit raid5 ${args[*]}: started"
  [ "$(grep -c 'error:' "$tmpdir/refused.err")" = 1 ] &&
    grep -Eq -- "$re" "$tmpdir/refused.err" ||
    { cat "$tmpdir/refused.err" >&2; fail "nbdkit raid5 ${args[*]}: not one line matching '$re'"; }
  echo "   $(grep 'error:' "$tmpdir/refused.err")"
}
other=$tmpdir/bitmap.integrity          # the first workload's array's
sum=$(md5sum <"$other")
refused "${MEMBERS[@]/#/disk=}" integrity="$other" -- \
  "integrity record .*bitmap.integrity: it belongs to another array \(uuid\)"
[ "$(md5sum <"$other")" = "$sum" ] || fail "the other array's record was written"
head -c 100000 /dev/urandom >"$tmpdir/noise"
sum=$(md5sum <"$tmpdir/noise")
refused "${MEMBERS[@]/#/disk=}" integrity="$tmpdir/noise" -- \
  "integrity record .*noise: no integrity record \(magic\)"
[ "$(md5sum <"$tmpdir/noise")" = "$sum" ] || fail "a file that is no record was written"
make_members raw 3 16M
refused "${MEMBERS[@]/#/disk=}" metadata=none integrity="$tmpdir/raw.rec" -- \
  "integrity=.*raw.rec: needs md superblocks on the members"
[ ! -s "$tmpdir/raw.rec" ] || fail "a record was written for raw members"

echo "$test_name: passed in $(( SECONDS - start )) s"
