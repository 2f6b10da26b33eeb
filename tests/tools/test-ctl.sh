#!/usr/bin/env bash
# raid5ctl --control SOCKET against a served array (nbdkit raid5 ...
# control=SOCKET):
#  - status (text and --json, option before or after the command) lists
#    the members, [UUU] and the request counters;
#  - check --wait on a clean array: mismatch_cnt 0, exit 0;
#  - parity bytes spoiled in chosen stripes of the member files while
#    served: check --wait names exactly those stripes (parity member,
#    offset, 4 KiB units) and md's sector count, exit 2; --json agrees;
#    repair --wait, then check --wait: 0;
#  - speed, pause and resume change what status shows, and a paused check
#    does not move;
#  - fail 1: [U_U], degraded, reads still right; rebuild 1 PATH --wait
#    (PATH relative) -> [UUU]; after a clean stop raid5ctl check offline
#    says 0, the data reads back the same and mdadm --examine shows the
#    new member active in slot 1;
#  - errors are one line on stderr and exit 1: unknown command, check
#    while degraded, rebuild of a slot in service, bad slot, a socket that
#    is not there, status without --control, --json without --wait; the
#    server itself refuses speed 0, 0x10 and past 1 TiB/s, and slots
#    1e0 and -1, naming the word and its range;
#  - sync-speed-max= alone below md's default min lowers the min.

. "${0%/*}/functions.sh"
. "${0%/*}/../integration/md-functions.sh"
requires_raid5ctl
requires /usr/bin/python3 --version
requires nbdcopy --version
start=$SECONDS

N=3 CHUNK=65536
md_create c $N 32M --chunk 64K --bitmap none
m=("${MEMBERS[@]}")
SOCK=$tmpdir/ctl.sock
serve_bg "$tmpdir/nbdkit.log" "${m[@]/#/disk=}" control="$SOCK" ||
  fail "the server did not start"
[ "$(stat -c %a "$SOCK")" = 600 ] ||
  fail "the control socket is mode $(stat -c %a "$SOCK"), not 600"

# ctl ARGS...: raid5ctl --control SOCK ARGS..., output in $out.
ctl () { out=$("$RAID5CTL" --control "$SOCK" "$@" 2>"$tmpdir/ctl.err"); }

# jget EXPR: a python expression over s = status --json.
jget ()
{
  "$RAID5CTL" status --control "$SOCK" --json |
    /usr/bin/python3 -c "import json, sys; s = json.load(sys.stdin); print($1)"
}

# refused REGEX ARGS...: raid5ctl ARGS exits 1 with one line on stderr
# matching REGEX and nothing on stdout.
refused ()
{
  local re=$1 status=0
  shift
  "$RAID5CTL" "$@" >"$tmpdir/r.out" 2>"$tmpdir/r.err" || status=$?
  echo "   raid5ctl ${*//$tmpdir\//} -> $status: $(cat "$tmpdir/r.err")"
  [ $status = 1 ] || fail "raid5ctl $*: exit $status, expected 1"
  [ "$(grep -c . "$tmpdir/r.err")" = 1 ] || fail "raid5ctl $*: not one line"
  [ ! -s "$tmpdir/r.out" ] || fail "raid5ctl $*: wrote to stdout"
  grep -Eq -- "$re" "$tmpdir/r.err" || fail "raid5ctl $*: lacks '$re'"
}

echo "== data, and status"
size=$(nbdinfo --size "$URI")
head -c 24M /dev/urandom > "$tmpdir/model"
nbdcopy "$tmpdir/model" "$URI"
truncate -s "$size" "$tmpdir/model"
ctl status || fail "status: $(cat "$tmpdir/ctl.err")"
echo "$out"
grep -Eq '^raid5 : healthy, (clean|active) \[3/3\] \[UUU\]$' <<<"$out" ||
  fail "status: no healthy [UUU] line"
for s in 0 1 2; do
  grep -qxF "      slot $s: ${m[$s]} (active)" <<<"$out" ||
    fail "status: no line for slot $s"
done
grep -Eq 'requests: [0-9]+ reads, [1-9][0-9]* writes' <<<"$out" ||
  fail "status: the writes are not counted"
"$RAID5CTL" status --control="$SOCK" --json |
  /usr/bin/python3 -c '
import json, sys
s = json.load(sys.stdin)
paths = sys.argv[1:]
assert s["health"] == "[UUU]" and s["state"] == "healthy", s
assert [m["path"] for m in s["members"]] == paths, s["members"]
assert all(m["state"] == "active" for m in s["members"]), s["members"]
assert s["raid_disks"] == 3 and s["in_service"] == 3, s
assert s["counters"]["writes"] > 0 and s["job"]["kind"] == "idle", s
' "${m[@]}" || fail "status --json"

echo "== check --wait on a clean array"
ctl check --wait || fail "check --wait: exit $?: $(cat "$tmpdir/ctl.err")"
echo "$out"
grep -q "^check: [0-9]* stripes checked, 0 with wrong parity, mismatch_cnt 0$" <<<"$out" ||
  fail "clean check: $out"

echo "== spoiled parity while served"
parity_member () { echo $(( (N - 1) - $1 % N )); }    # left-symmetric
spoil () { flip_byte "${m[$1]}" "$2" >/dev/null; }     # member offset
expect="" total=0
for s in 3 4 5 6; do
  p=$(parity_member $s) base=$(( MD_DOFF + s * CHUNK )) units=1
  spoil "$p" $(( base + 100 ))
  if [ $s = 6 ]; then spoil "$p" $(( base + 5 * 4096 + 7 )); units=2; fi
  expect+="stripe $s: array bytes [$(( s * CHUNK * (N - 1) )), $(( (s + 1) * CHUNK * (N - 1) ))), parity on member $p from offset $base, $units x 4 KiB wrong"$'\n'
  total=$(( total + 8 * units ))
done
status=0
ctl check --wait || status=$?
echo "$out"
[ $status = 2 ] || fail "check --wait with wrong parity: exit $status"
grep -q " 4 with wrong parity, mismatch_cnt $total$" <<<"$out" ||
  fail "expected 4 stripes, mismatch_cnt $total"
diff <(printf '%s' "$expect") <(grep '^  stripe' <<<"$out" | sed 's/^  //') ||
  fail "check --wait named other stripes or offsets"
status=0
ctl check --wait --json || status=$?
[ $status = 2 ] || fail "check --wait --json: exit $status"
/usr/bin/python3 -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["mismatch_sectors"] == int(sys.argv[2]), r
assert [m["stripe"] for m in r["mismatches"]] == [3, 4, 5, 6], r
assert r["mismatches"][3]["units_4k"] == 2, r
' "$out" "$total" || fail "check --wait --json disagrees"
"$RAID5CTL" --control "$SOCK" status |
  grep -q "last check: done, mismatch_cnt $total (4 stripes)" ||
  fail "status does not show the last check"
ctl repair --wait || fail "repair --wait: exit $?"
echo "$out"
grep -q "4 with wrong parity, mismatch_cnt $total (parity rewritten)" <<<"$out" ||
  fail "repair: $out"
ctl check --wait || fail "check after repair: exit $?: $out"
grep -q "mismatch_cnt 0$" <<<"$out" || fail "check after repair: $out"

echo "== speed, pause, resume"
ctl speed --min 1000 --max 2M || fail "speed"
echo "$out"
grep -q "min 1000 K/sec, max 2048 K/sec" <<<"$out" || fail "speed: $out"
"$RAID5CTL" --control "$SOCK" status | grep -q "sync speed: min 1000K/sec, max 2048K/sec per member" ||
  fail "status does not show the new speed"
ctl check || fail "check: $(cat "$tmpdir/ctl.err")"
refused 'busy: a check is running' --control "$SOCK" check
ctl pause && [ "$out" = "pause: check" ] || fail "pause: $out"
"$RAID5CTL" --control "$SOCK" status | grep -Eq '\]  check = .*\(paused\)$' ||
  fail "status does not show the check paused"
sleep 0.3
d1=$(jget 's["job"]["done_stripes"]')
sleep 0.7
[ "$(jget 's["job"]["paused"]')" = True ] || fail "JSON: not paused"
[ "$(jget 's["job"]["done_stripes"]')" = "$d1" ] || fail "a paused check moved"
ctl resume && [ "$out" = "resume: check" ] || fail "resume: $out"
[ "$(jget 's["job"]["paused"]')" = False ] || fail "JSON: still paused"
ctl speed --max 1G --min 500M || fail "speed up"
for (( i = 0; i < 100; i++ )); do
  [ "$(jget 's["job"]["kind"]')" = idle ] && break
  sleep 0.1
done
[ "$(jget 's["last_job"]["kind"], s["last_job"]["result"]')" = "check 0" ] ||
  fail "the resumed check did not end well: $(jget 's["last_job"]')"

echo "== errors"
truncate -s 32M "$tmpdir/new.img"
refused "unknown command 'bogus'" --control "$SOCK" bogus
refused 'slot 1 is in service' --control "$SOCK" rebuild 1 "$tmpdir/new.img"
refused 'slot 7: the array has slots 0 to 2' --control "$SOCK" fail 7
refused "slot 'x': not a slot number" --control "$SOCK" fail x
refused "$tmpdir/nothere.sock: cannot connect: No such file or directory" \
  --control "$tmpdir/nothere.sock" status
refused 'needs --control SOCKET' status
refused 'need --wait' check --control "$SOCK" --json
# The server's own parsing, for clients other than raid5ctl (which
# refuses these itself): whole numbers in a range, named in the error.
raw_refused ()
{
  local re=$1 out status=0
  shift
  out=$(/usr/bin/python3 "$abs_top_srcdir/tests/integration/ctl.py" "$SOCK" \
          cmd "$@" 2>&1) || status=$?
  echo "   control '$*' -> $status: $out"
  [ $status = 1 ] && grep -Eq "^ERROR: $re" <<<"$out" ||
    fail "control '$*': not refused with '$re'"
}
raw_refused '--max 0: expected a whole number from 1 to 1073741824' speed --max 0
raw_refused '--min 0x10: expected' speed --min 0x10
raw_refused '--max 99999999999999: expected' speed --max 99999999999999
raw_refused 'SLOT 1e0: expected a whole number from 0 to 31' fail 1e0
raw_refused '--min 10240 is above --max 1024' speed --min 10240 --max 1024
refused '^raid5ctl speed: --min 10240K is above --max 1024K$' --control "$SOCK" \
  speed --min 10M --max 1M
raw_refused 'SLOT -1: expected' fail -1
# One alone: a --max below the min is refused, not quietly set to the
# min (it was); a --min above the max raises the max, and says so.
raw_refused '--max 1024 is below the min, 512000 K/sec \(per member\): give a lower --min too' \
  speed --max 1024
"$RAID5CTL" --control "$SOCK" status | grep -q "sync speed: min 512000K/sec, max 1048576K/sec per member" ||
  fail "a refused speed command changed the limits"
ctl speed --min 2G && [ "$out" = "speed limits: min 2097152 K/sec, max 2097152 K/sec (per member); the max raised to the min" ] ||
  fail "speed --min above the max: $out"
ctl speed --min 500M --max 1G || fail "speed back: $out"

echo "== fail 1: degraded, reads right"
ctl fail 1 && [ "$out" = "fail: slot 1 failed" ] || fail "fail 1: $out"
ctl status
grep -Eq '^raid5 : degraded, .* \[3/2\] \[U_U\]$' <<<"$out" || fail "after fail: $out"
grep -qxF "      slot 1: ${m[1]} (faulty)" <<<"$out" || fail "slot 1 is not faulty"
[ "$(jget 's["state"], s["health"]')" = "degraded [U_U]" ] || fail "JSON after fail"
nbdcopy "$URI" "$tmpdir/degraded"
cmp "$tmpdir/model" "$tmpdir/degraded" || fail "degraded reads differ"
refused 'degraded .*no parity to check' --control "$SOCK" check
refused 'slot 9: the array has slots 0 to 2' --control "$SOCK" rebuild 9 "$tmpdir/new.img"

echo "== rebuild 1 new.img --wait"
( cd "$tmpdir" && "$RAID5CTL" --control "$SOCK" rebuild 1 new.img --wait ) \
  >"$tmpdir/rb.out" || fail "rebuild --wait: exit $?"
cat "$tmpdir/rb.out"
grep -qxF "rebuild: slot 1 ($tmpdir/new.img) is active; the array is healthy [UUU]" "$tmpdir/rb.out" ||
  fail "rebuild --wait: $(cat "$tmpdir/rb.out")"
[ "$(jget 's["health"], s["members"][1]["path"]')" = "[UUU] $tmpdir/new.img" ] ||
  fail "status after the rebuild: $(jget 's["health"], s["members"]')"
grep -Eq 'rebuilt [1-9][0-9]* MiB' <("$RAID5CTL" --control "$SOCK" status) ||
  fail "status does not count the rebuilt bytes"
stop_server
ms=("${m[0]}" "$tmpdir/new.img" "${m[2]}")
"$RAID5CTL" check "${ms[@]}" >"$tmpdir/check.out" 2>&1 ||
  fail "offline check after the rebuild: $(cat "$tmpdir/check.out")"
grep -q "mismatch_cnt 0$" "$tmpdir/check.out" || fail "offline check: $(cat "$tmpdir/check.out")"
md_expect clean AAA "${ms[@]}"
[ "$(md_field "$tmpdir/new.img" 'Device Role')" = "Active device 1" ] ||
  fail "new.img: role '$(md_field "$tmpdir/new.img" 'Device Role')'"
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${ms[@]/#/disk=}" --run "nbdcopy \"\$uri\" '$tmpdir/after'"
cmp "$tmpdir/model" "$tmpdir/after" || fail "data after the rebuild differ"
echo "== status while a resync runs after a crash: not clean"
serve_bg "$tmpdir/nbdkit.log" "${ms[@]/#/disk=}" control="$SOCK" ||
  fail "serve before the crash"
/usr/bin/python3 -c '
import nbd, os, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1])
h.pwrite(b"c" * 4096, 0); h.flush(); os.kill(int(sys.argv[2]), 9)
' "$URI" "$SERVER" || fail "the write before the kill"
wait "$SERVER" 2>/dev/null || :
# sync-speed-max= alone below md's default min (1000) lowers the min to
# it, as the plugin's manual says (it raised the max to 1000 instead).
serve_bg "$tmpdir/nbdkit.log" "${ms[@]/#/disk=}" control="$SOCK" \
  sync-speed-max=100 || fail "serve after the crash"
# Right after the start the superblocks may still say active: the
# background thread records them clean (needs-resync) a moment later.
for (( i = 0; i < 50; i++ )); do
  st=$(jget 's["metadata"], s["job"]["kind"]')
  [ "$st" = "active resync" ] || break
  sleep 0.1
done
[ "$st" = "needs-resync resync" ] ||
  fail "status during the resync after a crash: $st"
ctl status
grep -q "^raid5 : healthy, needs-resync" <<<"$out" || fail "status text: $out"
grep -q "sync speed: min 100K/sec, max 100K/sec per member" <<<"$out" ||
  fail "sync-speed-max=100 alone: $(grep 'sync speed' <<<"$out")"
ctl speed --max 2000000 || fail "speed: $out"
for (( i = 0; i < 100; i++ )); do
  [ "$(jget 's["metadata"], s["job"]["kind"]')" = "clean idle" ] && break
  sleep 0.1
done
[ "$(jget 's["metadata"]')" = clean ] || fail "the resync did not end: $(jget 's["job"]')"
stop_server

echo "== a second member failing: status says both are out"
serve_bg "$tmpdir/nbdkit.log" "${ms[@]/#/disk=}" control="$SOCK" \
  -D raid5.fail_member=2 -D raid5.fail_after=0 || fail "serve with member 2 failing"
ctl fail 1 || fail "fail 1: $out $(cat "$tmpdir/ctl.err")"
/usr/bin/python3 -c '
import nbd, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1])
try:
    h.pread(65536 * 4, 0)
except nbd.Error:
    sys.exit(0)
sys.exit("a read with two members out succeeded")
' "$URI" || fail "reading with two members out"
[ "$(jget 's["state"], s["members"][1]["state"], s["members"][2]["state"]')" = "failed faulty faulty" ] ||
  fail "status after a double failure: $(jget 's["state"], s["members"]')"
crash_server
echo "test-ctl: OK ($(( SECONDS - start )) s)"
