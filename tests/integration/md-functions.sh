# tests/integration/md-functions.sh -- helpers for the md v1.2 metadata
# tests (test-md-*.sh): arrays made by raid5ctl create, their superblocks
# read back with mdadm --examine (an independent reader of md's format, with
# its own checksum check), and a server in the background that can be
# killed.  Source it after functions.sh.
#
# Environment: RAID5CTL (default: $abs_top_builddir/tools/raid5ctl).

: "${RAID5CTL:=$abs_top_builddir/tools/raid5ctl}"

# requires_md: skip until raid5ctl is built; skip without mdadm.
requires_md ()
{
  [ -x "$RAID5CTL" ] || skip "raid5ctl is not built yet ($RAID5CTL)"
  command -v mdadm >/dev/null || skip "needs mdadm (mdadm --examine reads the superblocks)"
}

# requires_nbd_python: NBD_PYTHON = a python3 with libnbd's bindings.
requires_nbd_python ()
{
  local p
  for p in python3 /usr/bin/python3; do
    if "$p" -c 'import nbd' 2>/dev/null; then NBD_PYTHON=$p; return 0; fi
  done
  skip "needs libnbd's Python bindings (python3-libnbd)"
}

# md_create NAME N SIZE RAID5CTL-CREATE-OPTIONS...: N sparse members
# $tmpdir/NAME.0.. (MEMBERS), then raid5ctl create OPTIONS on them; sets
# MD_CHUNK, MD_LAYOUT and MD_DOFF from what mdadm --examine says.
md_create ()
{
  local name=$1 n=$2 size=$3
  shift 3
  make_members "$name" "$n" "$size" "${MEMBERS_DIR:-}"
  "$RAID5CTL" create "$@" "${MEMBERS[@]}" >"$tmpdir/create.log" 2>&1 ||
    { cat "$tmpdir/create.log" >&2; fail "raid5ctl create $* failed"; }
  md_geometry "${MEMBERS[0]}"
}

# md_read FILE: the "NAME : value" lines of mdadm --examine FILE into the
# associative array MDX (NAME without the leading spaces; a NAME's first
# line only).  Empty if FILE has no md superblock.  One mdadm and no
# other process: the tests read superblocks thousands of times, and a
# fork costs milliseconds on these virtual machines.
declare -gA MDX
md_read ()
{
  local line
  MDX=()
  while IFS= read -r line; do
    [[ $line =~ ^\ *([^:]*[^\ :])\ :\ (.*)$ ]] || continue
    [ -n "${MDX[${BASH_REMATCH[1]}]+x}" ] ||
      MDX[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
  done < <(mdadm --examine "$1" 2>/dev/null)
}

# md_field FILE NAME: the value of one "NAME : value" line of mdadm
# --examine FILE (NAME the whole name, so State is not Array State);
# fails if FILE has no md superblock (as mdadm's pipe did, under
# pipefail), succeeds with nothing if it has one without NAME.
md_field ()
{
  md_read "$1"
  [ ${#MDX[@]} -gt 0 ] || return 1
  [ -z "${MDX[$2]+x}" ] || printf '%s\n' "${MDX[$2]}"
}

# md_geometry FILE: MD_CHUNK (64K), MD_LAYOUT, MD_DOFF (bytes), MD_EVENTS.
md_geometry ()
{
  local doff
  md_read "$1"
  MD_CHUNK=${MDX[Chunk Size]-}
  MD_LAYOUT=${MDX[Layout]-}
  doff=${MDX[Data Offset]-0 sectors}
  MD_DOFF=$(( ${doff% sectors} * 512 ))
  MD_EVENTS=${MDX[Events]-}
  [ -n "$MD_CHUNK" ] && [ -n "$MD_LAYOUT" ] && [ -n "$MD_EVENTS" ] ||
    fail "mdadm --examine $1: no md superblock: $(mdadm --examine "$1" 2>&1 | head -n 3)"
}

# md_events FILE: its events counter.
md_events () { md_field "$1" Events; }

# md_show_read FILE: the line md_show prints of FILE, from MDX (md_read
# FILE first).
md_show_read ()
{
  local as=${MDX[Array State]-}
  echo "  ${1##*/}: events ${MDX[Events]-}, state ${MDX[State]-}," \
       "role '${MDX[Device Role]-}', array state ${as%% *}," \
       "checksum ${MDX[Checksum]-}" >&2
}

# md_show FILE...: one line per member: events, state, array state.
md_show ()
{
  local f
  for f in "$@"; do
    md_read "$f"
    md_show_read "$f"
  done
}

# md_expect STATE ARRAY_STATE FILE...: every superblock has a correct
# checksum, State STATE (clean|active), Array State ARRAY_STATE (e.g. AAA)
# and the same events counter, which goes to MD_EVENTS.
md_expect ()
{
  local state=$1 astate=$2 f ev= as bad=
  shift 2
  # Every member's line first, then the first thing wrong.
  for f in "$@"; do
    md_read "$f"
    md_show_read "$f"
    as=${MDX[Array State]-}
    [ -n "$bad" ] && continue
    if [[ ${MDX[Checksum]-} != *"- correct" ]]; then
      bad="${f##*/}: superblock checksum: ${MDX[Checksum]-}"
    elif [ "${MDX[State]-}" != "$state" ]; then
      bad="${f##*/}: State is '${MDX[State]-}', expected $state"
    elif [ "${as%% *}" != "$astate" ]; then
      bad="${f##*/}: Array State is '${MDX[Array State]-}', expected $astate"
    elif [ -n "$ev" ] && [ "${MDX[Events]-}" != "$ev" ]; then
      bad="${f##*/}: events ${MDX[Events]-}, the others $ev"
    fi
    ev=${MDX[Events]-}
  done
  [ -z "$bad" ] || fail "$bad"
  MD_EVENTS=$ev
}

# all_a N: N letters A.
all_a () { printf 'A%.0s' $(seq 1 "$1"); }

# serve_bg LOG PLUGIN_ARGS...: nbdkit in the foreground of a background
# job on $tmpdir/sock, log in LOG; waits until it serves.  Sets SERVER
# (pid) and URI.  Returns 1 if nbdkit exited instead.
serve_bg ()
{
  local log=$1 i
  shift
  rm -f "$tmpdir/sock" "$tmpdir/pid"
  "$NBDKIT" -f -U "$tmpdir/sock" -P "$tmpdir/pid" "$PLUGIN" "$@" \
    >"$log" 2>&1 &
  SERVER=$!
  SERVER_LOG=$log
  cleanup_fn "kill_ours -9 $SERVER"
  URI="nbd+unix:///?socket=$tmpdir/sock"
  for (( i = 0; i < 300; i++ )); do
    [ -s "$tmpdir/pid" ] && [ -S "$tmpdir/sock" ] && return 0
    kill -0 "$SERVER" 2>/dev/null || break
    sleep 0.05
  done
  cat "$log" >&2
  return 1
}

# stop_server: SIGTERM (a clean stop); fails the test unless nbdkit exits 0
# within 30 s.
stop_server ()
{
  local i status=0
  kill -TERM "$SERVER" 2>/dev/null || :
  for (( i = 0; i < 300; i++ )); do
    kill -0 "$SERVER" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$SERVER" 2>/dev/null && fail "nbdkit did not stop on SIGTERM within 30 s"
  wait "$SERVER" || status=$?
  SERVER=
  [ $status -eq 0 ] || fail "nbdkit exited with status $status on SIGTERM"
}

# crash_server: kill -9.
crash_server ()
{
  kill -9 "$SERVER" 2>/dev/null || :
  wait "$SERVER" 2>/dev/null || :
  SERVER=
}

# wait_log LOG REGEX SECONDS: wait until LOG has a line matching REGEX.
wait_log ()
{
  local i
  for (( i = 0; i < $3 * 10; i++ )); do
    grep -Eq "$2" "$1" && return 0
    kill -0 "$SERVER" 2>/dev/null || break
    sleep 0.1
  done
  grep -Eq "$2" "$1"
}

# wait_active FILE: wait (up to 20 s) until FILE's superblock says active:
# the first write after a clean state has marked the array dirty (a FUA
# write, which can take a while on a busy disk).
wait_active ()
{
  local i
  for (( i = 0; i < 200; i++ )); do
    [ "$(md_field "$1" State)" = active ] && return 0
    kill -0 "$SERVER" 2>/dev/null || break
    sleep 0.1
  done
  fail "${1##*/}: the superblock did not become active during writes"
}

# write_until_killed MODEL_IN MODEL_OUT DELAY_TENTHS RANDOM-IO-ARGS...:
# random-io (--crash-ok) against the background server; once it runs, wait
# DELAY_TENTHS tenths of a second after the array is marked dirty (the
# superblock of $WATCH, default ${m[0]}, says active), kill -9 the server.  The workload
# must have been running (not finished) at the kill.
write_until_killed ()
{
  local min=$1 mout=$2 delay=$3 rio status=0 i
  shift 3
  next_seed
  "$RANDOM_IO" "$URI" auto --seed "$RIO_SEED" --ops 100000000 --crash-ok \
    ${min:+--model-in "$min"} --model-out "$mout" "$@" \
    >"$tmpdir/rio.out" 2>&1 &
  rio=$!
  for (( i = 0; i < 300; i++ )); do
    grep -q running "$tmpdir/rio.out" && break
    sleep 0.05
  done
  wait_active "${WATCH:-${m[0]}}"
  sleep "$(( delay / 10 )).$(( delay % 10 ))"
  crash_server
  wait "$rio" || status=$?
  [ $status -eq 0 ] || { cat "$tmpdir/rio.out" >&2; fail "random-io failed before the kill"; }
  grep -q 'server went away' "$tmpdir/rio.out" ||
    { cat "$tmpdir/rio.out" >&2; fail "the workload ended before the kill"; }
}

# parity_byte_off STRIPE N CHUNK_BYTES DOFF_BYTES LAYOUT: "MEMBER OFFSET" of
# the first byte of the parity chunk of STRIPE (md's layouts).
parity_byte_off ()
{
  local s=$1 n=$2 c=$3 doff=$4 pd
  case $5 in
    left-*) pd=$(( n - 1 - s % n )) ;;
    right-*) pd=$(( s % n )) ;;
    parity-first) pd=0 ;;
    parity-last) pd=$(( n - 1 )) ;;
    *) fail "parity_byte_off: layout $5" ;;
  esac
  echo "$pd $(( doff + s * c ))"
}

# flip_byte FILE OFFSET: invert one byte in place.
flip_byte ()
{
  local b
  b=$(od -An -tu1 -j "$2" -N 1 "$1" | tr -d ' ')
  printf "\\$(printf %03o $(( b ^ 255 )))" |
    dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# patch_sb DISK PYTHON: run PYTHON on the superblock bytes (a bytearray
# `sb`), then store it with a correct checksum.
patch_sb ()
{
  python3 - "$1" "$2" <<'EOF'
import struct, sys
path, code = sys.argv[1], sys.argv[2]
with open(path, 'r+b') as f:
    f.seek(4096)
    sb = bytearray(f.read(4096))
    exec(code)
    sb[216:220] = b'\0\0\0\0'
    n = 256 + 2 * struct.unpack_from('<I', sb, 220)[0]
    acc = sum(struct.unpack_from('<%dI' % (n // 4), sb, 0))
    if n % 4:
        acc += struct.unpack_from('<H', sb, n - 2)[0]
    struct.pack_into('<I', sb, 216, ((acc & 0xffffffff) + (acc >> 32)) & 0xffffffff)
    f.seek(4096)
    f.write(sb)
EOF
}
