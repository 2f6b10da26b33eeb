#!/usr/bin/env bash
# Why an NBD member failed decides whether it comes back by itself.  Three
# members on nbdkit's file plugin (Unix sockets), member 1 through nbdkit's
# error filter, which fails every request with EIO while a trigger file
# exists (the server and its connection stay up); internal bitmap,
# member-timeout=2, re-add=auto (the default).  Asserts:
#   - errors on: under a verified random-write load member 1 is faulty, no
#     client error; errors off again, it stays faulty for 5 s: no try to
#     reach it (no comeback state, its reconnects do not grow), status (text
#     and JSON) says I/O error and that it stays out until re-added; the
#     array holds no connection to it: its server, stopped (SIGTERM), ends
#     within 10 s (nbdkit waits for its clients); started again, raid5ctl
#     re-add by hand brings it back (bitmap resync, [UUU]) and the export
#     reads back as the model;
#   - member 2's server killed (kill -9) while the array is idle: within
#     5 s (member timeout 2 s) status shows it faulty, link lost, re-added
#     by itself when it answers, with no client I/O at all; its server
#     started again, the array re-adds it by itself ([UUU], the log says
#     so) and the export reads back as the model;
#   - member 0's server stopped with SIGTERM (a service stopped, a host
#     rebooting: nbdkit answers NBD_ESHUTDOWN while it shuts down): a lost
#     link too, not an I/O error; started again, re-added by itself;
#   - the same with re-add=manual (nothing probes the member): its server
#     still ends within 10 s (taking a member out lets go of its
#     connections, whatever the cause); started again, re-added by hand.
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
. "${0%/*}/job-functions.sh"
requires_jobs
requires_programs nbdkit
requires "$NBDKIT" --filter=error null --version

SIZE=24M
declare -A URI_OF PID_OF

# server_ends NAME WHY: member server NAME, sent SIGTERM, ends within
# 10 s (nbdkit waits for its clients to go); else fail, saying WHY.
server_ends ()
{
  local i
  for (( i = 0; i < 100; i++ )); do
    kill -0 "${PID_OF[$1]}" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "${PID_OF[$1]}" 2>/dev/null &&
    fail "$1's server did not end within 10 s of SIGTERM: $2"
  wait "${PID_OF[$1]}" 2>/dev/null || :
}

TRIGGER=$tmpdir/a1.errors
member_server a0
member_server a1 --filter=error error=EIO error-rate=100% "error-file=$TRIGGER"
member_server a2
uris=("${URI_OF[a0]}" "${URI_OF[a1]}" "${URI_OF[a2]}")
"$RAID5CTL" create --chunk 64K --assume-clean --bitmap internal "${uris[@]}" \
  >"$tmpdir/create.log" 2>&1 || { cat "$tmpdir/create.log" >&2; fail "create over URIs"; }
mapfile -t disks < <(printf 'disk=%s\n' "${uris[@]}")
serve_ctl "$tmpdir/serve.log" "${disks[@]}" member-timeout=2 || fail "serve"

echo "== member 1 answers EIO (its link up): stays out until re-added"
touch "$TRIGGER"
LOAD_OPS=100 load_start "$tmpdir/model" 3
ctl_wait "s['members'][1]['state'] == 'faulty'" 10
load_stop
rm -f "$TRIGGER"
r0=$(ctl_get "s['members'][1]['reconnects']")
sleep 5
[ "$(ctl_get "s['members'][1]['state'], s['members'][1]['comeback']")" = "('faulty', None)" ] ||
  fail "5 s after an I/O error: $(ctl_get "s['members'][1]['state'], s['members'][1]['comeback']")"
r1=$(ctl_get "s['members'][1]['reconnects']")
[ "$r1" = "$r0" ] || fail "a member failed for I/O errors was reached again: $r0 then $r1 reconnects"
[ "$(ctl_get "s['members'][1]['fault']['kind']")" = io-error ] ||
  fail "JSON fault: $(ctl_get "s['members'][1]['fault']")"
line=$(ctl status | grep -A3 "slot 1:" | grep "I/O error: ") ||
  { ctl status >&2; fail "status does not say I/O error"; }
grep -q "stays out until re-added" <<<"$line" || fail "status: $line"
echo "   still out after 5 s, $r1 reconnects: $(sed 's/^ *//' <<<"$line")"
# Out until a person acts: the array holds no connection to it, so its
# server, stopped (SIGTERM), ends; then started again for the re-add.
kill -TERM "${PID_OF[a1]}"
server_ends a1 "the array holds a connection to a member out of service"
member_server a1 --filter=error error=EIO error-rate=100% "error-file=$TRIGGER"
echo "   its server stopped (SIGTERM) and started again"
"$RAID5CTL" --control "$CTL_SOCK" re-add 1 --wait >"$tmpdir/readd.out" 2>&1 ||
  { cat "$tmpdir/readd.out" >&2; fail "re-add by hand"; }
ctl_wait "s['health'] == '[UUU]'" 30
"$RANDOM_IO" "$URI" auto --verify-only --model-in "$tmpdir/model" \
  >"$tmpdir/verify1.out" 2>&1 || { cat "$tmpdir/verify1.out" >&2; fail "after the re-add: not the model"; }
echo "   re-added by hand: $(head -n 1 "$tmpdir/readd.out")"

echo "== member 2's server killed while the array is idle"
sleep 1.5
b0=$(ctl_get "s['counters']['reads'] + s['counters']['writes']")
kill -9 "${PID_OF[a2]}"
wait "${PID_OF[a2]}" 2>/dev/null || :
t0=$SECONDS
ctl_wait "s['members'][2]['state'] == 'faulty' and (s['members'][2]['fault'] or {}).get('kind') == 'link-lost'" 5
[ "$(ctl_get "s['counters']['reads'] + s['counters']['writes']")" = "$b0" ] ||
  fail "client requests ran meanwhile"
line=$(ctl status | grep -A2 "slot 2:" | grep "link lost: ") ||
  { ctl status >&2; fail "status does not say link lost"; }
grep -q "re-added by itself when it answers" <<<"$line" || fail "status: $line"
# The reason in words, not a dead handle's errno alone ("Invalid argument").
grep -q "read at 0: no answer, the connection is lost (" <<<"$line" ||
  fail "status does not say the connection is lost: $line"
echo "   faulty after $(( SECONDS - t0 )) s with no client I/O: $(sed 's/^ *//' <<<"$line")"
member_server a2
ctl_wait "s['health'] == '[UUU]'" 30
grep -q "slot 2 (${uris[2]}) answers again: re-added" "$tmpdir/serve.log" ||
  fail "the log does not say slot 2 was re-added by itself"
"$RANDOM_IO" "$URI" auto --verify-only --model-in "$tmpdir/model" \
  >"$tmpdir/verify2.out" 2>&1 || { cat "$tmpdir/verify2.out" >&2; fail "after the return: not the model"; }
echo "   back by itself: $(ctl_get 's["health"]')"

echo "== member 0's server stopped (SIGTERM: it answers ESHUTDOWN) while idle"
sleep 1.5
kill -TERM "${PID_OF[a0]}"
ctl_wait "s['members'][0]['state'] == 'faulty'" 5
[ "$(ctl_get "(s['members'][0]['fault'] or {}).get('kind')")" = link-lost ] ||
  fail "a server shutting down is not a lost link: $(ctl_get "s['members'][0]['fault']")"
# nbdkit ends once its clients have gone: the array lets go of the link.
server_ends a0 "the array holds its connection"
member_server a0
ctl_wait "s['health'] == '[UUU]'" 30
grep -q "slot 0 (${uris[0]}) answers again: re-added" "$tmpdir/serve.log" ||
  fail "the log does not say slot 0 was re-added by itself"
"$RANDOM_IO" "$URI" auto --verify-only --model-in "$tmpdir/model" \
  >"$tmpdir/verify3.out" 2>&1 || { cat "$tmpdir/verify3.out" >&2; fail "after the restart: not the model"; }
echo "   stopped and started again: $(ctl_get 's["health"]'), re-added by itself"
stop_server

echo "== re-add=manual: member 0's server stopped, nothing probes it"
rm -f "$CTL_SOCK"
serve_ctl "$tmpdir/serve2.log" "${disks[@]}" member-timeout=2 re-add=manual ||
  fail "serve with re-add=manual"
ctl_wait "s['health'] == '[UUU]'" 10
kill -TERM "${PID_OF[a0]}"
ctl_wait "s['members'][0]['state'] == 'faulty'" 5
[ "$(ctl_get "(s['members'][0]['fault'] or {}).get('kind'), s['members'][0]['comeback']")" = "('link-lost', None)" ] ||
  fail "re-add=manual, server stopped: $(ctl_get "s['members'][0]['fault'], s['members'][0]['comeback']")"
# No probe will close its connections: taking it out must.
server_ends a0 "a member out of service for a lost link keeps its connections"
member_server a0
"$RAID5CTL" --control "$CTL_SOCK" re-add 0 --wait >"$tmpdir/readd2.out" 2>&1 ||
  { cat "$tmpdir/readd2.out" >&2; fail "re-add by hand after the server's restart"; }
ctl_wait "s['health'] == '[UUU]'" 30
"$RANDOM_IO" "$URI" auto --verify-only --model-in "$tmpdir/model" \
  >"$tmpdir/verify4.out" 2>&1 || { cat "$tmpdir/verify4.out" >&2; fail "after the manual re-add: not the model"; }
echo "   its server ended; started again and re-added by hand: $(ctl_get 's["health"]')"

echo "== two members out: the array fails, said once, not a line a request"
kill -9 "${PID_OF[a2]}"; wait "${PID_OF[a2]}" 2>/dev/null || :
ctl_wait "s['members'][2]['state'] == 'faulty'" 10
kill -9 "${PID_OF[a1]}"; wait "${PID_OF[a1]}" 2>/dev/null || :
/usr/bin/python3 - "$URI" <<'PY' || fail "reading the failed array"
import nbd, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1])
failed = 0
for i in range(40):
    try:
        h.pread(65536, i * 65536)
    except nbd.Error:
        failed += 1
if failed < 30:
    sys.exit("only %d of 40 reads of the failed array failed" % failed)
PY
n=$(grep -c 'array has failed' "$tmpdir/serve2.log")
[ "$n" -le 2 ] || fail "the failure said $n times: $(grep 'array has failed' "$tmpdir/serve2.log" | head -n 3)"
echo "   said $n times over 40 failing reads"
stop_server
