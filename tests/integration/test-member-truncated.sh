#!/usr/bin/env bash
# A member file truncated while it serves (someone's mistake: members are
# locked against a second server, not against truncate).  Members on a
# tmpfs this test mounts (root), so that requests copy through a mapping
# of each (io/memmap.c), where a lost page raises SIGBUS -- which ended
# the server and every client's array with it.  Now the copy fails, the
# member is taken out of service with a line that says it ends before the
# offset, and the array serves on, degraded, every byte right; the same
# with the mapping off (RAID5_MEMBER_ACCESS=read: a read past the end),
# where the truncated member used to count as read errors to correct.
#   - served, filled, member 2 truncated to a quarter: the array reads
#     back whole as written, the server alive, [UU_], the log names
#     member 2 and says it ends before the offset;
#   - then written whole again and read back, degraded;
#   - truncated, then written first (mapped): taken out at the write, the
#     file not extended again;
#   - member 2 truncated and a bad sector of member 1 (a disk over NBD)
#     met by one read: member 2 is taken out and member 1's page recorded
#     in its md bad-block log, as md fails the one device and records the
#     other's sectors (handle_failed_stripe); that row's read fails, the
#     rest of the array reads right, member 1 stays.  (Both were counted
#     as members failing at once: the array failed.)
#   - jobs reading in place (views): member 2 truncated mid-check is
#     taken out, the check stops, the server serves on, every byte right;
#     a zeroed spare truncated while rebuilt in place stops the rebuild
#     and stays out, not extended (the check ended the server: SIGBUS
#     in the job's XOR; the rebuild's writes extended it again, the bytes
#     cut off zeroes); a replacement truncated mid-copy stops the replace
#     (it was extended again too);
#   - member 1 truncated while idle, on the test's folder: taken out
#     within seconds, not written again (a write extended it: no fault
#     tells of a truncation on a disk file system); member 0 cut only past
#     the array's data stays.
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
. "${0%/*}/job-functions.sh"
requires_jobs
requires nbdcopy --version
[ "$(id -u)" = 0 ] || skip "needs root to mount a tmpfs of its own"

mnt=$tmpdir/mem
mkdir "$mnt"
mount -t tmpfs -o size=256M tmpfs "$mnt" 2>/dev/null || skip "cannot mount a tmpfs"
cleanup_fn "umount -l '$mnt'"

# serve_filled LOG PLUGIN_ARGS...: serve_ctl, then the array filled with
# random bytes, kept in $tmpdir/model; $size its bytes.
serve_filled ()
{
  serve_ctl "$@" || fail "serve"
  size=$(ctl_get 's["size_bytes"]')
  head -c "$size" /dev/urandom >"$tmpdir/model"
  nbdcopy "$tmpdir/model" "$URI" || fail "filling the array"
}

# cut_mid_job KIND FILE SIZE: once the job KIND started by the caller has
# done 16 stripes, FILE is cut to SIZE; returns when no job runs.
cut_mid_job ()
{
  ctl_wait "s['job']['kind'] == '$1' and s['job']['done_stripes'] >= 16" 30
  truncate -s "$3" "$2"
  ctl_wait "s['job']['kind'] == 'idle'" 30
}

for access in map read; do
  echo "== member 2 truncated while served ($access)"
  rm -f "$mnt"/*
  MEMBERS_DIR=$mnt md_create t 3 32M --chunk 64K --assume-clean --bitmap none
  m=("${MEMBERS[@]}")
  if [ $access = read ]; then export RAID5_MEMBER_ACCESS=read; else unset RAID5_MEMBER_ACCESS; fi
  serve_filled "$tmpdir/$access.log" "${m[@]/#/disk=}"
  truncate -s 8M "${m[2]}"
  reads_as_model "($access) with member 2 truncated"
  [ "$(ctl_get 's["health"]')" = "[UU_]" ] || fail "$access: health $(ctl_get 's["health"]')"
  grep -Eq "member 2 \(${m[2]}\): read at [0-9]+: it ends before that \(truncated under the server\?\)" \
    "$tmpdir/$access.log" || fail "$access: the log does not say member 2 ends early: $(tail -n 3 "$tmpdir/$access.log")"
  head -c "$size" /dev/urandom >"$tmpdir/model"
  nbdcopy "$tmpdir/model" "$URI" || fail "$access: writing the array degraded"
  reads_as_model "($access) after the writes"
  echo "   $(grep -o 'member 2 (.*truncated under the server?)' "$tmpdir/$access.log" | head -n 1 | sed "s|$mnt/||")"
  stop_server
done
unset RAID5_MEMBER_ACCESS

echo "== member 1 truncated while served, then written first (map)"
# A write through the mapping meets the lost pages: the member is taken
# out, not extended again by a write (its lost bytes would then be holes
# that read as zeroes).  (The size check, once a second, may find it
# first: a read at its end.)
rm -f "$mnt"/*
MEMBERS_DIR=$mnt md_create w 3 32M --chunk 64K --assume-clean --bitmap none
m=("${MEMBERS[@]}")
serve_filled "$tmpdir/write.log" "${m[@]/#/disk=}"
truncate -s 8M "${m[1]}"
head -c "$size" /dev/urandom >"$tmpdir/model"
nbdcopy "$tmpdir/model" "$URI" || fail "writing the array with member 1 truncated"
[ "$(ctl_get 's["health"]')" = "[U_U]" ] || fail "health $(ctl_get 's["health"]')"
[ "$(stat -c %s "${m[1]}")" = $(( 8 << 20 )) ] ||
  fail "member 1 was extended again to $(stat -c %s "${m[1]}") bytes"
reads_as_model "after the writes"
grep -Eq "member 1 \(${m[1]}\): (write|read) at [0-9]+: it ends before that" "$tmpdir/write.log" ||
  fail "the log does not say member 1 ends early: $(tail -n 3 "$tmpdir/write.log")"
echo "   member 1 out at its first write past its end, not extended"
stop_server

echo "== member 2 truncated and a bad sector of member 1, met by one read"
rm -f "$mnt"/*
MEMBERS_DIR=$mnt md_create b 3 32M --chunk 64K --assume-clean --bitmap none
m=("${MEMBERS[@]}") CHUNK=65536
[ "$MD_LAYOUT" = left-symmetric ] || fail "layout $MD_LAYOUT"
badsector_serve "${m[1]}" "$tmpdir/b1.nsock" "$tmpdir/bad1.list" "$tmpdir/bad1.log"
serve_filled "$tmpdir/both.log" "disk=${m[0]}" "disk=nbd+unix:///?socket=$tmpdir/b1.nsock" \
  "disk=${m[2]}"
# Stripe 302 (parity on member 0, data on members 1 and 2), past where
# member 2 is cut: its row 1 is unreadable on member 1, gone on member 2.
s=302
stripe=$(( s * 2 * CHUNK )) badoff=$(( MD_DOFF + s * CHUNK + 4096 ))
echo "read $(( badoff / 512 )) 8" >"$tmpdir/bad1.list"
truncate -s 8M "${m[2]}"
read_range "$stripe" $(( 2 * CHUNK )) 2>/dev/null && fail "a row lost on two members was read"
read_range "$stripe" 4096 && read_range $(( stripe + 8192 )) $(( CHUNK - 8192 )) &&
  read_range $(( stripe + CHUNK )) 4096 &&
  read_range $(( stripe + CHUNK + 8192 )) $(( CHUNK - 8192 )) ||
  fail "the rest of stripe $s does not read right"
got=$(ctl_get '"%s %s %s" % (s["health"], s["members"][1]["state"], s["members"][1]["bad_blocks"]["sectors"])')
[ "$got" = "[UU_] active 8" ] ||
  fail "after the read: $got (want [UU_] active 8); $(tail -n 4 "$tmpdir/both.log")"
grep -Eq "member 2 \(${m[2]}\): read at [0-9]+: it ends before that" "$tmpdir/both.log" ||
  fail "the log does not say member 2 ends early: $(tail -n 3 "$tmpdir/both.log")"
grep -q "member 1 .*: 4096 bytes at member offset $badoff recorded in its md bad-block log" \
  "$tmpdir/both.log" || fail "member 1's lost page was not recorded: $(tail -n 3 "$tmpdir/both.log")"
# Every other byte of the array, read around the lost rows.
/usr/bin/python3 - "$tmpdir/model" "$URI" $(( stripe + 4096 )) $(( stripe + CHUNK + 4096 )) <<'EOF' ||
import nbd, sys
model, uri = sys.argv[1], sys.argv[2]
lost = [int(x) for x in sys.argv[3:]]
h = nbd.NBD(); h.connect_uri(uri)
want = open(model, "rb").read()
cuts = [0] + sorted(x for l in lost for x in (l, l + 4096)) + [len(want)]
for a, b in zip(cuts[0::2], cuts[1::2]):
    for off in range(a, b, 1 << 20):
        n = min(1 << 20, b - off)
        if h.pread(n, off) != want[off:off + n]:
            sys.exit("wrong bytes in [%d, +%d)" % (off, n))
EOF
  fail "the array outside the lost row reads wrong"
echo "   member 2 out, member 1's page listed, the rest read right"
stop_server
echo "== truncated mid-check and mid-rebuild, jobs reading in place"
# Jobs read members in memory through views (RAID5_MEMBER_ACCESS=mapped
# makes them here; a machine where mapping pays does so by itself): a
# lost page faulted in the job's XOR and ended the server.
rm -f "$mnt"/*
MEMBERS_DIR=$mnt md_create j 3 32M --chunk 64K --assume-clean --bitmap none
m=("${MEMBERS[@]}")
export RAID5_MEMBER_ACCESS=mapped
serve_filled "$tmpdir/jobs.log" "${m[@]/#/disk=}" sync-speed-min=2000 sync-speed-max=4000
ctl_ok check
cut_mid_job check "${m[2]}" 8M
[ "$(ctl_get 's["health"]')" = "[UU_]" ] || fail "after the check: $(ctl_get 's["health"], s["last_job"]')"
grep -Eq "member 2 \(${m[2]}\): read at [0-9]+: it ends before that \(truncated under the server\?\)" \
  "$tmpdir/jobs.log" || fail "the log does not say member 2 ends early: $(tail -n 3 "$tmpdir/jobs.log")"
reads_as_model "after the check"
echo "   check: member 2 out, the array read right"
# The member rebuilt, written in place (allocated beforehand: a zeroed
# spare), truncated mid-rebuild: the rebuild stops, the slot stays out.
new=$mnt/new2.img
head -c 32M /dev/zero >"$new"
ctl_ok rebuild 2 "$new"
cut_mid_job rebuild "$new" 8M
[ "$(ctl_get 's["health"]')" = "[UU_]" ] || fail "after the rebuild: $(ctl_get 's["health"], s["last_job"]')"
grep -Eq "member 2 \($new\): (write|read) at [0-9]+: it ends before that.*the member being rebuilt failed" \
  "$tmpdir/jobs.log" || fail "the log does not say the new member ends early: $(tail -n 3 "$tmpdir/jobs.log")"
[ "$(stat -c %s "$new")" = $(( 8 << 20 )) ] || fail "the new member was extended again"
reads_as_model "after the rebuild"
echo "   rebuild: stopped, slot 2 out, the array read right"
# A replacement truncated mid-copy: the replace stops, member 0 keeps the
# slot (copied bytes past the cut would have come back as zeroes).
truncate -s 32M "$mnt/new2b.img"
ctl_ok rebuild 2 "$mnt/new2b.img"
ctl_ok speed --min 100000 --max 200000
ctl_wait "s['job']['kind'] == 'idle' and s['health'] == '[UUU]'" 30
ctl_ok speed --min 2000 --max 4000
rep=$mnt/rep0.img
truncate -s 32M "$rep"
ctl_ok replace 0 "$rep"
cut_mid_job replace "$rep" 4M
[ "$(ctl_get '"%s %s" % (s["health"], s["members"][0]["path"])')" = "[UUU] ${m[0]}" ] ||
  fail "after the replace: $(ctl_get 's["health"], s["members"][0], s["last_job"]')"
grep -Eq "the replacement \($rep\): write at [0-9]+: it ends before that" "$tmpdir/jobs.log" ||
  fail "the log does not say the replacement ends early: $(tail -n 3 "$tmpdir/jobs.log")"
[ "$(stat -c %s "$rep")" = $(( 4 << 20 )) ] || fail "the replacement was extended again"
# Status says which way the replace ended, naming the replacement (it
# said "the replacement failed, or the replace was stopped").
last=$("$RAID5CTL" status --control "$CTL_SOCK" | grep 'last replace:')
grep -q "last replace: stopped: the replacement ($rep)" <<<"$last" ||
  fail "status after the replacement failed: $last"
echo "   replace: stopped, member 0 kept its slot"
stop_server
unset RAID5_MEMBER_ACCESS

echo "== member 1 truncated while idle, on a disk file system (read, write)"
# No fault tells of it there, and a write past the end extends the file
# again (the bytes cut off then holes reading as zeroes): the server asks
# the members' sizes once a second and takes a shorter one out.
export RAID5_MEMBER_ACCESS=read
md_create d 3 32M --chunk 64K --assume-clean --bitmap none
m=("${MEMBERS[@]}")
truncate -s 40M "${m[0]}"         # a tail the array does not use
serve_filled "$tmpdir/idle.log" "${m[@]/#/disk=}"
# The tail past what the array uses may go: member 0 cut to its data's
# end stays in service (review: its first version failed any member
# shorter than the file it opened).
truncate -s $(( MD_DOFF + size / 2 )) "${m[0]}"      # 2 data chunks a row
[ "$(stat -c %s "${m[0]}")" -lt $(( 40 << 20 )) ] || fail "member 0 was not cut"
sleep 2.5
[ "$(ctl_get 's["health"]')" = "[UUU]" ] ||
  fail "member 0 cut past the array's data taken out: $(tail -n 2 "$tmpdir/idle.log")"
truncate -s 8M "${m[1]}"
ctl_wait "s['health'] == '[U_U]'" 10
grep -Eq "member 1 \(${m[1]}\): read at 8388608: it ends before that" "$tmpdir/idle.log" ||
  fail "the log does not say member 1 ends early: $(tail -n 3 "$tmpdir/idle.log")"
head -c "$size" /dev/urandom >"$tmpdir/model"
nbdcopy "$tmpdir/model" "$URI" || fail "writing the array degraded"
[ "$(stat -c %s "${m[1]}")" = $(( 8 << 20 )) ] || fail "member 1 was extended again"
reads_as_model "after the writes"
echo "   member 1 out within seconds, not extended by the writes after"
stop_server
unset RAID5_MEMBER_ACCESS

echo "PASS: $test_name"
