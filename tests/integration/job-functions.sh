# shellcheck shell=bash
# tests/integration/job-functions.sh -- helpers of the background-job tests
# (test-rebuild, test-rebuild-resume, test-spare, test-check-online,
# test-rate): the control socket (through ctl.py, not raid5ctl), a client
# load that runs until told to stop, and md's layout arithmetic.  Source it
# after functions.sh and md-functions.sh.

CTL_PY="$abs_top_srcdir/tests/integration/ctl.py"
CTL_SOCK=

# requires_jobs: everything these tests need.
requires_jobs ()
{
  requires_plugin
  requires_md
  [ -x /usr/bin/python3 ] || skip "needs /usr/bin/python3 (control socket client)"
  [ -f "$CTL_PY" ] || skip "missing $CTL_PY"
}

# serve_ctl LOG PLUGIN_ARGS...: serve_bg with control=$tmpdir/ctl; waits
# until the control socket answers.
serve_ctl ()
{
  local log=$1 i
  shift
  CTL_SOCK=$tmpdir/ctl
  serve_bg "$log" control="$CTL_SOCK" "$@" || return 1
  for (( i = 0; i < 100; i++ )); do
    [ -S "$CTL_SOCK" ] && ctl_quiet status && return 0
    sleep 0.05
  done
  cat "$log" >&2
  fail "the control socket $CTL_SOCK does not answer"
}

# badsector_serve IMG SOCK LIST LOG: a disk with bad sectors -- IMG served
# on the Unix socket SOCK by the badsector test plugin, which fails the
# sectors listed in LIST (made empty here; "read S N" until written,
# "write S N" always) and logs remaps and failed writes in LOG.  Waits
# until SOCK exists; the server is killed at the test's end.
badsector_serve ()
{
  local img=$1 sock=$2 list=$3 log=$4 k plugin
  plugin=$abs_top_builddir/tests/integration/.libs/nbdkit-badsector-plugin.so
  [ -f "$plugin" ] || skip "not built: $plugin"
  : >"$list"
  "$NBDKIT" -f -U "$sock" "$plugin" file="$img" bad="$list" log="$log" \
    >"$sock.log" 2>&1 &
  cleanup_fn "kill_ours -9 $!"
  for (( k = 0; k < 100; k++ )); do [ -S "$sock" ] && return 0; sleep 0.05; done
  fail "the bad-sector disk $img does not listen on $sock: $(tail -n 2 "$sock.log")"
}

# badsector_met LOG SECTOR: did the disk whose log is LOG fail a read of
# SECTOR (a "read-error START COUNT" line covering it)?
badsector_met ()
{
  awk -v b="$2" '$1 == "read-error" && $2 <= b && b < $2 + $3 { f = 1 } END { exit !f }' "$1"
}

# read_range OFF LEN: the array's bytes [OFF, +LEN) at $URI compared with
# $tmpdir/model; fails (exit 1, the range on stderr) when they differ or
# the read fails.
read_range ()
{
  /usr/bin/python3 - "$URI" "$tmpdir/model" "$1" "$2" <<'EOF'
import nbd, sys
uri, model, off, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
h = nbd.NBD(); h.connect_uri(uri)
with open(model, "rb") as f:
    f.seek(off); want = f.read(n)
got = h.pread(n, off)
if got != want:
    sys.exit("wrong bytes in [%d, +%d)" % (off, n))
EOF
}

# reads_as_model WHEN: the whole array at $URI must read as
# $tmpdir/model (WHEN says where in the test, in the failure).
reads_as_model ()
{
  nbdcopy "$URI" "$tmpdir/back" || fail "reading the array $1"
  cmp -s "$tmpdir/model" "$tmpdir/back" ||
    fail "the array read $(cmp -l "$tmpdir/model" "$tmpdir/back" | wc -l) wrong bytes $1"
}

# ctl WORD...: one control command; its reply on stdout; returns 1 on an
# ERROR reply (the line on stderr), 2 when the socket does not answer.
ctl () { /usr/bin/python3 "$CTL_PY" "$CTL_SOCK" cmd "$@"; }
ctl_quiet () { ctl "$@" >/dev/null 2>&1; }

# ctl_ok WORD...: the command must succeed; prints the reply indented.
ctl_ok ()
{
  local out
  out=$(ctl "$@" 2>&1) || fail "control '$*': $out"
  sed 's/^/   > /' <<<"$out"
}

# ctl_refused REGEX WORD...: the command must get "ERROR: ..." matching REGEX.
ctl_refused ()
{
  local re=$1 out status=0
  shift
  out=$(ctl "$@" 2>&1) || status=$?
  [ $status = 1 ] || fail "control '$*' was not refused (exit $status): $out"
  grep -Eq "^ERROR: .*$re" <<<"$out" ||
    fail "control '$*': refused, but not for '$re': $out"
  echo "   '$*' refused: ${out#ERROR: }"
}

# ctl_get EXPR: a value of status --json (python expression on s).
ctl_get () { /usr/bin/python3 "$CTL_PY" "$CTL_SOCK" get "$1"; }

# ctl_wait EXPR SECONDS: wait until EXPR holds; fail the test otherwise.
ctl_wait ()
{
  /usr/bin/python3 "$CTL_PY" "$CTL_SOCK" wait "$1" "$2" ||
    fail "status never showed $1 within $2 s"
}

# ctl_rate KIND SECONDS WINDOW: the running job KIND's speed (see ctl.py
# rate): RATE = the median over windows, KiB/s per member; WAITED = the
# percent of the time it waited for its speed limit.
ctl_rate ()
{
  local out
  out=$(/usr/bin/python3 "$CTL_PY" "$CTL_SOCK" rate "$1" "$2" "$3") ||
    fail "cannot measure the $1's speed"
  read -r RATE WAITED <<<"$out"
}

# ctl_progress KIND SECONDS [MIN_SAMPLES]: follow the running job KIND to
# its end (see ctl.py progress); fails unless it progressed visibly and
# ended with result 0.
ctl_progress ()
{
  /usr/bin/python3 "$CTL_PY" "$CTL_SOCK" progress "$1" "$2" "${3:-3}" ||
    fail "the $1 did not progress and end well within $2 s"
}

# load_start MODEL N RANDOM-IO-ARGS...: random-io over 4 connections
# against $URI, run after run (LOAD_OPS requests each, default 400, no
# final read), the model carried from run to run, until load_stop.  The
# first run starts from MODEL if it exists, else from zeros.  MODEL '-':
# no model kept (each run starts from --initial unknown and learns what
# it reads; load_stop then reads nothing back).  Sets LOAD.
load_start ()
{
  local model=$1 n=$2
  shift 2
  rm -f "$tmpdir/load.stop" "$tmpdir/load.out"
  (
    set +e
    runs=0
    while [ ! -e "$tmpdir/load.stop" ]; do
      in=(--model-out "$model")
      [ "$model" = - ] && in=(--initial unknown)
      [ -f "$model" ] && in+=(--model-in "$model")
      "$RANDOM_IO" "$URI" auto --seed $(( SEED * 100 + 50 + runs )) \
        --ops "${LOAD_OPS:-400}" --threads 4 --chunk 64K --disks "$n" \
        --no-final "${in[@]}" "$@" \
        >>"$tmpdir/load.out" 2>&1 ||
        { echo "load: random-io run $runs FAILED" >>"$tmpdir/load.out"; exit 1; }
      runs=$(( runs + 1 ))
    done
    echo "load: $runs runs" >>"$tmpdir/load.out"
  ) &
  LOAD=$!
  LOAD_MODEL=$model
  # On a failure the server is killed first (serve_bg's cleanup comes
  # earlier), so random-io ends at once and the loop sees the stop file.
  cleanup_fn "touch $tmpdir/load.stop; wait $LOAD 2>/dev/null"
}

# load_alive: is the load still running (and has it not failed)?
load_alive ()
{
  kill -0 "$LOAD" 2>/dev/null && ! grep -q FAILED "$tmpdir/load.out"
}

# load_stop: end the load; fail the test if any request failed or read
# what the model did not expect; then read the whole export against the
# model (random-io --verify-only).
load_stop ()
{
  touch "$tmpdir/load.stop"
  wait "$LOAD" ||
    { tail -n 30 "$tmpdir/load.out" >&2; fail "the client load saw an error (random-io)"; }
  echo "   $(tail -n 1 "$tmpdir/load.out"), $(grep -c ': OK$' "$tmpdir/load.out") passed"
  [ "$LOAD_MODEL" != - ] || return 0
  "$RANDOM_IO" "$URI" auto --verify-only --model-in "$LOAD_MODEL" \
    --model-out "$LOAD_MODEL" >"$tmpdir/verify.out" 2>&1 ||
    { cat "$tmpdir/verify.out" >&2; fail "the export does not read back as the model"; }
}

# data_byte_off STRIPE K N CHUNK_BYTES DOFF_BYTES LAYOUT: "MEMBER OFFSET"
# of the first byte of data chunk K (0..N-2) of STRIPE (md's layouts).
data_byte_off ()
{
  local s=$1 k=$2 n=$3 c=$4 doff=$5 pd dd
  case $6 in
    left-*) pd=$(( n - 1 - s % n )) ;;
    right-*) pd=$(( s % n )) ;;
    parity-first) pd=0 ;;
    parity-last) pd=$(( n - 1 )) ;;
    *) fail "data_byte_off: layout $6" ;;
  esac
  case $6 in
    *-symmetric) dd=$(( (pd + 1 + k) % n )) ;;
    *-asymmetric) dd=$(( k < pd ? k : k + 1 )) ;;
    parity-first) dd=$(( k + 1 )) ;;
    parity-last) dd=$k ;;
  esac
  echo "$dd $(( doff + s * c ))"
}

# raid5ctl_check_json OUT MEMBER...: offline raid5ctl check --json into OUT;
# exit status 0 (clean) or 2 (mismatches) accepted.
raid5ctl_check_json ()
{
  local out=$1 status=0
  shift
  "$RAID5CTL" check --json --list 1000 "$@" >"$out" 2>"$out.err" || status=$?
  [ $status = 0 ] || [ $status = 2 ] ||
    { cat "$out" "$out.err" >&2; fail "raid5ctl check exited $status"; }
}

# raid5ctl_clean MEMBER...: offline check finds mismatch_cnt 0.
raid5ctl_clean ()
{
  raid5ctl_check_json "$tmpdir/offline.json" "$@"
  /usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
if r["mismatch_sectors"] != 0 or r["stripes_bad"] != 0:
    sys.exit("raid5ctl check: mismatch_cnt %d in %d stripes: %s" % (
        r["mismatch_sectors"], r["stripes_bad"],
        [m["stripe"] for m in r["mismatches"]]))
print("   raid5ctl check: %d stripes, mismatch_cnt 0" % r["stripes_checked"])
' "$tmpdir/offline.json" || fail "raid5ctl check is not clean"
}
