#!/usr/bin/env bash
# An integrity record names the member, and puts the bytes right.  An
# ext4 file system with a file tree is copied onto a 3-member array
# served with integrity=REC (the record is made at the first start and
# set by every write); then 4 bytes of block 100 of /big/b.bin are
# changed on the member holding them (raid5ctl map says which):
#   - offline, check --integrity --files: exit 2, the stripe's member
#     whose checksum fails is that member, and the files explained are
#     that block of /big/b.bin alone (without the record, its row
#     partner in the other data chunk is a suspect too);
#   - online, check --control --wait --files: the same;
#   - a read through the server (of 512 bytes: a part of the unit)
#     returns the file's right bytes, the heal counter rises to 1, and
#     the member holds its old bytes again;
#   - spoiled again, repair --integrity rewrites the member's unit (not
#     the parity, which md's repair would make match the spoiled data):
#     the member is as before, check finds nothing, and /big/b.bin read
#     from the array is the file put there;
#   - in a partition at sector 64: check --integrity --files names the
#     member and /big/a.bin.
. "${0%/*}/functions.sh"
. "${0%/*}/../integration/md-functions.sh"
requires_raid5ctl
requires debugfs -V
requires mke2fs -V
requires sfdisk --version
requires nbdcopy --version

m=("$tmpdir/m0" "$tmpdir/m1" "$tmpdir/m2")
rec=$tmpdir/rec
truncate -s 32M "${m[@]}"
"$RAID5CTL" create --chunk 64K "${m[@]}" >/dev/null 2>&1 || fail "create"
size=$("$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${m[@]/#/disk=}" --run 'nbdinfo --size "$uri"')
for f in "${m[@]}"; do cp "$f" "$f.clean"; done

mkdir -p "$tmpdir/tree/big" "$tmpdir/tree/docs"
head -c 300000 /dev/urandom >"$tmpdir/tree/big/a.bin"
head -c 1000000 /dev/urandom >"$tmpdir/tree/big/b.bin"
for i in $(seq 1 20); do head -c $((i * 1000)) /dev/urandom >"$tmpdir/tree/docs/f $i"; done

# put IMAGE: clean members and a new record, IMAGE written through the
# server (so every checksum is set by the writes).
put ()
{
  local f
  for f in "${m[@]}"; do cp "$f.clean" "$f"; done
  rm -f "$rec"
  "$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${m[@]/#/disk=}" integrity="$rec" \
    --run "nbdcopy '$1' \"\$uri\"" || fail "copying $1 onto the array"
  for f in "${m[@]}"; do cp "$f" "$f.good"; done
}

# spoil ARRAY_OFFSET: 4 bytes there changed on the member holding them;
# the member's index in $spoiled.
spoil ()
{
  local where
  where=$("$RAID5CTL" map "$1" --json --from "${m[@]}" |
    /usr/bin/python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["member"], d["member_offset"])') ||
    fail "raid5ctl map $1"
  set -- $where
  spoiled=$1
  printf '\x01\x02\x03\x04' | dd of="${m[$1]}" bs=1 seek=$(( $2 + 8 )) conv=notrunc status=none
}

# named JSON PATH FILE_OFFSET: the report names member $spoiled, and the
# file hits are FILE_OFFSET's block of PATH alone.
named ()
{
  /usr/bin/python3 - "$1" "$spoiled" "$2" "$3" <<'PY' || fail "the report does not name the member and the file alone"
import json, sys
r = json.load(open(sys.argv[1]))
member, path, file_off = int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
ms = r["mismatches"]
assert len(ms) == 1, ms
assert ms[0]["checksum_member"] == member, ms[0]
assert ms[0]["checksum_units"] == 1, ms[0]
hits = ms[0]["files"]
assert [(h["kind"], h["path"], h["file_offset"], h["length"]) for h in hits] \
    == [("file", path, file_off, 4096)], hits
print("   member %d named; %s at file offset %d alone" % (member, path, file_off))
PY
}

# back_as_put FILE: every member is as it was after put (byte for byte).
back_as_put ()
{
  local i
  for i in 0 1 2; do
    cmp -s "${m[$i]}" "${m[$i]}.good" || fail "$1: member $i is not as it was put"
  done
}

echo "== offline: check --integrity --files"
mke2fs -q -t ext4 -b 4096 -d "$tmpdir/tree" -F "$tmpdir/fs.img" $((size / 1024))k >/dev/null
put "$tmpdir/fs.img"
b=$(debugfs -R "bmap /big/b.bin 100" "$tmpdir/fs.img" 2>/dev/null)
spoil $((b * 4096))
st=0
"$RAID5CTL" check --integrity "$rec" --files "${m[@]}" >"$tmpdir/out.txt" 2>/dev/null || st=$?
[ $st = 2 ] || { cat "$tmpdir/out.txt" >&2; fail "check --integrity --files: exit $st, not 2"; }
sed 's/^/   /' "$tmpdir/out.txt"
"$RAID5CTL" check --integrity "$rec" --files --json "${m[@]}" >"$tmpdir/out.json" 2>/dev/null || :
named "$tmpdir/out.json" /big/b.bin $((100 * 4096))

echo "== online: check --control --wait --files, then a read that heals"
serve_bg "$tmpdir/nbdkit.log" "${m[@]/#/disk=}" integrity="$rec" control="$tmpdir/ctl" ||
  fail "the server did not start"
"$RAID5CTL" check --control "$tmpdir/ctl" --wait --files --json >"$tmpdir/on.json" 2>/dev/null || :
named "$tmpdir/on.json" /big/b.bin $((100 * 4096))
/usr/bin/python3 - "$URI" "$tmpdir/fs.img" $((b * 4096)) <<'PY' || fail "a 512-byte read of the spoiled unit"
import nbd, sys
h = nbd.NBD()
h.connect_uri(sys.argv[1])
off = int(sys.argv[3])
want = open(sys.argv[2], "rb").read()[off:off + 512]
assert h.pread(512, off) == want, "a 512-byte read returned the spoiled bytes"
print("   a 512-byte read of the spoiled unit returned the right bytes")
PY
nbdcopy "$URI" "$tmpdir/back.img" || fail "reading the array"
cmp -s "$tmpdir/back.img" "$tmpdir/fs.img" ||
  fail "the read returned other bytes than the file system put there"
healed=$("$RAID5CTL" status --control "$tmpdir/ctl" --json |
  /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["integrity"]["healed_units"])')
echo "   the read returned the right bytes; healed units: $healed"
[ "$healed" = 1 ] || fail "the heal counter is $healed, not 1"
stop_server
back_as_put "after the healing read"

echo "== repair --integrity: the member's unit rewritten, not the parity"
spoil $((b * 4096))
"$RAID5CTL" repair --integrity "$rec" "${m[@]}" >"$tmpdir/repair.txt" 2>&1 ||
  { cat "$tmpdir/repair.txt" >&2; fail "repair --integrity"; }
sed 's/^/   /' "$tmpdir/repair.txt"
grep -q "member $spoiled fails its checksum: 1 x 4 KiB .*, rewritten from the other members" \
  "$tmpdir/repair.txt" || fail "repair does not say it rewrote the member's unit"
back_as_put "after the repair"
"$RAID5CTL" check --integrity "$rec" "${m[@]}" >/dev/null 2>&1 || fail "check after the repair"
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${m[@]/#/disk=}" integrity="$rec" \
  --run "nbdcopy \"\$uri\" '$tmpdir/after.img'" || fail "reading the array"
debugfs -R "dump /big/b.bin $tmpdir/b.after" "$tmpdir/after.img" >/dev/null 2>&1
cmp -s "$tmpdir/b.after" "$tmpdir/tree/big/b.bin" || fail "/big/b.bin is not the file put there"
echo "   /big/b.bin read from the array is the file put there"

echo "== a partition at sector 64"
partitioned_disk "$size"
put "$tmpdir/disk.img"
b=$(debugfs -R "bmap /big/a.bin 3" "$tmpdir/part.img" 2>/dev/null)
spoil $((32768 + b * 4096))
"$RAID5CTL" check --integrity "$rec" --files --json "${m[@]}" >"$tmpdir/part.json" 2>/dev/null || :
named "$tmpdir/part.json" /big/a.bin $((3 * 4096))
