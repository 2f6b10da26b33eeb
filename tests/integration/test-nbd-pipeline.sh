#!/usr/bin/env bash
# NBD members under many requests at once (io/nbd-run.c, nbd-loop.c): no
# batch holds a connection; every batch's commands go out on a member's
# shared connections, many in flight on each, and the member's loop reads
# the replies and wakes the batches.  Each member is a file served by its
# own nbdkit (file plugin) that logs every command (log filter), member 1
# also with its reads and writes held back a few ms (delay filter), so
# that replies come back out of order.  Asserts:
#   - random-io over 16 connections (16 requests in flight) against an
#     array of three such members, with member-connections=2 and with
#     member-connections=1: no request fails, every byte reads back as the
#     model, and the files behind the URIs hold the model with parity =
#     XOR (member-check); status counts no member error and no reconnect;
#   - the commands really share the connections: some connection of a
#     member had more commands in flight at once than the array has
#     connections to it (the server's log);
#   - every command the servers got was answered once (the log: each id
#     arrives once and returns once);
#   - each member has its loop, a thread named raid5-nbd (top -H and
#     perf tell its time from the job's and the requests');
#   - member 1's server stopped (SIGSTOP) under that load, past
#     member-timeout=1: member 1 alone is taken out (faulty: its link, it
#     timed out), members 0 and 2 stay in service without an error, the
#     load goes on without an error, the array reads back as the model
#     degraded, and members 0 and 2 hold the model with member 1's chunks
#     computed from them (member-check with member 1 missing).
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
. "${0%/*}/job-functions.sh"
requires_jobs
requires "$NBDKIT" --filter=log --filter=delay null --version

SIZE=24M
declare -A URI_OF PID_OF

# members DELAY: the three member servers, each logging to NAME.cmds,
# member 1 with its reads and writes held back DELAY.
members ()
{
  local n
  for n in a0 a1 a2; do
    rm -f "$tmpdir/$n.cmds"
    if [ $n = a1 ]; then
      member_server $n --filter=log --filter=delay "logfile=$tmpdir/$n.cmds" \
        "delay-read=$1" "delay-write=$1"
    else
      member_server $n --filter=log "logfile=$tmpdir/$n.cmds"
    fi
  done
  uris=("${URI_OF[a0]}" "${URI_OF[a1]}" "${URI_OF[a2]}")
  files=("$tmpdir/a0.img" "$tmpdir/a1.img" "$tmpdir/a2.img")
  mapfile -t disks < <(printf 'disk=%s\n' "${uris[@]}")
}

# stop_members: SIGTERM (SIGCONT first: one may be stopped), waited for.
stop_members ()
{
  local n
  for n in a0 a1 a2; do
    kill -CONT "${PID_OF[$n]}" 2>/dev/null || :
    kill "${PID_OF[$n]}" 2>/dev/null || :
    wait "${PID_OF[$n]}" 2>/dev/null || :
  done
}

# commands_check LOG...: each request in the logs arrived once and
# returned once; prints the most in flight at once on one connection.
commands_check ()
{
  awk '
    match ($0, /connection=[0-9]+ (\.\.\.)?(Read|Write|Zero|Trim|Flush) id=[0-9]+/) {
      s = substr ($0, RSTART, RLENGTH); split (s, f, " ")
      conn = FILENAME "/" f[1]; ret = f[2] ~ /^\.\.\./
      id = conn "/" substr (f[3], 4)
      if (!ret) { if (id in seen) { print "twice: " $0; bad = 1 }
                  seen[id] = 1; out[conn]++; if (out[conn] > most) most = out[conn] }
      else { if (!(id in seen) || (id in done)) { print "unexpected return: " $0; bad = 1 }
             done[id] = 1; out[conn]-- }
    }
    END {
      for (id in seen) if (!(id in done)) { print "never answered: " id; bad = 1 }
      print most + 0; exit bad
    }' "$@"
}

# load_check CONNECTIONS: a verified load of 16 threads, then the checks.
load_check ()
{
  local conns=$1 most loops
  serve_ctl "$tmpdir/serve-$conns.log" "${disks[@]}" \
    "member-connections=$conns" || fail "serve with member-connections=$conns"
  LOAD_OPS=800 load_start "$tmpdir/model" 3 --threads 16
  sleep 4
  load_stop
  [ "$(ctl_get '[(m["errors"], m["reconnects"]) for m in s["members"]]')" = \
    "[(0, 0), (0, 0), (0, 0)]" ] ||
    fail "member errors or reconnects: $(ctl_get '[(m["errors"], m["reconnects"]) for m in s["members"]]')"
  loops=$(cat /proc/"$(cat "$tmpdir/pid")"/task/*/comm | grep -cx raid5-nbd || :)
  [ "$loops" = 3 ] || fail "$loops threads named raid5-nbd, not one per member"
  stop_server
  member_check "${geom[@]}" --model "$tmpdir/model" "${files[@]}"
  most=$(commands_check "$tmpdir"/a?.cmds) ||
    fail "a command lost or answered twice: $most"
  echo "   at most $most commands in flight on one connection"
  [ "$most" -gt "$conns" ] ||
    fail "never more than $most in flight on a connection: not shared"
}

members 3ms
"$RAID5CTL" create --chunk 64K --assume-clean --bitmap none "${uris[@]}" \
  >"$tmpdir/create.log" 2>&1 || { cat "$tmpdir/create.log" >&2; fail "create"; }
md_geometry "${files[0]}"
geom=(--chunk "$MD_CHUNK" --layout "$MD_LAYOUT" --data-offset "$MD_DOFF")

echo "== 16 clients, member-connections=2"
load_check 2
stop_members
echo "== 16 clients, member-connections=1"
members 3ms
load_check 1

echo "== member 1's server stopped under load, past member-timeout=1"
serve_ctl "$tmpdir/serve-stop.log" "${disks[@]}" member-timeout=1 \
  re-add=manual || fail "serve for the stop"
LOAD_OPS=400 load_start "$tmpdir/model" 3 --threads 16
sleep 2
kill -STOP "${PID_OF[a1]}"
t0=$SECONDS
ctl_wait "s['members'][1]['state'] == 'faulty'" 10
echo "   member 1 faulty after $(( SECONDS - t0 )) s: $(grep -m1 -o 'member 1 ([^)]*): [a-z]* at [0-9]*: [A-Za-z ]*' "$tmpdir/serve-stop.log")"
sleep 2
load_alive || fail "the load failed with member 1 stopped"
load_stop
[ "$(ctl_get 's["health"]')" = "[U_U]" ] || fail "health: $(ctl_get 's["health"]')"
[ "$(ctl_get '[s["members"][i]["errors"] for i in (0, 2)]')" = "[0, 0]" ] ||
  fail "members 0 and 2 saw errors: $(ctl_get '[s["members"][i]["errors"] for i in (0, 2)]')"
[ "$(ctl_get '[s["members"][i]["state"] for i in (0, 2)]')" = "['active', 'active']" ] ||
  fail "members 0 and 2: $(ctl_get '[s["members"][i]["state"] for i in (0, 2)]')"
stop_server
kill -CONT "${PID_OF[a1]}"
member_check "${geom[@]}" --model "$tmpdir/model" "${files[0]}" missing "${files[2]}"
echo "   members 0 and 2 hold the model, member 1's chunks computed from them"
stop_members
