#!/usr/bin/env bash
# Members made without an md bad-block log (an older raid5ctl, mdadm
# --update=no-bbl) get one when the plugin starts them, where mdadm
# --update=bbl puts it (raid/badblocks.h md_bblog_update):
#   - without a bitmap: 8 sectors at 80 sectors from the superblock;
#     mdadm --examine-badblocks then says the list is empty, and status
#     shows a log with no ranges on every member;
#   - with an internal bitmap: after the bitmap's area (mdadm's room,
#     which is within the first 80 sectors here: a 4 KiB bitmap);
#   - the array's bytes are unchanged (written before, read after);
#   - a member whose data starts too close to the superblock for a log
#     keeps none, and the start says so (-v).
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
. "${0%/*}/job-functions.sh"
requires_jobs
requires_programs mdadm
requires_raid5ctl

# no_bbl DISK...: the superblock says no bad-block log (bblog_shift,
# _size and _offset zero; patch_sb makes its checksum again).
no_bbl ()
{
  local d
  for d in "$@"; do patch_sb "$d" "sb[185:192] = bytes(7)" || return 1; done
}
bblog_offset () { "$RAID5CTL" examine --json "$1" | /usr/bin/python3 -c '
import json, sys
b = json.load(sys.stdin)[0]["bad_blocks"]
print(b["offset_sectors"] if b else "none")'; }

# one_array NAME WANT CREATE-OPTION...: create, strip the log, fill
# through the plugin, restart: the log at WANT sectors on every member
# (none: no log, and the start said there is no room).
one_array ()
{
  local name=$1 want=$2 i m=()
  shift 2
  for i in 0 1 2; do
    m+=("$tmpdir/$name$i.img")
    truncate -s 16M "${m[$i]}"
  done
  "$RAID5CTL" create --chunk 64K --assume-clean "$@" "${m[@]}" \
    >/dev/null 2>&1 || fail "create $name"
  no_bbl "${m[@]}" || fail "stripping the logs of $name"
  mdadm --examine-badblocks "${m[0]}" 2>&1 | grep -q "^No bad-blocks list configured" ||
    fail "$name: the log was not stripped: $(mdadm --examine-badblocks "${m[0]}" 2>&1)"
  head -c 1M /dev/urandom >"$tmpdir/$name.data"
  mapfile -t disks < <(disk_args "${m[@]}")
  serve_ctl "$tmpdir/$name.log" -v "${disks[@]}" || fail "serve $name"
  if [ "$want" = none ]; then
    grep -q "the members have no md bad-block log and no room for one before the data" \
      "$tmpdir/$name.log" || fail "$name: the start did not say there is no room"
    [ "$(ctl_get '[mb["bad_blocks"] for mb in s["members"]]')" = "[None, None, None]" ] ||
      fail "$name: status: $(ctl_get '[mb["bad_blocks"] for mb in s["members"]]')"
  else
    grep -q "md bad-block log reserved on the members (as mdadm --update=bbl): 8 sectors at $want sectors" \
      "$tmpdir/$name.log" || fail "$name: the start did not say it reserved a log"
    [ "$(ctl_get '[mb["bad_blocks"]["ranges"] for mb in s["members"]]')" = "[0, 0, 0]" ] ||
      fail "$name: status: $(ctl_get '[mb["bad_blocks"] for mb in s["members"]]')"
  fi
  nbdcopy "$tmpdir/$name.data" "$URI" || fail "$name: writing"
  stop_server
  for i in 0 1 2; do
    [ "$(bblog_offset "${m[$i]}")" = "$want" ] ||
      fail "$name: member $i's log at $(bblog_offset "${m[$i]}"), not $want"
    [ "$want" = none ] ||
      mdadm --examine-badblocks "${m[$i]}" 2>&1 | grep -q "^Bad-blocks list is empty in" ||
      fail "$name: mdadm: $(mdadm --examine-badblocks "${m[$i]}" 2>&1)"
  done
  serve_ctl "$tmpdir/$name-2.log" -v "${disks[@]}" || fail "serve $name again"
  ! grep -q "bad-block log reserved" "$tmpdir/$name-2.log" ||
    fail "$name: a second log reserved"
  nbdcopy "$URI" "$tmpdir/$name.back" || fail "$name: reading"
  cmp -n 1048576 "$tmpdir/$name.back" "$tmpdir/$name.data" ||
    fail "$name: the array reads other bytes"
  stop_server
  echo "   $name: log at $want on every member; the array's bytes kept"
}

echo "== no bitmap: the log at 80 sectors (mdadm's 8 + 64 past the superblock's end)"
one_array plain 80 --bitmap none
echo "== an internal bitmap (4 KiB): after its area, pushed to 80 as well"
one_array bitmap 80 --bitmap internal
echo "== the data 24 sectors in: no room (mdadm would write over the data)"
one_array tight none --bitmap none --data-offset 12K
echo "test-bblog-add: OK"
