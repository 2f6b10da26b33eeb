#!/usr/bin/env bash
# Read errors on an array served read-only in the middle of a grow (the
# reshape stopped with the server, its line in the superblocks): md reads
# a stripe's failed device around from the rest of its row whatever its
# shape (raid5.c: analyse_stripe counts R5_ReadError as failed for that
# stripe, handle_stripe computes it; read-only, nothing is rewritten), and
# fails the member only past max_nr_stripes errors in a row.  So here:
# members 1 and 2 (disks with bad sectors, nbdkit-badsector-plugin) fail
# reads in rows behind and past the reshape line; a read of the whole
# array returns the bytes written before the grow, every member stays in
# service, no member changes.  (A member taken out at the first error,
# read-only, had the second member's error fail the array.)  Served
# writable, md corrects them (R5_ReWrite), each in its stripe's shape,
# and so does its reshape on the rows it moves: the same read returns the
# same bytes with the sectors rewritten and every member in service; two
# more bad sectors ahead of the line are met by the grow itself, which
# rewrites them and ends; the array then checks clean.
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
. "${0%/*}/job-functions.sh"
requires_jobs
requires_raid5ctl

MB=16 CHUNK=65536
md_create h 3 ${MB}M --chunk 64K --bitmap none --assume-clean
m=("${MEMBERS[@]}")
truncate -s ${MB}M "$tmpdir/h.3"
m+=("$tmpdir/h.3")
for i in 1 2; do
  badsector_serve "${m[$i]}" "$tmpdir/h$i.nsock" "$tmpdir/bad$i.list" "$tmpdir/bad$i.log"
done
disks=("disk=${m[0]}" "disk=nbd+unix:///?socket=$tmpdir/h1.nsock"
       "disk=nbd+unix:///?socket=$tmpdir/h2.nsock")

echo "== a grow from 3 to 4 members, stopped part way"
serve_ctl "$tmpdir/grow.log" "${disks[@]}" sync-speed-min=500 sync-speed-max=1000 ||
  fail "serve"
size=$(ctl_get 's["size_bytes"]')
head -c "$size" /dev/urandom >"$tmpdir/model"
nbdcopy "$tmpdir/model" "$URI" || fail "filling the array"
"$RAID5CTL" --control "$CTL_SOCK" grow --add "${m[3]}" >"$tmpdir/grow.out" 2>&1 ||
  { cat "$tmpdir/grow.out" >&2; fail "grow --add"; }
ctl_wait 's["job"]["kind"] == "reshape" and s["job"]["done_stripes"] >= 32' 30
ctl_ok pause
stop_server
sha256sum "${m[@]}" >"$tmpdir/before.sum"

echo "== read-only: members 1 and 2 fail reads behind and past the line"
# sec S ROW: the member sector of 4 KiB row ROW of member offset stripe S.
sec () { echo $(( (MD_DOFF + $1 * CHUNK + $2 * 4096) / 512 )); }
bad1="$(sec 2 1) $(sec 200 2)" bad2="$(sec 5 3) $(sec 151 5)"
for s in $bad1; do echo "read $s 8"; done >"$tmpdir/bad1.list"
for s in $bad2; do echo "read $s 8"; done >"$tmpdir/bad2.list"
serve_ctl "$tmpdir/ro.log" "${disks[@]}" "disk=${m[3]}" readonly=true ||
  fail "serve read-only mid-grow"
[ "$(ctl_get '"%s %s" % (s["grow"]["from_members"], s["grow"]["to_members"])')" = "3 4" ] ||
  fail "not mid-grow: $(ctl_get 's["grow"]')"
nbdcopy "$URI" "$tmpdir/read" || fail "the read-only read over four read errors: $(tail -n 3 "$tmpdir/ro.log")"
cmp -s "$tmpdir/read" "$tmpdir/model" ||
  fail "the array read-only mid-grow: $(cmp "$tmpdir/read" "$tmpdir/model" | head -n 1)"
[ "$(ctl_get 's["health"]')" = "[UUUU]" ] ||
  fail "a read error took a member out: $(ctl_get 's["health"]')"
# Each bad sector was met (so the reads above went around it).
for x in "1 $bad1" "2 $bad2"; do
  set -- $x
  i=$1; shift
  for s in "$@"; do
    badsector_met "$tmpdir/bad$i.log" "$s" || fail "member $i's sector $s was never read: $(cat "$tmpdir/bad$i.log")"
  done
done
stop_server
sha256sum -c --quiet "$tmpdir/before.sum" || fail "the read-only server changed a member"

echo "== read-only without the new member: past the line the old shape is whole"
# The slot the grow adds is no member of the old shape (md's old-shape
# stripe_head counts previous_raid_disks): there, read errors are read
# around as on a whole array.
serve_ctl "$tmpdir/ro2.log" "${disks[@]}" disk=missing readonly=true ||
  fail "serve read-only mid-grow without the new member"
line=$(ctl_get 's["grow"]["line_bytes"]')
from=$(( (line + 2 * CHUNK - 1) / (2 * CHUNK) * (2 * CHUNK) ))
/usr/bin/python3 - "$URI" "$tmpdir/model" "$from" <<'EOF' || fail "past the line, without the new member"
import nbd, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1])
model = open(sys.argv[2], "rb").read(); start = int(sys.argv[3])
for off in range(start, len(model), 1 << 20):
    n = min(1 << 20, len(model) - off)
    if h.pread(n, off) != model[off:off + n]:
        sys.exit("array bytes %d+%d read wrong" % (off, n))
EOF
[ "$(ctl_get 's["health"]')" = "[UUU_]" ] || fail "without the new member: $(ctl_get 's["health"]')"
stop_server
sha256sum -c --quiet "$tmpdir/before.sum" || fail "the read-only server changed a member"

echo "== writable: the same read errors corrected, each in its row's shape"
serve_ctl "$tmpdir/rw.log" "${disks[@]}" "disk=${m[3]}" sync-speed-min=500 \
  sync-speed-max=1000 || fail "serve writable mid-grow"
ctl_ok pause
nbdcopy "$URI" "$tmpdir/read" || fail "the read over four read errors: $(tail -n 3 "$tmpdir/rw.log")"
cmp -s "$tmpdir/read" "$tmpdir/model" ||
  fail "the array mid-grow: $(cmp "$tmpdir/read" "$tmpdir/model" | head -n 1)"
[ "$(ctl_get 's["health"]')" = "[UUUU]" ] ||
  fail "a read error took a member out: $(ctl_get 's["health"]')"
# remapped I S...: member I's sectors S were rewritten (the disk remaps a
# sector when it is written).
remapped () {
  local i=$1 s
  shift
  for s in "$@"; do
    grep -q "^remapped $s 8\$" "$tmpdir/bad$i.log" ||
      fail "member $i's sector $s was not rewritten: $(tail -n 4 "$tmpdir/bad$i.log")"
  done
}
remapped 1 $bad1
remapped 2 $bad2
echo "== the grow goes on over read errors ahead of it, corrects them, ends"
# Old-shape stripes 230 (data on member 1) and 232 (data on member 2).
job1=$(sec 230 6) job2=$(sec 232 7)
echo "read $job1 8" >"$tmpdir/bad1.list"
echo "read $job2 8" >"$tmpdir/bad2.list"
ctl_ok resume
ctl_ok speed --min 100000 --max 200000
ctl_wait 's["job"]["kind"] == "idle" and s["grow"] is None' 60
[ "$(ctl_get '"%s %s %d" % (s["health"], s["last_job"]["kind"], s["last_job"]["result"])')" = "[UUUU] reshape 0" ] ||
  fail "the grow over read errors: $(ctl_get 's["health"], s["last_job"]')"
remapped 1 "$job1"
remapped 2 "$job2"
nbdcopy "$URI" "$tmpdir/after" || fail "reading the grown array"
head -c "$size" "$tmpdir/after" | cmp - "$tmpdir/model" ||
  fail "after the grow the array does not hold what was written before it"
stop_server
"$RAID5CTL" check "${m[@]}" >"$tmpdir/check.out" 2>&1 ||
  fail "check after the grow: $(cat "$tmpdir/check.out")"
echo "test-grow-read-errors: OK"
