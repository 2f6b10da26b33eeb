#!/usr/bin/env bash
# Several read errors met by one request or one piece of a check, as md
# meets them: md counts failed devices row by row (a stripe_head: 4 KiB
# of each member), so unreadable sectors in different rows -- of one
# member or of two -- are each corrected (writable) or read around
# (read-only), and only two members failing in one row fail the read.
# Members 1 and 2 are disks with bad sectors (nbdkit-badsector-plugin over
# NBD); the array holds random data and has no bad-block log entries, so
# requests and checks run in batches of many stripes.
#   - writable: one 2 MiB read over two bad sectors of member 1 (stripes
#     apart) and one of member 2 returns the right bytes, all three are
#     rewritten, no member leaves; members 1 and 2 bad in one row: the
#     row's reads fail, both pages are recorded in their members'
#     bad-block logs, both members stay (md's handle_failed_stripe);
#   - read-only: the same over new bad sectors, plus members 1 and 2 bad
#     in two rows of one stripe: the right bytes, no member leaves,
#     nothing written; members 1 and 2 bad in the same row: that read
#     fails, and the array goes on;
#   - raid5ctl check (offline, read-only) over them goes to the end and
#     names each stripe it could not read, as the online check does;
#   - degraded (member 0 failed), a read error on member 1 cannot be
#     corrected: as md, the page is recorded in member 1's bad-block log
#     and only what needs that row fails, member 1 stays in service (16
#     sectors listed: stripe 29's page too);
#     read-only, nothing is recorded, the read fails, member 2 stays;
#   - rebuilding member 0: rows listed on a survivor (one of them still
#     unreadable) are recorded on the new member, not read, and the
#     rebuild goes on; below the rebuild's mark a read error on member 1
#     is corrected from the row, the rebuilt member's bytes included (md:
#     a recovering device is in sync below its recovery_offset), past it
#     the row is lost and recorded;
#   - a read error in a row another member lists (a failed write left its
#     page stale) is not corrected from that page: the read fails;
#   - a correction below the rebuild's mark whose read of the member being
#     rebuilt fails: that member is taken out (md_error), not listed.
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
. "${0%/*}/job-functions.sh"
requires_jobs
requires_raid5ctl

MB=16 CHUNK=65536
md_create g 3 ${MB}M --chunk 64K --bitmap none --assume-clean
m=("${MEMBERS[@]}")
[ "$MD_LAYOUT" = left-symmetric ] || fail "layout $MD_LAYOUT"
for i in 1 2; do
  badsector_serve "${m[$i]}" "$tmpdir/g$i.nsock" "$tmpdir/bad$i.list" "$tmpdir/bad$i.log"
done
disks=("disk=${m[0]}" "disk=nbd+unix:///?socket=$tmpdir/g1.nsock"
       "disk=nbd+unix:///?socket=$tmpdir/g2.nsock")
serve_ctl "$tmpdir/nbdkit.log" "${disks[@]}" || fail "serve"
size=$(ctl_get 's["size_bytes"]')
head -c "$size" /dev/urandom >"$tmpdir/model"
nbdcopy "$tmpdir/model" "$URI" || fail "filling the array"

# sec M S ROW: member M's sector of 4 KiB row ROW of its chunk in stripe
# S; the stripes used hold data on both members 1 and 2 (S % 3 == 2 in
# left-symmetric order over 3 members: parity on member 0).
sec () { echo $(( (MD_DOFF + $2 * CHUNK + $3 * 4096) / 512 )); }
health () { ctl_get '"%s %s %s" % (s["health"], s["members"][1]["state"], s["members"][2]["state"])'; }
stripe_off () { echo $(( $1 * 2 * CHUNK )); }

echo "== writable: three read errors in one read, each corrected"
echo "read $(sec 1 20 1) 8" >"$tmpdir/bad1.list"
echo "read $(sec 1 26 2) 8" >>"$tmpdir/bad1.list"
echo "read $(sec 2 23 3) 8" >"$tmpdir/bad2.list"
read_range "$(stripe_off 18)" $(( 2 << 20 )) || fail "the read over three read errors"
[ "$(health)" = "[UUU] active active" ] || fail "after the read: $(health)"
for x in "1 $(sec 1 20 1)" "1 $(sec 1 26 2)" "2 $(sec 2 23 3)"; do
  set -- $x
  grep -q "^remapped $2 8\$" "$tmpdir/bad$1.log" ||
    fail "member $1's sector $2 was not rewritten: $(cat "$tmpdir/bad$1.log")"
done
echo "== writable: members 1 and 2 fail in one row: both pages recorded, both kept"
echo "read $(sec 1 29 3) 8" >"$tmpdir/bad1.list"
echo "read $(sec 2 29 3) 8" >"$tmpdir/bad2.list"
read_range "$(stripe_off 29)" $(( 2 * CHUNK )) 2>/dev/null &&
  fail "a row two members cannot read was read"
read_range "$(stripe_off 28)" $(( 2 * CHUNK )) && read_range "$(stripe_off 30)" $(( 2 * CHUNK )) &&
  read_range "$(stripe_off 29)" $(( 3 * 4096 )) || fail "the rows around the lost one"
[ "$(ctl_get '"%s %s %s %s %s" % (s["health"], s["members"][1]["state"], s["members"][2]["state"], s["members"][1]["bad_blocks"]["sectors"], s["members"][2]["bad_blocks"]["sectors"])')" = "[UUU] active active 8 8" ] ||
  fail "two members failing in one row: $(ctl_get 's["health"], s["members"][1], s["members"][2]')"
# Read errors, not write errors: md sets WriteErrorSeen only for writes,
# and a member that saw none gets its listed pages rewritten later.
[ "$(ctl_get '"%s %s" % (s["members"][1]["bad_blocks"]["write_error_seen"], s["members"][2]["bad_blocks"]["write_error_seen"])')" = "False False" ] ||
  fail "a read error counted as a write error: $(ctl_get 's["members"][1], s["members"][2]')"
stop_server

echo "== read-only: read around row by row, no member out, nothing written"
sha256sum "${m[@]}" >"$tmpdir/before.sum"
echo "read $(sec 1 38 1) 8" >"$tmpdir/bad1.list"     # stripe 38: member 1 only
echo "read $(sec 1 41 2) 8" >>"$tmpdir/bad1.list"    # stripe 41: members 1 and 2,
echo "read $(sec 2 41 5) 8" >"$tmpdir/bad2.list"     #   rows 2 and 5
echo "read $(sec 2 44 0) 8" >>"$tmpdir/bad2.list"    # stripe 44: member 2 only
serve_ctl "$tmpdir/ro.log" "${disks[@]}" readonly=true || fail "serve read-only"
read_range "$(stripe_off 37)" $(( 2 << 20 )) || fail "the read-only read over four read errors"
[ "$(health)" = "[UUU] active active" ] || fail "read-only, after the read: $(health)"
grep -q "while member [12] was read around" "$tmpdir/ro.log" &&
  fail "a second member's read error failed a read: $(grep 'read around' "$tmpdir/ro.log")"
echo "read $(sec 2 41 2) 8" >>"$tmpdir/bad2.list"    # row 2 of stripe 41 on both
read_range "$(stripe_off 41)" $(( 2 * CHUNK )) 2>/dev/null &&
  fail "a row two members cannot read was read"
grep -q "while member 1 was read around: the bytes cannot be computed" "$tmpdir/ro.log" ||
  fail "the failed read is not explained: $(tail -n 3 "$tmpdir/ro.log")"
read_range "$(stripe_off 44)" $(( 2 * CHUNK )) || fail "read-only, a read after the failed one"
[ "$(health)" = "[UUU] active active" ] || fail "read-only, after the failed read: $(health)"
stop_server
sha256sum -c --quiet "$tmpdir/before.sum" || fail "the read-only server changed a member"

echo "== check, offline and read-only: each unreadable stripe named, the rest checked"
st=0
"$RAID5CTL" check "${m[0]}" "nbd+unix:///?socket=$tmpdir/g1.nsock" \
  "nbd+unix:///?socket=$tmpdir/g2.nsock" >"$tmpdir/check.out" 2>&1 || st=$?
[ $st = 1 ] || fail "check exited $st: $(cat "$tmpdir/check.out")"
for s in 38 41 44; do
  grep -Eq "check: stripe $s skipped: member [12] .*: read error at member offset" \
    "$tmpdir/check.out" || fail "check does not name stripe $s: $(cat "$tmpdir/check.out")"
done
grep -q '^3 stripes not checked' "$tmpdir/check.out" ||
  fail "check does not count 3 stripes: $(cat "$tmpdir/check.out")"
grep -q '^1 stripes not wholly checked: bad blocks in their rows' "$tmpdir/check.out" ||
  fail "check does not count stripe 29, listed: $(cat "$tmpdir/check.out")"
grep -q "^check: $(( size / (2 * CHUNK) - 4 )) stripes checked, 0 with wrong parity" \
  "$tmpdir/check.out" || fail "the stripes not checked are counted as checked: $(cat "$tmpdir/check.out")"
grep -q 'member marked faulty\|degraded' "$tmpdir/check.out" &&
  fail "check took a member out: $(cat "$tmpdir/check.out")"
sha256sum -c --quiet "$tmpdir/before.sum" || fail "the check changed a member"
echo "== degraded: a read error on a member in service fails that row only"
# read_fails OFF LEN: a read the array must refuse.
read_fails () { ! read_range "$1" "$2" 2>/dev/null; }
: >"$tmpdir/bad1.list"; : >"$tmpdir/bad2.list"
serve_ctl "$tmpdir/deg.log" "${disks[@]}" || fail "serve again"
ctl_ok fail 0
echo "read $(sec 1 47 1) 8" >"$tmpdir/bad1.list"     # stripe 47: parity on member 0
read_fails $(( $(stripe_off 47) + 4096 )) 4096 || fail "a row lost on two members was read"
read_range "$(stripe_off 47)" 4096 && read_range $(( $(stripe_off 47) + 8192 )) $(( 2 * CHUNK - 8192 )) ||
  fail "the rest of stripe 47 does not read right"
read_fails "$(stripe_off 46)" $(( 3 * 2 * CHUNK )) || fail "a read over the lost row succeeded"
read_range "$(stripe_off 48)" $(( 2 << 20 )) || fail "a degraded read past the lost row"
[ "$(ctl_get '"%s %s %s" % (s["health"], s["members"][1]["state"], s["members"][1]["bad_blocks"]["sectors"])')" = "[_UU] active 16" ] ||
  fail "degraded, after the read error: $(ctl_get 's["health"], s["members"][1]')"
grep -q "member 1 .*: 4096 bytes at member offset $(( $(sec 1 47 1) * 512 )) recorded in its md bad-block log" \
  "$tmpdir/deg.log" || fail "the lost page was not recorded: $(tail -n 3 "$tmpdir/deg.log")"
stop_server
sha256sum "${m[@]}" >"$tmpdir/before.sum"
echo "read $(sec 2 53 2) 8" >"$tmpdir/bad2.list"     # stripe 53: parity on member 0
serve_ctl "$tmpdir/deg-ro.log" "${disks[@]}" readonly=true || fail "serve degraded, read-only"
read_fails $(( $(stripe_off 53) + CHUNK + 8192 )) 4096 || fail "read-only: a lost row was read"
read_range "$(stripe_off 53)" "$CHUNK" || fail "read-only: the rest of stripe 53"
[ "$(ctl_get '"%s %s" % (s["health"], s["members"][2]["state"])')" = "[_UU] active" ] ||
  fail "read-only, degraded, after the read error: $(ctl_get 's["health"], s["members"][2]')"
grep -q "member 2 .*: read error at member offset [0-9]*: not correctable, the array is degraded (member 0 is out of service) and read-only" \
  "$tmpdir/deg-ro.log" || fail "the read-only failure is not explained: $(tail -n 3 "$tmpdir/deg-ro.log")"
stop_server
sha256sum -c --quiet "$tmpdir/before.sum" || fail "the read-only server changed a member"
echo "== rebuilding: below the rebuild's mark a read error is corrected"
# md counts a recovering member in sync for a stripe below its
# recovery_offset (analyse_stripe), so a read error on another member
# there has one failed device and is rewritten from the row -- the
# rebuilt member's bytes included; past the mark it cannot be.
# A page of member 2 no log lists fails reads too, after stripe 29's
# listed row in the rebuild's order: it is recorded on member 2 and the
# rebuild runs that stripe again around it (not the stripes before it:
# stripe 29's row is said lost once).
echo "read $(sec 2 31 5) 8" >"$tmpdir/bad2.list"
serve_ctl "$tmpdir/rb.log" "${disks[@]}" sync-speed-min=500 sync-speed-max=1000 ||
  fail "serve to rebuild"
truncate -s ${MB}M "$tmpdir/new0.img"
ctl_ok rebuild 0 "$tmpdir/new0.img"
ctl_wait "s['job']['kind'] == 'rebuild' and s['job']['done_stripes'] >= 64" 30
ctl_ok pause
mark=$(ctl_get 's["job"]["done_stripes"]')
(( mark >= 64 && mark < 200 )) || fail "the rebuild paused at stripe $mark"
echo "read $(sec 1 20 2) 8" >"$tmpdir/bad1.list"     # stripe 20: parity on member 0
echo "read $(sec 1 230 1) 8" >>"$tmpdir/bad1.list"   # stripe 230: not rebuilt yet
read_range "$(stripe_off 20)" $(( 2 * CHUNK )) || fail "below the rebuild's mark a read error was not corrected"
grep -q "^remapped $(sec 1 20 2) 8\$" "$tmpdir/bad1.log" ||
  fail "member 1's sector below the mark was not rewritten: $(tail -n 3 "$tmpdir/rb.log")"
read_fails $(( $(stripe_off 230) + 4096 )) 4096 || fail "past the rebuild's mark a row lost on two members was read"
[ "$(ctl_get '"%s %s" % (s["members"][1]["state"], s["members"][1]["bad_blocks"]["sectors"])')" = "active 24" ] ||
  fail "while rebuilding, after the read errors: $(ctl_get 's["members"][1]')"
ctl_ok resume
ctl_ok speed --min 100000 --max 200000
ctl_wait "s['job']['kind'] == 'idle' and s['members'][0]['state'] == 'active'" 30
# Rows listed on a survivor cannot be computed: recorded on the new
# member, their listed pages not read (stripe 47's still fails reads).
[ "$(ctl_get '"%s %s %s %s" % (s["health"], s["last_job"]["result"], s["members"][0]["bad_blocks"]["sectors"], s["members"][2]["bad_blocks"]["sectors"])')" = "[UUU] 0 32 16" ] ||
  fail "the rebuild over listed rows: $(ctl_get 's["last_job"], s["members"][0], s["members"][2]["bad_blocks"]')"
[ "$(grep -c "rebuild of slot 0: member bytes $(( $(sec 1 29 3) * 512 ))+4096 cannot be computed" "$tmpdir/rb.log")" = 1 ] ||
  fail "stripe 29's row said lost more than once: $(grep 'cannot be computed' "$tmpdir/rb.log")"
grep -q "rebuild of slot 0: member bytes $(( $(sec 1 47 1) * 512 ))+4096 cannot be computed (member 1 lists them bad" \
  "$tmpdir/rb.log" || fail "stripe 47's row was not recorded on the new member: $(grep 'cannot be computed' "$tmpdir/rb.log")"
read_range "$(stripe_off 20)" $(( 2 * CHUNK )) && read_range "$(stripe_off 47)" 4096 &&
  read_range $(( $(stripe_off 47) + 8192 )) $(( 2 * CHUNK - 8192 )) || fail "after the rebuild, stripes 20 and 47"

echo "== a read error in a row another member lists: not computed from its stale bytes"
# Member 2 fails a write of its row 3 in stripe 62 (parity on member 0):
# the page is listed and keeps its old bytes (a member that failed a write
# gets no rewrite); readable again, it must not be used to compute member
# 1's page of that row when member 1 fails its read there (md: two failed
# devices in the stripe; handle_failed_stripe fails the read).
at=$(( $(stripe_off 62) + CHUNK + 3 * 4096 ))
echo "write $(sec 2 62 3) 8" >"$tmpdir/bad2.list"
head -c 4096 /dev/urandom >"$tmpdir/new"
dd if="$tmpdir/new" of="$tmpdir/model" bs=4096 seek=$(( at / 4096 )) conv=notrunc status=none
/usr/bin/python3 -c 'import nbd, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1]); h.pwrite(open(sys.argv[2], "rb").read(), int(sys.argv[3]))' \
  "$URI" "$tmpdir/new" "$at" || fail "the write member 2 fails"
: >"$tmpdir/bad2.list"
read_range "$at" 4096 || fail "member 2's listed page is not read around"
echo "read $(sec 1 62 3) 8" >"$tmpdir/bad1.list"
/usr/bin/python3 - "$URI" $(( $(stripe_off 62) + 3 * 4096 )) <<'EOF' || fail "member 1's page in member 2's listed row"
import nbd, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1])
try:
    h.pread(4096, int(sys.argv[2]))
    sys.exit("it read (computed from member 2's stale page)")
except nbd.Error:
    pass
EOF
grep -q "^remapped $(sec 1 62 3) 8\$" "$tmpdir/bad1.log" &&
  fail "member 1's page was rewritten from member 2's stale bytes"
grep -q "member 1 .*NOT corrected: another member lists that row bad" "$tmpdir/rb.log" ||
  fail "the log does not say why: $(tail -n 3 "$tmpdir/rb.log")"
read_range "$(stripe_off 62)" $(( 3 * 4096 )) || fail "the rows before it in stripe 62"
stop_server

echo "== rebuilding: the member being rebuilt fails a read a correction needs"
# md sets a bad block on a device in sync only, and fails one that is
# not (raid5_end_read_request: md_error): the rebuild stops, and member
# 1's page, now lost, is recorded on member 1.
: >"$tmpdir/bad1.list"; : >"$tmpdir/bad2.list"
badsector_serve "$tmpdir/new0.img" "$tmpdir/g0.nsock" "$tmpdir/bad0.list" "$tmpdir/bad0.log"
new0="nbd+unix:///?socket=$tmpdir/g0.nsock"
serve_ctl "$tmpdir/rb2.log" "disk=$new0" "${disks[@]:1}" sync-speed-min=500 \
  sync-speed-max=1000 || fail "serve to rebuild again"
ctl_ok fail 0
ctl_ok rebuild 0 "$new0"
ctl_wait "s['job']['kind'] == 'rebuild' and s['job']['done_stripes'] >= 64" 30
ctl_ok pause
s0=$(ctl_get 's["members"][0]["bad_blocks"]["sectors"]')
s1=$(ctl_get 's["members"][1]["bad_blocks"]["sectors"]')
echo "read $(sec 1 26 4) 8" >"$tmpdir/bad1.list"     # stripe 26: parity on member 0
echo "read $(sec 0 26 4) 8" >"$tmpdir/bad0.list"
read_fails $(( $(stripe_off 26) + 4 * 4096 )) 4096 ||
  fail "a row whose rebuilt member's page fails too was read"
[ "$(ctl_get '"%s %s %s" % (s["members"][0]["state"], s["members"][0]["bad_blocks"]["sectors"], s["members"][1]["bad_blocks"]["sectors"])')" = "faulty $s0 $(( s1 + 8 ))" ] ||
  fail "the rebuilt member's failed read: $(ctl_get 's["members"][0], s["members"][1]["bad_blocks"], s["job"]')"
stop_server
echo "test-read-error-rows: OK"
