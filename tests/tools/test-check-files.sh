#!/usr/bin/env bash
# raid5ctl check --files (offline, and online through --control): which
# files the wrong stripes touch, with e2fsprogs' debugfs as the oracle.  An ext4 file system with a file
# tree (mke2fs -d, 4 KiB blocks) is copied onto a 3-member array through
# the plugin; then bytes are changed behind the array's back, on the
# member holding them (raid5ctl map says where):
#   - in block 100 of /big/b.bin: check --files names /big/b.bin at the
#     bytes of that block, and no other file (its row partner in the other
#     data chunk, also a suspect, is /big/b.bin's too); every file hit of
#     the JSON is the inode debugfs icheck gives for its block, at the
#     path ncheck gives, at the file offset that block has (bmap);
#   - in the inode table block holding /docs/note.txt's inode (debugfs
#     imap): named as ext4 metadata, "inode table of group 0";
#   - in a free block (debugfs ffb): free space;
#   - an array holding no file system: said so, the byte ranges given;
#   - the file system in a partition starting at sector 64 (sfdisk): the
#     partition is found (dos, array byte 32768) and /big/a.bin named.
. "${0%/*}/functions.sh"
. "${0%/*}/../integration/md-functions.sh"
requires_raid5ctl
requires debugfs -V
requires mke2fs -V
requires sfdisk --version
requires nbdcopy --version

CHUNK=64K
m=("$tmpdir/m0" "$tmpdir/m1" "$tmpdir/m2")
truncate -s 32M "${m[@]}"
"$RAID5CTL" create --chunk "$CHUNK" "${m[@]}" >/dev/null 2>&1 || fail "create"
size=$("$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${m[@]/#/disk=}" --run 'nbdinfo --size "$uri"')
for f in "${m[@]}"; do cp "$f" "$f.clean"; done

mkdir -p "$tmpdir/tree/big" "$tmpdir/tree/docs"
head -c 300000 /dev/urandom >"$tmpdir/tree/big/a.bin"
head -c 1000000 /dev/urandom >"$tmpdir/tree/big/b.bin"
echo hello >"$tmpdir/tree/docs/note.txt"
for i in $(seq 1 40); do head -c $((i * 1000)) /dev/urandom >"$tmpdir/tree/docs/f $i"; done

# put IMAGE OFFSET: the members clean again, IMAGE written at OFFSET.
put ()
{
  local f
  for f in "${m[@]}"; do cp "$f.clean" "$f"; done
  "$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${m[@]/#/disk=}" --run "nbdcopy '$1' \"\$uri\"" ||
    fail "copying $1 onto the array"
}

# spoil ARRAY_OFFSET: change 4 bytes there on the member that holds them.
spoil ()
{
  local where
  where=$("$RAID5CTL" map "$1" --json --from "${m[@]}" |
    /usr/bin/python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["member"], d["member_offset"])') ||
    fail "raid5ctl map $1"
  set -- $where
  printf '\x01\x02\x03\x04' | dd of="${m[$1]}" bs=1 seek=$(( $2 + 8 )) conv=notrunc status=none
}

# files [ARGS]: check --files (text in $tmpdir/out.txt, JSON in out.json);
# exit status 2 (wrong parity found) required.
files ()
{
  local st=0
  "$RAID5CTL" check --files "$@" "${m[@]}" >"$tmpdir/out.txt" 2>/dev/null || st=$?
  [ $st = 2 ] || { cat "$tmpdir/out.txt" >&2; fail "check --files: exit $st, not 2"; }
  "$RAID5CTL" check --files --json "$@" "${m[@]}" >"$tmpdir/out.json" 2>/dev/null || :
  sed 's/^/   /' "$tmpdir/out.txt"
}

# b_agrees JSON: the report names /big/b.bin at its block $b, no other
# file, and debugfs agrees on every hit.
b_agrees ()
{
  /usr/bin/python3 - "$1" "$tmpdir/fs.img" "$b" <<'PY' || fail "check --files and debugfs disagree"
import json, re, subprocess, sys
r = json.load(open(sys.argv[1]))
img, want = sys.argv[2], int(sys.argv[3])
def debugfs(cmd):
    return subprocess.run(["debugfs", "-R", cmd, img], capture_output=True,
                          text=True).stdout
hits = [h for m in r["mismatches"] for h in m["files"]]
assert r["file_systems"][0]["type"] == "ext4", r["file_systems"]
paths = {h["path"] for h in hits if h["kind"] == "file"}
assert paths == {"/big/b.bin"}, paths
assert any(h["array_offset"] == want * 4096 and h["file_offset"] == 100 * 4096
           for h in hits), hits
for h in hits:
    assert h["kind"] == "file", h
    blk = h["array_offset"] // 4096
    ino = int(debugfs("icheck %d" % blk).split()[-1])
    assert ino == h["inode"], (h, ino)
    name = debugfs("ncheck %d" % ino).splitlines()[-1].split("\t")[-1]
    assert name == h["path"], (h, name)
    idx = h["file_offset"] // 4096
    assert int(debugfs("bmap <%d> %d" % (ino, idx))) == blk, (h, idx)
print("   debugfs agrees: inode, path and file offset of every hit")
PY
}

echo "== a file's block"
mke2fs -q -t ext4 -b 4096 -d "$tmpdir/tree" -F "$tmpdir/fs.img" $((size / 1024))k >/dev/null
put "$tmpdir/fs.img"
b=$(debugfs -R "bmap /big/b.bin 100" "$tmpdir/fs.img" 2>/dev/null)
spoil $((b * 4096))
files
b_agrees "$tmpdir/out.json"

echo "== the same online: check --control --wait --files, read through the server"
put "$tmpdir/fs.img"
serve_bg "$tmpdir/nbdkit.log" "${m[@]/#/disk=}" control="$tmpdir/ctl" ||
  fail "the server did not start"
spoil $((b * 4096))
st=0
"$RAID5CTL" check --control "$tmpdir/ctl" --wait --files >"$tmpdir/on.txt" 2>/dev/null || st=$?
[ $st = 2 ] || { cat "$tmpdir/on.txt" >&2; fail "check --control --files: exit $st, not 2"; }
sed 's/^/   /' "$tmpdir/on.txt"
"$RAID5CTL" check --control "$tmpdir/ctl" --wait --files --json >"$tmpdir/on.json" 2>/dev/null || :
b_agrees "$tmpdir/on.json"
reads=$("$RAID5CTL" status --control "$tmpdir/ctl" --json |
  /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["counters"]["reads"])')
[ "$reads" -gt 0 ] || fail "the server counted no reads: the file system was not read through it"
stop_server

echo "== an inode table block"
put "$tmpdir/fs.img"
it=$(debugfs -R "imap /docs/note.txt" "$tmpdir/fs.img" 2>/dev/null |
  sed -n 's/.*located at block \([0-9]*\),.*/\1/p')
[ -n "$it" ] || fail "debugfs imap gave no block"
spoil $((it * 4096))
files
grep -q "ext4 metadata: inode table of group 0 (inodes" "$tmpdir/out.txt" ||
  fail "the inode table block is not named as metadata"

echo "== a free block"
put "$tmpdir/fs.img"
free=$(debugfs -R "ffb 1 20000" "$tmpdir/fs.img" 2>/dev/null | awk '{ print $NF }')
[ -n "$free" ] || fail "debugfs ffb gave no free block"
spoil $((free * 4096))
files
/usr/bin/python3 - "$tmpdir/out.json" "$free" <<'PY' || fail "the free block is not named free space"
import json, sys
r, free = json.load(open(sys.argv[1])), int(sys.argv[2])
hits = [h for m in r["mismatches"] for h in m["files"]]
assert any(h["kind"] == "free" and h["array_offset"] <= free * 4096 <
           h["array_offset"] + h["length"] for h in hits), hits
PY

echo "== no file system"
head -c $((size)) /dev/urandom >"$tmpdir/noise.img"
put "$tmpdir/noise.img"
spoil 1048576
files
grep -q "no ext2, ext3 or ext4 file system at array byte 0" "$tmpdir/out.txt" &&
  grep -Eq "^    array bytes \[[0-9]+, [0-9]+\) \(not understood\)" "$tmpdir/out.txt" ||
  fail "an array without a file system: not said, or no byte ranges"

echo "== a partition at sector 64"
partitioned_disk "$size"
put "$tmpdir/disk.img"
b=$(debugfs -R "bmap /big/a.bin 3" "$tmpdir/part.img" 2>/dev/null)
spoil $((32768 + b * 4096))
files
grep -q "partition 1 (dos table), array bytes \[32768, " "$tmpdir/out.txt" &&
  grep -q "file /big/a.bin (inode [0-9]*): bytes \[12288, 16384)" "$tmpdir/out.txt" ||
  fail "the partition's file is not found"
