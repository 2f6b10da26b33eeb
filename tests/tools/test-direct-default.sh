#!/usr/bin/env bash
# raid5ctl's offline jobs pick O_DIRECT by themselves for block devices,
# as md's jobs never pass through the page cache (tools/disk.h):
#   - check on three loop devices: every member opened with O_DIRECT
#     (strace's openat), one line on stderr saying so (next to the
#     progress line), mismatch_cnt 0;
#   - --buffered on the same devices: no O_DIRECT, no line;
#   - the same array as image files: buffered, no line;
#   - rebuild of slot 1 onto a fourth loop device: O_DIRECT on it too,
#     and the rebuilt array checks clean; onto an image file (the members
#     no longer all block devices): buffered;
#   - --direct with --buffered is refused in one line.
# Needs root, loop devices and strace; skipped otherwise.

. "${0%/*}/functions.sh"
. "${0%/*}/../integration/md-functions.sh"
requires_raid5ctl
requires losetup --version
requires strace -V
[ "$(id -u)" = 0 ] || skip "needs root for losetup"

md_create dd 3 24M --chunk 64K --assume-clean --bitmap none
m=("${MEMBERS[@]}")
loops=()
for f in "${m[@]}"; do
  dev=$(losetup -f --show "$f" 2>/dev/null) || skip "cannot attach a loop device"
  cleanup_fn "losetup -d $dev"
  loops+=("$dev")
done
truncate -s 24M "$tmpdir/new.img"
new=$(losetup -f --show "$tmpdir/new.img" 2>/dev/null) || skip "cannot attach a loop device"
cleanup_fn "losetup -d $new"

# traced NAME ARGS...: raid5ctl ARGS under strace (openat only); its
# stdout in $tmpdir/NAME.out, stderr in NAME.err, the trace in NAME.st.
# In the sanitizer build LeakSanitizer cannot run under ptrace (it stops
# with a fatal error), so leaks are not looked for here: the same jobs
# are leak-checked untraced in test-check and test-rebuild-offline.
traced ()
{
  local name=$1
  shift
  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
  strace -f -qq -e trace=openat -o "$tmpdir/$name.st" \
    "$RAID5CTL" "$@" > "$tmpdir/$name.out" 2> "$tmpdir/$name.err" ||
    { cat "$tmpdir/$name.err" >&2; fail "raid5ctl $*"; }
}

# opened_direct NAME PATH: did run NAME open PATH for I/O with O_DIRECT?
# (The last openat of PATH: tools look at a disk read-only first.)
opened_direct ()
{
  local line
  line=$(grep -F "\"$2\"" "$tmpdir/$1.st" | grep -v ENOENT | tail -n 1)
  [ -n "$line" ] || fail "$1: $2 was never opened"
  grep -q O_DIRECT <<<"$line"
}

said_direct () { grep -q "block devices: read and written with O_DIRECT" "$tmpdir/$1.err"; }

echo "== check on block devices: O_DIRECT by itself, and says so"
traced auto check "${loops[@]}"
grep -q "mismatch_cnt 0$" "$tmpdir/auto.out" || fail "check: $(cat "$tmpdir/auto.out")"
for d in "${loops[@]}"; do
  opened_direct auto "$d" || fail "check on block devices: $d not opened with O_DIRECT"
done
said_direct auto || { cat "$tmpdir/auto.err" >&2; fail "check chose O_DIRECT without saying so"; }
[ "$(grep -c O_DIRECT "$tmpdir/auto.err")" -eq 1 ] || { cat "$tmpdir/auto.err" >&2; fail "said more than once"; }

echo "== --buffered on block devices, and image files: the page cache, quietly"
traced buffered check --buffered "${loops[@]}"
traced files check "${m[@]}"
for d in "${loops[@]}"; do
  ! opened_direct buffered "$d" || fail "check --buffered: $d opened with O_DIRECT"
done
for f in "${m[@]}"; do
  ! opened_direct files "$f" || fail "check on image files: $f opened with O_DIRECT"
done
! said_direct buffered && ! said_direct files || fail "a buffered check said O_DIRECT"

echo "== rebuild onto a block device: O_DIRECT on the new member too"
traced rebuild rebuild --slot 1 --new "$new" "${loops[0]}" "${loops[2]}"
opened_direct rebuild "$new" || fail "rebuild: the new member $new not opened with O_DIRECT"
opened_direct rebuild "${loops[0]}" || fail "rebuild: ${loops[0]} not opened with O_DIRECT"
said_direct rebuild || fail "rebuild chose O_DIRECT without saying so"
traced after check "${loops[0]}" "$new" "${loops[2]}"
grep -q "mismatch_cnt 0$" "$tmpdir/after.out" || fail "check after the rebuild: $(cat "$tmpdir/after.out")"

echo "== rebuild onto an image file: not all block devices, buffered"
truncate -s 24M "$tmpdir/new2.img"
traced mixed rebuild --slot 1 --new "$tmpdir/new2.img" "${loops[0]}" "${loops[2]}"
! opened_direct mixed "$tmpdir/new2.img" || fail "rebuild onto a file chose O_DIRECT"
! said_direct mixed || fail "a buffered rebuild said O_DIRECT"

echo "== --direct with --buffered"
st=0
"$RAID5CTL" check --direct --buffered "${loops[@]}" > /dev/null 2> "$tmpdir/both.err" || st=$?
[ $st -ne 0 ] || fail "check --direct --buffered ran"
[ "$(grep -c . "$tmpdir/both.err")" -eq 1 ] && grep -q "give one of them" "$tmpdir/both.err" ||
  { cat "$tmpdir/both.err" >&2; fail "no one-line refusal of --direct --buffered"; }
echo "PASS"
