#!/usr/bin/env bash
# Write errors while an array grows, on a member that keeps md's bad-block
# log: md records a failed write and keeps the member (raid5.c
# R5_WriteError -> md.c rdev_set_badblocks), in the middle of a reshape
# as at any time -- a client's write ahead of the line (the old shape) and
# the reshape's own writes of the new shape alike.  Here member 1
# (nbdkit-badsector-plugin) cannot write a sector of an old-shape row a
# client then writes, nor one of a new-shape row the reshape has yet to
# write (whose old bytes it has moved already, so nothing reads it
# first).  The write and the grow succeed, member 1 stays in service,
# both pages are listed in its log, and every byte reads back as written
# (the listed pages from the rest of their rows, in their shape).
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
. "${0%/*}/job-functions.sh"
requires_jobs
requires_raid5ctl

MB=16 CHUNK=65536
md_create w 3 ${MB}M --chunk 64K --bitmap none --assume-clean
m=("${MEMBERS[@]}")
truncate -s ${MB}M "$tmpdir/w.3"
m+=("$tmpdir/w.3")
badsector_serve "${m[1]}" "$tmpdir/w1.nsock" "$tmpdir/bad1.list" "$tmpdir/bad1.log"
disks=("disk=${m[0]}" "disk=nbd+unix:///?socket=$tmpdir/w1.nsock" "disk=${m[2]}")

echo "== a grow from 3 to 4 members, paused part way"
serve_ctl "$tmpdir/grow.log" "${disks[@]}" sync-speed-min=500 sync-speed-max=1000 ||
  fail "serve"
size=$(ctl_get 's["size_bytes"]')
head -c "$size" /dev/urandom >"$tmpdir/model"
nbdcopy "$tmpdir/model" "$URI" || fail "filling the array"
"$RAID5CTL" --control "$CTL_SOCK" grow --add "${m[3]}" >"$tmpdir/grow.out" 2>&1 ||
  { cat "$tmpdir/grow.out" >&2; fail "grow --add"; }
ctl_wait 's["job"]["kind"] == "reshape" and s["job"]["done_stripes"] >= 64' 30
ctl_ok pause
line=$(ctl_get 's["grow"]["line_bytes"]')
new_doff=$(md_field "${m[1]}" "New Offset")
new_doff=$(( ${new_doff% sectors} * 512 ))
[ "$new_doff" -lt "$MD_DOFF" ] || fail "the grow did not move the data down ($new_doff, $MD_DOFF)"

# Old-shape stripe 200 (parity on member 2 - 200 % 3 = 0: its first data
# chunk is member 1's), far ahead of the line: a client writes its
# second page.  New-shape stripe 20 past the line L (4 members): the
# reshape writes member 1's chunk there; its third page cannot be
# written.  Its old bytes (old stripe L + 20 less the chunks the data
# moved down) were moved already: behind the old shape's line, 1.5 L.
L=$(( line / (3 * CHUNK) )) shift=$(( (MD_DOFF - new_doff) / CHUNK ))
[ $(( 2 * (L + 20 - shift) )) -lt $(( 3 * L )) ] ||
  fail "old stripe $((L + 20 - shift)) is not behind the old shape's line yet (line $line)"
client_sec=$(( (MD_DOFF + 200 * CHUNK + 4096) / 512 ))
reshape_sec=$(( (new_doff + (L + 20) * CHUNK + 2 * 4096) / 512 ))
printf 'write %s 8\nwrite %s 8\n' "$client_sec" "$reshape_sec" >"$tmpdir/bad1.list"
client_at=$(( 200 * 2 * CHUNK ))
head -c "$CHUNK" /dev/urandom >"$tmpdir/chunk"
dd if="$tmpdir/chunk" of="$tmpdir/model" bs=1 seek="$client_at" conv=notrunc status=none
echo "== a client's write ahead of the line fails on member 1's sector $client_sec"
/usr/bin/python3 - "$URI" "$tmpdir/chunk" "$client_at" <<'EOF' || fail "the write ahead of the line"
import nbd, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1])
h.pwrite(open(sys.argv[2], "rb").read(), int(sys.argv[3]))
h.flush()
EOF
[ "$(ctl_get 's["health"]')" = "[UUUU]" ] ||
  fail "the failed write took a member out: $(ctl_get 's["health"]')"
grep -q "^write-error $client_sec 8\$" "$tmpdir/bad1.log" ||
  fail "the client's page was not written alone and failed: $(cat "$tmpdir/bad1.log")"

echo "== the reshape's write of member 1's sector $reshape_sec fails; the grow goes on"
ctl_ok resume
ctl_ok speed --min 100000 --max 200000
ctl_wait 's["job"]["kind"] == "idle" and s["grow"] is None' 60
[ "$(ctl_get '"%s %s %d" % (s["health"], s["last_job"]["kind"], s["last_job"]["result"])')" = "[UUUU] reshape 0" ] ||
  fail "the grow over a write error: $(ctl_get 's["health"], s["last_job"]')"
grep -q "^write-error $reshape_sec 8\$" "$tmpdir/bad1.log" ||
  fail "the reshape's page was not written alone and failed: $(cat "$tmpdir/bad1.log")"
[ "$(ctl_get '"%d %d %s" % (s["members"][1]["bad_blocks"]["ranges"], s["members"][1]["bad_blocks"]["sectors"], s["members"][1]["bad_blocks"]["write_error_seen"])')" = "2 16 True" ] ||
  fail "member 1's log: $(ctl_get 's["members"][1]["bad_blocks"]')"
nbdcopy "$URI" "$tmpdir/after" || fail "reading the grown array: $(tail -n 3 "$tmpdir/grow.log")"
head -c "$size" "$tmpdir/after" | cmp - "$tmpdir/model" ||
  fail "after the grow the array does not hold what was written"
stop_server
"$RAID5CTL" examine --badblocks "${m[1]}" >"$tmpdir/bb.out" 2>&1
for s in "$client_sec" "$reshape_sec"; do
  grep -q "^ *$s for 8 sectors\$" "$tmpdir/bb.out" ||
    fail "member 1's log does not list $s: $(cat "$tmpdir/bb.out")"
done
echo "test-grow-write-errors: OK"
