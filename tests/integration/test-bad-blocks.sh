#!/usr/bin/env bash
# md's bad-block log while serving.  Members 1 and 2 are disks with bad
# sectors (nbdkit-badsector-plugin over NBD: a "write" sector fails reads
# and writes).  The array holds random data, a model of it kept here.
#   - a client write over a sector of member 1 that cannot be written:
#     the page is recorded in member 1's log (md's rdev_set_badblocks),
#     member 1 stays in service, every byte reads right, status shows the
#     bad block and that member 1 failed a write;
#   - after a restart the entry is still there (raid5ctl examine
#     --badblocks and mdadm --examine-badblocks list it), and still served
#     from the rest of its row;
#   - the sector good again (the disk remapped it) and the server started
#     again (member 1 has failed no write since): a read of the row
#     rewrites the page, reads it back and clears it from the log;
#   - a check over that page listed again on member 1 (bb-put), stale,
#     member 2 failing reads of its page of the row: the check cannot
#     rewrite it, says so, and does not mark member 1 as failing writes;
#     member 2 well again, the next check rewrites it from the row and
#     clears it (md's sync does);
#   - the same row listed on members 1 and 2 (bb-put): a write there and
#     a read of member 1's chunk there fail, the log naming the array
#     bytes; the chunk of member 0 there and the pages around read right;
#     status counts the lost requests; a check skips the stripe;
#   - member 0 rebuilt onto a new disk with member 1's bad page listed:
#     the rebuild completes, records the page it could not compute on the
#     new member 0 and logs the array bytes lost; all else reads right;
#   - slot 1 replaced (raid5ctl replace) while it lists that page and
#     another, spoiled, one: the copy computes the spoiled one from the
#     row, and lists the lost one on the replacement; and a third it lists
#     in a row where member 2 lists its page and still fails reads of it:
#     the copy does not read member 2's page, lists that one lost too; a
#     page of that chunk member 1 reads well but member 0 lists is copied;
#     a page members 1 and 2 both fail to read (none listed) is listed on
#     the replacement only; all else reads right.
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
. "${0%/*}/job-functions.sh"
requires_jobs
requires_raid5ctl
requires_programs mdadm
BB_PUT=$abs_top_builddir/tests/tools/bb-put
[ -x "$BB_PUT" ] || skip "not built: $BB_PUT"

MB=16 CHUNK=65536
md_create g 3 ${MB}M --chunk 64K --bitmap none --assume-clean
m=("${MEMBERS[@]}")
[ "$MD_LAYOUT" = left-symmetric ] || fail "layout $MD_LAYOUT"

# bad_disk I: member I a disk with bad sectors, its list in
# $tmpdir/badI.list (empty at first), its log in $tmpdir/badI.log.
bad_disk ()
{
  badsector_serve "${m[$1]}" "$tmpdir/g$1.nsock" "$tmpdir/bad$1.list" "$tmpdir/bad$1.log"
}
bad_disk 1
bad_disk 2
disks=("disk=${m[0]}" "disk=nbd+unix:///?socket=$tmpdir/g1.nsock"
       "disk=nbd+unix:///?socket=$tmpdir/g2.nsock")
serve () {
  serve_ctl "$tmpdir/nbdkit.log" -v -D nbdkit.backend.datapath=0 "${disks[@]}" ||
    fail "serve"
}
serve
size=$(ctl_get 's["size_bytes"]')
head -c "$size" /dev/urandom >"$tmpdir/model"
nbdcopy "$tmpdir/model" "$URI" || fail "filling the array"

# Stripe 6 (left-symmetric, 3 members): parity on member 2 (2 - 6 % 3),
# data 0 on member 0, data 1 on member 1.  Its page 3 (member bytes
# 12288..16383 of the chunk) is the one spoiled below.
S=6 P=3
row=$(( MD_DOFF + S * CHUNK + P * 4096 ))   # member byte offset
sector=$(( row / 512 ))
a0=$(( S * 2 * CHUNK + P * 4096 ))          # array bytes of member 0 there
a1=$(( a0 + CHUNK ))                        # ... and of member 1

# write_model OFF LEN: LEN random bytes at array offset OFF, into the
# model and through the array; READ_BACK=1 verifies the whole array.
write_model ()
{
  head -c "$2" /dev/urandom >"$tmpdir/piece"
  dd if="$tmpdir/piece" of="$tmpdir/model" bs=4096 seek=$(( $1 / 4096 )) \
    conv=notrunc status=none
  /usr/bin/python3 - "$URI" "$tmpdir/piece" "$1" <<'EOF' || return 1
import nbd, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1])
h.pwrite(open(sys.argv[2], 'rb').read(), int(sys.argv[3])); h.flush()
EOF
}
verify ()
{
  nbdcopy "$URI" "$tmpdir/back" || fail "$1: reading the array"
  cmp "$tmpdir/model" "$tmpdir/back" || fail "$1: the array read wrong bytes"
}
listed () { mdadm --examine-badblocks "$1" | sed -n 's/^ *\([0-9]*\) for \([0-9]*\) sectors$/\1 \2/p'; }

echo "== a client write over an unwritable sector of member 1"
echo "write $(( sector + 3 )) 1" >"$tmpdir/bad1.list"
write_model $(( a1 - 8192 )) 65536 || fail "a write over the bad sector failed"
grep -q "^write-error" "$tmpdir/bad1.log" || fail "no write reached the bad sector"
[ "$(ctl_get '"%s %s" % (s["health"], s["members"][1]["state"])')" = "[UUU] active" ] ||
  fail "member 1: $(ctl_get 's["health"], s["members"][1]["state"]')"
[ "$(ctl_get '(s["members"][1]["bad_blocks"]["sectors"], s["members"][1]["bad_blocks"]["write_error_seen"])')" = "(8, True)" ] ||
  fail "status: $(ctl_get 's["members"][1]["bad_blocks"]')"
grep -q "member 1 .*: 4096 bytes at member offset $row recorded in its md bad-block log" \
  "$tmpdir/nbdkit.log" || fail "the log does not say the page was recorded"
verify "member 1's page recorded"
ctl status | grep 'bad blocks:'

echo "== kept across a restart; mdadm --examine-badblocks lists it"
stop_server
[ "$(listed "${m[1]}")" = "$sector 8" ] || fail "mdadm lists '$(listed "${m[1]}")'"
diff <(mdadm --examine-badblocks "${m[1]}") <("$RAID5CTL" examine --badblocks "${m[1]}") ||
  fail "raid5ctl examine --badblocks and mdadm differ"
mdadm --examine-badblocks "${m[1]}" | sed 's/^/   /'
serve
[ "$(ctl_get 's["members"][1]["bad_blocks"]["sectors"]')" = 8 ] ||
  fail "after the restart: $(ctl_get 's["members"][1]["bad_blocks"]')"
stop_server

echo "== the sector good again: the next read rewrites it and clears it"
: >"$tmpdir/bad1.list"
serve
verify "the page rewritten"
[ "$(ctl_get 's["members"][1]["bad_blocks"]["sectors"]')" = 0 ] ||
  fail "not cleared: $(ctl_get 's["members"][1]["bad_blocks"]')"
grep -q "good again (written well): cleared" "$tmpdir/nbdkit.log" ||
  fail "the log does not say the page was cleared"
stop_server
[ -z "$(listed "${m[1]}")" ] || fail "mdadm still lists '$(listed "${m[1]}")'"

echo "== a check over a page member 1 lists, stale: member 2 fails the row's read, then heals"
# md's sync writes a page one device lists from the rest of its row and
# clears it (handle_parity_checks5, R5_MadeGood).  Member 2 failing the
# read of that row is not member 1's write error: member 1 is not marked,
# and the next check, member 2 well again, rewrites the page.
"$BB_PUT" "${m[1]}" "$sector+8" >/dev/null || fail "bb-put member 1"
dd if=/dev/zero of="${m[1]}" bs=512 seek=$sector count=8 conv=notrunc status=none
echo "read $sector 8" >"$tmpdir/bad2.list"
serve
"$RAID5CTL" --control "$CTL_SOCK" check --wait >"$tmpdir/check1.out" 2>&1 ||
  { cat "$tmpdir/check1.out" >&2; fail "check with member 2 failing the row"; }
badsector_met "$tmpdir/bad2.log" "$sector" ||
  fail "the check did not read member 2's page of the row"
grep -q "member 1 .*its listed bad block at member offset $row not rewritten: another member failed the read of its row" \
  "$tmpdir/nbdkit.log" || fail "the log does not say why the page stayed"
[ "$(ctl_get '(s["members"][1]["bad_blocks"]["sectors"], s["members"][1]["bad_blocks"]["write_error_seen"])')" = "(8, False)" ] ||
  fail "after the first check: $(ctl_get 's["members"][1]["bad_blocks"]')"
: >"$tmpdir/bad2.list"
"$RAID5CTL" --control "$CTL_SOCK" check --wait >"$tmpdir/check2.out" 2>&1 ||
  { cat "$tmpdir/check2.out" >&2; fail "check with member 2 well"; }
grep -q '^8 sectors a member listed bad rewritten' "$tmpdir/check2.out" ||
  fail "the second check: $(cat "$tmpdir/check2.out")"
[ "$(ctl_get 's["members"][1]["bad_blocks"]["sectors"]')" = 0 ] ||
  fail "not cleared: $(ctl_get 's["members"][1]["bad_blocks"]')"
verify "the page a check rewrote"
stop_server
[ -z "$(listed "${m[1]}")" ] || fail "mdadm still lists '$(listed "${m[1]}")'"

echo "== a check over a stripe with a row two members list, a wrong parity page and a page member 1 cannot read or write"
# Stripe 6: row P (3) listed on members 1 and 2 (skipped), parity wrong
# in row 1 (member 2), member 1's row 5 failing reads and writes: the
# check compares rows 0-2, meets the read error, cannot rewrite it and
# records it, then runs the stripe again around it -- the wrong parity
# counted once (mismatch_cnt 8), member 1 kept.
"$BB_PUT" "${m[1]}" "$sector+8" >/dev/null || fail "bb-put member 1"
"$BB_PUT" "${m[2]}" "$sector+8" >/dev/null || fail "bb-put member 2"
flip=$(( MD_DOFF + S * CHUNK + 4096 + 100 ))
dd if="${m[2]}" of="$tmpdir/flip.orig" bs=1 skip=$flip count=1 status=none
printf '\xa5' | dd of="${m[2]}" bs=1 seek=$flip conv=notrunc status=none
cmp -s "$tmpdir/flip.orig" <(printf '\xa5') &&
  printf '\x5a' | dd of="${m[2]}" bs=1 seek=$flip conv=notrunc status=none
serve
echo "write $(( (MD_DOFF + S * CHUNK + 5 * 4096) / 512 )) 8" >"$tmpdir/bad1.list"
st=0
"$RAID5CTL" --control "$CTL_SOCK" check --wait >"$tmpdir/check3.out" 2>&1 || st=$?
[ $st = 2 ] || { cat "$tmpdir/check3.out" >&2; fail "check over the stripe: exit $st, not 2 (wrong parity found)"; }
grep -q 'mismatch_cnt 8$' "$tmpdir/check3.out" ||
  fail "the wrong parity is not counted once: $(cat "$tmpdir/check3.out")"
[ "$(ctl_get '(s["health"], s["members"][1]["bad_blocks"]["sectors"])')" = "('[UUU]', 16)" ] ||
  fail "after the check: $(ctl_get '(s["health"], s["members"][1]["bad_blocks"])')"
stop_server
: >"$tmpdir/bad1.list"
"$BB_PUT" "${m[1]}" >/dev/null && "$BB_PUT" "${m[2]}" >/dev/null || fail "bb-put (clearing)"
dd if="$tmpdir/flip.orig" of="${m[2]}" bs=1 seek=$flip conv=notrunc status=none
echo "== the row listed on members 1 and 2: lost there only"
"$BB_PUT" "${m[1]}" "$sector+8" >/dev/null || fail "bb-put member 1"
"$BB_PUT" "${m[2]}" "$sector+8" >/dev/null || fail "bb-put member 2"
serve
/usr/bin/python3 - "$URI" "$tmpdir/model" "$a0" "$a1" <<'EOF' || fail "requests around the lost row"
import nbd, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1])
model = open(sys.argv[2], 'rb').read()
a0, a1 = int(sys.argv[3]), int(sys.argv[4])
for what, f in (("a read of member 1's chunk", lambda: h.pread(4096, a1)),
                ("a write of member 0's chunk",
                 lambda: h.pwrite(model[a0:a0 + 4096], a0))):
    try:
        f()
        sys.exit("%s in the lost row succeeded" % what)
    except nbd.Error:
        pass
if h.pread(4096, a0) != model[a0:a0 + 4096]:
    sys.exit("member 0's chunk in the lost row read wrong")
if h.pread(8192, a1 + 4096) != model[a1 + 4096:a1 + 12288]:
    sys.exit("the pages after the lost row read wrong")
if h.pread(4096, a1 - 4096) != model[a1 - 4096:a1]:
    sys.exit("the page before the lost row read wrong")
EOF
grep -q "are lost: their row (member offset $row) is bad on members 1 and 2" \
  "$tmpdir/nbdkit.log" || fail "the log does not name the lost row"
[ "$(ctl_get 's["counters"]["lost_requests"]')" = 2 ] ||
  fail "lost requests: $(ctl_get 's["counters"]')"
[ "$(ctl_get 's["health"]')" = "[UUU]" ] || fail "health $(ctl_get 's["health"]')"
"$RAID5CTL" --control "$CTL_SOCK" check --wait >"$tmpdir/check.out" 2>&1 ||
  { cat "$tmpdir/check.out" >&2; fail "check"; }
grep -q 'mismatch_cnt 0$' "$tmpdir/check.out" || fail "check: $(cat "$tmpdir/check.out")"
[ "$(ctl_get 's["last_job"]["bad_block_stripes"]')" = 1 ] ||
  fail "check skipped $(ctl_get 's["last_job"]')"
grep -q "check: stripe $S: member bytes $row+4096 skipped: members 1 and 2 list them bad" "$tmpdir/nbdkit.log" ||
  fail "the check did not say it skipped stripe $S"
stop_server

echo "== member 0 rebuilt with member 1's page listed: that row lost only"
# Member 2's entry cleared (bb-put), so that the row is bad on member 1
# alone: the rebuild cannot compute member 0's page there.
"$BB_PUT" "${m[2]}" >/dev/null || fail "bb-put (clearing member 2's log)"
[ -z "$(listed "${m[2]}")" ] || fail "member 2 still lists '$(listed "${m[2]}")'"
serve
truncate -s ${MB}M "$tmpdir/new0.img"
ctl_ok fail 0
"$RAID5CTL" --control "$CTL_SOCK" rebuild --wait 0 "$tmpdir/new0.img" >"$tmpdir/rebuild.out" 2>&1 ||
  { cat "$tmpdir/rebuild.out" >&2; fail "rebuild --wait"; }
grep -q '^rebuild: 1 stripes not wholly rebuilt: .* those bytes are lost' "$tmpdir/rebuild.out" ||
  fail "rebuild --wait does not say bytes were lost: $(cat "$tmpdir/rebuild.out")"
[ "$(ctl_get 's["health"]')" = "[UUU]" ] || fail "health after the rebuild $(ctl_get 's["health"]')"
[ "$(ctl_get '(s["members"][0]["bad_blocks"]["sectors"], s["last_job"]["bad_block_stripes"])')" = "(8, 1)" ] ||
  fail "after the rebuild: $(ctl_get '(s["members"][0]["bad_blocks"], s["last_job"])')"
grep -q "rebuild of slot 0: member bytes $row+4096 cannot be computed (member 1 lists them bad .*array bytes lost: $a0+4096, $a1+4096" \
  "$tmpdir/nbdkit.log" || fail "the log does not name the lost array bytes"
cat >"$tmpdir/read-all.py" <<'EOF'
# read-all.py URI MODEL SIZE LOST...: the array reads as MODEL but for
# the 4 KiB at each LOST array offset, whose reads fail.
import nbd, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1])
model = open(sys.argv[2], 'rb').read()
size = int(sys.argv[3])
lost = [int(x) for x in sys.argv[4:]]
for a in lost:
    try:
        h.pread(4096, a)
        sys.exit("array bytes %d, lost, read" % a)
    except nbd.Error:
        pass
step = 1 << 20
for off in range(0, size, step):
    pieces = [(off, min(off + step, size))]
    for a in lost:
        pieces = [p for (x, y) in pieces
                  for p in ((x, min(y, a)), (max(x, a + 4096), y)) if p[0] < p[1]]
    for x, y in pieces:
        if h.pread(y - x, x) != model[x:y]:
            sys.exit("array bytes %d..%d read wrong" % (x, y))
EOF
/usr/bin/python3 "$tmpdir/read-all.py" "$URI" "$tmpdir/model" "$size" "$a0" "$a1" ||
  fail "reads after the rebuild"
stop_server
[ "$(listed "$tmpdir/new0.img")" = "$sector 8" ] ||
  fail "the new member 0 lists '$(listed "$tmpdir/new0.img")'"

echo "== slot 1 replaced: its listed page computed, the lost one listed on the replacement"
# Stripe 9: parity on member 2 (2 - 9 % 3), data 1 on member 1.  Member
# 1's page 5 there is spoiled and listed: the copy computes it.
row2=$(( MD_DOFF + 9 * CHUNK + 5 * 4096 ))
head -c 4096 /dev/urandom | dd of="${m[1]}" bs=4096 seek=$(( row2 / 4096 )) \
  conv=notrunc status=none
# Stripe 12 (parity on member 2): member 1 lists its page 6, and member
# 2 lists its page there and still fails reads of it (a disk's bad
# sector): the copy computes member 1's chunk without reading member 2's
# listed page, and lists page 6 lost on the replacement.
row3=$(( MD_DOFF + 12 * CHUNK + 6 * 4096 ))
a3=$(( 12 * 2 * CHUNK + CHUNK + 6 * 4096 ))  # array bytes of member 1 there
"$BB_PUT" "${m[1]}" "$sector+8" "$(( row2 / 512 ))+8" "$(( row3 / 512 ))+8" >/dev/null ||
  fail "bb-put member 1"
"$BB_PUT" "${m[2]}" "$(( row3 / 512 ))+8" >/dev/null || fail "bb-put member 2"
# Member 0 lists its page 2 of stripe 12, which member 1 reads well: md's
# unit is a 4 KiB stripe_head, so that page of member 1 is copied, not
# given up with the chunk its page 6 makes the copy compute.
row4=$(( MD_DOFF + 12 * CHUNK + 2 * 4096 ))
"$BB_PUT" "$tmpdir/new0.img" "$sector+8" "$(( row4 / 512 ))+8" >/dev/null ||
  fail "bb-put member 0"
# Stripe 15 (parity on member 2): member 1's page 1 and member 2's fail
# reads, neither listed: the array is whole, so md counts two failed
# devices in that stripe_head and lists the page on the replacement only
# (handle_failed_sync), nothing on member 2.
row5=$(( MD_DOFF + 15 * CHUNK + 4096 ))
a5=$(( 15 * 2 * CHUNK + CHUNK + 4096 ))
echo "read $(( row5 / 512 )) 8" >"$tmpdir/bad1.list"
printf 'read %s 8\n' "$(( row3 / 512 ))" "$(( row5 / 512 ))" >"$tmpdir/bad2.list"
disks[0]="disk=$tmpdir/new0.img"
serve
truncate -s ${MB}M "$tmpdir/new1.img"
"$RAID5CTL" --control "$CTL_SOCK" replace --wait 1 "$tmpdir/new1.img" >"$tmpdir/replace.out" 2>&1 ||
  { cat "$tmpdir/replace.out" >&2; fail "replace --wait"; }
grep -Eq '^replace: [0-9]+ stripes not wholly copied: .* those bytes are lost' "$tmpdir/replace.out" ||
  fail "replace --wait does not say bytes were lost: $(cat "$tmpdir/replace.out")"
[ "$(ctl_get '(s["health"], s["members"][1]["path"], s["members"][1]["bad_blocks"]["sectors"], s["members"][2]["bad_blocks"]["sectors"])')" = \
  "('[UUU]', '$tmpdir/new1.img', 24, 8)" ] ||
  fail "after the replace: $(ctl_get '(s["health"], s["members"][1], s["members"][2]["bad_blocks"], s["last_job"])')"
grep -q "replace of slot 1: member bytes $row+4096 are bad on it and on member 0" \
  "$tmpdir/nbdkit.log" || fail "the log does not name the page the replace could not copy"
grep -q "replace of slot 1: member bytes $row3+4096 are bad on it and on member 2" \
  "$tmpdir/nbdkit.log" || fail "the log does not name stripe 12's page"
/usr/bin/python3 "$tmpdir/read-all.py" "$URI" "$tmpdir/model" "$size" "$a0" "$a1" "$a3" "$a5" ||
  fail "reads after the replace"
stop_server
[ "$(listed "$tmpdir/new1.img")" = "$sector 8
$(( row3 / 512 )) 8
$(( row5 / 512 )) 8" ] ||
  fail "the replacement lists '$(listed "$tmpdir/new1.img")'"
echo "test-bad-blocks: OK"
