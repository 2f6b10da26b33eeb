#!/usr/bin/env bash
# Members on NBD exports (io/nbd.c): each member is a file served by its own
# nbdkit (file plugin) on a Unix socket, named by an nbd+unix:// URI
# wherever a member path goes.  Asserts:
#   - raid5ctl create refuses a URI whose export holds ext4 (libblkid
#     probes a copy of its ends), naming it, and writes nothing;
#   - raid5ctl create over three URIs writes md superblocks that mdadm
#     --examine reads on the files behind them (clean, 3 active members),
#     and raid5ctl examine reads the same through the URIs;
#   - status says each member's transport (file, nbd), and counts a
#     member's errors and reconnects;
#   - the plugin serves the URIs (disk=URI, also mixed with a local file):
#     a random-io load of 4 connections reads back what it wrote, and the
#     files behind the URIs hold that data with parity = XOR (member-check);
#   - raid5ctl check over the URIs: mismatch_cnt 0;
#   - a URI whose server is not there is refused at start with one error
#     line naming the member, and nothing is written;
#   - a server that accepts and never negotiates (a silent host) is given
#     up after member-timeout=1: one error line, "timed out", no hang;
#   - member-timeout=0 (out of range) is refused with one error line;
#   - a member whose writes take longer than member-timeout=2 (nbdkit's
#     delay filter, 8 s) is faulty within 4.5 s, and the clients see no
#     error; raid5ctl rebuild onto its URI makes the array whole again
#     (data = the model, parity right, check clean);
#   - a member server killed (kill -9) under the load: no client error,
#     the member is faulty at once, and status says it is gone and tried
#     again; its server started again, the array reaches it by itself but
#     does not re-add it (this array has no bitmap): status says it needs
#     a rebuild and why; a rebuild by hand onto the same URI (--control
#     rebuild 1 URI) connects again and makes the array whole (data = the
#     model, parity right);
#   - a member failed by hand (raid5ctl fail) is not tried again: status
#     says so; rebuilt by hand;
#   - a client's flush reaches the member being rebuilt (its server's log
#     filter counts a Flush), the rebuild paused meanwhile;
#   - with re-add=manual, the array leaves such a member alone (never
#     tried: status says nothing of it);
#   - the same kill with a hot spare: the spare -- a URI too
#     (spare=URI) -- takes its slot and is rebuilt: data = the model on
#     the files behind the URIs, parity right.
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
. "${0%/*}/job-functions.sh"
requires_jobs
requires_programs nbdkit

SIZE=24M
declare -A URI_OF PID_OF

for n in a0 a1 a2; do member_server "$n"; done
uris=("${URI_OF[a0]}" "${URI_OF[a1]}" "${URI_OF[a2]}")
files=("$tmpdir/a0.img" "$tmpdir/a1.img" "$tmpdir/a2.img")

echo "== raid5ctl create refuses an export holding ext4"
if command -v mkfs.ext4 >/dev/null; then
  truncate -s "$SIZE" "$tmpdir/x.img"
  mkfs.ext4 -q -F -L nbdx "$tmpdir/x.img"
  member_server x
  sum=$(md5sum <"$tmpdir/x.img")
  status=0
  "$RAID5CTL" create --chunk 64K "${uris[0]}" "${URI_OF[x]}" "${uris[2]}" \
    >"$tmpdir/refused.log" 2>&1 || status=$?
  [ $status != 0 ] || fail "create over an export holding ext4 succeeded"
  grep -q "ext4 file system (label 'nbdx'" "$tmpdir/refused.log" ||
    { cat "$tmpdir/refused.log" >&2; fail "the refusal does not name the ext4"; }
  [ "$(md5sum <"$tmpdir/x.img")" = "$sum" ] || fail "the ext4 export was written"
  echo "   $(head -n 1 "$tmpdir/refused.log")"
else
  echo "   (no mkfs.ext4: skipped)"
fi

echo "== raid5ctl create and examine over URIs"
"$RAID5CTL" create --chunk 64K --assume-clean --bitmap none "${uris[@]}" \
  >"$tmpdir/create.log" 2>&1 || { cat "$tmpdir/create.log" >&2; fail "create over URIs"; }
md_expect clean AAA "${files[@]}"
md_geometry "${files[0]}"
geom=(--chunk "$MD_CHUNK" --layout "$MD_LAYOUT" --data-offset "$MD_DOFF")
"$RAID5CTL" examine --json "${uris[@]}" >"$tmpdir/examine.json" ||
  fail "examine over URIs"
/usr/bin/python3 - "$tmpdir/examine.json" "$(md_field "${files[0]}" 'Array UUID')" <<'PY' || fail "examine over URIs disagrees with mdadm"
import json, sys
r = json.load(open(sys.argv[1]))
devs = r["devices"] if isinstance(r, dict) else r
uuids = {d["array_uuid"] for d in devs}
want = sys.argv[2].replace(":", "")
assert len(devs) == 3, devs
assert {u.replace("-", "").replace(":", "") for u in uuids} == {want}, (uuids, want)
print("   examine: 3 members of array", sys.argv[2])
PY

echo "== serve the URIs: random-io over 4 connections"
mapfile -t disks < <(printf 'disk=%s\n' "${uris[@]}")
serve_ctl "$tmpdir/serve1.log" "${disks[@]}" || fail "serve over URIs"
LOAD_OPS=300 load_start "$tmpdir/model" 3
sleep 2
load_stop
stop_server
member_check "${geom[@]}" --model "$tmpdir/model" "${files[@]}"
raid5ctl_clean "${uris[@]}"

echo "== a local file and two URIs"
serve_ctl "$tmpdir/serve2.log" "disk=${files[0]}" "disk=${uris[1]}" "disk=${uris[2]}" ||
  fail "serve mixed"
[ "$(ctl_get '[m["transport"] for m in s["members"]]')" = "['file', 'nbd', 'nbd']" ] ||
  fail "status transports: $(ctl_get '[m["transport"] for m in s["members"]]')"
"$RANDOM_IO" "$URI" auto --verify-only --model-in "$tmpdir/model" \
  >"$tmpdir/verify.out" 2>&1 || { cat "$tmpdir/verify.out" >&2; fail "mixed: does not read back"; }
echo "   reads back as the model"
stop_server

echo "== a URI with no server behind it"
status=0
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${disks[0]}" "disk=nbd+unix:///?socket=$tmpdir/none.sock" \
  "${disks[2]}" --run true >"$tmpdir/bad.out" 2>&1 || status=$?
[ $status != 0 ] || fail "a member URI without a server was accepted"
[ "$(grep -c error "$tmpdir/bad.out")" = 1 ] || { cat "$tmpdir/bad.out" >&2; fail "not one error line"; }
grep -q "member 1 (nbd+unix:///?socket=$tmpdir/none.sock)" "$tmpdir/bad.out" ||
  { cat "$tmpdir/bad.out" >&2; fail "the error does not name member 1"; }
# ... and the way to start without it (md would: mdadm --run).
grep -q "(given as 'missing' in its place, the array starts degraded without it)" "$tmpdir/bad.out" ||
  { cat "$tmpdir/bad.out" >&2; fail "the error does not say how to start without member 1"; }
echo "   $(grep error "$tmpdir/bad.out")"
md_expect clean AAA "${files[@]}"

# stop_member NAME: its server stopped (SIGTERM) and waited for.
stop_member ()
{
  kill "${PID_OF[$1]}" 2>/dev/null || :
  wait "${PID_OF[$1]}" 2>/dev/null || :
}

echo "== a server that never answers"
/usr/bin/python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)
print("listening", flush=True); time.sleep(60)' "$tmpdir/silent.sock" "$tmpdir" \
  >"$tmpdir/silent.out" 2>&1 &
silent=$!
cleanup_fn "kill_ours $silent"
for (( i = 0; i < 100; i++ )); do grep -q listening "$tmpdir/silent.out" && break; sleep 0.05; done
status=0
t0=$SECONDS
timeout 30 "$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${disks[0]}" \
  "disk=nbd+unix:///?socket=$tmpdir/silent.sock" "${disks[2]}" member-timeout=1 \
  --run true >"$tmpdir/silent-start.out" 2>&1 || status=$?
[ $status != 124 ] || fail "the start hung on a server that never answers"
[ $status != 0 ] && [ "$(grep -c error "$tmpdir/silent-start.out")" = 1 ] &&
  grep -q "member 1 .*timed out" "$tmpdir/silent-start.out" ||
  { cat "$tmpdir/silent-start.out" >&2; fail "a silent member: not one 'timed out' line naming member 1"; }
echo "   after $(( SECONDS - t0 )) s: $(grep error "$tmpdir/silent-start.out")"
kill_ours "$silent"

echo "== member-timeout=0 refused"
status=0
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${disks[@]}" member-timeout=0 --run true \
  >"$tmpdir/bad-timeout.out" 2>&1 || status=$?
[ $status != 0 ] && [ "$(grep -c error "$tmpdir/bad-timeout.out")" = 1 ] &&
  grep -q "member-timeout=0" "$tmpdir/bad-timeout.out" ||
  { cat "$tmpdir/bad-timeout.out" >&2; fail "member-timeout=0: not refused with one line"; }
echo "   $(grep error "$tmpdir/bad-timeout.out")"

echo "== member 1 slower than member-timeout=2"
stop_member a1
member_server a1 --filter=delay delay-write=8
serve_ctl "$tmpdir/serve-slow.log" "${disks[@]}" member-timeout=2 ||
  fail "serve with a slow member"
t0=$SECONDS
LOAD_OPS=200 load_start "$tmpdir/model" 3
ctl_wait "s['members'][1]['state'] == 'faulty'" 4.5
echo "   member 1 faulty after $(( SECONDS - t0 )) s: $(grep -m1 -o 'member 1 ([^)]*): [a-z]* at [0-9]*: [A-Za-z ]*' "$tmpdir/serve-slow.log")"
sleep 1
load_stop
stop_server
stop_member a1
member_server a1

echo "== rebuild member 1 onto its URI"
"$RAID5CTL" rebuild --slot 1 --new "${uris[1]}" "${uris[0]}" missing "${uris[2]}" \
  >"$tmpdir/rebuild.log" 2>&1 || { cat "$tmpdir/rebuild.log" >&2; fail "rebuild onto a URI"; }
member_check "${geom[@]}" --model "$tmpdir/model" "${files[@]}"
raid5ctl_clean "${uris[@]}"

echo "== member 1's server killed under load; back, and rebuilt by hand"
serve_ctl "$tmpdir/serve-kill.log" "${disks[@]}" || fail "serve before the kill"
LOAD_OPS=200 load_start "$tmpdir/model" 3
sleep 1
kill -9 "${PID_OF[a1]}"
t0=$SECONDS
ctl_wait "s['members'][1]['state'] == 'faulty'" 10
echo "   member 1 faulty after $(( SECONDS - t0 )) s"
load_stop
ctl_wait "(s['members'][1]['comeback'] or {}).get('state') == 'waiting'" 5
member_server a1
ctl_wait "(s['members'][1]['comeback'] or {}).get('state') == 'needs-rebuild'" 30
why=$(ctl_get "s['members'][1]['comeback']['why']")
grep -q "no write-intent bitmap" <<<"$why" || fail "status does not say why it needs a rebuild: $why"
ctl_ok status | grep "answers again"
grep -q "slot 1 (${uris[1]}) answers again, but is not re-added" "$tmpdir/serve-kill.log" ||
  fail "the log does not say it answers again and is not re-added"
[ "$(ctl_get 's["health"]')" = "[U_U]" ] || fail "health: $(ctl_get 's["health"]')"
ctl_ok rebuild 1 "${uris[1]}"
ctl_wait "s['health'] == '[UUU]' and s['members'][1]['state'] == 'active'" 60
echo "   rebuilt onto ${uris[1]} again"
ctl_wait "s['members'][1]['errors'] >= 1 and s['members'][1]['reconnects'] >= 1 and s['members'][0]['errors'] == 0 and s['members'][0]['batches'] > 0" 1
ctl_ok status | grep -A1 "slot 1:"
echo "== failed by hand (raid5ctl fail): left alone"
ctl_ok fail 1
sleep 2.5                      # a try would have come after 1 s
[ "$(ctl_get "(s['members'][1]['comeback'] or {}).get('state')")" = failed-by-hand ] &&
  [ "$(ctl_get 's["health"]')" = "[U_U]" ] ||
  fail "failed by hand, then: $(ctl_get 's["health"]') $(ctl_get "s['members'][1]['comeback']")"
ctl_ok status | grep "failed by hand"
ctl_ok rebuild 1
ctl_wait "s['health'] == '[UUU]'" 60
stop_server
member_check "${geom[@]}" --model "$tmpdir/model" "${files[@]}"

echo "== a client flush syncs the member being rebuilt"
# The stripes a rebuild has passed are written to the new member like to
# any other: a flush must reach it.  Its server logs every command (log
# filter); with the rebuild paused, a write (of the bytes already there:
# the model stays right) and a flush from the client must add a Flush there (the write's own superblock update is done by the
# time it returns, and the array is marked clean only 200 ms later).
member_server f --filter=log "logfile=$tmpdir/f.cmds"
serve_ctl "$tmpdir/serve-flush.log" "${disks[@]}" sync-speed-min=100 \
  sync-speed-max=100 || fail "serve for the flush"
ctl_ok fail 1
ctl_ok rebuild 1 "${URI_OF[f]}"
ctl_ok pause
/usr/bin/python3 - "$URI" "$tmpdir/f.cmds" <<'PY' || fail "a client flush did not reach the member being rebuilt"
import nbd, sys
count = lambda: open(sys.argv[2]).read().count(" Flush ")
h = nbd.NBD(); h.connect_uri(sys.argv[1])
h.pwrite(h.pread(4096, 0), 0)     # what the model holds there
before = count()
h.flush()
after = count()
print("   flushes on the member being rebuilt: %d before the client's flush, %d after" % (before, after))
sys.exit(0 if after > before else 1)
PY
ctl_ok speed --min 2000000 --max 2000000
ctl_ok resume
ctl_wait "s['health'] == '[UUU]'" 60
ctl_ok fail 1                  # member 1 back onto its own export
ctl_ok rebuild 1 "${uris[1]}"
ctl_wait "s['health'] == '[UUU]' and s['members'][1]['path'] == '${uris[1]}'" 60
stop_server

echo "== re-add=manual: a member that comes back is left alone"
serve_ctl "$tmpdir/serve-manual.log" "${disks[@]}" re-add=manual || fail "serve re-add=manual"
kill -9 "${PID_OF[a1]}"
"$RANDOM_IO" "$URI" auto --seed "$SEED" --ops 50 --threads 2 --chunk 64K \
  --disks 3 --no-final --model-in "$tmpdir/model" --model-out "$tmpdir/model" \
  >"$tmpdir/wm.out" 2>&1 || { cat "$tmpdir/wm.out" >&2; fail "writes after member 1 died"; }
ctl_wait "s['members'][1]['state'] == 'faulty'" 10
member_server a1
sleep 3                        # a try would have come after 1 s
[ "$(ctl_get "s['members'][1]['comeback']")" = None ] &&
  ! grep -q "answers again" "$tmpdir/serve-manual.log" ||
  fail "re-add=manual: the member was tried: $(ctl_get "s['members'][1]['comeback']")"
ctl_ok rebuild 1 "${uris[1]}"
ctl_wait "s['health'] == '[UUU]'" 60
stop_server
echo "   left alone; rebuilt by hand"

echo "== member 1's server killed under load; the spare (a URI) takes its place"
member_server s
serve_ctl "$tmpdir/serve3.log" "${disks[@]}" "spare=${URI_OF[s]}" ||
  fail "serve a third time"
LOAD_OPS=200 load_start "$tmpdir/model" 3
sleep 1
kill -9 "${PID_OF[a1]}"
t0=$SECONDS
ctl_wait "s['members'][1]['path'] == '${URI_OF[s]}'" 10
echo "   slot 1 is the spare after $(( SECONDS - t0 )) s"
load_stop
ctl_wait "s['health'] == '[UUU]' and s['members'][1]['state'] == 'active'" 60
stop_server
member_check "${geom[@]}" --model "$tmpdir/model" "${files[0]}" "$tmpdir/s.img" "${files[2]}"
