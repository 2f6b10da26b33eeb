#!/usr/bin/env bash
# An old copy of a member, one md event behind, put back after an unclean
# stop.  md takes a member one event behind as current (a crash between
# two superblock writes leaves one so), and so do we; but we say so, and
# with an integrity record we find its stale units and rebuild them.
# For each of: no bitmap, an internal bitmap:
#   - 8 MiB of pattern 0x5a written and the server stopped cleanly; a
#     copy of member 2 taken; then 6 MiB of 0xc3 written at the start,
#     flushed, and the server killed (-9, dirty, one event on);
#   - member 2's old copy put back and the array served again:
#     without a record: the log names slot 2, "one event behind" and md's
#     rule; status --json says members[2].one_event_behind;
#     with a record (integrity=FILE from the start): the same, plus one
#     log line counting the units that failed the record as stale and
#     rebuilt, status's stale_units_at_start > 0, and the 6 MiB read back
#     through the array as 0xc3 (the 2 MiB after it as 0x5a); then
#     raid5ctl check: mismatch_cnt 0;
#   - with a record, member 2 a disk with a bad sector in one of the
#     units it missed (nbdkit-badsector-plugin): the array starts (the
#     unit is recorded in member 2's md bad-block log, counted in one log
#     line and in status, and so is the 4 MiB region of the record
#     around it, which the start cannot compute again), the stale units
#     around it are rebuilt; then the sector reads again (an error that
#     passed: its stale bytes readable), yet the 6 MiB read back as 0xc3
#     (the listed unit from the other members, or rewritten from them by
#     the resync of the unclean stop), and at the end it is not listed.
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
. "${0%/*}/job-functions.sh"
requires_jobs
requires_nbd_python
start=$SECONDS

# fill OFF LEN BYTE [PID]: write LEN bytes of BYTE at OFF, flush; kill -9
# PID (the server) at once if given.
fill ()
{
  "$NBD_PYTHON" - "$URI" "$@" <<'EOF'
import os, sys, nbd
uri, off, ln, byte = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4], 0)
h = nbd.NBD(); h.connect_uri(uri)
for at in range(0, ln, 1 << 20):
    h.pwrite(bytes([byte]) * min(1 << 20, ln - at), off + at)
h.flush()
if len(sys.argv) > 5:
    os.kill(int(sys.argv[5]), 9)
else:
    h.shutdown()
EOF
}

# same OFF LEN BYTE: are the LEN bytes at OFF all BYTE?  Says how many not.
same ()
{
  "$NBD_PYTHON" - "$URI" "$@" <<'EOF'
import sys, nbd
uri, off, ln, byte = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4], 0)
h = nbd.NBD(); h.connect_uri(uri)
bad = sum(1 for at in range(0, ln, 4096) if h.pread(4096, off + at) != bytes([byte]) * 4096)
h.shutdown()
print("%d of %d units differ" % (bad, ln // 4096))
sys.exit(1 if bad else 0)
EOF
}

# round NAME BITMAP RECORD [BAD]: the scenario above; RECORD yes|no; BAD
# yes: member 2 served with a read-bad sector in a unit it missed.
round ()
{
  local name=$1 bitmap=$2 record=$3 bad=${4:-no} rec=() out sector
  md_create "$name" 3 16M --chunk 64K --assume-clean --bitmap "$bitmap"
  m=("${MEMBERS[@]}")
  mapfile -t disks < <(disk_args "${m[@]}")
  if [ "$bad" = yes ]; then
    badsector_serve "${m[2]}" "$tmpdir/$name.nsock" "$tmpdir/$name.bad" \
      "$tmpdir/$name.badlog"
    disks[2]="disk=nbd+unix:///?socket=$tmpdir/$name.nsock"
  fi
  [ "$record" = yes ] && rec=(integrity="$tmpdir/$name.rec")
  serve_ctl "$tmpdir/$name.1.log" "${disks[@]}" "${rec[@]}" || fail "serve"
  fill 0 $((8 << 20)) 0x5a
  stop_server
  cp --sparse=always "${m[2]}" "$tmpdir/$name.old2"
  serve_ctl "$tmpdir/$name.2.log" "${disks[@]}" "${rec[@]}" || fail "serve again"
  fill 0 $((6 << 20)) 0xc3 "$SERVER"
  wait "$SERVER" 2>/dev/null || :
  [ "$(md_events "${m[0]}")" = $(( $(md_events "$tmpdir/$name.old2") + 1 )) ] ||
    fail "the old copy is not one event behind: $(md_events "$tmpdir/$name.old2") against $(md_events "${m[0]}")"
  cp --sparse=always "$tmpdir/$name.old2" "${m[2]}"
  # Stripe 40's chunk on member 2 (data: parity is on member 2 - 40 % 3
  # = 1), 8 KiB in: written by the 6 MiB.
  sector=$(( (MD_DOFF + 40 * 65536 + 8192) / 512 ))
  [ "$bad" = yes ] && echo "read $sector 8" >"$tmpdir/$name.bad"
  serve_ctl "$tmpdir/$name.3.log" "${disks[@]}" "${rec[@]}" ||
    fail "serve with the old copy"
  grep -F "slot 2 (${disks[2]#disk=}) is one event behind the others" \
    "$tmpdir/$name.3.log" | grep -q "taken as current, as md does" || { cat "$tmpdir/$name.3.log" >&2; fail "no log line names slot 2 and the rule"; }
  [ "$(ctl_get 's["members"][2]["one_event_behind"]')" = True ] ||
    fail "status does not say slot 2 was one event behind"
  out=$(ctl status)
  grep -q "one event behind the others at start" <<<"$out" ||
    fail "status text does not say it: $out"
  echo "   $(grep -o 'slot 2 .*one event behind[^:]*' "$tmpdir/$name.3.log" | head -n 1)"
  if [ "$record" = yes ]; then
    out=$(grep -o "slot 2 .*fail the integrity record.*" "$tmpdir/$name.3.log") ||
      { cat "$tmpdir/$name.3.log" >&2; fail "no log line counts the stale units"; }
    echo "   $out"
    [ "$(ctl_get 's["integrity"]["stale_units_at_start"] > 0')" = True ] ||
      fail "status: stale_units_at_start $(ctl_get 's["integrity"]["stale_units_at_start"]')"
    if [ "$bad" = yes ]; then
      out=$(grep -o "slot 2 .*: 1 units of 4 KiB could not be read.*recorded in its md bad-block log.*" "$tmpdir/$name.3.log") ||
        { cat "$tmpdir/$name.3.log" >&2; fail "no log line counts the unreadable unit"; }
      echo "   $out"
      # The region around it, marked by the writes, is not computed
      # again either (its checksums unknown until a start reads it).
      grep -q "integrity record .*: member 2 .*: read error in member bytes $(( MD_DOFF ))+4194304 " \
        "$tmpdir/$name.3.log" || fail "no log line says the region was left unknown"
      [ "$(ctl_get '(s["integrity"]["unreadable_behind_units_at_start"], s["integrity"]["unreadable_regions_at_start"])')" = "(1, 1)" ] ||
        fail "status: $(ctl_get 's["integrity"]')"
      badsector_met "$tmpdir/$name.badlog" "$sector" ||
        fail "the start did not meet the bad sector"
      # Listed, so that it is read from the other members until written
      # (the resync of the unclean stop rewrites it from them soon).
      grep -q "member 2 .*: 4096 bytes at member offset $(( sector * 512 )) recorded in its md bad-block log" \
        "$tmpdir/$name.3.log" || fail "the unit was not recorded in member 2's log"
      : >"$tmpdir/$name.bad"    # the error passes: the stale unit reads
    fi
    same 0 $((6 << 20)) 0xc3 || fail "stale bytes read back after the record found them"
    if [ "$bad" = yes ]; then
      ctl_wait "s['job']['kind'] == 'idle'" 30
      [ "$(ctl_get 's["members"][2]["bad_blocks"]["sectors"]')" = 0 ] ||
        fail "the listed unit was not rewritten and cleared: $(ctl_get 's["members"][2]["bad_blocks"]')"
    fi
    same $((6 << 20)) $((2 << 20)) 0x5a || fail "the bytes after the 6 MiB changed"
    ctl_wait "s['job']['kind'] == 'idle'" 30
    stop_server
    raid5ctl_clean "${m[@]}"
  else
    stop_server
  fi
  rm -f "${m[@]}" "$tmpdir/$name".*
}

for bitmap in none internal; do
  echo "== bitmap $bitmap, no record: md's rule, said"
  round plain-$bitmap $bitmap no
  echo "== bitmap $bitmap, integrity record: the stale units found and rebuilt"
  round rec-$bitmap $bitmap yes
done
echo "== integrity record, a bad sector in a unit member 2 missed: listed, the start goes on"
round bad internal yes yes
echo "$test_name: OK ($(( SECONDS - start )) s)"
