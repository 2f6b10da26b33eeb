#!/usr/bin/env bash
# A read error ahead of a reshape's line, in a row another member lists
# bad (md: the row has two members out there, so neither page can be
# computed -- raid5.c analyse_stripe counts a listed device and a read
# error alike, handle_failed_stripe fails the read).  The grow moves the
# data down, so the old shape's rows lie at other member offsets than the
# new shape's: the listing must be looked up in the old shape.  Here:
# member 0 lists a page of old stripe 200's parity (its bytes spoiled),
# member 1 (nbdkit-badsector-plugin) fails reads of its data page in that
# row; reading it fails (EIO) -- it is not "corrected" from the spoiled
# parity -- and the pages beside it read as written.
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
. "${0%/*}/job-functions.sh"
requires_jobs
requires_nbd_python
requires_raid5ctl
BB_PUT=$abs_top_builddir/tests/tools/bb-put
[ -x "$BB_PUT" ] || skip "not built: $BB_PUT"

MB=16 CHUNK=65536 S=200 PAGE=3
md_create l 3 ${MB}M --chunk 64K --bitmap none --assume-clean
m=("${MEMBERS[@]}")
truncate -s ${MB}M "$tmpdir/l.3"
m+=("$tmpdir/l.3")
badsector_serve "${m[1]}" "$tmpdir/l1.nsock" "$tmpdir/bad1.list" "$tmpdir/bad1.log"
disks=("disk=${m[0]}" "disk=nbd+unix:///?socket=$tmpdir/l1.nsock" "disk=${m[2]}")

echo "== the array filled; member 0 lists a page of old stripe $S (its parity)"
serve_ctl "$tmpdir/fill.log" "${disks[@]}" || fail "serve"
size=$(ctl_get 's["size_bytes"]')
head -c "$size" /dev/urandom >"$tmpdir/model"
nbdcopy "$tmpdir/model" "$URI" || fail "filling the array"
stop_server
# Left-symmetric, 3 members: stripe 200's parity on member 2 - 200 % 3 = 0,
# its first data chunk on member 1.
sec=$(( (MD_DOFF + S * CHUNK + PAGE * 4096) / 512 ))
"$BB_PUT" "${m[0]}" "$sec+8" >/dev/null || fail "bb-put member 0"
head -c 4096 /dev/zero | tr '\0' 'Z' |
  dd of="${m[0]}" bs=512 seek="$sec" conv=notrunc status=none

echo "== a grow, paused early; member 1 fails reads of its page of that row"
serve_ctl "$tmpdir/grow.log" "${disks[@]}" sync-speed-min=500 sync-speed-max=1000 ||
  fail "serve"
"$RAID5CTL" --control "$CTL_SOCK" grow --add "${m[3]}" >"$tmpdir/grow.out" 2>&1 ||
  { cat "$tmpdir/grow.out" >&2; fail "grow --add"; }
ctl_wait 's["job"]["kind"] == "reshape" and s["job"]["done_stripes"] >= 8' 30
ctl_ok pause
line=$(ctl_get 's["grow"]["line_bytes"]')
at=$(( S * 2 * CHUNK ))
[ "$line" -lt "$at" ] || fail "the line ($line) passed old stripe $S already"
echo "read $sec 8" >"$tmpdir/bad1.list"
/usr/bin/python3 - "$URI" "$tmpdir/model" "$at" "$PAGE" <<'EOF' || fail "the row listed on member 0 and unreadable on member 1"
import nbd, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1])
model = open(sys.argv[2], "rb").read(); at = int(sys.argv[3]); page = int(sys.argv[4])
bad = at + page * 4096
try:
    got = h.pread(4096, bad)
    sys.exit("array bytes %d+4096 read %s" % (bad, "as written?!" if got == model[bad:bad + 4096]
             else "wrong: computed from the listed parity"))
except nbd.Error as e:
    print("   array bytes %d+4096: %s" % (bad, e.string.splitlines()[0] if e.string else e))
for off in (bad - 4096, bad + 4096):
    if h.pread(4096, off) != model[off:off + 4096]:
        sys.exit("array bytes %d+4096 beside it read wrong" % off)
EOF
badsector_met "$tmpdir/bad1.log" "$sec" || fail "member 1's sector $sec was never read"
[ "$(ctl_get 's["health"]')" = "[UUUU]" ] ||
  fail "a member was taken out: $(ctl_get 's["health"]')"
stop_server
echo "test-grow-listed-row: OK"
