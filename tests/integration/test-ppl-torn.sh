#!/usr/bin/env bash
# The write hole, torn as a power cut tears it, with and without md's
# partial parity log (ppl-torn.py says how: members served by processes
# of their own, one frozen while the others take a stripe's writes, all
# killed, the array started with another member missing).
#   - resync (no log, started with force=true as mdadm --force would):
#     chunks nobody wrote come back wrong -- the hole is real here, which
#     is what makes the next part mean something;
#   - ppl: over PPL_ROUNDS rounds (default 36) not one chunk nobody wrote
#     comes back wrong: the log made the torn stripes whole at start, with
#     a member missing, and without force.
# Environment: PPL_ROUNDS (ppl), HOLE_ROUNDS (resync, default 12); the
# sanitizer layer of scripts/check.sh runs 8 and 4.
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
requires_plugin
requires_md
requires_nbd_python

PPL_ROUNDS=${PPL_ROUNDS:-36}
HOLE_ROUNDS=${HOLE_ROUNDS:-12}
RAID5CTL=${RAID5CTL:-$abs_top_builddir/tools/raid5ctl}
export PLUGIN NBDKIT CHUNK=16384

export RAID5CTL
golden ()
{
  "$NBD_PYTHON" "${0%/*}/ppl-torn.py" golden "$1" "$2" "$SEED" ||
    fail "making the golden $2 array"
}

run_rounds ()
{
  local d=$1 rounds=$2
  "$NBD_PYTHON" "${0%/*}/ppl-torn.py" rounds "$d" "$rounds" "$SEED" \
    >"$d/rounds.out" 2>&1 || { cat "$d/rounds.out" >&2; fail "ppl-torn.py $d"; }
  grep -v '^TOTAL' "$d/rounds.out" | grep -v ': 0 untouched' || :
  TORN=$(sed -n 's/^TOTAL //p' "$d/rounds.out")
}

echo "== resync (no log): the write hole, $HOLE_ROUNDS rounds"
golden "$tmpdir/resync" resync
run_rounds "$tmpdir/resync" "$HOLE_ROUNDS"
[ "$TORN" -gt 0 ] ||
  fail "no chunk came back wrong without a log: the test tears nothing"

echo "== ppl: $PPL_ROUNDS rounds"
golden "$tmpdir/ppl" ppl
run_rounds "$tmpdir/ppl" "$PPL_ROUNDS"
[ "$TORN" = 0 ] || fail "with the partial parity log, $TORN untouched chunks came back wrong"
echo "   no untouched chunk came back wrong"
