#!/usr/bin/env bash
# raid5ctl create against real mdadm: tests/unit/fixtures/md holds what
# mdadm 4.2 --create (and kernel md) wrote for arrays of many sizes, with
# mdadm --examine and --examine-bitmap of member 0.  Make the same arrays
# with raid5ctl on sparse files of the same size and compare what mdadm
# --examine says about ours: geometry, data offset, bad-block log, bitmap
# chunk and bits.  Arrays mdadm made with --assume-clean are compared in
# full (state, events, roles), and their superblocks byte for byte:
# nothing but mdadm wrote those.  Left out on purpose: UUIDs, times,
# checksum and the name's host part (the rest is compared as text).

. "${0%/*}/functions.sh"
[ -x "$RAID5CTL" ] || skip "not built: $RAID5CTL"
requires mdadm --version
fixtures=$abs_top_srcdir/tests/unit/fixtures/md
[ -d "$fixtures" ] || skip "no mdadm fixtures in $fixtures"

geometry_keys=('Feature Map' 'Raid Level' 'Raid Devices' 'Avail Dev Size'
               'Array Size' 'Used Dev Size' 'Data Offset' 'Super Offset'
               'Unused Space' 'Internal Bitmap' 'Bad Block Log' Layout
               'Chunk Size')
state_keys=(State Events 'Device Role' 'Array State')
bitmap_keys=(Magic Version Events 'Events Cleared' State Chunksize Daemon
             'Write Mode' 'Sync Size')

# options_of CREATE_LINE: raid5ctl create options for an mdadm --create
# line, or nothing (status 1) if it uses an option raid5ctl lacks.
options_of ()
{
  local w
  OPTS=(--assume-clean) N=
  for w in $1; do
    case $w in
      --raid-devices=*) N=${w#*=} ;;
      --name=*) OPTS+=(--name "${w#*=}") ;;
      --chunk=*) OPTS+=(--chunk "${w#*=}K") ;;
      --layout=*) OPTS+=(--layout "${w#*=}") ;;
      --bitmap=internal) OPTS+=(--bitmap internal) ;;
      --assume-clean) CLEAN=1 ;;
      --bitmap-chunk=*) return 1 ;;
      '#') break ;;
    esac
  done
}

# same_keys WHAT THEIRS OURS KEY...: each KEY has the same value (or is
# absent from both).
same_keys ()
{
  local what=$1 theirs=$2 ours=$3 k a b
  shift 3
  for k in "$@"; do
    a=$(md_field "$theirs" "$k")
    b=$(md_field "$ours" "$k")
    [ "$a" = "$b" ] ||
      { echo "$what: $k: mdadm wrote '$a', raid5ctl '$b'" >&2; return 1; }
  done
}

# sb_differs THEIRS OURS: offsets (from the superblock's start) of the
# bytes that differ between two 4096-byte superblocks, outside the set
# UUID and name (16-63), ctime (64-71), device UUID (168-183), utime
# (192-199) and checksum (216-219).
sb_differs ()
{
  { cmp -l "$1" "$2" || :; } | awk '{ o = $1 - 1 }
    !((o >= 16 && o < 72) || (o >= 168 && o < 184) || (o >= 192 && o < 200) ||
      (o >= 216 && o < 220)) { print o }'
}

# sparse_dir BYTES: a folder whose file system takes sparse files of
# BYTES (ext4 stops at 16 TiB; tmpfs goes further), or status 1.  Runs
# in a command substitution, so the tmpfs folder is made (and its removal
# registered) here, once, not there.
shm_dir=$(mktemp -d /dev/shm/raid5-test-create-mdadm.XXXXXX 2>/dev/null) &&
  cleanup_fn rm -rf "$shm_dir"
sparse_dir ()
{
  local d
  for d in "$tmpdir" ${shm_dir:+"$shm_dir"}; do
    if truncate -s "$1" "$d/r5-probe.$$" 2>/dev/null; then
      rm -f "$d/r5-probe.$$"
      echo "$d"
      return 0
    fi
    rm -f "$d/r5-probe.$$"
  done
  return 1
}

compared=0 failed=0
for f in "$fixtures"/*/; do
  name=$(basename "$f")
  [ -f "$f/create" ] && [ -f "$f/m0.examine" ] || continue
  CLEAN=0
  if ! options_of "$(cat "$f/create")"; then
    echo "$name: uses an option raid5ctl create does not have; not compared"
    continue
  fi
  bytes=$(( $(cat "$f/sectors") * 512 ))
  if ! dir=$(sparse_dir "$bytes"); then
    echo "$name: no file system here takes sparse files of $bytes bytes;" \
         "not compared"
    continue
  fi
  make_members "$name" "$N" "$bytes" "$dir"
  members=("${MEMBERS[@]}")
  "$RAID5CTL" create "${OPTS[@]}" "${members[@]}" >/dev/null ||
    fail "$name: raid5ctl create ${OPTS[*]}"
  mdadm --examine "${members[0]}" >"$tmpdir/ours" 2>&1
  keys=("${geometry_keys[@]}") bkeys=("${bitmap_keys[@]}") ok=1
  [ "$CLEAN" = 0 ] || keys+=("${state_keys[@]}")
  [ "$CLEAN" = 1 ] || bkeys=("${bkeys[@]/Events*/}")
  if [ "$CLEAN" = 1 ]; then
    dd if="${members[0]}" of="$tmpdir/ours.sb" bs=4096 skip=1 count=1 \
       status=none
    diff=$(sb_differs "$f/m0.sb" "$tmpdir/ours.sb" | tr '\n' ' ')
    [ -z "$diff" ] ||
      { echo "$name: superblock bytes differ at $diff" >&2; ok=0; }
  fi
  same_keys "$name" "$f/m0.examine" "$tmpdir/ours" "${keys[@]}" || ok=0
  [ "$(md_field "$f/m0.examine" Name | sed 's/^[^:]*://')" = \
    "$(md_field "$tmpdir/ours" Name | sed 's/^[^:]*://; s/  (local.*//')" ] ||
    { echo "$name: name differs" >&2; ok=0; }
  if [ -f "$f/m0.examine-bitmap" ]; then
    dd if="${members[0]}" of="$tmpdir/bitmap" bs=4096 skip=2 count=64 \
       status=none
    mdadm -X "$tmpdir/bitmap" >"$tmpdir/ours-bitmap" 2>&1
    same_keys "$name bitmap" "$f/m0.examine-bitmap" "$tmpdir/ours-bitmap" \
      "${bkeys[@]}" || ok=0
    a=$(md_field "$f/m0.examine-bitmap" Bitmap | cut -d, -f1)
    b=$(md_field "$tmpdir/ours-bitmap" Bitmap | cut -d, -f1)
    [ "$a" = "$b" ] ||
      { echo "$name bitmap: mdadm wrote '$a', raid5ctl '$b'" >&2; ok=0; }
  fi
  rm -f "${members[@]}"
  if [ $ok = 1 ]; then
    echo "$name: same as mdadm ($([ "$CLEAN" = 1 ] && echo "all fields, superblock bytes" ||
      echo geometry))"
    compared=$(( compared + 1 ))
  else
    failed=$(( failed + 1 ))
  fi
done
[ "$failed" -eq 0 ] || fail "$failed arrays differ from what mdadm wrote"
[ "$compared" -gt 0 ] || skip "no fixture could be compared"
echo "$compared arrays: raid5ctl create writes what mdadm --create wrote"
