#!/usr/bin/env bash
# raid5ctl create --consistency-policy (mdadm's names), against mdadm:
#   - ppl: mdadm --examine reads the members as mdadm --create
#     --consistency-policy=ppl writes them (feature 0x400, "PPL : 2048
#     sectors at offset 8 sectors from superblock", its data offset), and
#     raid5ctl examine prints the same lines; --json says the policy and
#     the log; the log area holds mdadm's empty header (0xff reserved,
#     signature ~crc32c(array uuid), generation 0, no entries, its
#     checksum right: checked here with a CRC-32C of the test's own) and
#     zeroes after it; raid5ctl check finds parity in sync;
#   - rebuilt (raid5ctl rebuild) onto a disk whose log area holds a valid
#     old header with an entry, as a former member of the array would: the
#     new member's area is md's empty header again (md would replay the
#     old entry after a crash), and check is clean;
#   - the plugin serves it: random I/O over 8 connections against the
#     model; status (text and JSON) says ppl and counts log writes; a
#     clean stop leaves the superblocks clean, a log header with
#     entries md would read (signature, checksums, generation > 0), and
#     parity in sync;
#   - a log write that fails (test-only fault injection on the parity
#     member) fails that member and the write is redone degraded: the
#     client sees no error, the survivors record it faulty, the write is
#     there after a restart;
#   - bitmap and resync are --bitmap internal and none;
#   - refused with one line, nothing written: ppl with --bitmap internal,
#     an unknown policy, ppl with a data offset that leaves no room.
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
requires_plugin
requires_md

m=("$tmpdir/p0.img" "$tmpdir/p1.img" "$tmpdir/p2.img")
fresh () { rm -f "${m[@]}"; truncate -s 64M "${m[@]}"; }

echo "== create --consistency-policy ppl"
fresh
"$RAID5CTL" create --consistency-policy ppl --chunk 64K "${m[@]}" \
  >"$tmpdir/create.out" 2>&1 || { cat "$tmpdir/create.out" >&2; fail "create ppl"; }
grep "Bitmap :" "$tmpdir/create.out"
mdadm --examine "${m[0]}" >"$tmpdir/mdadm.txt" || fail "mdadm --examine"
grep -q "Feature Map : 0x400$" "$tmpdir/mdadm.txt" &&
  grep -q "PPL : 2048 sectors at offset 8 sectors from superblock" "$tmpdir/mdadm.txt" ||
  { cat "$tmpdir/mdadm.txt" >&2; fail "mdadm does not see a partial parity log"; }
echo "   mdadm: $(grep -o 'PPL : .*' "$tmpdir/mdadm.txt")"
"$RAID5CTL" examine "${m[0]}" >"$tmpdir/ours.txt" 2>&1 || :
# Ours is mdadm's, line for line, and then lines of its own.
n=$(wc -l <"$tmpdir/mdadm.txt")
diff <(sed 1d "$tmpdir/mdadm.txt") <(head -n "$n" "$tmpdir/ours.txt" | sed 1d) >"$tmpdir/diff.txt" ||
  { cat "$tmpdir/diff.txt" >&2; fail "raid5ctl examine and mdadm --examine differ"; }
grep -q "raid5 plugin : yes, as slot 0 of 3" "$tmpdir/ours.txt" ||
  { cat "$tmpdir/ours.txt" >&2; fail "examine's verdict does not say it is served"; }
"$RAID5CTL" examine --json "${m[@]}" >"$tmpdir/ex.json" || :
cat >"$tmpdir/ppl.py" <<'PY'
# ppl.py json FILE DISK...: examine --json says ppl, and each DISK's log
#   area is md's empty header followed by zeroes.
# ppl.py stale DISK: put a valid header with one entry (generation 7) in
#   DISK's log area, as an old member of the same array would hold.
# ppl.py logged DISK...: each DISK (slot order) holds a valid header at the
#   start of its area; some have entries (generation > 0), each with its
#   parity on that disk and the checksum of its partial parity right.
import json, sys

TABLE = []
for n in range(256):
    c = n
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    TABLE.append(c)

def crc32c_fast(data, crc=0xffffffff):
    for b in data:
        crc = TABLE[(crc ^ b) & 0xff] ^ (crc >> 8)
    return crc

def check_logged(paths):
    logged = 0
    for slot, path in enumerate(paths):
        uuid, a = area(path)
        h = bytearray(a[:4096])
        le = lambda o, n: int.from_bytes(h[o:o + n], "little")
        assert le(512, 4) == ~crc32c(uuid) & 0xffffffff, "signature"
        stored = le(532, 4)
        h[532:536] = b"\0\0\0\0"
        assert stored == ~crc32c_fast(bytes(h)) & 0xffffffff, "header checksum"
        gen, count, at = le(520, 8), le(528, 4), 4096
        for i in range(count):
            o = 536 + 24 * i
            pp_size, parity, csum = le(o + 8, 4), le(o + 16, 4), le(o + 20, 4)
            assert parity == slot, "entry %d of slot %d: parity %d" % (i, slot, parity)
            got = ~crc32c_fast(a[at:at + pp_size]) & 0xffffffff if pp_size else 0
            assert got == csum, "entry %d of slot %d: PP checksum" % (i, slot)
            at += pp_size
        if count:
            assert gen > 0, "generation"
            logged += 1
        print("   slot %d: log header generation %d, %d entries, %d PP bytes, checksums right"
              % (slot, gen, count, at - 4096))
    assert logged > 0, "no log holds entries"

def crc32c(data, crc=0xffffffff):
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc

def area(path):
    with open(path, "rb") as f:
        f.seek(4096 + 16)
        uuid = f.read(16)
        f.seek(8192)
        return uuid, f.read(2048 * 512)

def check_empty(path):
    uuid, a = area(path)
    h = bytearray(a[:4096])
    le = lambda o, n: int.from_bytes(h[o:o + n], "little")
    assert h[:512] == b"\xff" * 512, "reserved bytes"
    assert le(512, 4) == ~crc32c(uuid) & 0xffffffff, "signature"
    assert le(516, 4) == 0 and le(520, 8) == 0 and le(528, 4) == 0, \
        "padding, generation, entries"
    stored = le(532, 4)
    h[532:536] = b"\0\0\0\0"
    assert stored == ~crc32c(bytes(h)) & 0xffffffff, "header checksum"
    assert not any(h[536:]), "entries"
    assert not any(a[4096:]), "the log area after the header"

if sys.argv[1] == "json":
    r = json.load(open(sys.argv[2]))
    devs = r["devices"] if isinstance(r, dict) else r
    for d in devs:
        assert d["consistency_policy"] == "ppl", d["consistency_policy"]
        assert d["ppl"] == {"offset_sectors": 8, "size_sectors": 2048}, d["ppl"]
    for path in sys.argv[3:]:
        check_empty(path)
    print("   examine --json: consistency_policy ppl; the log areas hold md's empty header")
elif sys.argv[1] == "logged":
    check_logged(sys.argv[2:])
elif sys.argv[1] == "empty":
    check_empty(sys.argv[2])
elif sys.argv[1] == "stale":
    uuid, _ = area(sys.argv[2])
    pp = bytes(range(256)) * 16
    h = bytearray(4096)
    h[:512] = b"\xff" * 512
    h[512:516] = (~crc32c(uuid) & 0xffffffff).to_bytes(4, "little")
    h[520:528] = (7).to_bytes(8, "little")
    h[528:532] = (1).to_bytes(4, "little")
    e = (0).to_bytes(8, "little") + (4096).to_bytes(4, "little") + \
        (4096).to_bytes(4, "little") + (2).to_bytes(4, "little") + \
        (~crc32c(pp) & 0xffffffff).to_bytes(4, "little")
    h[536:560] = e
    h[532:536] = (~crc32c(bytes(h)) & 0xffffffff).to_bytes(4, "little")
    with open(sys.argv[2], "r+b") as f:
        f.seek(8192)
        f.write(bytes(h) + pp)
PY
/usr/bin/python3 "$tmpdir/ppl.py" json "$tmpdir/ex.json" "${m[@]}" ||
  fail "examine --json or the log area is wrong"
"$RAID5CTL" check "${m[@]}" >"$tmpdir/check.out" 2>&1 &&
  grep -q "mismatch_cnt 0$" "$tmpdir/check.out" ||
  { cat "$tmpdir/check.out" >&2; fail "check of the new ppl array"; }

echo "== rebuilt onto a disk that held an old log of the array: its log starts empty"
/usr/bin/python3 "$tmpdir/ppl.py" stale "${m[1]}"
! /usr/bin/python3 "$tmpdir/ppl.py" empty "${m[1]}" 2>/dev/null || fail "the stale header was not put"
"$RAID5CTL" rebuild --slot 1 --new "${m[1]}" "${m[0]}" missing "${m[2]}" \
  >"$tmpdir/rebuild.out" 2>&1 || { cat "$tmpdir/rebuild.out" >&2; fail "rebuild of a ppl array"; }
/usr/bin/python3 "$tmpdir/ppl.py" empty "${m[1]}" ||
  fail "the rebuilt member kept an old log header md would replay"
"$RAID5CTL" check "${m[@]}" >"$tmpdir/check2.out" 2>&1 &&
  grep -q "mismatch_cnt 0$" "$tmpdir/check2.out" ||
  { cat "$tmpdir/check2.out" >&2; fail "check after the rebuild"; }
echo "   the rebuilt member's log area holds md's empty header; $(grep mismatch_cnt "$tmpdir/check2.out")"

echo "== served: random I/O, a clean stop, parity in sync, md's log header"
next_seed
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "disk=${m[0]}" "disk=${m[1]}" "disk=${m[2]}" \
  control="$tmpdir/ctl" \
  --run "'$RANDOM_IO' \"\$uri\" auto --seed $RIO_SEED --ops 1500 --threads 8 \
         --chunk 64K --disks 3 --initial unknown &&
         '$RAID5CTL' --control '$tmpdir/ctl' status >'$tmpdir/status.txt' &&
         '$RAID5CTL' --control '$tmpdir/ctl' status --json >'$tmpdir/status.json'" \
  >"$tmpdir/serve.out" 2>&1 ||
  { cat "$tmpdir/serve.out" >&2; fail "random I/O on the ppl array"; }
tail -n 1 "$tmpdir/serve.out" | sed 's/^/   /'
grep 'consistency policy' "$tmpdir/status.txt" | sed 's/^ */   status: /'
/usr/bin/python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert s["consistency_policy"] == "ppl", s["consistency_policy"]
p = s["ppl"]
assert p["log_writes"] > 0 and p["entries"] >= p["log_writes"], p
assert p["recovered_at_start"] == 0 and p["not_usable_at_start"] == 0, p
' "$tmpdir/status.json" || fail "status --json does not show the log at work"
md_expect clean AAA "${m[@]}"
/usr/bin/python3 "$tmpdir/ppl.py" logged "${m[@]}" ||
  fail "after writes, no log holds md's header with entries"
"$RAID5CTL" check "${m[@]}" >"$tmpdir/check3.out" 2>&1 &&
  grep -q "mismatch_cnt 0$" "$tmpdir/check3.out" ||
  { cat "$tmpdir/check3.out" >&2; fail "check after serving"; }
echo "   $(grep mismatch_cnt "$tmpdir/check3.out")"
# Marked dirty (as a crash leaves it): examine and check say the log is
# replayed -- they said a resync runs, which the log makes needless.
for f in "${m[@]}"; do patch_sb "$f" "struct.pack_into('<Q', sb, 208, 0)"; done
"$RAID5CTL" examine "${m[0]}" | grep -q "raid5 plugin : yes, as slot 0 of 3 (not stopped cleanly: the partial parity logs are replayed at start, no resync)" ||
  fail "examine of a dirty ppl member: $("$RAID5CTL" examine "${m[0]}" | grep 'raid5 plugin')"
"$RAID5CTL" check "${m[@]}" >"$tmpdir/check4.out" 2>&1 || :
grep -q "its partial parity log makes the stripes that were being written whole when it is served or repaired (no resync)" "$tmpdir/check4.out" ||
  fail "check of a dirty ppl array: $(cat "$tmpdir/check4.out")"
for f in "${m[@]}"; do patch_sb "$f" "struct.pack_into('<Q', sb, 208, 2**64 - 1)"; done
md_expect clean AAA "${m[@]}"
echo "   dirty: examine and check say the log is replayed, not resynced"

echo "== the log write fails: the parity member is failed, the write redone degraded"
# Stripe 0's parity is on member 2 (left-symmetric, 3 members); a 4K write
# at 0 reads member 1, logs on member 2, writes members 0 and 2.  Member
# 2's first I/Os after the start are the flush and the superblock write
# marking the array dirty (every superblock write flushes first, as md's
# REQ_PREFLUSH); the next, failing, is the log write (header at 8192, PP
# at 12288).
fresh
"$RAID5CTL" create --consistency-policy ppl --assume-clean --chunk 64K "${m[@]}" >/dev/null 2>&1 ||
  fail "create for the failing log"
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "disk=${m[0]}" "disk=${m[1]}" "disk=${m[2]}" \
  -D raid5.fail_member=2 -D raid5.fail_after=2 \
  --run "/usr/bin/python3 -c '
import nbd, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1])
h.pwrite(b\"w\" * 4096, 0); h.flush()
assert h.pread(4096, 0) == b\"w\" * 4096, \"read back\"
' \"\$uri\"" >"$tmpdir/logfail.out" 2>&1 ||
  { cat "$tmpdir/logfail.out" >&2; fail "a failing log write reached the client"; }
grep -E "member 2 \(.*p2.img\): write at (8192|12288): Input/output error; member marked faulty" \
  "$tmpdir/logfail.out" ||
  { cat "$tmpdir/logfail.out" >&2; fail "the log write was not the failing one, or not blamed"; }
md_expect clean AA. "${m[0]}" "${m[1]}"
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "disk=${m[0]}" "disk=${m[1]}" "disk=${m[2]}" \
  --run "/usr/bin/python3 -c '
import nbd, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1])
assert h.pread(4096, 0) == b\"w\" * 4096, \"read back after a restart\"
' \"\$uri\"" >"$tmpdir/logfail2.out" 2>&1 ||
  { cat "$tmpdir/logfail2.out" >&2; fail "after the restart the write is not there"; }
echo "   the write is there after a restart, member 2 left out"

echo "== bitmap and resync"
fresh
"$RAID5CTL" create --consistency-policy bitmap --assume-clean "${m[@]}" >/dev/null ||
  fail "create bitmap"
mdadm --examine "${m[0]}" | grep -q "Internal Bitmap" || fail "policy bitmap: no bitmap"
fresh
"$RAID5CTL" create --consistency-policy resync --assume-clean "${m[@]}" >/dev/null ||
  fail "create resync"
! mdadm --examine "${m[0]}" | grep -q "Internal Bitmap\|PPL :" ||
  fail "policy resync: a bitmap or a log"

echo "== refused"
# refuse REGEX ARGS...: one error line matching REGEX, nothing written.
refuse ()
{
  local re=$1 status=0 sums
  shift
  fresh
  sums=$(checksum_members "${m[@]}")
  "$RAID5CTL" create "$@" "${m[@]}" >"$tmpdir/bad.out" 2>&1 || status=$?
  [ $status != 0 ] && [ "$(grep -c . "$tmpdir/bad.out")" = 1 ] &&
    grep -q "$re" "$tmpdir/bad.out" ||
    { cat "$tmpdir/bad.out" >&2; fail "create $*: not refused with one line"; }
  [ "$(checksum_members "${m[@]}")" = "$sums" ] || fail "create $*: wrote"
  echo "   $*: $(cat "$tmpdir/bad.out")"
}
refuse "disagree" --consistency-policy ppl --bitmap internal
refuse "expected resync, bitmap or ppl" --consistency-policy sometimes
refuse "no room for the log" --consistency-policy ppl --data-offset 1M
echo "$test_name: OK"
