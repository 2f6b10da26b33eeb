#!/usr/bin/env bash
# A member file truncated while it serves (someone's mistake: members are
# locked against a second server, not against truncate).  Members on a
# tmpfs this test mounts (root), so that requests copy through a mapping
# of each (io/memmap.c), where a lost page raises SIGBUS -- which ended
# the server and every client's array with it.  Now the copy fails, the
# member is taken out of service with a line that says it ends before the
# offset, and the array serves on, degraded, every byte right; the same
# with the mapping off (RAID5_MEMBER_ACCESS=read: a read past the end),
# where the truncated member used to count as read errors to correct.
#   - served, filled, member 2 truncated to a quarter: the array reads
#     back whole as written, the server alive, [UU_], the log names
#     member 2 and says it ends before the offset;
#   - then written whole again and read back, degraded;
#   - truncated, then written first (mapped): taken out at the write, the
#     file not extended again.
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
. "${0%/*}/job-functions.sh"
requires_jobs
requires nbdcopy --version
[ "$(id -u)" = 0 ] || skip "needs root to mount a tmpfs of its own"

mnt=$tmpdir/mem
mkdir "$mnt"
mount -t tmpfs -o size=256M tmpfs "$mnt" 2>/dev/null || skip "cannot mount a tmpfs"
cleanup_fn "umount -l '$mnt'"

for access in map read; do
  echo "== member 2 truncated while served ($access)"
  rm -f "$mnt"/*
  MEMBERS_DIR=$mnt md_create t 3 32M --chunk 64K --assume-clean --bitmap none
  m=("${MEMBERS[@]}")
  if [ $access = read ]; then export RAID5_MEMBER_ACCESS=read; else unset RAID5_MEMBER_ACCESS; fi
  serve_ctl "$tmpdir/$access.log" "${m[@]/#/disk=}" || fail "serve"
  size=$(ctl_get 's["size_bytes"]')
  head -c "$size" /dev/urandom >"$tmpdir/model"
  nbdcopy "$tmpdir/model" "$URI" || fail "filling the array"
  truncate -s 8M "${m[2]}"
  nbdcopy "$URI" "$tmpdir/back" || fail "$access: reading the array with member 2 truncated"
  cmp -s "$tmpdir/model" "$tmpdir/back" || fail "$access: the array read wrong bytes"
  [ "$(ctl_get 's["health"]')" = "[UU_]" ] || fail "$access: health $(ctl_get 's["health"]')"
  grep -Eq "member 2 \(${m[2]}\): read at [0-9]+: it ends before that \(truncated under the server\?\)" \
    "$tmpdir/$access.log" || fail "$access: the log does not say member 2 ends early: $(tail -n 3 "$tmpdir/$access.log")"
  head -c "$size" /dev/urandom >"$tmpdir/model"
  nbdcopy "$tmpdir/model" "$URI" || fail "$access: writing the array degraded"
  nbdcopy "$URI" "$tmpdir/back" || fail "$access: reading it back"
  cmp -s "$tmpdir/model" "$tmpdir/back" || fail "$access: the array read wrong bytes after the writes"
  echo "   $(grep -o 'member 2 (.*truncated under the server?)' "$tmpdir/$access.log" | head -n 1 | sed "s|$mnt/||")"
  stop_server
done
unset RAID5_MEMBER_ACCESS

echo "== member 1 truncated while served, then written first (map)"
# A write through the mapping meets the lost pages: the member is taken
# out, not extended again by a write (its lost bytes would then be holes
# that read as zeroes).
rm -f "$mnt"/*
MEMBERS_DIR=$mnt md_create w 3 32M --chunk 64K --assume-clean --bitmap none
m=("${MEMBERS[@]}")
serve_ctl "$tmpdir/write.log" "${m[@]/#/disk=}" || fail "serve"
size=$(ctl_get 's["size_bytes"]')
head -c "$size" /dev/urandom >"$tmpdir/model"
nbdcopy "$tmpdir/model" "$URI" || fail "filling the array"
truncate -s 8M "${m[1]}"
head -c "$size" /dev/urandom >"$tmpdir/model"
nbdcopy "$tmpdir/model" "$URI" || fail "writing the array with member 1 truncated"
[ "$(ctl_get 's["health"]')" = "[U_U]" ] || fail "health $(ctl_get 's["health"]')"
[ "$(stat -c %s "${m[1]}")" = $(( 8 << 20 )) ] ||
  fail "member 1 was extended again to $(stat -c %s "${m[1]}") bytes"
nbdcopy "$URI" "$tmpdir/back" || fail "reading it back"
cmp -s "$tmpdir/model" "$tmpdir/back" || fail "the array read wrong bytes"
grep -Eq "member 1 \(${m[1]}\): write at [0-9]+: it ends before that" "$tmpdir/write.log" ||
  fail "the log does not say member 1 ends early: $(tail -n 3 "$tmpdir/write.log")"
echo "   member 1 out at its first write past its end, not extended"
stop_server
echo "PASS: $test_name"
