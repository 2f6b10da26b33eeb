#!/usr/bin/env bash
# Members on other hosts, made by the test: one network namespace for the
# array and one per member, joined by veth pairs, with addresses inside
# those namespaces only (10.213.I.1 on the array's side, .2 on member I's).
# Each member host runs nbdkit's file plugin on TCP; the array (nbdkit
# raid5 with member-timeout=2, disk=nbd://10.213.I.2/) runs in its own
# namespace and is reached through a Unix socket.  Under a verified
# random-write load over 4 connections, asserts:
#   - member 1's link dropped (ip link set down: silence, no reset): the
#     member is faulty within 6 s, no client error, and status says it is
#     gone and being tried again; the link back, the array re-adds it by
#     itself (nothing done by hand), bitmap resync, whole again; 3 s later
#     (writes given up on must not land late) it reads back as the model;
#   - member 2's server killed (kill -9): faulty at once, no client error;
#     the server back, re-added by itself the same way;
#   - member 2's host back with every write failing (nbdkit's error
#     filter): reached again by itself, its re-add's first write fails
#     with the server's EIO: an I/O error, so it stays out (status says
#     so, no more connections in 5 s); back for real, re-added by hand;
#   - member 0's host back holding other data (another array's member):
#     not re-added; status says it needs a rebuild and why (not a member
#     of this array), a re-add by hand is refused the same way; the array
#     stays degraded and serves; rebuilt onto it by hand (the user's
#     choice to overwrite it);
#   - after each return: the export reads back as the model; at the end,
#     raid5ctl check of the members over TCP finds mismatch_cnt 0 and
#     member-check of the files behind them finds data = model, parity
#     = XOR.
# Where namespaces cannot be made (not root, no ip), says so and exits 77.
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
. "${0%/*}/job-functions.sh"
requires_jobs
requires_programs nbdkit
command -v ip >/dev/null || skip "needs ip (iproute2) for network namespaces"

p=r5n$$                       # names: at most 15 characters with suffixes
NS_A=${p}a
SIZE=24M
declare -a MPID

# in_ns NS CMD...: run CMD inside namespace NS.
in_ns () { local ns=$1; shift; ip netns exec "$ns" "$@"; }

make_hosts ()
{
  ip netns add "$NS_A" || return 1
  cleanup_fn "ip netns del $NS_A 2>/dev/null"
  in_ns "$NS_A" ip link set lo up || return 1
  for i in 0 1 2; do
    ip netns add "${p}m$i" || return 1
    cleanup_fn "ip netns del ${p}m$i 2>/dev/null"
    ip link add "${p}h$i" type veth peer name "${p}n$i" || return 1
    ip link set "${p}h$i" netns "$NS_A" || return 1
    ip link set "${p}n$i" netns "${p}m$i" || return 1
    in_ns "$NS_A" ip addr add "10.213.$i.1/30" dev "${p}h$i" || return 1
    in_ns "$NS_A" ip link set "${p}h$i" up || return 1
    in_ns "${p}m$i" ip link set lo up || return 1
    in_ns "${p}m$i" ip addr add "10.213.$i.2/30" dev "${p}n$i" || return 1
    in_ns "${p}m$i" ip link set "${p}n$i" up || return 1
  done
}
make_hosts 2>"$tmpdir/netns.err" ||
  skip "cannot make network namespaces here: $(head -n 1 "$tmpdir/netns.err")"

# member_host I [FILE]: member I's server on 10.213.I.2:10809 serving FILE
# (default $tmpdir/mI.img, made if absent); sets MPID[I].
member_host ()
{
  local i=$1 img=${2:-$tmpdir/m$1.img} k
  [ -f "$img" ] || truncate -s "$SIZE" "$img"
  rm -f "$tmpdir/m$i.pid"
  # Not through in_ns: a function in the background is a subshell, and
  # $! would be the subshell's, not the server's (ip netns exec execs).
  # shellcheck disable=SC2086
  ip netns exec "${p}m$i" "$member_nbdkit" -f -i "10.213.$i.2" -p 10809 \
    -P "$tmpdir/m$i.pid" ${MEMBER_FILTER:-} file "$img" ${MEMBER_PARAMS:-} \
    >"$tmpdir/m$i.log" 2>&1 &
  MPID[$i]=$!
  cleanup_fn "kill_ours -9 ${MPID[$i]}"
  for (( k = 0; k < 100; k++ )); do
    [ -s "$tmpdir/m$i.pid" ] && return 0
    sleep 0.05
  done
  cat "$tmpdir/m$i.log" >&2
  in_ns "${p}m$i" ss -tanp >&2
  fail "member host $i did not start"
}

member_nbdkit=$NBDKIT          # the array's nbdkit is wrapped below
for i in 0 1 2; do member_host "$i"; done

# kill_host I: member I's server killed (kill -9) and reaped, so that its
# port is free again.
kill_host ()
{
  kill -9 "${MPID[$1]}" 2>/dev/null || :
  wait "${MPID[$1]}" 2>/dev/null || :
}
uris=(nbd://10.213.0.2/ nbd://10.213.1.2/ nbd://10.213.2.2/)
files=("$tmpdir/m0.img" "$tmpdir/m1.img" "$tmpdir/m2.img")

# The array's nbdkit runs in its namespace: serve_bg runs $NBDKIT.
cat >"$tmpdir/nbdkit-in-a" <<EOF
#!/bin/sh
exec ip netns exec $NS_A $NBDKIT "\$@"
EOF
chmod +x "$tmpdir/nbdkit-in-a"
NBDKIT=$tmpdir/nbdkit-in-a

echo "== raid5ctl create over TCP (internal bitmap)"
in_ns "$NS_A" "$RAID5CTL" create --chunk 64K --assume-clean --bitmap internal "${uris[@]}" \
  >"$tmpdir/create.log" 2>&1 || { cat "$tmpdir/create.log" >&2; fail "create over TCP"; }
md_expect clean AAA "${files[@]}"
md_geometry "${files[0]}"
geom=(--chunk "$MD_CHUNK" --layout "$MD_LAYOUT" --data-offset "$MD_DOFF")
mapfile -t disks < <(printf 'disk=%s\n' "${uris[@]}")
serve_ctl "$tmpdir/serve.log" "${disks[@]}" member-timeout=2 ||
  fail "serve over TCP"
[ "$(ctl_get '[m["transport"] for m in s["members"]]')" = "['nbd', 'nbd', 'nbd']" ] ||
  fail "transports: $(ctl_get '[m["transport"] for m in s["members"]]')"

# host_died I: if member I's server has ended although the test did not
# end it, say how (exit status, its log's last lines) and return 0.
host_died ()
{
  local st=0
  kill -0 "${MPID[$1]}" 2>/dev/null && return 1
  wait "${MPID[$1]}" 2>/dev/null || st=$?
  echo "   member host $1's server (nbdkit's file plugin) had ended, exit status $st:" >&2
  tail -n 5 "$tmpdir/m$1.log" | sed 's/^/     log: /' >&2
  return 0
}

# came_back SLOT: the array re-adds SLOT by itself (bitmap resync) and is
# whole again, and its log says so.  The member hosts run Debian's
# nbdkit, not ours; one of them once aborted (SIGABRT, in CI) in the
# middle of a re-add, which left nothing to re-add.  If a host's server
# ended while the test waited, that is said (with its log) and it is
# started again, once: the array must still re-add the member by itself.
came_back ()
{
  local i k restarted=0
  for (( k = 0; ; k++ )); do
    /usr/bin/python3 "$CTL_PY" "$CTL_SOCK" wait "s['health'] == '[UUU]'" 5 \
      2>"$tmpdir/wait.err" && break
    for i in 0 1 2; do
      if (( ! restarted )) && host_died "$i"; then
        echo "   WARNING: member host $i's nbdkit died under the test; started again" >&2
        member_host "$i"
        restarted=1
        k=0
      fi
    done
    if (( k >= 7 )); then
      tail -n 20 "$tmpdir/serve.log" >&2
      cat "$tmpdir/wait.err" >&2
      fail "status never showed s['health'] == '[UUU]' within 40 s"
    fi
  done
  grep -q "slot $1 (${uris[$1]}) answers again: re-added" "$tmpdir/serve.log" ||
    { tail -n 20 "$tmpdir/serve.log" >&2; fail "slot $1: no line saying it was re-added by itself"; }
}

echo "== member 1's link dropped under load"
LOAD_OPS=200 load_start "$tmpdir/model" 3
sleep 1
in_ns "$NS_A" ip link set "${p}h1" down
t0=$SECONDS
ctl_wait "s['members'][1]['state'] == 'faulty'" 6
echo "   member 1 faulty after $(( SECONDS - t0 )) s: $(grep -m1 -o 'member 1 ([^)]*): [a-z]* at [0-9]*: [A-Za-z ]*' "$tmpdir/serve.log")"
ctl_wait "(s['members'][1]['comeback'] or {}).get('tries', 0) >= 1 and s['members'][1]['comeback']['state'] == 'waiting'" 10
echo "   status: $(ctl status | grep -m1 'gone:' | sed 's/^ *//')"
load_stop
in_ns "$NS_A" ip link set "${p}h1" up
t0=$SECONDS
came_back 1
echo "   link back, re-added by itself in $(( SECONDS - t0 )) s: $(ctl_get 's["health"]')"
# What the array gave up on when the link dropped must not land on the
# member later (TCP retransmits once the link is back), over the re-add.
sleep 3
"$RANDOM_IO" "$URI" auto --verify-only --model-in "$tmpdir/model" \
  >"$tmpdir/verify1.out" 2>&1 ||
  { cat "$tmpdir/verify1.out" >&2; fail "after the re-add, the export does not read back as the model"; }
echo "   reads back as the model 3 s after the re-add"

echo "== member 2's server killed under load"
LOAD_OPS=200 load_start "$tmpdir/model" 3
sleep 1
kill_host 2
ctl_wait "s['members'][2]['state'] == 'faulty'" 6
sleep 1
load_stop
member_host 2
t0=$SECONDS
came_back 2
echo "   server back, re-added by itself in $(( SECONDS - t0 )) s: $(ctl_get 's["health"]')"

# lose_host I OPS: member I's server killed, OPS random writes through the
# array (degraded, carried into the model), member I faulty within 6 s.
lose_host ()
{
  kill_host "$1"
  "$RANDOM_IO" "$URI" auto --seed "$SEED" --ops "$2" --threads 2 --chunk 64K \
    --disks 3 --no-final --model-in "$tmpdir/model" --model-out "$tmpdir/model" \
    >"$tmpdir/w$1.out" 2>&1 || { cat "$tmpdir/w$1.out" >&2; fail "writes after member $1 died"; }
  ctl_wait "s['members'][$1]['state'] == 'faulty'" 6
}

echo "== member 2's host back failing every write: an I/O error, it stays out"
lose_host 2 50
MEMBER_FILTER=--filter=error MEMBER_PARAMS="error-pwrite=EIO error-pwrite-rate=100%" member_host 2
# Lost with its host, it is reached again by itself; the re-add's first
# write fails with an error the server sent: its storage's, not the
# link's, so it is not tried again (it would flap back after each error).
ctl_wait "(s['members'][2]['fault'] or {}).get('kind') == 'io-error'" 20
r0=$(ctl_get "s['members'][2]['reconnects']")
sleep 5
r1=$(ctl_get "s['members'][2]['reconnects']")
[ "$(ctl_get 's["health"]')" = "[UU_]" ] || fail "health with a member that cannot be written: $(ctl_get 's["health"]')"
(( r1 == r0 )) || fail "a member that failed with an I/O error was reached again: $r0 then $r1 connections"
ctl status | grep -A2 "slot 2:" | grep "I/O error: .*stays out until re-added" |
  sed 's/^ */   status: /' ||
  { ctl status >&2; fail "status does not say member 2 had an I/O error and stays out"; }
kill_host 2
member_host 2
"$RAID5CTL" --control "$CTL_SOCK" re-add 2 --wait >"$tmpdir/readd2.out" 2>&1 ||
  { cat "$tmpdir/readd2.out" >&2; fail "re-add of member 2 by hand"; }
ctl_wait "s['health'] == '[UUU]'" 40
echo "   re-added by hand: $(ctl_get 's["health"]')"

echo "== member 0's host back with other data"
truncate -s "$SIZE" "$tmpdir/o0.img" "$tmpdir/o1.img" "$tmpdir/o2.img"
"$RAID5CTL" create --chunk 64K --assume-clean "$tmpdir"/o?.img >/dev/null 2>&1 ||
  fail "create the other array"
lose_host 0 100
member_host 0 "$tmpdir/o0.img"
ctl_wait "(s['members'][0]['comeback'] or {}).get('state') == 'needs-rebuild'" 40
why=$(ctl_get "s['members'][0]['comeback']['why']")
grep -q "not a member of this array" <<<"$why" || fail "status does not say why: $why"
echo "   status: needs rebuild: $why"
status=0
"$RAID5CTL" --control "$CTL_SOCK" re-add 0 --wait >"$tmpdir/refused.out" 2>&1 || status=$?
[ $status != 0 ] || fail "a member holding another array's data was re-added"
grep -q "not a member of this array" "$tmpdir/refused.out" ||
  { cat "$tmpdir/refused.out" >&2; fail "the refusal does not say why"; }
echo "   $(head -n 1 "$tmpdir/refused.out")"
[ "$(ctl_get 's["health"]')" = "[_UU]" ] || fail "health after the refusal: $(ctl_get 's["health"]')"
"$RANDOM_IO" "$URI" auto --verify-only --model-in "$tmpdir/model" \
  >"$tmpdir/verify.out" 2>&1 || { cat "$tmpdir/verify.out" >&2; fail "degraded: does not read back"; }
ctl_ok rebuild 0
ctl_wait "s['health'] == '[UUU]'" 60
files[0]=$tmpdir/o0.img         # what member 0's host serves now
stop_server
NBDKIT=$member_nbdkit

echo "== the members over TCP, offline"
in_ns "$NS_A" "$RAID5CTL" check "${uris[@]}" >"$tmpdir/check.out" 2>&1 ||
  { cat "$tmpdir/check.out" >&2; fail "raid5ctl check over TCP"; }
grep -q "mismatch_cnt 0$" "$tmpdir/check.out" || { cat "$tmpdir/check.out" >&2; fail "check: not clean"; }
echo "   $(grep mismatch_cnt "$tmpdir/check.out")"
member_check "${geom[@]}" --model "$tmpdir/model" "${files[@]}"
