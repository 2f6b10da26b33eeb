#!/usr/bin/env bash
# raid5ctl monitor against a served array (control=SOCKET), with a
# --program that writes down each call's arguments:
#   - --test: TestMessage SOCKET;
#   - fail 1: Fail SOCKET MEMBER-PATH and DegradedArray SOCKET;
#   - rebuild 1 onto a new file: RebuildStarted/RebuildFinished SOCKET
#     rebuild, SpareActive SOCKET NEW-PATH;
#   - a data byte spoiled, check: RebuildStarted/RebuildFinished SOCKET
#     check, MismatchesFound SOCKET 8;
#   - fail 1 again, re-add 1: ReAdded SOCKET PATH, SpareActive again;
#   - the server stopped: DeviceDisappeared SOCKET, and the monitor exits
#     0 by itself (no array left);
#   - --oneshot on a degraded array: "DegradedArray SOCKET" on stdout,
#     exit 0 at once;
#   - a hot spare (spare=) taking a failed member's slot between two
#     looks: Fail SOCKET MEMBER-PATH, SpareActive SOCKET SPARE-PATH;
#   - bad usage and an unreachable socket: exit 1, one line.
# Every wait is bounded (10 s).
. "${0%/*}/functions.sh"
. "${0%/*}/../integration/md-functions.sh"
requires_raid5ctl

md_create mon 3 16M --chunk 64K --bitmap internal
m=("${MEMBERS[@]}")
SOCK=$tmpdir/ctl
serve_bg "$tmpdir/nbdkit.log" "${m[@]/#/disk=}" control="$SOCK" ||
  fail "the server did not start"
printf '#!/bin/sh\necho "$*" >>"%s"\n' "$tmpdir/events" >"$tmpdir/prog"
chmod +x "$tmpdir/prog"
: >"$tmpdir/events"
"$RAID5CTL" monitor --delay 0.1 --test --program "$tmpdir/prog" "$SOCK" \
  2>"$tmpdir/monitor.err" &
MON=$!
cleanup_fn "kill_ours -9 $MON"

# seen LINE [COUNT]: the program was called with LINE's words (COUNT
# times, default 1), within 10 s.
seen ()
{
  local i n
  for (( i = 0; i < 100; i++ )); do
    n=$(grep -cxF -- "$1" "$tmpdir/events" || :)
    [ "$n" -ge "${2:-1}" ] && { echo "   $1"; return 0; }
    sleep 0.1
  done
  cat "$tmpdir/events" >&2
  fail "the monitor did not report '$1' (${2:-1} times)"
}

ctl () { "$RAID5CTL" --control "$SOCK" "$@" >/dev/null || fail "raid5ctl --control $*"; }

seen "TestMessage $SOCK"
ctl fail 1
seen "Fail $SOCK ${m[1]}"
seen "DegradedArray $SOCK"
truncate -s 16M "$tmpdir/new1"
ctl rebuild --wait 1 "$tmpdir/new1"
seen "RebuildStarted $SOCK rebuild"
seen "RebuildFinished $SOCK rebuild"
seen "SpareActive $SOCK $tmpdir/new1"

flip_byte "${m[0]}" $(( MD_DOFF + 100 )) >/dev/null
st=0
"$RAID5CTL" --control "$SOCK" check --wait >/dev/null || st=$?
[ $st = 2 ] || fail "check --wait: exit $st, not 2"
seen "RebuildStarted $SOCK check"
seen "RebuildFinished $SOCK check"
seen "MismatchesFound $SOCK 8"

ctl fail 1
seen "Fail $SOCK $tmpdir/new1"
ctl re-add --wait 1
seen "ReAdded $SOCK $tmpdir/new1"
seen "SpareActive $SOCK $tmpdir/new1" 2

stop_server
seen "DeviceDisappeared $SOCK"
for (( i = 0; i < 100; i++ )); do kill -0 "$MON" 2>/dev/null || break; sleep 0.1; done
kill -0 "$MON" 2>/dev/null && fail "the monitor did not stop with no array left"
st=0
wait "$MON" || st=$?
[ $st = 0 ] || fail "the monitor exited $st, not 0"
unknown=$(grep -vE '^(TestMessage|Fail|DegradedArray|RebuildStarted|RebuildFinished|SpareActive|MismatchesFound|ReAdded|DeviceDisappeared) ' "$tmpdir/events" || :)
[ -z "$unknown" ] || fail "events of no known name: $unknown"
echo "   $(wc -l <"$tmpdir/events") events, each with a known name; exit 0"

echo "== --oneshot on a degraded array"
serve_bg "$tmpdir/nbdkit2.log" "${m[0]/#/disk=}" disk=missing "${m[2]/#/disk=}" \
  control="$tmpdir/ctl2" || fail "the server did not start"
out=$(timeout 10 "$RAID5CTL" monitor --oneshot "$tmpdir/ctl2") ||
  fail "monitor --oneshot: exit $?"
[ "$out" = "DegradedArray $tmpdir/ctl2" ] || fail "monitor --oneshot said '$out'"
echo "   $out"
stop_server

echo "== a hot spare takes a failed member's slot"
# The spare is in (rebuilding, or already rebuilt) by the next look: no
# look sees the member out of service, yet it failed.
md_create hs 3 16M --chunk 64K --bitmap none
hs=("${MEMBERS[@]}")
truncate -s 16M "$tmpdir/hs.spare"
SOCK=$tmpdir/ctl3
serve_bg "$tmpdir/nbdkit3.log" "${hs[@]/#/disk=}" spare="$tmpdir/hs.spare" \
  control="$SOCK" || fail "the server did not start"
: >"$tmpdir/events"
"$RAID5CTL" monitor --delay 0.1 --test --program "$tmpdir/prog" "$SOCK" \
  2>>"$tmpdir/monitor.err" &
MON=$!
cleanup_fn "kill_ours -9 $MON"
seen "TestMessage $SOCK"
ctl fail 0
seen "Fail $SOCK ${hs[0]}"
seen "SpareActive $SOCK $tmpdir/hs.spare"
stop_server
seen "DeviceDisappeared $SOCK"
wait "$MON" || :

echo "== refused"
expect_one_line () # REGEX ARGS...
{
  local re=$1 st=0
  shift
  "$RAID5CTL" monitor "$@" >/dev/null 2>"$tmpdir/err" || st=$?
  [ $st = 1 ] || fail "monitor $*: exit $st, not 1"
  [ "$(grep -c . "$tmpdir/err")" = 1 ] && grep -Eq -- "$re" "$tmpdir/err" ||
    fail "monitor $*: '$(cat "$tmpdir/err")' lacks '$re'"
  echo "   $(cat "$tmpdir/err")"
}
expect_one_line "which arrays" --oneshot
expect_one_line "--delay x: not a number" --delay x "$SOCK"
expect_one_line "$tmpdir/nowhere" --oneshot "$tmpdir/nowhere"
