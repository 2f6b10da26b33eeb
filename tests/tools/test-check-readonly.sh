#!/usr/bin/env bash
# raid5ctl check reads only: a user who may read the members but not write
# them (here nobody, on members mode 0444) can check the array, and not
# one byte of any member changes -- as md's read-only array, which writes
# no superblock, replays no log and rewrites no read error:
#  - a clean array: exit 0, mismatch_cnt 0;
#  - a dirty array (its server killed after a write): checked as it is,
#    the report says it is dirty, it stays so;
#  - a PPL array (its log is neither replayed nor reset);
#  - repair, which writes, fails for that user with one line naming the
#    member and why.
. "${0%/*}/functions.sh"
requires_raid5ctl
requires setpriv --version
requires /usr/bin/python3 -c 'import nbd'

# nobody runs a copy in the scratch directory: the build tree may be
# under a directory only root may enter.
chmod 0755 "$tmpdir"
cp "$RAID5CTL" "$tmpdir/raid5ctl"
as_nobody () { setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; }
as_nobody "$tmpdir/raid5ctl" --help >/dev/null 2>&1 ||
  skip "user nobody cannot run a copy of raid5ctl in $tmpdir"

# readonly_check NAME: check the array of DISKS as nobody, members 0444;
# exit status in st, report in out; every member byte-identical.
readonly_check ()
{
  local sums
  sums=$(checksum_members "${DISKS[@]}")
  chmod 0444 "${DISKS[@]}"
  st=0
  out=$(as_nobody "$tmpdir/raid5ctl" check "${DISKS[@]}" 2>"$tmpdir/err") || st=$?
  chmod 0644 "${DISKS[@]}"
  [ "$(checksum_members "${DISKS[@]}")" = "$sums" ] ||
    fail "$1: check as nobody changed a member"
  grep -q "Permission denied" "$tmpdir/err" &&
    fail "$1: check as nobody: $(cat "$tmpdir/err")"
  return 0
}

make_array ()
{
  DISKS=()
  for i in 0 1 2; do
    rm -f "$tmpdir/d$i"
    truncate -s 24M "$tmpdir/d$i"
    DISKS+=("$tmpdir/d$i")
  done
  "$RAID5CTL" create --chunk 64K "$@" "${DISKS[@]}" >"$tmpdir/create.log" 2>&1 ||
    { cat "$tmpdir/create.log" >&2; fail "create $*"; }
}

echo "== clean"
make_array
readonly_check clean
[ $st = 0 ] && grep -q "mismatch_cnt 0$" <<<"$out" ||
  fail "clean: exit $st: $out $(cat "$tmpdir/err")"

echo "== repair as nobody: refused in one line"
chmod 0444 "${DISKS[@]}"
sums=$(checksum_members "${DISKS[@]}")
if as_nobody "$tmpdir/raid5ctl" repair "${DISKS[@]}" >/dev/null 2>"$tmpdir/err"; then
  fail "repair as nobody succeeded"
fi
chmod 0644 "${DISKS[@]}"
[ "$(wc -l <"$tmpdir/err")" = 1 ] &&
  grep -q "member 0 ($tmpdir/d0): cannot open: Permission denied" "$tmpdir/err" ||
  fail "repair as nobody: $(cat "$tmpdir/err")"
[ "$(checksum_members "${DISKS[@]}")" = "$sums" ] || fail "repair changed a member"

echo "== dirty"
"$NBDKIT" -f -U "$tmpdir/sock" "$PLUGIN" "${DISKS[@]/#/disk=}" \
  2>"$tmpdir/srv.log" &
srv=$!
for _ in $(seq 50); do [ -S "$tmpdir/sock" ] && break; sleep 0.1; done
/usr/bin/python3 -c '
import nbd, os, sys
h = nbd.NBD(); h.connect_unix(sys.argv[1])
h.pwrite(b"d" * 4096, 0); h.flush(); os.kill(int(sys.argv[2]), 9)
' "$tmpdir/sock" "$srv" || fail "the write before the kill"
wait $srv 2>/dev/null || :
"$RAID5CTL" examine "${DISKS[0]}" | grep -q "State : active" ||
  fail "not dirty after the kill"
readonly_check dirty
[ $st = 0 ] && grep -q "the array is dirty" <<<"$out" ||
  fail "dirty: exit $st: $out $(cat "$tmpdir/err")"
"$RAID5CTL" examine "${DISKS[0]}" | grep -q "State : active" ||
  fail "check cleaned the dirty array"

echo "== PPL"
make_array --consistency-policy ppl
readonly_check ppl
[ $st = 0 ] && grep -q "mismatch_cnt 0$" <<<"$out" ||
  fail "ppl: exit $st: $out $(cat "$tmpdir/err")"

echo "test-check-readonly: OK"
