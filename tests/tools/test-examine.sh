#!/usr/bin/env bash
# raid5ctl examine against mdadm --examine: the text has every line mdadm
# prints, the JSON holds the same values field by field, on a healthy
# array, on one stopped part-way through a grow (the reshape's lines) and
# on superblocks the plugin refuses (bad checksum, RAID-6).  Then
# the verdict line, disks without a superblock, errors and exit statuses.
# examine --badblocks against mdadm --examine-badblocks: the same text on
# every fixture (kernel md's bad-block log among them) and on logs made
# here, corrupt ones too, with the JSON and the verdicts they give.

. "${0%/*}/functions.sh"
. "${0%/*}/../integration/md-functions.sh"
requires_raid5ctl
requires python3 -c 'import json'

# compare.py MDADM_REPORT JSON INDEX [BITMAP_REPORT]: the JSON object of
# disk INDEX says what mdadm says.
cat >"$tmpdir/compare.py" <<'EOF'
import json, re, sys, time

md = {}
for line in open(sys.argv[1]).read().splitlines()[1:]:
    m = re.match(r'^ *([A-Za-z\' ]+?) : (.*)$', line)
    if m:
        md[m.group(1)] = m.group(2)
d = json.load(open(sys.argv[2]))[int(sys.argv[3])]
bad = []

def same(key, want):
    if md.get(key) != want:
        bad.append('%s: mdadm %r, json gives %r' % (key, md.get(key), want))

def prefix(key, want):
    if not md.get(key, '').startswith(want):
        bad.append('%s: mdadm %r, json gives %r' % (key, md.get(key), want))

same('Magic', d['magic'])
same('Version', d['version'])
same('Feature Map', '0x%x' % d['feature_map'])
same('Array UUID', d['array_uuid'])
prefix('Name', d['name'])
same('Creation Time', time.ctime(d['creation_time']))
same('Raid Level', d['raid_level_name'])
same('Raid Devices', str(d['raid_devices']))
prefix('Avail Dev Size', '%d sectors' % d['avail_dev_sectors'])
if d['array_size_kib'] is not None:
    prefix('Array Size', '%d KiB' % d['array_size_kib'])
if d['used_dev_sectors'] != d['avail_dev_sectors']:
    prefix('Used Dev Size', '%d sectors' % d['used_dev_sectors'])
same('Data Offset', '%d sectors' % d['data_offset_sectors'])
same('Super Offset', '%d sectors' % d['super_offset_sectors'])
if d['unused_before_sectors'] is not None:
    same('Unused Space', 'before=%d sectors, after=%d sectors'
         % (d['unused_before_sectors'], d['unused_after_sectors']))
same('State', d['state'])
if (d['state'] == 'clean') != (d['resync_offset_sectors'] is None):
    bad.append('resync_offset_sectors %r with state %s'
               % (d['resync_offset_sectors'], d['state']))
same('Device UUID', d['device_uuid'])
r = d['reshape']
if ("Reshape pos'n" in md) != (r is not None):
    bad.append('reshape: mdadm %r, json %r' % (md.get("Reshape pos'n"), r))
if r is not None:
    prefix("Reshape pos'n", '%d' % (r['position_sectors'] // 2))
    if r['delta_disks']:
        same('Delta Devices', '%d (%d->%d)' % (r['delta_disks'],
             d['raid_devices'] - r['delta_disks'], d['raid_devices']))
if r is not None and r['new_data_offset_sectors'] is not None:
    same('New Offset', '%d sectors' % r['new_data_offset_sectors'])
elif 'New Offset' in md:
    bad.append('New Offset: mdadm %r, json none' % md['New Offset'])
if d['bitmap'] is not None:
    same('Internal Bitmap', '%d sectors from superblock'
         % d['bitmap']['offset_sectors'])
same('Update Time', time.ctime(d['update_time']))
same('Checksum', '%x - correct' % d['checksum'] if d['checksum_correct']
     else '%x - expected %x' % (d['checksum'], d['checksum_expected']))
same('Events', str(d['events']))
same('Layout', d['layout'])
same('Chunk Size', '%dK' % d['chunk_kib'])
if d['device_role'] == 'active':
    same('Device Role', 'Active device %d' % d['slot'])
prefix('Array State', d['array_state'] + ' ')
if len(sys.argv) > 4:
    bm = {}
    for line in open(sys.argv[4]):
        m = re.match(r'^ *([A-Za-z ]+?) : (.*)$', line)
        if m:
            bm[m.group(1)] = m.group(2)
    b = d['bitmap']
    want = '%d bits (chunks), %d dirty' % (b['bits'], b['bits_set'])
    if not bm.get('Bitmap', '').startswith(want) or \
       bm.get('Events') != str(b['events']) or \
       bm.get('UUID') != d['array_uuid'] or \
       not bm.get('Sync Size', '').startswith('%d ' % (b['sync_size_sectors'] // 2)):
        bad.append('bitmap: mdadm -X %r, json %r' % (bm, b))
if bad:
    print('\n'.join(bad))
    sys.exit(1)
EOF

# examine_both DISK INDEX: mdadm and raid5ctl (text and JSON) on DISK; the
# JSON of all of $EX is in $tmpdir/all.json.
examine_both ()
{
  mdadm --examine "$1" >"$tmpdir/md.txt" 2>&1 || :
  grep -q 'Magic' "$tmpdir/md.txt" || fail "mdadm --examine $1: $(cat "$tmpdir/md.txt")"
  "$RAID5CTL" examine "$1" >"$tmpdir/ours.txt" || fail "examine $1"
  md_lines_agree "$tmpdir/md.txt" "$tmpdir/ours.txt"
  python3 "$tmpdir/compare.py" "$tmpdir/md.txt" "$tmpdir/all.json" "$2" \
    "${@:3}" || fail "JSON of $1 differs from mdadm --examine"
}

# badblocks_agree DISK WHAT: raid5ctl examine --badblocks prints what
# mdadm --examine-badblocks prints about DISK.
badblocks_agree ()
{
  mdadm --examine-badblocks "$1" >"$tmpdir/md-bb.txt" 2>&1 || :
  "$RAID5CTL" examine --badblocks "$1" >"$tmpdir/ours-bb.txt" ||
    fail "$2: examine --badblocks"
  cmp -s "$tmpdir/md-bb.txt" "$tmpdir/ours-bb.txt" ||
    fail "$2: examine --badblocks differs from mdadm --examine-badblocks:
$(diff "$tmpdir/md-bb.txt" "$tmpdir/ours-bb.txt")"
}

# put_bblog DISK WORD...: the bad-block log of DISK (at its superblock's
# bblog_offset) holds these 64-bit words, then all-ones; feature 0x8 set.
put_bblog ()
{
  python3 - "$@" <<'EOF'
import struct, sys
path, words = sys.argv[1], [int(w, 0) & (2**64 - 1) for w in sys.argv[2:]]
with open(path, 'r+b') as f:
    f.seek(4096)
    off = struct.unpack_from('<i', f.read(256), 188)[0]
    f.seek((8 + off) * 512)
    f.write(b''.join(struct.pack('<Q', w) for w in words).ljust(4096, b'\xff'))
EOF
  patch_sb "$1" "struct.pack_into('<I', sb, 8, struct.unpack_from('<I', sb, 8)[0] | 8)"
}

json_get ()
{
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[int(sys.argv[2])][sys.argv[3]])' "$@"
}

# --- A healthy array: 3 members, bitmap, not yet clean -----------------
make_members e 3 32M
EX=("${MEMBERS[@]}")
"$RAID5CTL" create --assume-clean --bitmap internal --chunk 32K \
  --layout rs --name ex "${EX[@]}" >/dev/null || fail "create"
patch_sb "${EX[2]}" "struct.pack_into('<Q', sb, 208, 4096)"
"$RAID5CTL" examine --json "${EX[@]}" >"$tmpdir/all.json" ||
  fail "examine --json"
[ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' \
     "$tmpdir/all.json")" = 3 ] || fail "JSON: not 3 disks"
for i in 0 1 2; do
  dd if="${EX[$i]}" of="$tmpdir/bitmap" bs=4096 skip=2 count=1 status=none
  mdadm -X "$tmpdir/bitmap" >"$tmpdir/bitmap.txt" 2>&1 || fail "mdadm -X"
  examine_both "${EX[$i]}" "$i" "$tmpdir/bitmap.txt"
  [ "$(json_get "$tmpdir/all.json" "$i" servable)" = True ] ||
    fail "member $i: not servable?"
  grep -q "raid5 plugin : yes, as slot $i of 3" "$tmpdir/ours.txt" ||
    fail "member $i: verdict"
done
grep -q 'resync from sector 4096' "$tmpdir/ours.txt" ||
  fail "member 2 is active (resync_offset 4096): verdict does not say so"
echo "healthy: text and JSON agree with mdadm on 3 members"

# --- A grow stopped part-way (raid5ctl grow killed): mdadm's reshape
# lines (Reshape pos'n, Delta Devices, New Offset; no Unused Space), in
# the text and the JSON -- they were missing.
make_members g 4 32M
G=("${MEMBERS[@]}")
"$RAID5CTL" create --chunk 64K --bitmap none "${G[@]:0:3}" >/dev/null ||
  fail "create for the grow"
"$RAID5CTL" grow --add "${G[3]}" --max-speed 2M "${G[@]:0:3}" >/dev/null 2>&1 &
pid=$!
for (( i = 0; i < 100; i++ )); do
  p=$(md_field "${G[0]}" "Reshape pos'n")
  [ -n "$p" ] && [ "${p%% *}" -gt 0 ] && break
  sleep 0.05
done
kill -9 $pid; wait $pid 2>/dev/null || :
[ -n "$p" ] || fail "no reshape under way to examine"
"$RAID5CTL" examine --json "${G[@]}" >"$tmpdir/all.json" || fail "examine --json"
for i in 0 1 2 3; do
  examine_both "${G[$i]}" "$i"
done
grep -q "Delta Devices : 1 (3->4)" "$tmpdir/ours.txt" || fail "no Delta Devices line"
echo "grow stopped part-way: $(grep "Reshape pos'n" "$tmpdir/ours.txt" | sed 's/^ *//'), as mdadm"

# md's layouts 4 and 5: named as mdadm names them, and servable.
for l in parity-first parity-last; do
  make_members "x$l" 4 16M
  X=("${MEMBERS[@]}")
  "$RAID5CTL" create --assume-clean --chunk 64K --layout $l "${X[@]}" \
    >/dev/null || fail "create $l"
  "$RAID5CTL" examine --json "${X[@]}" >"$tmpdir/all.json" ||
    fail "examine --json $l"
  examine_both "${X[3]}" 3
  grep -Eq "^ +Layout : $l\$" "$tmpdir/ours.txt" ||
    fail "$l: examine's Layout line: $(grep Layout "$tmpdir/ours.txt")"
  grep -q 'raid5 plugin : yes, as slot 3 of 4' "$tmpdir/ours.txt" ||
    fail "$l: verdict: $(grep 'raid5 plugin' "$tmpdir/ours.txt")"
done
# Layout 6 is no RAID-5 layout of md's: shown by number, refused.
patch_sb "${X[0]}" "struct.pack_into('<I', sb, 76, 6)"
"$RAID5CTL" examine "${X[0]}" >"$tmpdir/ours.txt" || fail "examine layout 6"
grep -q 'raid5 plugin : no: RAID-5 layout 6 is not one of md' "$tmpdir/ours.txt" ||
  fail "layout 6: verdict: $(grep 'raid5 plugin' "$tmpdir/ours.txt")"
echo "parity-first, parity-last: named as mdadm names them, servable"

# Examining a member that is being served (and so locked) works.
mapfile -t disks < <(disk_args "${EX[@]}")
raid5_captive "${disks[@]}" -- "$RAID5CTL" examine "${EX[0]}" \
  >"$tmpdir/served.txt" || fail "examine while served"
grep -q 'Array UUID' "$tmpdir/served.txt" || fail "examine while served"

# --- Superblocks the plugin refuses ------------------------------------
# A wrong checksum: mdadm and raid5ctl still show every field.  The byte
# (in the device UUID, which is random) is flipped: a fixed value would
# be no change at all once in 256 arrays.
flip_byte "${EX[1]}" $(( 4096 + 170 )) >/dev/null
"$RAID5CTL" examine --json "${EX[@]}" >"$tmpdir/all.json" || fail "examine"
examine_both "${EX[1]}" 1
grep -q 'raid5 plugin : no: superblock checksum' "$tmpdir/ours.txt" ||
  fail "bad checksum: verdict: $(grep 'raid5 plugin' "$tmpdir/ours.txt")"
[ "$(json_get "$tmpdir/all.json" 1 servable)" = False ] ||
  fail "bad checksum: servable"
[ "$(json_get "$tmpdir/all.json" 1 checksum_correct)" = False ] ||
  fail "bad checksum: checksum_correct"
# RAID-6, checksum correct.
patch_sb "${EX[0]}" "struct.pack_into('<I', sb, 72, 6)"
"$RAID5CTL" examine --json "${EX[@]}" >"$tmpdir/all.json" || fail "examine"
examine_both "${EX[0]}" 0
grep -q 'raid5 plugin : no: RAID level 6' "$tmpdir/ours.txt" ||
  fail "raid6: verdict: $(grep 'raid5 plugin' "$tmpdir/ours.txt")"
echo "refused superblocks: shown as mdadm shows them, with the reason"

# --- Superblocks and bitmaps that real mdadm and kernel md wrote -------
# (tests/unit/fixtures/md: 4 KiB at byte 4096 and 8192 of each member),
# put back on sparse images of the members' size.
fixtures=$abs_top_srcdir/tests/unit/fixtures/md
seen=0
for sb in "$fixtures"/*/m*.sb; do
  [ -f "$sb" ] || continue
  f=${sb%.sb} dir=$tmpdir
  img=$dir/fixture
  bytes=$(( $(cat "$(dirname "$sb")/sectors") * 512 ))
  if ! truncate -s "$bytes" "$img" 2>/dev/null; then
    dir=$(mktemp -d /dev/shm/raid5-test-examine.XXXXXX) || continue
    cleanup_fn "rm -rf '$dir'"
    img=$dir/fixture
    truncate -s "$bytes" "$img" 2>/dev/null || { rm -rf "$dir"; continue; }
  fi
  dd if="$sb" of="$img" bs=4096 seek=1 conv=notrunc status=none
  [ ! -f "$f.bm" ] ||
    dd if="$f.bm" of="$img" bs=4096 seek=2 conv=notrunc status=none
  if [ -f "$f.bblog" ]; then
    off=$(sed -n 's/.* at offset \([0-9]*\) sectors.*/\1/p' "$f.examine")
    dd if="$f.bblog" of="$img" bs=512 seek=$(( 8 + off )) conv=notrunc \
       status=none
  fi
  badblocks_agree "$img" "${f#$fixtures/}"
  mdadm --examine "$img" >"$tmpdir/md.txt" 2>&1 || :
  "$RAID5CTL" examine "$img" >"$tmpdir/ours.txt" || fail "examine ${f#$fixtures/}"
  md_lines_agree "$tmpdir/md.txt" "$tmpdir/ours.txt"
  if [ -f "$f.examine-bitmap" ]; then
    want=$(sed -n 's/^ *Bitmap : \([0-9]*\) bits (chunks), \([0-9]*\) dirty.*/\1 \2/p' \
             "$f.examine-bitmap")
    got=$(sed -n 's/^ *Bitmap : \([0-9]*\) bits of .*, \([0-9]*\) set .*/\1 \2/p' \
            "$tmpdir/ours.txt")
    [ "$want" = "$got" ] ||
      fail "${f#$fixtures/}: bitmap bits and set bits: mdadm '$want', ours '$got'"
  fi
  # Bad blocks are served (from the rest of their row), as md serves them.
  want='raid5 plugin : yes'
  grep -q "$want" "$tmpdir/ours.txt" ||
    fail "${f#$fixtures/}: $(grep 'raid5 plugin' "$tmpdir/ours.txt")"
  rm -f "$img"
  [ "$dir" = "$tmpdir" ] || rm -rf "$dir"
  seen=$(( seen + 1 ))
done
if [ $seen -gt 0 ]; then
  echo "mdadm-made superblocks: $seen members agree with mdadm --examine"
else
  echo "mdadm-made superblocks: no fixtures in $fixtures; not compared"
fi

# --- Bad-block logs made here ------------------------------------------
# raid5ctl create reserves the log mdadm would (+16, 8 sectors), empty.
make_members bb 3 32M
BB=("${MEMBERS[@]}")
"$RAID5CTL" create --assume-clean --chunk 64K "${BB[@]}" >/dev/null ||
  fail "create bb"
badblocks_agree "${BB[0]}" "empty log"
grep -q '^Bad-blocks list is empty in ' "$tmpdir/ours-bb.txt" ||
  fail "empty log: $(cat "$tmpdir/ours-bb.txt")"
# Entries, a zero word among them (mdadm lists it; md skips it), one of
# 1023 sectors (two ranges in md's table), then a word past the end.
put_bblog "${BB[1]}" $(( 2100 << 10 | 8 )) 0 $(( 40000 << 10 | 1023 )) \
  $(( 2108 << 10 | 4 )) -1 $(( 9 << 10 | 1 ))
badblocks_agree "${BB[1]}" "entries"
[ "$(grep -c ' for ' "$tmpdir/ours-bb.txt")" = 4 ] ||
  fail "entries: $(cat "$tmpdir/ours-bb.txt")"
"$RAID5CTL" examine "${BB[@]}" >"$tmpdir/ours.txt" || fail "examine bb"
grep -q 'Bad Blocks : 3 ranges, 1035 sectors' "$tmpdir/ours.txt" ||
  fail "entries: $(grep 'Bad Blocks' "$tmpdir/ours.txt")"
[ "$(grep -c "raid5 plugin : yes, as slot" "$tmpdir/ours.txt")" = 3 ] ||
  fail "entries: verdicts:
$(grep 'raid5 plugin' "$tmpdir/ours.txt")"
"$RAID5CTL" examine --json "${BB[@]}" >"$tmpdir/all.json" || fail "json bb"
python3 - "$tmpdir/all.json" <<'EOF' || fail "entries: JSON"
import json, sys
d = json.load(open(sys.argv[1]))
b0, b = d[0]['bad_blocks'], d[1]['bad_blocks']
assert b0['present'] is False and b0['list'] == [] and b0['ranges'] == 0, b0
assert b['offset_sectors'] == 16 and b['size_sectors'] == 8, b
assert b['entries_available'] == 512 and b['present'] is True, b
assert b['ranges'] == 3 and b['sectors'] == 1035 and b['error'] is None, b
assert [(e['sector'], e['sectors']) for e in b['list']] == \
    [(2100, 8), (0, 0), (40000, 1023), (2108, 4)], b['list']
assert d[0]['servable'] and d[1]['servable'], d
EOF
# A shift of 2: entries count blocks of 4 sectors.
patch_sb "${BB[1]}" "sb[185] = 2"
badblocks_agree "${BB[1]}" "shift 2"
grep -q '^ *8400 for 32 sectors$' "$tmpdir/ours-bb.txt" ||
  fail "shift 2: $(cat "$tmpdir/ours-bb.txt")"
patch_sb "${BB[1]}" "sb[185] = 0"
# Corrupt entries: listed as mdadm lists them, refused with the reason.
put_bblog "${BB[1]}" $(( 2100 << 10 | 8 )) $(( 77 << 10 ))
badblocks_agree "${BB[1]}" "length 0"
"$RAID5CTL" examine "${BB[1]}" >"$tmpdir/ours.txt" || fail "examine bb"
grep -q 'Bad Blocks : unusable: bad-block log entry 1 (0x13400) has length 0' \
  "$tmpdir/ours.txt" && grep -q 'raid5 plugin : no: bad-block log entry 1' \
  "$tmpdir/ours.txt" || fail "length 0: $(tail -n 3 "$tmpdir/ours.txt")"
put_bblog "${BB[1]}" $(( 65530 << 10 | 8 ))
badblocks_agree "${BB[1]}" "past the end"
"$RAID5CTL" examine --json "${BB[1]}" >"$tmpdir/all.json" || fail "json"
[ "$(json_get "$tmpdir/all.json" 0 verdict)" = "no: bad-block log entry 0 \
(sector 65530, 8 sectors) lies past the end of the member (65536 sectors)" ] ||
  fail "past the end: $(json_get "$tmpdir/all.json" 0 verdict)"
# No log at all (offset 0): mdadm's words, JSON null.
patch_sb "${BB[2]}" "struct.pack_into('<i', sb, 188, 0)"
badblocks_agree "${BB[2]}" "no log"
grep -q '^No bad-blocks list configured on ' "$tmpdir/ours-bb.txt" ||
  fail "no log: $(cat "$tmpdir/ours-bb.txt")"
"$RAID5CTL" examine --json "${BB[2]}" >"$tmpdir/all.json" || fail "json"
[ "$(json_get "$tmpdir/all.json" 0 bad_blocks)" = None ] || fail "no log: JSON"
echo "bad-block logs: examine --badblocks lists what mdadm lists; JSON, verdicts"

# --- A copy of a member from before a grow, given with the grown array --
# Judged foreign (md: a geometry of its own), and said to be older; the
# others judged without it (each had an empty verdict).
G=("$tmpdir/g0" "$tmpdir/g1" "$tmpdir/g2" "$tmpdir/g3")
truncate -s 16M "${G[@]}"
"$RAID5CTL" create --chunk 64K "${G[@]:0:3}" >/dev/null 2>&1 || fail "create g"
cp "${G[0]}" "$tmpdir/g0.old"
"$RAID5CTL" grow --add "${G[3]}" "${G[@]:0:3}" >/dev/null 2>&1 || fail "grow g"
"$RAID5CTL" examine "${G[1]}" "$tmpdir/g0.old" "${G[2]}" "${G[3]}" >"$tmpdir/ours.txt" 2>&1 ||
  fail "examine with the old copy"
grep 'raid5 plugin :' "$tmpdir/ours.txt" >"$tmpdir/verdicts"
[ "$(sed -n 2p "$tmpdir/verdicts")" = "   raid5 plugin : no: it disagrees with the other members' superblocks on the array's geometry, and is older (events $(md_field "$tmpdir/g0.old" Events), the others' $(md_field "${G[1]}" Events)): a copy from before the array changed (a grow?)" ] &&
  [ "$(grep -c ': yes, as slot [123] of 4 (clean)$' "$tmpdir/verdicts")" = 3 ] ||
  fail "a pre-grow copy: $(cat "$tmpdir/verdicts")"
echo "a copy from before a grow: said to be older, the others judged without it"

# --- No superblock, errors, exit statuses ------------------------------
head -c 1M /dev/urandom >"$tmpdir/plain"
truncate -s 4K "$tmpdir/short"
run ()
{
  status=0
  "$RAID5CTL" "$@" >"$tmpdir/out" 2>"$tmpdir/err" || status=$?
  echo "raid5ctl ${*//$tmpdir\//} -> exit $status $(head -c 200 "$tmpdir/err")"
}
one_line ()
{
  [ "$(grep -c . "$tmpdir/err")" = 1 ] && grep -Eq -- "$1" "$tmpdir/err" ||
    fail "stderr is not one line matching '$1': $(cat "$tmpdir/err")"
}
run examine "$tmpdir/plain"
[ $status -ne 0 ] || fail "no superblock: exit 0"
one_line 'no md v1.2 superblock on .*plain'
grep -q 'No md superblock' "$tmpdir/out" || fail "no superblock: not said"
run examine --json "$tmpdir/short" "$tmpdir/plain"
[ $status -ne 0 ] || fail "no superblock: exit 0"
one_line 'no md v1.2 superblock on any'
[ "$(json_get "$tmpdir/out" 0 superblock)" = False ] || fail "JSON superblock"
# An md v1.0 superblock (at the end; mdadm reads it): named, not read.
truncate -s 8M "$tmpdir/v10"
off=$(plant_md 1.0 "${EX[2]}" "$tmpdir/v10")
mdadm --examine "$tmpdir/v10" 2>&1 | grep -q 'Version : 1.0' ||
  fail "the planted v1.0 superblock is not one for mdadm"
run examine --json "$tmpdir/v10"
[ $status -ne 0 ] || fail "v1.0 only: exit 0"
one_line 'no md v1.2 superblock on .*v10 \(it has an md v1.0 superblock'
[ "$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))[0]
print(d["other_superblock"]["version"], d["other_superblock"]["offset_bytes"])' \
     "$tmpdir/out")" = "1.0 $off" ] || fail "v1.0: JSON other_superblock"
run examine "$tmpdir/v10"
grep -q "No md v1.2 superblock, but an md v1.0 superblock at byte $off" \
  "$tmpdir/out" || fail "v1.0: text"
run examine "$tmpdir/plain" "${EX[2]}"
[ $status -eq 0 ] || fail "one disk with a superblock: exit $status"
run examine "${EX[2]}" "$tmpdir/nonexistent"
[ $status -ne 0 ] || fail "nonexistent disk: exit 0"
one_line 'nonexistent: cannot open: No such file'
run examine
[ $status -ne 0 ] || fail "no disk: exit 0"
one_line 'no disk given'
run examine --frobnicate "${EX[2]}"
[ $status -ne 0 ] || fail "bad option: exit 0"
one_line 'unknown option --frobnicate'
run examine --help
[ $status -eq 0 ] && grep -q '^usage: raid5ctl examine' "$tmpdir/out" ||
  fail "examine --help"
run frobnicate
[ $status -ne 0 ] || fail "unknown command: exit 0"
one_line "unknown command 'frobnicate'"
echo "errors and exit statuses: ok"
