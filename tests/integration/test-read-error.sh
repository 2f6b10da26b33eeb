#!/usr/bin/env bash
# Read errors corrected as md corrects them: member 1 is a disk with bad
# sectors (nbdkit-badsector-plugin over NBD: a "read" sector fails reads
# until it is written, as a disk remaps it; a "write" sector fails writes
# too).  The array holds random data.
#   - read-bad sectors in data and in parity chunks of member 1: every
#     read returns the right bytes, member 1 stays in service, each bad
#     sector is rewritten from the other members (the disk says remapped)
#     and read again, status counts the corrected sectors, the log says
#     "read error corrected"; a check that reads the bad parity corrects
#     it too, and finds no wrong parity; the count reaches the superblock (md's
#     cnt_corrected_read) with the next superblock write and is there
#     after a restart;
#   - a bad sector in member 1's first data block when the array starts:
#     it starts (md reads no data at assembly), says so, and the read
#     corrects it;
#   - an unwritable sector: its rewrite fails, so the page is recorded in
#     member 1's md bad-block log (md's rule: rdev_set_badblocks) and the
#     member stays in service; every byte reads right; status shows the
#     bad block; a member without a log (raw members, metadata=none: no
#     superblock) is taken out of service instead, and every byte still
#     reads right, degraded;
#   - raid5ctl check offline opens the array read-only: over two read-bad
#     sectors it goes on to the end, skipping their stripes and saying
#     once each where and why (member 1, the offset), exits 1, and
#     rewrites nothing
#     (every member file as before); served readonly=true, the sector is
#     read around and member 1 stays in service (md's R5_ReadError on a
#     read-only array), an online check skips the two stripes as the
#     offline one does, nothing is written; 300 read errors each followed
#     by a good read of member 1 keep it, 300 in a row (past md's 256)
#     take it out, in memory only; repair rewrites them.
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
. "${0%/*}/job-functions.sh"
requires_jobs
requires_raid5ctl

MB=16 CHUNK=65536
md_create g 3 ${MB}M --chunk 64K --bitmap none --assume-clean
m=("${MEMBERS[@]}")
BAD=$tmpdir/bad.list LOG=$tmpdir/bad.log
sock1=$tmpdir/g1.nsock
badsector_serve "${m[1]}" "$sock1" "$BAD" "$LOG"
disks=("disk=${m[0]}" "disk=nbd+unix:///?socket=$sock1" "disk=${m[2]}")
serve_ctl "$tmpdir/nbdkit.log" "${disks[@]}" || fail "serve"
size=$(ctl_get 's["size_bytes"]')
head -c "$size" /dev/urandom >"$tmpdir/model"
nbdcopy "$tmpdir/model" "$URI" || fail "filling the array"

# sector_of STRIPE WHAT: member 1's first sector of STRIPE's chunk, where
# member 1 holds data (WHAT=data) or parity (WHAT=parity) in it.
pick_stripe ()
{
  local s=$1 want=$2 pd
  for (( ; ; s++ )); do
    pd=$(( 2 - s % 3 ))           # left-symmetric, 3 members
    [ "$want" = parity ] && [ $pd = 1 ] && break
    [ "$want" = data ] && [ $pd != 1 ] && break
  done
  echo $s
}
sector_of () { echo $(( (MD_DOFF + $1 * CHUNK) / 512 )); }
[ "$MD_LAYOUT" = left-symmetric ] || fail "layout $MD_LAYOUT"

echo "== read-bad sectors in data and parity of member 1"
sd=$(pick_stripe 5 data) sd2=$(pick_stripe 40 data) sp=$(pick_stripe 20 parity)
{
  echo "read $(( $(sector_of "$sd") + 8 )) 8"       # 4 KiB into a data chunk
  echo "read $(( $(sector_of "$sd2") + 127 )) 2"    # across two 64K chunks
  echo "read $(( $(sector_of "$sp") + 16 )) 8"      # in a parity chunk
} >"$BAD"
cat "$BAD"
nbdcopy "$URI" "$tmpdir/back" || fail "reading the array"
cmp "$tmpdir/model" "$tmpdir/back" || fail "the array read wrong bytes"
[ "$(ctl_get 's["health"]')" = "[UUU]" ] || fail "health $(ctl_get 's["health"]')"
grep -q "^remapped $(( $(sector_of "$sd") + 8 )) 8\$" "$LOG" ||
  fail "the bad data sectors were not rewritten: $(cat "$LOG")"
grep -q "^remapped $(( $(sector_of "$sd2") + 127 )) " "$LOG" ||
  fail "the sectors across chunks were not rewritten: $(cat "$LOG")"
grep -Eq 'member 1 .*: read error corrected \([0-9]+ sectors in member bytes' \
  "$tmpdir/nbdkit.log" || fail "no 'read error corrected' in the log"
c1=$(ctl_get 's["members"][1]["corrected_read_sectors"]')
[ "$c1" -ge 10 ] || fail "status counts $c1 corrected sectors"
ctl status | grep 'read errors corrected'
# The bad parity sectors are read by a check: corrected there too.
grep -q "^remapped $(( $(sector_of "$sp") + 16 )) " "$LOG" &&
  fail "the parity sectors were rewritten before the check read them"
"$RAID5CTL" --control "$CTL_SOCK" check --wait >"$tmpdir/check.out" 2>&1 ||
  { cat "$tmpdir/check.out" >&2; fail "check over the bad parity"; }
grep -q 'mismatch_cnt 0$' "$tmpdir/check.out" || fail "check: $(cat "$tmpdir/check.out")"
grep -q "^remapped $(( $(sector_of "$sp") + 16 )) 8\$" "$LOG" ||
  fail "the bad parity sectors were not rewritten by the check: $(cat "$LOG")"
[ "$(ctl_get 's["health"]')" = "[UUU]" ] || fail "health after the check $(ctl_get 's["health"]')"
[ "$(ctl_get 's["members"][1]["corrected_read_sectors"]')" -gt "$c1" ] ||
  fail "the check's correction was not counted"
# A write, so that a superblock write carries the count.
/usr/bin/python3 - "$URI" <<'EOF' || fail "a write"
import nbd, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1])
h.pwrite(h.pread(4096, 0), 0); h.flush()
EOF
c1=$(ctl_get 's["members"][1]["corrected_read_sectors"]')
stop_server
serve_ctl "$tmpdir/nbdkit.log" "${disks[@]}" || fail "serve again"
[ "$(ctl_get 's["members"][1]["corrected_read_sectors"]')" = "$c1" ] ||
  fail "the corrected count ($c1) did not survive a restart: $(ctl_get 's["members"][1]')"
echo "   $c1 sectors corrected, kept across a restart"

echo "== a bad sector in member 1's first data block at start: served, corrected when read"
# md reads no data at assembly: a bad sector there is a read error like
# any other (stripe 0's chunk on member 1 holds array bytes 64K..128K).
stop_server
echo "read $(sector_of 0) 8" >"$BAD"
serve_ctl "$tmpdir/nbdkit.log" "${disks[@]}" ||
  fail "the array did not start over a bad sector in member 1's first block"
grep -q "member 1 .*: read error at member offset $MD_DOFF at start: kept" \
  "$tmpdir/nbdkit.log" || fail "the start does not say it met the bad sector"
nbdcopy "$URI" "$tmpdir/back" || fail "reading the array"
cmp "$tmpdir/model" "$tmpdir/back" || fail "the array read wrong bytes"
grep -q "^remapped $(sector_of 0) 8\$" "$LOG" ||
  fail "the bad sector in the first block was not rewritten: $(cat "$LOG")"
[ "$(ctl_get 's["health"]')" = "[UUU]" ] || fail "health $(ctl_get 's["health"]')"

echo "== an unwritable sector: recorded in member 1's bad-block log"
sw=$(pick_stripe 60 data)
echo "write $(( $(sector_of "$sw") )) 8" >"$BAD"
nbdcopy "$URI" "$tmpdir/back" || fail "reading the array with member 1 failing"
cmp "$tmpdir/model" "$tmpdir/back" || fail "wrong bytes with member 1 failing"
[ "$(ctl_get '"%s %s" % (s["health"], s["members"][1]["state"])')" = "[UUU] active" ] ||
  fail "member 1: $(ctl_get 's["health"], s["members"][1]["state"]')"
grep -q "NOT corrected" "$tmpdir/nbdkit.log" || fail "the log does not say NOT corrected"
grep -q "member 1 .*: 4096 bytes at member offset $(( $(sector_of "$sw") * 512 )) recorded in its md bad-block log" \
  "$tmpdir/nbdkit.log" || fail "the log does not say the page was recorded"
grep -q '^write-error' "$LOG" || fail "no write was tried on the bad sector"
[ "$(ctl_get 's["members"][1]["bad_blocks"]["sectors"]')" = 8 ] ||
  fail "status: $(ctl_get 's["members"][1]["bad_blocks"]')"
ctl status | grep 'bad blocks:'
stop_server

echo "== raid5ctl check offline: read-only, read errors named, skipped, not rewritten"
sr=$(pick_stripe 70 data) sr2=$(pick_stripe 90 data)
{
  echo "read $(( $(sector_of "$sr") + 8 )) 8"
  echo "read $(( $(sector_of "$sr2") + 16 )) 8"
} >"$BAD"
sha256sum "${m[@]}" >"$tmpdir/before.sum"
st=0
"$RAID5CTL" check "${m[0]}" "nbd+unix:///?socket=$sock1" "${m[2]}" \
  >"$tmpdir/ro.out" 2>&1 || st=$?
[ $st = 1 ] || fail "check over two unreadable sectors exited $st: $(cat "$tmpdir/ro.out")"
for s in "$sr" "$sr2"; do
  [ "$(grep -Ec "check: stripe $s skipped: member 1 .*: read error at member offset [0-9]+: not corrected, the array is read-only" \
       "$tmpdir/ro.out")" = 1 ] || fail "check does not name stripe $s once: $(cat "$tmpdir/ro.out")"
done
grep -q '^check: [0-9]* stripes checked, 0 with wrong parity' "$tmpdir/ro.out" ||
  fail "check did not go on to the end: $(cat "$tmpdir/ro.out")"
grep -q '^2 stripes not checked: a member could not read them' "$tmpdir/ro.out" ||
  fail "check does not count the stripes it skipped: $(cat "$tmpdir/ro.out")"
# Stripe sw's row is in member 1's bad-block log (above): skipped, said.
grep -q '^1 stripes not wholly checked: bad blocks in their rows' "$tmpdir/ro.out" &&
  grep -q "^check: $(( size / (2 * CHUNK) - 3 )) stripes checked" "$tmpdir/ro.out" ||
  fail "check counts skipped stripes as checked: $(cat "$tmpdir/ro.out")"
unremapped () {
  ! grep -Eq "^remapped ($(( $(sector_of "$sr") + 8 ))|$(( $(sector_of "$sr2") + 16 ))) " "$LOG"
}
unremapped || fail "check rewrote a bad sector: $(cat "$LOG")"
sha256sum -c --quiet "$tmpdir/before.sum" || fail "check changed a member"

echo "== served read-only: the sector read around, member 1 kept in service"
serve_ctl "$tmpdir/ro-serve.log" "${disks[@]}" readonly=true || fail "serve read-only"
nbdcopy "$URI" "$tmpdir/back" || fail "reading the read-only array over a read error"
cmp "$tmpdir/model" "$tmpdir/back" || fail "wrong bytes read-only over a read error"
[ "$(ctl_get '"%s %s" % (s["health"], s["members"][1]["state"])')" = "[UUU] active" ] ||
  fail "read-only, member 1: $(ctl_get 's["health"], s["members"][1]["state"]')"
grep -Eq "member 1 .*: read error at member offset [0-9]+: read from the other members, not rewritten" \
  "$tmpdir/ro-serve.log" || fail "read-only: the log does not say: $(cat "$tmpdir/ro-serve.log")"
st=0
"$RAID5CTL" --control "$CTL_SOCK" check --wait >"$tmpdir/ro-check.out" 2>&1 || st=$?
[ $st = 1 ] && grep -q '^2 stripes not checked' "$tmpdir/ro-check.out" ||
  fail "read-only online check exited $st: $(cat "$tmpdir/ro-check.out")"
[ "$(ctl_get '"%s %s %s" % (s["last_job"]["read_error_stripes"], s["last_job"]["result"], s["members"][1]["state"])')" = "2 0 active" ] ||
  fail "read-only online check: $(ctl_get 's["last_job"], s["members"][1]["state"]')"
# md's count of read errors (raid5_end_read_request): any good read of
# the member clears it, so 300 read errors each followed by a good read
# of member 1 keep it in service; 300 in a row (more than md's 256) take
# it out -- in memory only, the array being read-only.
read_errors ()
{
  /usr/bin/python3 - "$URI" "$tmpdir/model" "$sr" "$CHUNK" "$1" <<'EOF'
import nbd, sys
uri, model, s, chunk = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
good = sys.argv[5] == "good"
pd = 2 - s % 3                          # left-symmetric, 3 members
at = s * 2 * chunk + (3 - pd) % 3 * chunk   # member 1's data chunk
want = open(model, "rb").read()
h = nbd.NBD(); h.connect_uri(uri)
def read(off):
    if h.pread(4096, off) != want[off:off + 4096]:
        sys.exit("wrong bytes at array offset %d" % off)
for _ in range(300):
    read(at + 4096)                     # its sectors 8-15: every read fails
    if good:
        read(at)                        # its sectors 0-7: read well
EOF
}
read_errors good || fail "300 read errors, each then a good read"
[ "$(ctl_get '"%s %s" % (s["health"], s["members"][1]["state"])')" = "[UUU] active" ] ||
  fail "good reads did not clear member 1's read errors: $(ctl_get 's["health"], s["members"][1]["state"]')"
read_errors bad || fail "300 read errors in a row"
[ "$(ctl_get '"%s %s" % (s["health"], s["members"][1]["state"])')" = "[U_U] faulty" ] ||
  fail "300 read errors in a row, member 1: $(ctl_get 's["health"], s["members"][1]["state"]')"
grep -Eq "member 1 .*: 257 read errors in a row, more than md's 256: taken out of service" \
  "$tmpdir/ro-serve.log" || fail "the log does not say member 1 was taken out"
stop_server
unremapped || fail "the read-only server rewrote a bad sector: $(cat "$LOG")"
sha256sum -c --quiet "$tmpdir/before.sum" || fail "the read-only server changed a member"
"$RAID5CTL" repair "${m[0]}" "nbd+unix:///?socket=$sock1" "${m[2]}" \
  >"$tmpdir/rw.out" 2>&1 || fail "repair: $(cat "$tmpdir/rw.out")"
for x in "$(( $(sector_of "$sr") + 8 ))" "$(( $(sector_of "$sr2") + 16 ))"; do
  grep -q "^remapped $x 8\$" "$LOG" || fail "repair did not rewrite sector $x: $(cat "$LOG")"
done

echo "== the same without a bad-block log (raw members): member 1 out"
r=()
for i in 0 1 2; do
  r+=("$tmpdir/r$i.img")
  truncate -s ${MB}M "${r[$i]}"
done
sockr=$tmpdir/r1.nsock
badsector_serve "${r[1]}" "$sockr" "$BAD" "$tmpdir/r.log"
serve_ctl "$tmpdir/raw.log" metadata=none chunk=64K "disk=${r[0]}" \
  "disk=nbd+unix:///?socket=$sockr" "disk=${r[2]}" || fail "serve raw"
size=$(ctl_get 's["size_bytes"]')
head -c "$size" /dev/urandom >"$tmpdir/model"
nbdcopy "$tmpdir/model" "$URI" || fail "filling the raw array"
echo "write $(( sw * CHUNK / 512 )) 8" >"$BAD"      # data offset 0
nbdcopy "$URI" "$tmpdir/back" || fail "reading the raw array with member 1 failing"
cmp "$tmpdir/model" "$tmpdir/back" || fail "wrong bytes with member 1 failing (raw)"
[ "$(ctl_get '"%s %s" % (s["health"], s["members"][1]["state"])')" = "[U_U] faulty" ] ||
  fail "raw member 1: $(ctl_get 's["health"], s["members"][1]["state"]')"
stop_server
echo "test-read-error: OK"
