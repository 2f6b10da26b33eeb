#!/usr/bin/env bash
# Bad parameters and bad members: nbdkit must exit non-zero before
# serving, with exactly one error line on stderr that names the culprit,
# and must not have written to any member (numbers in forms strtoul() or
# strtod() would take -- hex, space, exponent, 0 -- included).  Then two
# positive controls: the same harness with good parameters serves, and
# members of different sizes make an array sized by the smallest one.

. "${0%/*}/functions.sh"
requires_plugin

for i in 0 1 2 3; do
  head -c 4M /dev/urandom > "$tmpdir/m$i"    # random: zeroing would show
done
head -c 60K /dev/urandom > "$tmpdir/tiny"
mkdir "$tmpdir/adir"
ln -s "$tmpdir/m0" "$tmpdir/link-to-m0"
all=("$tmpdir"/m? "$tmpdir/tiny")
d0="disk=$tmpdir/m0" d1="disk=$tmpdir/m1" d2="disk=$tmpdir/m2"

# expect_error REGEX PLUGIN_ARGS...  (a failed case is counted, and the
# remaining cases still run)
failures=0
expect_error ()
{
  ( check_error "$@" ) || failures=$(( failures + 1 ))
}

check_error ()
{
  local re=$1 status=0 sums lines args
  shift
  sums=$(checksum_members "${all[@]}")
  "$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "$@" --run 'echo SERVED' \
    >"$tmpdir/out" 2>"$tmpdir/err" || status=$?
  args=${*//$tmpdir\//}
  echo "${args:0:120} -> exit $status: $(head -c 300 "$tmpdir/err")"
  [ $status -ne 0 ] || fail "accepted: $*"
  ! grep -q SERVED "$tmpdir/out" || fail "served before failing: $*"
  lines=$(grep -c . "$tmpdir/err" || :)
  [ "$lines" -eq 1 ] ||
    fail "$*: expected one line on stderr, got $lines: $(cat "$tmpdir/err")"
  grep -Eiq "$re" "$tmpdir/err" || fail "$*: the error does not name '$re'"
  [ "$(checksum_members "${all[@]}")" = "$sums" ] || fail "$*: a member changed"
}

expect_error 'disk|member'   "$d0" "$d1"
expect_error 'disk|member'   chunk=64K
expect_error 'chunk'         "$d0" "$d1" "$d2" chunk=3000
expect_error 'chunk'         "$d0" "$d1" "$d2" chunk=2K
expect_error 'chunk'         "$d0" "$d1" "$d2" chunk=0
expect_error 'chunk|lots'    "$d0" "$d1" "$d2" chunk=lots
expect_error 'layout'        "$d0" "$d1" "$d2" layout=bogus
# mdadm has no short names for parity-first/last, so neither has the plugin
expect_error 'layout'        "$d0" "$d1" "$d2" layout=pf
expect_error 'data.offset'   "$d0" "$d1" "$d2" data-offset=100
expect_error 'data.offset|-4K' "$d0" "$d1" "$d2" data-offset=-4K
expect_error 'align|direct|data.offset' "$d0" "$d1" "$d2" data-offset=512 direct=true
expect_error 'metadata'      "$d0" "$d1" "$d2" metadata=bogus
expect_error 're-add'        "$d0" "$d1" "$d2" re-add=sometimes
expect_error 'direct|maybe'  "$d0" "$d1" "$d2" direct=maybe
expect_error 'foo'           "$d0" "$d1" "$d2" foo=bar
expect_error 'sync-latency-max' "$d0" "$d1" "$d2" sync-latency-max=10us
expect_error 'sync-latency-max' "$d0" "$d1" "$d2" sync-latency-max=2minutes
expect_error 'sync-latency-max' "$d0" "$d1" "$d2" sync-latency-max=20s
# Numbers are decimal digits in a range: no 0 for "the default", no hex
# (nbdkit's own parser would take 0x10), sign, space or exponent; crossed
# speed limits name both.
expect_error 'sync-speed-max=0:' "$d0" "$d1" "$d2" sync-speed-max=0
expect_error 'sync-speed-max=0x10:' "$d0" "$d1" "$d2" sync-speed-max=0x10
expect_error 'sync-speed-min= 5:' "$d0" "$d1" "$d2" "sync-speed-min= 5"
expect_error 'sync-speed-min=-1:' "$d0" "$d1" "$d2" sync-speed-min=-1
expect_error 'sync-speed-max=99999999999:' "$d0" "$d1" "$d2" sync-speed-max=99999999999
expect_error 'sync-speed-min=2000.*sync-speed-max=1000' "$d0" "$d1" "$d2" \
  sync-speed-min=2000 sync-speed-max=1000
expect_error 'chunk=0x10:'    "$d0" "$d1" "$d2" chunk=0x10
expect_error 'chunk=64K :'    "$d0" "$d1" "$d2" "chunk=64K "
expect_error 'member-timeout=0x10:' "$d0" "$d1" "$d2" member-timeout=0x10
expect_error 'member-timeout=1e1:' "$d0" "$d1" "$d2" member-timeout=1e1
expect_error 'member-timeout= 5:' "$d0" "$d1" "$d2" "member-timeout= 5"
expect_error 'member-connections=0:.*1 to 16' "$d0" "$d1" "$d2" member-connections=0
expect_error 'member-connections=17:' "$d0" "$d1" "$d2" member-connections=17
expect_error 'member-connections=0x2:' "$d0" "$d1" "$d2" member-connections=0x2
expect_error 'sync-latency-max=0x10ms:' "$d0" "$d1" "$d2" sync-latency-max=0x10ms
expect_error 'nonexistent'   "$d0" "$d1" "disk=$tmpdir/nonexistent"
expect_error 'nodir'         "$d0" "$d1" "disk=$tmpdir/nodir/member"
expect_error 'adir'          "$d0" "$d1" "disk=$tmpdir/adir"
expect_error 'disk'          "$d0" "$d1" "disk="
# File parameters: an empty path is named, and one given twice is
# refused (a second spare= silently replaced the first); so is any key
# but disk= given twice.
truncate -s 4M "$tmpdir/sp0" "$tmpdir/sp1"
for key in spare control integrity backup-file; do
  expect_error "^nbdkit: error: $key=: empty path\$" "$d0" "$d1" "$d2" "$key="
done
expect_error 'spare= given twice \(the second: spare=.*sp1\)' "$d0" "$d1" "$d2" \
  "spare=$tmpdir/sp0" "spare=$tmpdir/sp1"
expect_error 'control= given twice' "$d0" "$d1" "$d2" \
  "control=$tmpdir/c1" "control=$tmpdir/c2"
# Every key but disk= once: the second chunk= was taken silently.
expect_error '^nbdkit: error: chunk= given twice \(the second: chunk=128K\): give it once$' \
  "$d0" "$d1" "$d2" chunk=64K chunk=128K
expect_error 'sync-speed-max= given twice' "$d0" "$d1" "$d2" \
  sync-speed-max=1000 sync-speed-max=2000
expect_error '^nbdkit: error: spare=.*nonexistent: cannot open' "$d0" "$d1" "$d2" \
  chunk=64K "spare=$tmpdir/nonexistent"
# Read-only writes nothing: a spare (written by a rebuild) is refused.
expect_error '^nbdkit: error: a spare is written to, and the array is opened read-only$' \
  "$d0" "$d1" "$d2" chunk=64K readonly=true "spare=$tmpdir/sp0"
expect_error 'readonly=maybe' "$d0" "$d1" "$d2" chunk=64K readonly=maybe
expect_error 'tiny|small'    "$d0" "disk=$tmpdir/tiny" "$d1" chunk=64K
expect_error 'small|data.offset|size' "$d0" "$d1" "$d2" data-offset=4M
expect_error 'small|size|chunk' "$d0" "$d1" "$d2" chunk=8M
expect_error 'twice|duplicate|same|m0' "$d0" "$d1" "$d0"
expect_error 'twice|duplicate|same|link-to-m0' "$d0" "$d1" "disk=$tmpdir/link-to-m0"
many=()
for i in $(seq 0 32); do
  truncate -s 1M "$tmpdir/many.$i"
  many+=("disk=$tmpdir/many.$i")
done
expect_error '32|33|too many' "${many[@]}"
# NBD members over TLS: every setting checked before a member is opened
# (no server needed: nothing is reached).
echo >"$tmpdir/empty.psk"
expect_error 'tls=bogus'     "$d0" "$d1" "$d2" tls=bogus
expect_error 'tls-certificates=.*adir.*ca-cert.pem' "$d0" "$d1" "$d2" \
  tls-certificates="$tmpdir/adir"
expect_error 'tls-certificates= and tls-psk=' "$d0" "$d1" "$d2" \
  tls-certificates="$tmpdir/adir" tls-psk="$tmpdir/empty.psk"
expect_error 'tls-psk=.*nonexistent' "$d0" "$d1" "$d2" tls-psk="$tmpdir/nonexistent"
expect_error 'tls-username=bob.*tls-psk' "$d0" "$d1" "$d2" tls-username=bob
expect_error 'member 1 \(nbds://127.0.0.1:9/\).*tls-certificates=DIR or tls-psk=FILE' \
  "$d0" disk=nbds://127.0.0.1:9/ "$d2"
expect_error 'member 1 \(nbd://127.0.0.1:9/\).*TLS is required' "$d0" \
  disk=nbd://127.0.0.1:9/ "$d2" tls=require tls-psk="$tmpdir/empty.psk"
expect_error 'missing'       "$d0" disk=missing disk=missing
# Members of an md array: metadata=none would serve its superblocks as
# data and overwrite them (refused unless the data starts past them); a
# chunk that conflicts with them does not suggest it.
RAID5CTL=${RAID5CTL:-$abs_top_builddir/tools/raid5ctl}
for i in 0 1 2; do head -c 4M /dev/urandom >"$tmpdir/md$i"; done
"$RAID5CTL" create --chunk 64K --force --assume-clean "$tmpdir"/md? \
  >"$tmpdir/create.log" 2>&1 || { cat "$tmpdir/create.log" >&2; fail "raid5ctl create"; }
all+=("$tmpdir"/md?)
md=("disk=$tmpdir/md0" "disk=$tmpdir/md1" "disk=$tmpdir/md2")
expect_error 'member 0 \(.*md0\) holds an md superblock.*metadata=none would.*overwrite' \
  "${md[@]}" metadata=none chunk=64K
expect_error 'chunk= conflicts with the md superblocks.*leave it out' "${md[@]}" chunk=128K
! grep -q "metadata=none" "$tmpdir/err" || fail "the conflict still suggests metadata=none"
cp "$tmpdir/md1" "$tmpdir/md1copy"         # slot 1 twice, the same events
all+=("$tmpdir/md1copy")
expect_error 'members 1 \(.*/md1\) and 2 \(.*/md1copy\) both hold slot 1' \
  "${md[0]}" "${md[1]}" "disk=$tmpdir/md1copy"
doff=$("$RAID5CTL" examine "$tmpdir/md0" | sed -n 's/^ *Data Offset : \([0-9]*\) sectors$/\1/p')
[ -n "$doff" ] && [ "$doff" -gt 16 ] || fail "raid5ctl examine: no data offset ($doff)"
expect_error 'member 0 \(.*md0\) holds an md superblock' \
  "${md[@]}" metadata=none chunk=64K data-offset=$(( (doff - 8) * 512 ))
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${md[@]}" metadata=none chunk=64K \
  data-offset=$(( doff * 512 )) --run 'echo SERVED' >"$tmpdir/out" 2>"$tmpdir/err" ||
  fail "raw members whose data starts at md's data offset refused: $(cat "$tmpdir/err")"
expect_error 'missing'       disk=missing "$d1" disk=missing "$d2"

# Members already served by another nbdkit (the plugin locks them): the
# same array, and another array sharing one member.
"$NBDKIT" -U "$tmpdir/sock" -P "$tmpdir/pid" "$PLUGIN" "$d0" "$d1" "$d2" \
  chunk=64K
cleanup_fn '[ ! -s "$tmpdir/pid" ] || kill_ours "$(cat "$tmpdir/pid")"'
for (( i = 0; i < 100; i++ )); do [ -s "$tmpdir/pid" ] && break; sleep 0.1; done
[ -s "$tmpdir/pid" ] || fail "the first server did not start"
expect_error 'lock|served|busy|in use' "$d0" "$d1" "$d2" chunk=64K
expect_error 'lock|served|busy|in use' "disk=$tmpdir/m3" disk=missing "$d1"
pid=$(cat "$tmpdir/pid")
kill "$pid"
for (( i = 0; i < 100; i++ )); do [ -e "/proc/$pid" ] || break; sleep 0.1; done

# Positive control: the harness above passes good parameters.
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "$d0" "$d1" "$d2" chunk=64K --run 'echo SERVED' \
  >"$tmpdir/out" 2>"$tmpdir/err" || fail "good parameters refused: $(cat "$tmpdir/err")"
grep -q SERVED "$tmpdir/out" || fail "good parameters: not served"

# Relative member paths are the server's: made absolute when given, since
# nbdkit goes to / when it becomes a daemon, and a path kept for later (a
# re-add, status) must still name the same file.
echo "== relative member paths, daemonized"
( cd "$tmpdir" && "$NBDKIT" -U "$tmpdir/rel.sock" -P "$tmpdir/rel.pid" "$PLUGIN" \
    disk=m0 disk=m1 disk=m2 chunk=64K control="$tmpdir/rel.ctl" ) ||
  fail "relative member paths refused"
cleanup_fn "kill_ours \$(cat $tmpdir/rel.pid 2>/dev/null)"
for (( i = 0; i < 100; i++ )); do [ -S "$tmpdir/rel.ctl" ] && break; sleep 0.05; done
paths=$(/usr/bin/python3 "$abs_top_srcdir/tests/integration/ctl.py" "$tmpdir/rel.ctl" \
          get '" ".join(m["path"] for m in s["members"])')
[ "$paths" = "$tmpdir/m0 $tmpdir/m1 $tmpdir/m2" ] ||
  fail "relative paths kept as given, not as the files: $paths"
echo "   status names $paths"
kill "$(cat "$tmpdir/rel.pid")"

# Members of different sizes: the smallest decides (md's rule), nothing is
# written past the last whole stripe of any member.
echo "== members of different sizes"
truncate -s 4M "$tmpdir/s0"
truncate -s $(( 5 * 1024 * 1024 + 1234 )) "$tmpdir/s1"
truncate -s $(( 3 * 1024 * 1024 + 777 )) "$tmpdir/s2"
truncate -s 6M "$tmpdir/s3"
size=$(array_size 4 $(( 3 * 1024 * 1024 + 777 )) 64K 64K)
next_seed
raid5_captive disk="$tmpdir/s0" disk="$tmpdir/s1" disk="$tmpdir/s2" \
    disk="$tmpdir/s3" chunk=64K data-offset=64K -- \
  "$RANDOM_IO" @URI@ "$size" --seed "$RIO_SEED" --ops 600 --chunk 64K \
    --disks 4 --model-out "$tmpdir/model" || fail "different member sizes"
member_check --chunk 64K --data-offset 64K --model "$tmpdir/model" \
  --outside-zero "$tmpdir"/s?

[ $failures -eq 0 ] || fail "$failures bad-parameter case(s) failed (see above)"
echo "$test_name: OK"
