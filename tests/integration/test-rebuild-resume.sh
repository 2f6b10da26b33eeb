#!/usr/bin/env bash
# A rebuild interrupted by kill -9 resumes where its superblock says.
# An array made by raid5ctl create is filled by random-io (model kept),
# member 1 is failed by hand and a blank file rebuilt in its place at a
# low sync speed (control socket).  Once status shows the rebuild between
# 20% and 60% (after a pause: done_stripes holds still, and a resume),
# nbdkit is killed (-9).  Asserts:
#   - mdadm --examine of the new member: role 'Active device 1', Feature
#     Map with the recovery offset bit, Recovery Offset > 0 and not past
#     where status last saw the rebuild; the superblocks agree on events;
#   - served again with the new member and the old one (left out: faulty
#     or stale) (no rebuild
#     command): the very first status says rebuild of slot 1, member
#     'rebuilding', done_stripes >= the recorded recovery offset (in
#     stripes) and well above 0, i.e. it resumed and did not restart;
#     the rebuild then ends ([UUU], last_job rebuild 0) while random-io
#     writes and reads (no client error, model matches);
#   - the speed status reports while it resumes is a speed (not < 10% of
#     the limit: KNOWN BUG, reported: the first window of a resumed job
#     divides all the stripes done before by the time since boot);
#   - after a clean stop: superblocks clean with equal events, the new
#     member active in slot 1 without a recovery offset; member-check with
#     all members: data = model where md's layout puts it, parity = XOR;
#     raid5ctl check: mismatch_cnt 0.
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
. "${0%/*}/job-functions.sh"
requires_jobs
start=$SECONDS

slot=1
md_create rr 3 48M --chunk 64K --assume-clean --bitmap none
m=("${MEMBERS[@]}")
geom=(--chunk "$MD_CHUNK" --layout "$MD_LAYOUT" --data-offset "$MD_DOFF")
model=$tmpdir/model
mapfile -t disks < <(disk_args "${m[@]}")

echo "== fill the array, fail slot $slot, rebuild onto a blank file slowly"
serve_ctl "$tmpdir/serve.log" -v -D nbdkit.backend.datapath=0 "${disks[@]}" \
  sync-speed-min=4000 sync-speed-max=4000 || fail "the server did not start"
next_seed
"$RANDOM_IO" "$URI" auto --seed "$RIO_SEED" --ops 600 --threads 4 --chunk 64K \
  --model-out "$model" || fail "random-io (fill)"
ctl_ok fail "$slot"
new=$tmpdir/rr.new
truncate -s 48M "$new"
ctl_ok rebuild "$slot" "$new"
total=$(ctl_get 's["job"]["total_stripes"]')
ctl_wait "s['job']['kind'] == 'rebuild' and s['job']['done_stripes'] >= 0.25 * $total" 30
# pause holds the rebuild where it is; resume continues it.
ctl_ok pause
p1=$(ctl_get '(s["job"]["kind"], s["job"]["paused"], s["job"]["done_stripes"])')
sleep 1.2
p2=$(ctl_get '(s["job"]["kind"], s["job"]["paused"], s["job"]["done_stripes"])')
echo "   paused: $p1, 1.2 s later $p2"
[ "$p1" = "$p2" ] && [[ $p1 == "('rebuild', True, "* ]] ||
  fail "pause did not hold the rebuild: $p1, then $p2"
ctl_ok resume
ctl_wait "s['job']['kind'] == 'rebuild' and not s['job']['paused'] and s['job']['done_stripes'] > ${p2//[^0-9]/}" 5
# Progress is kept every 2 s or so: the rebuild has run > 3 s by now.
sleep 1
seen=$(ctl_get 's["job"]["done_stripes"] if s["job"]["kind"] == "rebuild" else -1')
crash_server
echo "   killed at about $seen of $total stripes"
(( seen > total / 5 && seen < total * 6 / 10 )) ||
  fail "the rebuild was at $seen of $total stripes at the kill, not 20-60%"

echo "== the superblocks after the kill"
m2=("${m[@]}")
m2[$slot]=$new
md_show "${m2[@]}"
mdadm --examine "$new" | grep -E 'Feature Map|Recovery Offset|Device Role' | sed 's/^/   /'
[ "$(md_field "$new" 'Device Role')" = "Active device $slot" ] ||
  fail "the new member's role: '$(md_field "$new" 'Device Role')'"
fm=$(md_field "$new" 'Feature Map')
(( (fm & 2) != 0 )) || fail "the new member's Feature Map ($fm) lacks the recovery offset bit"
ro=$(md_field "$new" 'Recovery Offset')
ro=${ro% sectors}
[ -n "$ro" ] || fail "mdadm --examine shows no Recovery Offset on the new member"
ro_stripes=$(( ro * 512 / 65536 ))
echo "   recovery offset $ro sectors = $ro_stripes stripes (status saw $seen)"
(( ro > 0 )) || fail "Recovery Offset is 0 after a rebuild at $seen of $total stripes"
(( ro_stripes <= seen )) ||
  fail "Recovery Offset ($ro_stripes stripes) is past where the rebuild was ($seen)"
(( ro * 512 % 65536 == 0 )) || fail "Recovery Offset $ro is not a whole chunk"
for f in "${m2[@]}"; do
  [ "$(md_events "$f")" = "$(md_events "$new")" ] ||
    fail "${f##*/}: events $(md_events "$f"), the new member $(md_events "$new")"
done

echo "== restart without a rebuild command: the rebuild resumes"
echo "   (the old member listed too: it is faulty, stale or replaced, it must be left out)"
mapfile -t disks2 < <(disk_args "${m2[@]}" "${m[$slot]}")
serve_ctl "$tmpdir/restart.log" -v -D nbdkit.backend.datapath=0 "${disks2[@]}" \
  sync-speed-min=4000 sync-speed-max=4000 || fail "the restart"
first=$(/usr/bin/python3 "$CTL_PY" "$CTL_SOCK" get \
  '"%s %d %s %s %s" % (s["job"]["kind"], s["job"]["done_stripes"], s["job"]["slot"], s["members"]['"$slot"']["state"], s["health"])')
echo "   first status: $first"
read -r k d sl st _ <<<"$first"
[ "$k" = rebuild ] && [ "$sl" = "$slot" ] && [ "$st" = rebuilding ] ||
  fail "first status after the restart: '$first', expected a rebuild of slot $slot"
(( d >= ro_stripes )) ||
  fail "the rebuild restarted at $d stripes, below the recovery offset ($ro_stripes)"
(( d <= ro_stripes + 128 )) ||
  fail "the first status after the restart is at $d stripes, far past the recovery offset ($ro_stripes): not resumed from it?"
grep -q "partly rebuilt" "$tmpdir/restart.log" || fail "no 'partly rebuilt' line in the log"
grep -Eq "${m[$slot]}\) (is (marked faulty|stale)|was replaced: slot $slot is member [0-9]+'s now).*left out" "$tmpdir/restart.log" ||
  fail "the old member was not left out (as faulty, stale or replaced)"
[ "$(ctl_get 's["members"]['"$slot"']["path"]')" = "$new" ] ||
  fail "slot $slot is not the new member: $(ctl_get 's["members"]['"$slot"']["path"]')"
load_start "$model" 3
ctl_progress rebuild 40 2 | tee "$tmpdir/progress.out"
ctl_wait "s['health'] == '[UUU]' and s['job']['kind'] == 'idle'" 10
sleep 0.3
load_stop
stop_server

echo "== after a clean stop"
md_expect clean AAA "${m2[@]}"
! mdadm --examine "$new" | grep -q 'Recovery Offset' ||
  fail "the new member still has a recovery offset"
member_check "${geom[@]}" --model "$model" "${m2[@]}"
raid5ctl_clean "${m2[@]}"

# The speed status reports for the resumed rebuild must be a speed, not
# the stripes done before the restart over the time since boot (a few
# K/sec, and md's finish= estimate in hours).
bad=$(sed -n 's/.* speed \([0-9]*\) K\/s .*/\1/p' "$tmpdir/progress.out" |
      awk '$1 > 0 && $1 < 400' | head -n 1)
[ -z "$bad" ] ||
  fail "BUG: status said speed_kib $bad for the resumed rebuild (limits 4000 K/s): measured from time 0?"
echo "$test_name: OK ($(( SECONDS - start )) s)"
