#!/usr/bin/env bash
# A grow over a row two members list in their md bad-block logs (kernel
# md's reshape hangs there for good: docs/operations.md).  Members 1 and
# 2 list one 4 KiB page of old stripe S, both spoiled there, so its data
# page cannot be computed.
#   - the data moves down (room before the data), S = 40: raid5ctl grow
#     (offline) moves the row with that page lost: listed in the new
#     shape on its member and on its new row's parity member, so that it
#     reads as lost (EIO) while every other byte reads as written; the
#     log names the array bytes; check finds mismatch_cnt 0 (the row
#     skipped); its new member and its new row's parity member list it,
#     and nothing else.  Killed (RAID5_TEST_CRASH) once the page is
#     listed, before the window is written: served so, the same reads;
#     resumed, the same end (the zeroes never readable).
#   - the data offset kept, S = 0, in the critical section (whose backup,
#     written again after a crash, could not keep the page listed): the
#     grow stops there, naming the row, the members and the array bytes
#     lost; served mid-grow, the page reads EIO and the rest as written.
. "${0%/*}/functions.sh"
. "${0%/*}/../integration/md-functions.sh"
requires_raid5ctl
requires nbdcopy --version
requires_nbd_python
BB_PUT=$abs_top_builddir/tests/tools/bb-put
[ -x "$BB_PUT" ] || skip "not built: $BB_PUT"

CHUNK=65536 PAGE=3

# read.py URI MODEL LOST: array bytes LOST+4096 fail to read (EIO), every
# other byte reads as MODEL says.
cat >"$tmpdir/read.py" <<'EOF'
import nbd, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1])
model = open(sys.argv[2], "rb").read(); lost = int(sys.argv[3])
try:
    h.pread(4096, lost)
    sys.exit("array bytes %d+4096 read, but are lost" % lost)
except nbd.Error:
    pass
for off in range(0, len(model), 1 << 20):
    n = min(1 << 20, len(model) - off)
    if off <= lost < off + n:
        parts = [(off, lost - off), (lost + 4096, off + n - lost - 4096)]
    else:
        parts = [(off, n)]
    for at, ln in parts:
        if ln and h.pread(ln, at) != model[at:at + ln]:
            sys.exit("array bytes %d+%d read wrong" % (at, ln))
EOF

# fresh S [CREATE-ARGS...]: 3 members of random data; members 1 and 2
# list page PAGE of old stripe S's row, their bytes there spoiled.  Sets
# LOST, the array byte of the data page lost.
fresh ()
{
  local s=$1 size sec pd dd m_
  shift
  rm -f "$tmpdir"/g.* "$tmpdir/model"
  md_create g 3 16M --chunk 64K --bitmap none "$@"
  m=("${MEMBERS[@]}")
  truncate -s 16M "$tmpdir/g.new"
  fill_random "$tmpdir/model" "${m[@]/#/disk=}"
  [ "$MD_LAYOUT" = left-symmetric ] || fail "layout $MD_LAYOUT"
  sec=$(( (MD_DOFF + s * CHUNK + PAGE * 4096) / 512 ))
  for m_ in 1 2; do
    "$BB_PUT" "${m[$m_]}" "$sec+8" >/dev/null || fail "bb-put member $m_"
    head -c 4096 /dev/zero | tr '\0' 'Z' |
      dd of="${m[$m_]}" bs=512 seek="$sec" conv=notrunc status=none
  done
  # Left-symmetric, 3 members: parity on member 2 - S % 3; the data
  # member of the two is the lost one, data index (m - pd - 1) mod 3.
  pd=$(( 2 - s % 3 ))
  for m_ in 1 2; do [ $m_ != $pd ] && dd=$(( (m_ - pd + 2) % 3 )); done
  LOST=$(( s * 2 * CHUNK + dd * CHUNK + PAGE * 4096 ))
}

# grown: 4 members; the lost page reads EIO, every other byte as written;
# check 0; both members of its new row list it.
grown ()
{
  local all=("${m[@]}" "$tmpdir/g.new") listed d
  "$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${all[@]/#/disk=}" --run \
    "$NBD_PYTHON - \"\$uri\" '$tmpdir/model' $LOST" <"$tmpdir/read.py" ||
    fail "reading the grown array"
  "$RAID5CTL" check "${all[@]}" 2>/dev/null | grep -q "mismatch_cnt 0$" ||
    fail "raid5ctl check after the grow"
  [ "$(md_field "${m[0]}" 'Raid Devices')" = 4 ] || fail "mdadm: not 4 devices"
  # Its new place and its new row's parity (left-symmetric, 4 members:
  # 3 data chunks a stripe, parity on member 3 - stripe % 4, data d on
  # member (parity + 1 + d) % 4), at the new data offset.
  local s=$(( LOST / (3 * CHUNK) )) d_=$(( LOST % (3 * CHUNK) / CHUNK ))
  local pm=$(( 3 - s % 4 )) sec want got
  md_geometry "${all[0]}"      # MD_DOFF: the new data offset
  sec=$(( (MD_DOFF + s * CHUNK + LOST % CHUNK) / 512 ))
  want="$(( (pm + 1 + d_) % 4 )) $pm"
  got=$(for i in 0 1 2 3; do
          "$RAID5CTL" examine --badblocks "${all[$i]}" 2>/dev/null |
            grep -Eq "^ +$sec for 8 sectors" && echo $i || :
        done | sort -n | tr '\n' ' ')
  [ "$got" = "$(tr ' ' '\n' <<<"$want" | sort -n | tr '\n' ' ')" ] ||
    fail "members listing sector $sec: '$got', want its member and its row's parity ($want)"
  for i in 0 1 2 3; do
    [ "$("$RAID5CTL" examine --badblocks "${all[$i]}" 2>/dev/null | grep -Ec ' for [0-9]+ sectors' || :)" -le 1 ] ||
      fail "member $i lists more than the lost page"
  done
}

# round NAME S POINTS [CREATE-ARGS...]: for each crash point (and none),
# a fresh array grown, killed there and resumed.
round ()
{
  local name=$1 s=$2 points=$3 point st
  shift 3
  for point in none $points; do
    fresh "$s" "$@"
    st=0
    if [ $point = none ]; then
      "$RAID5CTL" grow --add "$tmpdir/g.new" "${m[@]}" >"$tmpdir/grow.out" 2>&1 || st=$?
      [ $st = 0 ] || { cat "$tmpdir/grow.out" >&2; fail "$name: grow (exit $st)"; }
    else
      RAID5_TEST_CRASH=$point "$RAID5CTL" grow --add "$tmpdir/g.new" "${m[@]}" \
        >"$tmpdir/grow.out" 2>&1 || st=$?
      [ $st = 137 ] || { cat "$tmpdir/grow.out" >&2; fail "$name, $point: not killed (exit $st)"; }
      # Served as it was left (the window not moved): the same reads.
      "$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${m[@]/#/disk=}" "disk=$tmpdir/g.new" readonly=true --run \
        "$NBD_PYTHON - \"\$uri\" '$tmpdir/model' $LOST" <"$tmpdir/read.py" ||
        fail "$name, $point: reading the array killed mid-grow"
      "$RAID5CTL" grow "${m[@]}" "$tmpdir/g.new" >>"$tmpdir/grow.out" 2>&1 ||
        { cat "$tmpdir/grow.out" >&2; fail "$name, $point: the resume"; }
    fi
    grep -q "reshape: array bytes $LOST+4096 lost: their old row (stripe $s, member offset [0-9]*) has members 1 and 2 out" \
      "$tmpdir/grow.out" || { cat "$tmpdir/grow.out" >&2; fail "$name, $point: no log line names the lost bytes"; }
    grown
    echo "   $name, killed at $point: grown, array bytes $LOST+4096 lost, the rest as written"
  done
}

echo "== the data moves down: old stripe 40"
round down 40 "grow-lost-listed" --assume-clean

echo "== the data offset kept: old stripe 0, in the critical section: the grow stops"
fresh 0 --assume-clean --data-offset 64K
st=0
"$RAID5CTL" grow --add "$tmpdir/g.new" "${m[@]}" >"$tmpdir/grow.out" 2>&1 || st=$?
[ $st != 0 ] || fail "the grow went through the critical section over a lost row"
grep -q "cannot move the window at array byte 0: a row it reads (old stripe 0, member offset $(( MD_DOFF + PAGE * 4096 ))) cannot be computed: members 1 and 2 are out there .*array bytes lost: $LOST+4096; the window is in the grow's critical section" \
  "$tmpdir/grow.out" || { cat "$tmpdir/grow.out" >&2; fail "the stop does not say why"; }
all=("${m[@]}" "$tmpdir/g.new")
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${all[@]/#/disk=}" --run \
  "$NBD_PYTHON - \"\$uri\" '$tmpdir/model' $LOST" <"$tmpdir/read.py" ||
  fail "reading the array stopped mid-grow"
echo "   stopped: $(grep -o 'array bytes lost: [^;]*' "$tmpdir/grow.out" | head -n 1); served mid-grow, the rest as written"
echo "test-grow-lost-row: OK"
