# tests/integration/functions.sh -- shared helpers for the integration tests.
#
# Source it first thing:   . "${0%/*}/functions.sh"
#
# Environment (set by `make check` through AM_TESTS_ENVIRONMENT; when a
# script is run by hand they default to an in-tree build):
#   PLUGIN             the built nbdkit-raid5-plugin.so
#   NBDKIT             nbdkit
#   abs_top_builddir   where tests/integration/random-io and member-check are
#   RAID5_SEED         seed for the random workloads (default: a new one)
#   KEEP_TMPDIR=1      keep the scratch directory (members, models, logs)
#
# Exit status convention: 0 pass, 77 skip (one line on stdout), other fail.

set -e
set -o pipefail

: "${abs_top_srcdir:=$(cd "${0%/*}/../.." && pwd)}"
: "${abs_top_builddir:=$abs_top_srcdir}"
: "${PLUGIN:=$abs_top_builddir/plugin/.libs/nbdkit-raid5-plugin.so}"
: "${NBDKIT:=nbdkit}"
RANDOM_IO="$abs_top_builddir/tests/integration/random-io"
MEMBER_CHECK="$abs_top_builddir/tests/integration/member-check"
: "${RAID5_SEED:=$(( $(date +%s) % 1000000 * 1000 + $$ % 1000 ))}"
SEED=$RAID5_SEED
test_name=$(basename "$0" .sh)

skip ()
{
  echo "SKIP: $test_name: $*"
  exit 77
}

fail ()
{
  echo "FAIL: $test_name: $*" >&2
  exit 1
}

# requires PROGRAM [ARGS...]: skip unless the command runs successfully
# (e.g. `requires nbdinfo --version`).
requires ()
{
  "$@" </dev/null >/dev/null 2>&1 || skip "needs: $*"
}

# requires_plugin: skip until the plugin and the test programs are built.
requires_plugin ()
{
  requires "$NBDKIT" --version
  [ -f "$PLUGIN" ] || skip "plugin not built: $PLUGIN"
  requires_programs
}

# requires_raid5ctl: RAID5CTL set to the built raid5ctl (or as given);
# skips without it.
requires_raid5ctl ()
{
  RAID5CTL=${RAID5CTL:-$abs_top_builddir/tools/raid5ctl}
  [ -x "$RAID5CTL" ] || skip "not built: $RAID5CTL"
}

requires_programs ()
{
  [ -x "$RANDOM_IO" ] || skip "not built: $RANDOM_IO"
  [ -x "$MEMBER_CHECK" ] || skip "not built: $MEMBER_CHECK"
}

# Scratch directory, removed on exit (kept with KEEP_TMPDIR=1).  Functions
# registered with cleanup_fn run first, in order.
cleanup_fns=()
cleanup_fn ()
{
  cleanup_fns+=("$*")
}

# kill_ours [-SIG] PID...: signal each PID (default SIGTERM) only if it
# is still a process of this test, one whose command line names $tmpdir.
# Cleanups run long after their server was reaped, and PIDs wrap: by
# then the number may belong to another test's server (make -j runs
# tests side by side), which a plain kill -9 would take down.
kill_ours ()
{
  local sig=-TERM p
  case ${1:-} in -*) sig=$1; shift ;; esac
  for p in "$@"; do
    [ -n "$p" ] && [ -r "/proc/$p/cmdline" ] || continue
    tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF -- "$tmpdir" &&
      kill "$sig" "$p" 2>/dev/null
  done
  return 0
}

# why_server_died: on a failure, if the last server started by serve_bg
# (md-functions.sh) had already ended, say how, and its log's last lines;
# killed by SIGKILL unasked, the kernel's out-of-memory lines too.
why_server_died ()
{
  local st=0
  [ -n "${SERVER:-}" ] && ! kill -0 "$SERVER" 2>/dev/null || return 0
  wait "$SERVER" 2>/dev/null || st=$?
  echo "$test_name: the server (pid $SERVER) had ended, exit status $st" >&2
  [ -n "${SERVER_LOG:-}" ] && [ -f "$SERVER_LOG" ] &&
    tail -n 20 "$SERVER_LOG" | sed 's/^/   log: /' >&2
  [ $st = 137 ] && dmesg 2>/dev/null | grep -Ei 'out of memory|oom|killed process' |
    tail -n 5 | sed 's/^/   kernel: /' >&2
  return 0
}

_cleanup ()
{
  local status=$? f
  [ $status -eq 0 ] || [ $status -eq 77 ] || why_server_died
  for f in "${cleanup_fns[@]}"; do
    eval "$f" || :
  done
  if [ -n "$tmpdir" ] && [ -d "$tmpdir" ]; then
    if [ "${KEEP_TMPDIR:-0}" = 1 ]; then
      echo "$test_name: kept $tmpdir" >&2
    else
      rm -rf "$tmpdir"
    fi
  fi
  if [ $status -ne 0 ] && [ $status -ne 77 ]; then
    echo "$test_name: failed (exit $status; rerun with RAID5_SEED=$SEED" \
         "KEEP_TMPDIR=1)" >&2
  fi
  exit $status
}
trap _cleanup EXIT
trap 'exit 130' INT TERM

tmpdir=$(mktemp -d "${TMPDIR:-/tmp}/raid5-$test_name.XXXXXX")
echo "$test_name: seed $SEED, scratch $tmpdir" >&2

# captive_sock: a new socket path in $tmpdir, for a captive nbdkit
# ("$NBDKIT" -U "$(captive_sock)" ... --run CMD).  nbdkit's own -U -
# makes a folder in /tmp that nbdkit 1.32 leaves behind whenever the
# plugin refuses to start, as many tests here want it to.
captive_sock () { mktemp -u "$tmpdir/nbdkit.XXXXXX"; }

# to_bytes SIZE: 64K, 16M, 1G or plain bytes -> bytes.
to_bytes ()
{
  local s=$1
  case $s in
    *[kK]) echo $(( ${s%?} * 1024 )) ;;
    *[mM]) echo $(( ${s%?} * 1024 * 1024 )) ;;
    *[gG]) echo $(( ${s%?} * 1024 * 1024 * 1024 )) ;;
    *) echo $(( s )) ;;
  esac
}

# array_size N SMALLEST_MEMBER CHUNK [DATA_OFFSET]: md's array size in
# bytes: whole chunks of the smallest member after data_offset, times N-1.
array_size ()
{
  local n=$1 member chunk doff
  member=$(to_bytes "$2")
  chunk=$(to_bytes "$3")
  doff=$(to_bytes "${4:-0}")
  echo $(( (member - doff) / chunk * chunk * (n - 1) ))
}

# make_members NAME N SIZE: create N sparse (all zero) member files
# DIR/NAME.0 .. NAME.N-1 of SIZE bytes (DIR: $tmpdir unless given) and
# set the array MEMBERS to their paths.
make_members ()
{
  local name=$1 n=$2 size dir=${4:-$tmpdir} i
  size=$(to_bytes "$3")
  MEMBERS=()
  for (( i = 0; i < n; i++ )); do
    rm -f "$dir/$name.$i"
    truncate -s "$size" "$dir/$name.$i"
    MEMBERS+=("$dir/$name.$i")
  done
}

# with_missing K PATH...: print the paths one per line, the K-th (from 0)
# replaced by the word missing (K = -1: none).
with_missing ()
{
  local k=$1 i=0 p
  shift
  for p in "$@"; do
    if [ "$i" -eq "$k" ]; then echo missing; else echo "$p"; fi
    i=$(( i + 1 ))
  done
}

# fill_random MODEL DISK-ARG...: the array served on the DISK-ARGs
# (disk=PATH ...) filled with random bytes, which MODEL keeps; sets size
# (the array's bytes).
fill_random ()
{
  local model=$1
  shift
  size=$("$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "$@" --run 'nbdinfo --size "$uri"') ||
    fail "serving the array to size it"
  head -c "$size" /dev/urandom >"$model"
  "$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "$@" --run "nbdcopy '$model' \"\$uri\"" ||
    fail "filling the array"
}

# disk_args PATH...: print disk=PATH for each, one per line.  Use as
#   mapfile -t disks < <(disk_args "${MEMBERS[@]}")
disk_args ()
{
  local p
  for p in "$@"; do echo "disk=$p"; done
}

# checksum_members PATH...: one line of checksums (missing members
# skipped), to tell that no byte changed.  cksum's CRC-32 (with its
# length) catches any change a bug makes -- nobody forges one here -- at
# a twentieth of sha256sum's time, and tests take these many times.
checksum_members ()
{
  local p
  for p in "$@"; do
    [ "$p" = missing ] || [ ! -f "$p" ] || cksum "$p"
  done
}

# sh_quote ARGS...: the arguments as one POSIX sh command line (nbdkit
# --run uses /bin/sh, which may not understand bash's $'...' quoting).
sh_quote ()
{
  local a q="'\\''"
  for a in "$@"; do
    printf "'%s' " "${a//\'/$q}"
  done
}

# raid5_captive PLUGIN_ARGS... -- COMMAND ARGS...
#
# Serve the plugin with PLUGIN_ARGS on a private socket and run COMMAND
# with every argument @URI@ replaced by the export's URI (nbdkit --run).
# Returns the command's exit status (or nbdkit's if it failed to start).
# nbdkit's and the command's stderr go to $tmpdir/nbdkit.log and are
# copied to our stderr.  An nbdkit "error:" line fails the test even if
# the command succeeded (a healthy workload must not log errors), unless
# the caller set allow_nbdkit_errors=1.
raid5_captive ()
{
  local pargs=() cmd status=0 log="$tmpdir/nbdkit.log"
  while [ $# -gt 0 ] && [ "$1" != -- ]; do pargs+=("$1"); shift; done
  shift
  cmd=$(sh_quote "$@")
  cmd=${cmd//"'@URI@'"/'"$uri"'}
  "$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${pargs[@]}" --run "$cmd" 2>"$log" || status=$?
  cat "$log" >&2
  if [ $status -eq 0 ] && [ "${allow_nbdkit_errors:-0}" != 1 ] &&
     grep -q '^nbdkit: .*error:' "$log"; then
    echo "$test_name: nbdkit logged an error during a passing run" >&2
    return 1
  fi
  return $status
}

# next_seed: set RIO_SEED to a new seed derived from SEED, for each
# random-io run of the test (use --seed "$RIO_SEED").
_seeds=0
next_seed ()
{
  _seeds=$(( _seeds + 1 ))
  RIO_SEED=$(( SEED * 100 + _seeds ))
}

# member_check ARGS...: run the checker, failing the test on a mismatch.
member_check ()
{
  "$MEMBER_CHECK" "$@" || fail "member-check $*"
}

# member_server NAME [--FILTER-OPTIONS...] [KEY=VALUE...]: serve
# $tmpdir/NAME.img (made of $SIZE if absent) with nbdkit's file plugin on
# $tmpdir/NAME.nsock; sets URI_OF[NAME] and PID_OF[NAME] (declare -A
# them first).
member_server ()
{
  local name=$1 img=$tmpdir/$1.img sock=$tmpdir/$1.nsock i a
  local opts=() params=()
  shift
  for a in "$@"; do
    case $a in --*) opts+=("$a") ;; *) params+=("$a") ;; esac
  done
  [ -f "$img" ] || truncate -s "$SIZE" "$img"
  rm -f "$sock" "$tmpdir/$name.npid"
  "$NBDKIT" -f -U "$sock" -P "$tmpdir/$name.npid" "${opts[@]}" file "$img" \
    "${params[@]}" >"$tmpdir/$name.nlog" 2>&1 &
  PID_OF[$name]=$!
  cleanup_fn "kill_ours -9 ${PID_OF[$name]}"
  for (( i = 0; i < 100; i++ )); do
    [ -s "$tmpdir/$name.npid" ] && [ -S "$sock" ] && break
    sleep 0.05
  done
  [ -S "$sock" ] || fail "the member server $name did not start"
  URI_OF[$name]="nbd+unix:///?socket=$sock"
}
