#!/usr/bin/env bash
# The latency-target mode of background jobs (sync-latency-max=,
# raid/pace.h), against md's pacing, under a client that always has
# requests in flight (fio's nbd engine, 4K random reads and writes, 16
# deep).  md's rule gives the job speed_min while clients are busy
# (test-rate: within [0.9, 1.5] x MIN); with a target instead:
#   - a target every request meets (10 s): the job climbs to max --
#     at least 0.8 x MAX, where md's rule holds it at MIN -- and the
#     status shows the pacer's rate and the clients' p99, no window over;
#   - a target no request meets (50us, with 16 requests of 64K in
#     flight): windows over the target (pace_cuts counts them) and the
#     job cut back to MIN -- at most 1.5 x MIN -- never below 0.9 x MIN
#     (md's minimum still holds);
#   - the job thread runs at nice 19 (clients' threads first);
#   - every check ends with mismatch_cnt 0; fio sees no error;
#   - a rebuild paced by latency under the same load (members in memory
#     are then read and written through the I/O path, not mapped) ends
#     with the slot active, and the array checks clean offline;
#   - bad values of sync-latency-max are refused (test-bad-params).
# Members in memory (tmpfs) where there is one, as test-rate.
if [ -d /dev/shm ] && [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
. "${0%/*}/job-functions.sh"
requires_jobs
fio --enghelp=nbd >/dev/null 2>&1 || skip "needs fio with its nbd engine"
start=$SECONDS

MIN=${PACE_MIN:-8000}
MAX=${PACE_MAX:-40000}

md_create pace 3 384M --chunk 64K --assume-clean --bitmap none
mapfile -t disks < <(disk_args "${MEMBERS[@]}")

# job_nice: the nice value of the server's job thread (raid5-job).
job_nice ()
{
  local t
  for t in /proc/"$(cat "$tmpdir/pid")"/task/*; do
    [ "$(cat "$t/comm" 2>/dev/null)" = raid5-job ] || continue
    # Field 19 of stat, counted after the ")" that ends the name.
    sed 's/.*) //' "$t/stat" | awk '{ print $17 }'
    return 0
  done
  fail "no raid5-job thread in the server"
}

# busy_check TARGET BS: serve with sync-latency-max=TARGET, fio BS random
# reads and writes 16 deep throughout, a check started under it; RATE
# its speed once the pacer has had 4 s.
busy_check ()
{
  local fio text
  serve_ctl "$tmpdir/serve-$1.log" "${disks[@]}" sync-speed-min="$MIN" \
    sync-speed-max="$MAX" sync-latency-max="$1" || fail "the server did not start"
  fio --name=busy --ioengine=nbd --uri="$URI" --rw=randrw --bs="$2" \
    --iodepth=16 --time_based --runtime=14 --output="$tmpdir/fio-$1.out" \
    >/dev/null 2>&1 &
  fio=$!
  sleep 1
  ctl_ok check
  sleep 4
  ctl_rate check 5 2.5
  kill -0 $fio 2>/dev/null || fail "fio ended during the measurement"
  # The job at the lowest CPU priority: a client's thread that wakes
  # takes the processor from it at once.
  [ "$(job_nice)" = 19 ] || fail "the job thread runs at nice $(job_nice), not 19, with a latency target"
  PACED=$(ctl_get 's["paced_kib"]') P99=$(ctl_get 's["client_p99_us"]')
  CUTS=$(ctl_get 's["pace_cuts"]')
  [ "$(ctl_get 's["sync_latency_max_us"]')" -gt 0 ] || fail "status does not show the target"
  text=$(ctl status)
  grep -q "sync latency target: clients' p99 under" <<<"$text" ||
    fail "status text does not show the target: $text"
  wait $fio || { cat "$tmpdir/fio-$1.out" >&2; fail "fio saw an error"; }
  echo "   check at $RATE KiB/s per member (min $MIN, max $MAX); pacer at $PACED," \
       "clients' p99 ${P99}us, $CUTS windows over; fio:" \
       "$(grep -E '^ *(read|write):' "$tmpdir/fio-$1.out" | sed 's/,.*//' | tr -s ' \n' ' ')"
  ctl_ok speed --max 2000000
  ctl_wait "s['job']['kind'] == 'idle' and s['last_job']['kind'] == 'check'" 60
  [ "$(ctl_get '(s["last_job"]["result"], s["last_job"]["mismatch_sectors"])')" = "(0, 0)" ] ||
    fail "the check under load: $(ctl_get 's["last_job"]')"
  stop_server
}

echo "== a target every request meets (10s): the job climbs to max"
busy_check 10s 4k
# The pacer's rate is the decision; the speed reached also depends on the
# machine (a sanitizer build under 16-deep fio may not do MAX): below
# 0.8 x MAX it passes only if the job never waited for its limit.
(( PACED * 10 >= MAX * 8 )) ||
  fail "with a 10 s target the pacer is at $PACED KiB/s, not near max ($MAX): paced as md paces (min $MIN)"
(( RATE * 10 >= MAX * 8 || WAITED < 5 )) ||
  fail "with a 10 s target the check ran at $RATE KiB/s, not near max ($MAX), and waited for its limit $WAITED% of the time"
(( CUTS == 0 )) || fail "$CUTS windows were over a 10 s target"

echo "== a target no request meets (50us, 64K requests): cut back to min"
busy_check 50us 64k
(( CUTS >= 10 )) || fail "only $CUTS windows over a 50us target (clients' p99 ${P99}us)"
(( RATE * 10 <= MIN * 15 )) ||
  fail "over its target the check ran at $RATE KiB/s, above 1.5 x min ($MIN)"
(( RATE * 10 >= MIN * 9 || WAITED < 5 )) ||
  fail "the check ran at $RATE KiB/s, below 0.9 x min ($MIN), and waited for its limit $WAITED% of the time"
echo "== a rebuild paced by latency under load"
truncate -s 384M "$tmpdir/new1.img"
serve_ctl "$tmpdir/serve-rebuild.log" "${disks[@]}" sync-speed-min="$MIN" \
  sync-speed-max=400000 sync-latency-max=2ms || fail "the server did not start"
fio --name=busy --ioengine=nbd --uri="$URI" --rw=randrw --bs=4k \
  --iodepth=16 --time_based --runtime=30 --output="$tmpdir/fio-rebuild.out" \
  >/dev/null 2>&1 &
fio=$!
sleep 1
ctl_ok fail 1
ctl_ok rebuild 1 "$tmpdir/new1.img"
ctl_wait "s['health'] == '[UUU]'" 60
kill $fio 2>/dev/null; wait $fio 2>/dev/null || :
echo "   rebuilt under load: $(ctl_get 's["health"]'), last job $(ctl_get 's["last_job"]["kind"]') $(ctl_get 's["last_job"]["result"]')"
stop_server
"$RAID5CTL" check "${MEMBERS[0]}" "$tmpdir/new1.img" "${MEMBERS[2]}" >"$tmpdir/check.out" 2>&1 ||
  { cat "$tmpdir/check.out" >&2; fail "the array does not check clean after the paced rebuild"; }
echo "   $(grep mismatch_cnt "$tmpdir/check.out")"
echo "$test_name: OK ($(( SECONDS - start )) s)"
