#!/usr/bin/env bash
# raid5ctl grow --control: an array grown from 3 to 4 and then 4 to 5
# members while a verified random workload runs over 4 connections.
# While the reshape runs: status says reshape (text as /proc/mdstat,
# JSON with the line), pause holds it, resume continues it, the old size
# is served, raid5ctl monitor reports it (mdadm's RebuildStarted and
# RebuildFinished, component reshape).  Refused with one line: a second
# grow, a disk too small, one holding a file system.  Every read of the workload is checked against its model,
# during and after; afterwards a new connection sees the bigger size, the
# new space reads as zeroes and takes writes, check finds no wrong
# parity, mdadm reads the new member count, and member-check (md's
# layouts, independent of the plugin) finds every byte where md puts it
# for the new count of members.
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
. "${0%/*}/job-functions.sh"
requires_jobs
requires nbdinfo --version
requires_raid5ctl

MB=24 CHUNK=65536
m=()
for i in 0 1 2; do
  m+=("$tmpdir/g$i.img")
  truncate -s ${MB}M "${m[$i]}"
done
"$RAID5CTL" create --chunk 64K --bitmap none "${m[@]}" >"$tmpdir/create.log" 2>&1 ||
  { cat "$tmpdir/create.log" >&2; fail "create"; }
md_geometry "${m[0]}"
doff=$MD_DOFF
stripes=$(( (MB * 1048576 - doff) / CHUNK ))
model=$tmpdir/model

# extend_model BYTES: the model of a bigger array, the new bytes known
# zeroes.
extend_model ()
{
  local old
  old=$(stat -c %s "$model")
  truncate -s "$1" "$model"
  head -c $(( ($1 - old) / 8 )) /dev/zero | tr '\0' '\377' >>"$model.known"
}

serve_ctl "$tmpdir/nbdkit.log" "${m[@]/#/disk=}" sync-speed-min=3000 \
  sync-speed-max=3000 || fail "serve"
"$RAID5CTL" monitor --delay 0.1 "$CTL_SOCK" >"$tmpdir/events" 2>&1 &
cleanup_fn "kill_ours -9 $!"

echo "== refused while serving, nothing written"
truncate -s 8M "$tmpdir/small.img"
truncate -s ${MB}M "$tmpdir/fs.img"
mkfs.ext4 -q -F "$tmpdir/fs.img"
sums=$(cat "${m[@]}" | md5sum)
grow_refused ()
{
  local re=$1 out
  shift
  out=$("$RAID5CTL" --control "$CTL_SOCK" grow "$@" 2>&1) &&
    fail "grow $* was not refused"
  [ "$(wc -l <<<"$out")" = 1 ] || fail "grow $*: more than one line: $out"
  grep -Eq "$re" <<<"$out" || fail "grow $*: '$out' lacks '$re'"
  echo "   $out"
}
grow_refused 'too small|smaller' --add "$tmpdir/small.img"
grow_refused 'ext4' --add "$tmpdir/fs.img"
grow_refused 'nothing to grow' --wait
[ "$(cat "${m[@]}" | md5sum)" = "$sums" ] || fail "a refused grow changed the members"
[ "$(ctl_get 's["raid_disks"]')" = 3 ] || fail "a refused grow left $(ctl_get 's["raid_disks"]') members"

for n in 3 4; do
  echo "== $n -> $(( n + 1 )) members, online, under a verified load"
  new=$tmpdir/g$n.img
  truncate -s ${MB}M "$new"
  old_size=$(ctl_get 's["size_bytes"]')
  [ "$old_size" = $(( stripes * (n - 1) * CHUNK )) ] || fail "size before: $old_size"
  # A run that connects after the reshape ends sees the new size: it
  # does nothing (the model grows below, once the load has stopped).
  load_start "$model" "$n" --resized-ok
  sleep 1
  load_alive || fail "the load died before the grow"
  "$RAID5CTL" --control "$CTL_SOCK" grow --add "$new" >"$tmpdir/grow.out" 2>&1 ||
    { cat "$tmpdir/grow.out" >&2; fail "grow --add"; }
  cat "$tmpdir/grow.out"
  grep -qx "grow: $n to $(( n + 1 )) members: reshape started" "$tmpdir/grow.out" ||
    fail "grow said: $(cat "$tmpdir/grow.out")"
  ctl_wait 's["job"]["kind"] == "reshape" and s["job"]["done_stripes"] > 0' 30
  [ "$(ctl_get '"%d %d %d" % (s["size_bytes"], s["raid_disks"], s["grow"]["from_members"])')" = \
    "$old_size $(( n + 1 )) $n" ] ||
    fail "status mid-grow: $(ctl_get 's["size_bytes"], s["raid_disks"], s["grow"]')"
  [ "$(nbdinfo --size "$URI")" = "$old_size" ] ||
    fail "a new connection mid-grow sees $(nbdinfo --size "$URI") bytes, not the old size"
  ctl status >"$tmpdir/status.txt"
  grep -Eq '^ +\[=*>\.*\] +reshape = +[0-9.]+% \([0-9]+/[0-9]+\)' "$tmpdir/status.txt" ||
    fail "status text: $(cat "$tmpdir/status.txt")"
  grep -q "growing from $n to $(( n + 1 )) members" "$tmpdir/status.txt" ||
    fail "status text does not say the grow: $(cat "$tmpdir/status.txt")"
  echo "   $(grep reshape "$tmpdir/status.txt" | sed 's/^ *//')"
  ctl_ok pause
  sleep 0.3
  a=$(ctl_get 's["job"]["done_stripes"]')
  sleep 1
  b=$(ctl_get 's["job"]["done_stripes"]')
  [ "$a" = "$b" ] || fail "the reshape went on while paused ($a -> $b stripes)"
  [ "$(ctl_get 's["job"]["paused"]')" = True ] || fail "status does not say paused"
  truncate -s ${MB}M "$tmpdir/another.img"
  "$RAID5CTL" --control "$CTL_SOCK" grow --add "$tmpdir/another.img" \
    >"$tmpdir/again.out" 2>&1 && fail "a second grow while one runs was not refused"
  grep -q 'cannot grow: the array is being grown already' "$tmpdir/again.out" ||
    fail "second grow: $(cat "$tmpdir/again.out")"
  ctl_ok resume
  # Without --add, --wait follows the grow under way to its end.
  timeout 120 "$RAID5CTL" --control "$CTL_SOCK" grow --wait >"$tmpdir/wait.out" 2>&1 ||
    { cat "$tmpdir/wait.out" >&2; fail "grow --wait"; }
  tail -n 1 "$tmpdir/wait.out"
  grep -q "^grow: the array has $(( n + 1 )) members, .*; clients see the new size when they connect again" \
    "$tmpdir/wait.out" || fail "grow --wait said: $(cat "$tmpdir/wait.out")" 
  load_alive || fail "the load died during the grow"
  # As load_stop, but the export read back after the model grows.
  touch "$tmpdir/load.stop"
  wait "$LOAD" ||
    { tail -n 30 "$tmpdir/load.out" >&2; fail "the client load saw an error (random-io)"; }
  echo "   $(tail -n 1 "$tmpdir/load.out"), $(grep -c ': OK$' "$tmpdir/load.out") passed"
  new_size=$(( stripes * n * CHUNK ))
  [ "$(ctl_get '"%d %d %s %s" % (s["size_bytes"], s["raid_disks"], s["grow"], s["health"])')" = \
    "$new_size $(( n + 1 )) None [$(printf 'U%.0s' $(seq 0 $n))]" ] ||
    fail "status after: $(ctl_get 's["size_bytes"], s["raid_disks"], s["grow"], s["health"]')"
  [ "$(ctl_get '"%s %d" % (s["last_job"]["kind"], s["last_job"]["result"])')" = "reshape 0" ] ||
    fail "last job: $(ctl_get 's["last_job"]')"
  [ "$(nbdinfo --size "$URI")" = "$new_size" ] ||
    fail "a new connection sees $(nbdinfo --size "$URI") bytes after the grow"
  extend_model "$new_size"
  "$RANDOM_IO" "$URI" "$new_size" --verify-only --model-in "$model" \
    >"$tmpdir/verify.out" 2>&1 ||
    { cat "$tmpdir/verify.out" >&2; fail "the grown array (new space: zeroes) does not read back"; }
  # The new space takes writes, across the old end.
  next_seed
  "$RANDOM_IO" "$URI" "$new_size" --seed "$RIO_SEED" --ops 300 --chunk 64K \
    --disks $(( n + 1 )) --region $(( old_size - 4 * CHUNK )):$(( new_size - old_size + 4 * CHUNK )) \
    --model-in "$model" --model-out "$model" >"$tmpdir/rio.out" 2>&1 ||
    { cat "$tmpdir/rio.out" >&2; fail "random I/O over the new space"; }
  m+=("$new")
done

for word in RebuildStarted RebuildFinished; do
  [ "$(grep -cxF "$word $CTL_SOCK reshape" "$tmpdir/events")" = 2 ] ||
    fail "monitor: not two '$word ... reshape': $(cat "$tmpdir/events")"
done

echo "== check, then the members as md lays out 5"
"$RAID5CTL" --control "$CTL_SOCK" check --wait >"$tmpdir/check.out" 2>&1 ||
  { cat "$tmpdir/check.out" >&2; fail "check after the grows"; }
grep -q 'mismatch_cnt 0$' "$tmpdir/check.out" || fail "check: $(cat "$tmpdir/check.out")"
stop_server
md_geometry "${m[0]}"
[ "$(md_field "${m[0]}" 'Raid Devices')" = 5 ] || fail "mdadm: Raid Devices $(md_field "${m[0]}" 'Raid Devices')"
md_expect clean AAAAA "${m[@]}"
[ "$MD_DOFF" -lt "$doff" ] || fail "the data offset did not move down ($doff -> $MD_DOFF)"
member_check --chunk 64K --layout "$MD_LAYOUT" --data-offset "$MD_DOFF" \
  --stripes "$stripes" --model "$model" "${m[@]}"
echo "test-grow-online: OK"
