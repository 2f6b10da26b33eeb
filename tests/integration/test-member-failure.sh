#!/usr/bin/env bash
# A member that starts failing while the array is served.  The member is a
# file on FUSE (nbdfuse) backed by nbdkit's file plugin behind the error
# filter, so creating a trigger file makes its I/O fail with EIO, as a
# dying disk would.  The plugin runs with direct=true so that its reads
# reach the FUSE server instead of the page cache.  The plugin must mark it faulty, log it once, redo the
# request degraded, and the client must see no error; member-check then
# finds the survivors consistent with the model, the failed member treated
# as missing.  With a member already missing, a second failure must make
# requests fail with EIO, never return wrong data.

. "${0%/*}/functions.sh"
requires_plugin
requires nbdfuse --version
requires fusermount3 --version
[ -c /dev/fuse ] || skip "no /dev/fuse"

# fuse_member NAME SIZE ERROR_ARGS...: serve $tmpdir/NAME.img through the
# error filter (ERROR_ARGS, e.g. error-file=$tmpdir/NAME.fail) and mount it
# as the file $tmpdir/NAME.mnt/member; FUSE_MEMBER is set to that path.
fuse_member ()
{
  local name=$1 size=$2 i
  shift 2
  truncate -s "$size" "$tmpdir/$name.img"
  mkdir "$tmpdir/$name.mnt"
  "$NBDKIT" -U "$tmpdir/$name.sock" -P "$tmpdir/$name.nbdkit.pid" \
    --filter=error file "$tmpdir/$name.img" "$@" >&2 ||
    fail "cannot serve $name"
  cleanup_fn "fusermount3 -u $tmpdir/$name.mnt 2>/dev/null"
  cleanup_fn "kill_ours \$(cat $tmpdir/$name.nbdkit.pid)"
  nbdfuse -P "$tmpdir/$name.fuse.pid" "$tmpdir/$name.mnt/member" \
    --unix "$tmpdir/$name.sock" >/dev/null 2>"$tmpdir/$name.fuse.log" &
  for (( i = 0; i < 100; i++ )); do
    [ -s "$tmpdir/$name.fuse.pid" ] && break
    sleep 0.1
  done
  [ -s "$tmpdir/$name.fuse.pid" ] || skip "nbdfuse cannot mount here"
  FUSE_MEMBER=$tmpdir/$name.mnt/member
}

allow_nbdkit_errors=1         # the plugin reports the failure as an error

# Writes fail: 3 members, the last on FUSE.
echo "== member 2 starts failing (all I/O) under a random workload"
make_members w 2 16M
fuse_member w2 16M error=EIO error-rate=100% error-file="$tmpdir/w2.fail"
f=$FUSE_MEMBER
next_seed
raid5_captive disk="${MEMBERS[0]}" disk="${MEMBERS[1]}" disk="$f" chunk=64K \
    direct=true -- \
  sh -c '"$0" "$1" auto --seed "$2" --ops 600 --chunk 64K --model-out "$3" &&
         touch "$4" &&
         "$0" "$1" auto --seed "$2"1 --ops 1500 --chunk 64K --model-in "$3" \
           --model-out "$3"' \
    "$RANDOM_IO" @URI@ "$RIO_SEED" "$tmpdir/model" "$tmpdir/w2.fail" ||
  fail "the client saw the member failure"
[ "$(grep -c 'member 2.*faulty' "$tmpdir/nbdkit.log")" -eq 1 ] ||
  fail "the member failure was not logged exactly once"
member_check --chunk 64K --model "$tmpdir/model" \
  "${MEMBERS[0]}" "${MEMBERS[1]}" missing

# Reads fail: 4 members, member 1 on FUSE; reads find the failure.
echo "== member 1 starts failing reads only, read-only workload"
make_members r 4 8M
fuse_member r1 8M error-pread=EIO error-pread-rate=100% \
  error-pread-file="$tmpdir/r1.fail"
f=$FUSE_MEMBER
m=("${MEMBERS[0]}" "$f" "${MEMBERS[2]}" "${MEMBERS[3]}")
mapfile -t disks < <(disk_args "${m[@]}")
next_seed
raid5_captive "${disks[@]}" chunk=4K layout=ra direct=true -- \
  sh -c '"$0" "$1" auto --seed "$2" --ops 800 --chunk 4K --disks 4 \
           --model-out "$3" &&
         touch "$4" &&
         "$0" "$1" auto --seed "$2"1 --ops 800 --read-only --chunk 4K \
           --disks 4 --model-in "$3" &&
         "$0" "$1" auto --seed "$2"2 --ops 800 --chunk 4K --disks 4 \
           --model-in "$3" --model-out "$3"' \
    "$RANDOM_IO" @URI@ "$RIO_SEED" "$tmpdir/model" "$tmpdir/r1.fail" ||
  fail "the client saw the read failure"
grep -q 'member 1.*faulty' "$tmpdir/nbdkit.log" || fail "the failure was not logged"
member_check --chunk 4K --layout ra --model "$tmpdir/model" \
  "${MEMBERS[0]}" missing "${MEMBERS[2]}" "${MEMBERS[3]}"

# Second failure: member 0 missing, member 2 fails; nothing more can be
# served correctly, so reads must fail (EIO), never return wrong data.
echo "== member 0 missing, then member 2 fails: requests must fail"
make_members t 3 8M
fuse_member t2 8M error=EIO error-rate=100% error-file="$tmpdir/t2.fail"
f=$FUSE_MEMBER
status=0
raid5_captive disk=missing disk="${MEMBERS[1]}" disk="$f" chunk=64K \
    direct=true -- \
  sh -c '"$0" "$1" auto --seed "$2" --ops 400 --chunk 64K --model-out "$3" &&
         touch "$4" &&
         "$0" "$1" auto --seed "$2"1 --ops 400 --read-only --no-learn \
           --chunk 64K --model-in "$3"' \
    "$RANDOM_IO" @URI@ "$RIO_SEED" "$tmpdir/model" "$tmpdir/t2.fail" ||
  status=$?
[ $status -ne 0 ] || fail "reads succeeded with two members lost"
grep -q 'MISMATCH' "$tmpdir/nbdkit.log" && fail "wrong data returned"
grep -q 'failed: .*errno 5)' "$tmpdir/nbdkit.log" ||
  fail "requests did not fail with EIO"
echo "$test_name: OK"
