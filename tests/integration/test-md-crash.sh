#!/usr/bin/env bash
# kill -9 during writes on an md v1.2 array made by raid5ctl create, many
# times, without and with an internal write-intent bitmap.  After each kill
# every superblock says active (dirty), checksum correct.  The next start
# resyncs parity in the background (the debug line 'resync done' under -v)
# while clients read: every write acknowledged before the kill reads back
# (random-io's --crash-ok model); after a clean stop the superblocks say
# clean and member-check finds every parity chunk consistent (strictly: the
# resync closed the write hole) and the data where md's layout puts it.
# Also: a clean stop in the middle of a resync leaves the array active
# (the resync is not over), and a bitmap-guided resync visits the regions
# whose bits were set, not the others (a parity byte spoiled behind the
# plugin's back is mended in a set region and left alone elsewhere, as md
# does).  Finally, optionally, ext4 through the host kernel (nbdfuse +
# loop) survives a crash: e2fsck is clean after the resync.
# Environment: CRASHES=N kills per array (default 4).

. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
requires_plugin
requires_md
requires_nbd_python

CRASHES=${CRASHES:-4}
fast=(sync-speed-min=500000 sync-speed-max=2000000)
start=$SECONDS

# restart_verify MODEL [busy]: serve (-v), check acknowledged data while
# the resync runs (busy: at 4-16 MB/s, with random writes meanwhile), wait
# for 'resync done', stop cleanly; superblocks clean, parity consistent,
# data = MODEL (which learns what the crash left in the unknown ranges).
restart_verify ()
{
  local model=$1 log=$tmpdir/restart.log speed=("${fast[@]}")
  [ "${2:-}" != busy ] || speed=(sync-speed-min=4000 sync-speed-max=16000)
  serve_bg "$log" -v -D nbdkit.backend.datapath=0 "${disks[@]}" "${speed[@]}" ||
    fail "restart after the kill"
  "$RANDOM_IO" "$URI" auto --verify-only --chunk 64K --disks 3 \
    --model-in "$model" --model-out "$model" ||
    fail "acknowledged writes lost in the crash"
  if [ "${2:-}" = busy ]; then
    next_seed
    "$RANDOM_IO" "$URI" auto --seed "$RIO_SEED" --ops 300 --chunk 64K \
      --disks 3 --model-in "$model" --model-out "$model" ||
      fail "writes during the resync"
    grep -q 'resync done' "$log" && echo "  (the resync ended before the writes)"
  fi
  wait_log "$log" 'resync done' 60 ||
    { grep -i resync "$log" >&2; fail "no 'resync done' within 60 s"; }
  grep -E 'resync done' "$log" | sed 's/^/  /'
  grep -q 'error:' "$log" && { grep 'error:' "$log" >&2; fail "errors after the restart"; }
  stop_server
  md_expect clean AAA "${m[@]}"
  member_check "${geom[@]}" --model "$model" "${m[@]}"
  raid5ctl_check_clean "${m[@]}"
}

# raid5ctl_check_clean MEMBER...: raid5ctl check (md's mismatch count)
# must find nothing after the resync.
raid5ctl_check_clean ()
{
  local out
  [ -x "${RAID5CTL:-}" ] || return 0
  out=$("$RAID5CTL" check "$@" 2>/dev/null) ||
    fail "raid5ctl check after the resync (exit $?): $out"
  grep -q "mismatch_cnt 0$" <<<"$out" || fail "raid5ctl check: $out"
  echo "  raid5ctl check: mismatch_cnt 0"
}

# crash_loop NAME RAID5CTL-OPTIONS...
crash_loop ()
{
  local name=$1 i delay
  shift
  echo "== $name: $CRASHES kills during writes (raid5ctl create $*)"
  md_create "$name" 3 16M --chunk 64K --assume-clean "$@"
  m=("${MEMBERS[@]}")
  mapfile -t disks < <(disk_args "${m[@]}")
  geom=(--chunk "$MD_CHUNK" --layout "$MD_LAYOUT" --data-offset "$MD_DOFF")
  model=
  for (( i = 1; i <= CRASHES; i++ )); do
    serve_bg "$tmpdir/serve.log" "${disks[@]}" "${fast[@]}" ||
      fail "crash $i: the server did not start"
    next_seed
    delay=$(( 3 + RIO_SEED % 10 ))          # 0.3 .. 1.2 s of writes
    echo "-- crash $i after $(( delay / 10 )).$(( delay % 10 )) s"
    write_until_killed "$model" "$tmpdir/model.$name" "$delay" \
      --chunk 64K --disks 3 --threads 4
    model=$tmpdir/model.$name
    md_expect active AAA "${m[@]}"
    if [ "$i" = 2 ]; then
      # A clean stop in the middle of the resync: not clean yet.
      serve_bg "$tmpdir/slow.log" -v -D nbdkit.backend.datapath=0 "${disks[@]}" \
        sync-speed-min=1000 sync-speed-max=1000 || fail "slow restart"
      sleep 0.5
      stop_server
      ! grep -q 'resync done' "$tmpdir/slow.log" ||
        fail "a resync of 16M at 1000 KiB/s finished in 0.5 s"
      echo "   stopped during the resync:"
      md_expect active AAA "${m[@]}"
    fi
    if (( i % 2 )); then restart_verify "$model" busy; else restart_verify "$model"; fi
  done
}

crash_loop plain --bitmap none
crash_loop bitmap --bitmap internal

# Bitmap regions: 3 members of 256M (mdadm's smallest default bitmap
# chunk, 64M, gives 4 bits per member).  Writes (libnbd's Python bindings) only in the
# array's first 32M (bit 0), kill; the bits on disk must then be exactly
# bit 0.  A parity
# byte spoiled in bit 0's region (outside the written range) must be mended
# by the resync, one in bit 3's region must be left as it is.
echo "== bitmap regions: only the set bits are resynced"
md_create big 3 256M --chunk 64K --assume-clean --bitmap internal
m=("${MEMBERS[@]}")
mapfile -t disks < <(disk_args "${m[@]}")
bm=$(( 4096 + $(md_field "${m[0]}" 'Internal Bitmap' | sed 's/ sectors.*//') * 512 ))
bchunk=$(od -An -tu4 -j $(( bm + 52 )) -N 4 "${m[0]}" | tr -d ' ')
[ "$bchunk" = $(( 64 << 20 )) ] ||
  skip "raid5ctl's bitmap chunk is $bchunk bytes, not 64M: the regions below assume 64M"
bits () { od -An -tx1 -j $(( bm + 256 )) -N 1 "$1" | tr -d ' '; }
# A first session clears what create left set (mdadm sets every bit).
raid5_captive "${disks[@]}" "${fast[@]}" -- "$NBD_PYTHON" -c '
import nbd, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1]); h.pwrite(b"x" * 4096, 0); h.shutdown()
' @URI@ ||
  fail "first session on the 256M members"
[ "$(bits "${m[0]}")" = 00 ] || fail "bits after a clean stop: $(bits "${m[0]}"), expected none"
serve_bg "$tmpdir/serve.log" "${disks[@]}" "${fast[@]}" || fail "serve the 256M members"
"$NBD_PYTHON" -c '
import nbd, os, random, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1])
while True:
    n = random.randrange(1, 1 << 17)
    h.pwrite(os.urandom(n), random.randrange(0, (32 << 20) - n))
' "$URI" 2>/dev/null &
writer=$!
wait_active "${m[0]}"
sleep 0.3
crash_server
wait $writer || :
md_expect active AAA "${m[@]}"
for f in "${m[@]}"; do
  [ "$(bits "$f")" = 01 ] || fail "${f##*/}: bitmap bits $(bits "$f") after writes to bit 0's region only, expected 01"
done
# Stripe 900: member bytes 900*64K = 56.25M, bit 0 (writes went to
# stripes < 256).  Stripe 3172: 198.25M, bit 3.
read -r pm1 off1 < <(parity_byte_off 900 3 65536 "$MD_DOFF" "$MD_LAYOUT")
read -r pm2 off2 < <(parity_byte_off 3172 3 65536 "$MD_DOFF" "$MD_LAYOUT")
flip_byte "${m[$pm1]}" $(( off1 + 100 ))
flip_byte "${m[$pm2]}" $(( off2 + 100 ))
"$MEMBER_CHECK" --chunk 64K --data-offset "$MD_DOFF" --layout "$MD_LAYOUT" \
  --max-errors 5 "${m[@]}" > "$tmpdir/mc.out" 2>&1 &&
  fail "member-check missed two spoiled parity bytes"
serve_bg "$tmpdir/restart.log" -v -D nbdkit.backend.datapath=0 "${disks[@]}" \
  "${fast[@]}" || fail "restart the 256M members"
wait_log "$tmpdir/restart.log" 'resync done' 60 || fail "no 'resync done' within 60 s"
grep 'resync done' "$tmpdir/restart.log"
stop_server
md_expect clean AAA "${m[@]}"
status=0
"$MEMBER_CHECK" --chunk 64K --data-offset "$MD_DOFF" --layout "$MD_LAYOUT" \
  "${m[@]}" > "$tmpdir/mc.out" 2>&1 || status=$?
cat "$tmpdir/mc.out"
[ $status = 1 ] || fail "member-check: expected stripe 3172's parity to stay wrong"
grep -q 'FAIL: stripe 3172: parity' "$tmpdir/mc.out" ||
  fail "the mismatch left is not stripe 3172's"
[ "$(grep -c 'FAIL: stripe' "$tmpdir/mc.out")" = 1 ] ||
  fail "stripe 900 (bit 0's region) was not mended, or more mismatched"
rm -f "${m[@]}"

# Writes ahead of the resync cursor must use reconstruct-write (parity
# from the data), as md does: there parity may be stale, and
# read-modify-write would keep it stale.  5 members, so a 4K write is
# otherwise read-modify-write.  A parity byte of stripe 100 is spoiled
# (as a crash could leave it), 4K are written into data chunk 0 over it
# while the resync (100 KiB/s) is far from stripe 100, then data chunk 1
# is read with its member missing: it is rebuilt through that parity.  A
# control on a clean array (read-modify-write) must show the stale byte.
cat > "$tmpdir/rw.py" <<'END'
import nbd, sys
uri, op, off, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
byte = int(sys.argv[5], 0)
h = nbd.NBD()
h.connect_uri(uri)
if op == "loop":
    while True:
        h.pwrite(bytes([byte]) * n, off)
elif op == "write":
    h.pwrite(bytes([byte]) * n, off)
else:
    bad = [i for i, b in enumerate(h.pread(n, off)) if b != byte]
    if bad:
        sys.exit("%d bytes differ from %#x, first at array offset %d"
                 % (len(bad), byte, off + bad[0]))
h.shutdown()
END
# rcw_case dirty|clean: 0 if the rebuilt chunk is right.
rcw_case ()
{
  local dirty=$1 pm off rc=0
  md_create rcw 5 16M --chunk 64K --assume-clean --bitmap none
  m=("${MEMBERS[@]}")
  mapfile -t disks < <(disk_args "${m[@]}")
  [ "$MD_LAYOUT" = left-symmetric ] || fail "the rcw case assumes left-symmetric"
  if [ "$dirty" = dirty ]; then
    serve_bg "$tmpdir/serve.log" "${disks[@]}" || fail "serve (rcw)"
    "$NBD_PYTHON" "$tmpdir/rw.py" "$URI" loop 0 4096 0x7a 2>/dev/null &
    writer=$!
    wait_active "${m[0]}"
    crash_server
    wait $writer || :
  fi
  # Stripe 100 of 5 left-symmetric members: parity on member 4, data
  # chunk 0 (array chunk 400) on member 0, chunk 1 on member 1.
  read -r pm off < <(parity_byte_off 100 5 65536 "$MD_DOFF" "$MD_LAYOUT")
  [ "$pm" = 4 ] || fail "parity of stripe 100 on member $pm?"
  flip_byte "${m[4]}" $(( off + 8192 + 5 ))
  serve_bg "$tmpdir/slow.log" -v -D nbdkit.backend.datapath=0 "${disks[@]}" \
    sync-speed-min=100 sync-speed-max=100 || fail "serve (rcw, slow resync)"
  "$NBD_PYTHON" "$tmpdir/rw.py" "$URI" write $(( 400 * 65536 + 8192 )) 4096 0xab ||
    fail "write into stripe 100"
  stop_server
  ! grep -q 'resync done' "$tmpdir/slow.log" || fail "the resync went too fast"
  [ "$dirty" != dirty ] || md_expect active AAAAA "${m[@]}"
  allow_nbdkit_errors=1
  raid5_captive "${disks[0]}" disk=missing "${disks[@]:2}" force=true -- \
    sh -c '"$0" "$1" "$2" read $(( 400 * 65536 + 8192 )) 4096 0xab &&
           "$0" "$1" "$2" read $(( 401 * 65536 + 8192 )) 4096 0' \
      "$NBD_PYTHON" "$tmpdir/rw.py" @URI@ 2> "$tmpdir/rcw.out" || rc=$?
  allow_nbdkit_errors=0
  rm -f "${m[@]}"
  return $rc
}
echo "== writes ahead of the resync use reconstruct-write"
rcw_case dirty ||
  { cat "$tmpdir/rcw.out"; fail "a write ahead of the resync kept stale parity (read-modify-write?)"; }
echo "   control: on a clean array the same write is read-modify-write"
! rcw_case clean || fail "control: no stale parity on a clean array: the case above proves nothing"
grep -q 'bytes differ' "$tmpdir/rcw.out" || { cat "$tmpdir/rcw.out"; fail "the control failed otherwise"; }
echo "   control: $(grep 'bytes differ' "$tmpdir/rcw.out")"

# ext4 through the host kernel: crash during a copy, resync, e2fsck -fn.
ext4_crash ()
{
  local why
  [ "$(id -u)" = 0 ] || { echo "ext4 part skipped: needs root"; return 0; }
  command -v mkfs.ext4 >/dev/null || { echo "ext4 part skipped: no mkfs.ext4"; return 0; }
  . "$abs_top_srcdir/scripts/lib-attach.sh"
  why=$(attach_why_not) || { echo "ext4 part skipped: $why"; return 0; }
  echo "== ext4: crash while copying files, resync, e2fsck"
  md_create fs 3 16M --chunk 64K --assume-clean --bitmap internal
  m=("${MEMBERS[@]}")
  mapfile -t disks < <(disk_args "${m[@]}")
  cleanup_fn attach_cleanup
  attach_serve "$tmpdir/fs.sock" "$tmpdir/fs.pid" "$tmpdir/fs.log" "$PLUGIN" \
    "${disks[@]}" "${fast[@]}" || fail "serve for ext4"
  attach_dev "$tmpdir/fs.sock" "$tmpdir" || fail "attach the export"
  mkfs.ext4 -q -F -E stride=16,stripe_width=32 "$ATTACH_DEV"
  attach_mount "$ATTACH_DEV" "$tmpdir/mnt" || fail "mount"
  cp -r /usr/include/linux "$tmpdir/mnt/a"
  sync -f "$tmpdir/mnt"
  (cd "$tmpdir/mnt/a" && find . -type f -print0 | sort -z | xargs -0 sha256sum) \
    > "$tmpdir/a.sums"
  cp -r /usr/include/linux "$tmpdir/mnt/b" &
  copy=$!
  # Writes made durable one after the other until the kill, so that the
  # array cannot go idle for md's safe-mode delay (and be recorded clean)
  # between seeing it active and the kill, however slow the machine.
  ( for (( i = 0; i < 2000; i++ )); do
      dd if=/dev/zero of="$tmpdir/mnt/c.$(( i % 4 ))" bs=64k count=2 \
        conv=fsync status=none 2>/dev/null || break
    done ) &
  writer=$!
  SERVER=$ATTACH_NBDKIT_PID
  sleep 0.3
  sync -f "$tmpdir/mnt" &
  wait_active "${m[0]}"
  kill -9 "$ATTACH_NBDKIT_PID"
  kill "$writer" 2>/dev/null || :
  wait $copy $writer 2>/dev/null || :
  attach_cleanup
  md_expect active AAA "${m[@]}"
  attach_serve "$tmpdir/fs.sock" "$tmpdir/fs.pid" "$tmpdir/fs2.log" "$PLUGIN" -v \
    -D nbdkit.backend.datapath=0 "${disks[@]}" "${fast[@]}" || fail "restart for ext4"
  SERVER=$ATTACH_NBDKIT_PID
  wait_log "$tmpdir/fs2.log" 'resync done' 60 || fail "no 'resync done' (ext4)"
  attach_dev "$tmpdir/fs.sock" "$tmpdir" || fail "attach the export again"
  # The journal replays on mount; then the file system must be clean.
  attach_mount "$ATTACH_DEV" "$tmpdir/mnt" || fail "mount after the crash"
  (cd "$tmpdir/mnt/a" && sha256sum --quiet --strict -c "$tmpdir/a.sums") ||
    fail "files synced before the crash differ"
  attach_umount "$tmpdir/mnt"
  e2fsck -fn "$ATTACH_DEV" > "$tmpdir/fsck.out" 2>&1 ||
    { cat "$tmpdir/fsck.out"; fail "e2fsck -fn after crash + resync"; }
  echo "   e2fsck -fn clean, synced files intact"
  attach_cleanup
  md_expect clean AAA "${m[@]}"
  member_check --chunk 64K --data-offset "$MD_DOFF" --layout "$MD_LAYOUT" "${m[@]}"
  raid5ctl_check_clean "${m[@]}"
}
ext4_crash
echo "$test_name: OK ($(( SECONDS - start )) s)"
