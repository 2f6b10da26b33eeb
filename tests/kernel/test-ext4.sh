#!/bin/bash
# tests/kernel/test-ext4.sh -- ext4 through the host kernel on a raid5 export.
#
# Three raw member images (metadata=none, chunk 64K, left-symmetric) are
# served by the built plugin and attached as a block device (nbd-client where
# /dev/nbd0 exists, else nbdfuse + losetup; see scripts/lib-attach.sh).
#   1. healthy: mkfs.ext4 with stride/stripe_width from the chunk, mount,
#      copy a real file tree plus random files, record sha256 of every file;
#      stop; every member offset must XOR to zero (parity consistent)
#   2. healthy again, O_DIRECT member I/O: e2fsck -fn clean, every checksum
#      matches
#   3. degraded (slot $MISSING served as 'missing', O_DIRECT): e2fsck clean,
#      checksums match, write more files, e2fsck clean; served again
#      (buffered), all checksums match
#   4. manual rebuild: the missing member is recomputed as the XOR of the
#      survivors; served healthy, e2fsck clean, all checksums match (so the
#      degraded writes left correct data and parity on the survivors)
# Needs root and either the nbd driver or FUSE + loop; exits 77 otherwise.
# Environment: ATTACH_METHOD=nbd|fuse forces the attach method, MISSING
# (slot, default 1), EXT4_DATA_MIB (default 24), R5_KERNEL_TIMEOUT (s, 600).

set -eu -o pipefail

# A hung plugin must not hang the suite: run under a timeout (whole process
# group) unless stdin is a terminal (then Ctrl-C must reach us).
if [ -z "${R5_KERNEL_TIMEOUT_SET:-}" ] && [ ! -t 0 ] && command -v timeout >/dev/null; then
    R5_KERNEL_TIMEOUT_SET=1 exec timeout -k 30 "${R5_KERNEL_TIMEOUT:-600}" bash "$0" "$@"
fi

srcdir=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
: "${NBDKIT:=nbdkit}"
: "${PLUGIN:=${abs_top_builddir:-$srcdir/build}/plugin/.libs/nbdkit-raid5-plugin.so}"
N=3
MEMBER_SIZE=96M
CHUNK_KIB=64
MISSING=${MISSING:-1}
# MiB of /usr/include copied before (and a third of that after) losing a
# member; smaller is useful in a slow guest (scripts/vm.sh).
DATA_MIB=${EXT4_DATA_MIB:-24}
PY=/usr/bin/python3

skip () { echo "$0: SKIP: $*"; exit 77; }
fail () { echo "$0: FAIL: $*" >&2; exit 1; }
step () { echo "== $(date +%T) $*"; }

. "$srcdir/scripts/lib-attach.sh"

[ "$(id -u)" = 0 ] || skip "needs root (mount, losetup/nbd-client)"
why=$(attach_why_not) || skip "$why"
for c in mkfs.ext4 e2fsck dumpe2fs sha256sum; do
    command -v $c >/dev/null || skip "$c is not installed (e2fsprogs)"
done
[ -x "$PY" ] || skip "$PY is not installed"
[ -f "$PLUGIN" ] || fail "plugin not built: $PLUGIN"

attach_trap
# On failure show what the server said (a sanitizer report, an error).
ATTACH_ON_FAILURE='[ $serve = 0 ] || { echo "--- tail of nbdkit.$serve.log:" >&2;
    tail -n 60 "$work/nbdkit.$serve.log" >&2; }'
serve=0
work=$(mktemp -d "${TMPDIR:-/tmp}/r5-ext4.XXXXXX")
attach_push "rm -rf '$work'"
mnt=$work/mnt
cd "$work"
for i in $(seq 0 $((N - 1))); do truncate -s $MEMBER_SIZE "m$i"; done
# O_DIRECT member I/O where the folder allows it (tmpfs before Linux 6.6
# does not).
direct=direct=true
dd if=/dev/zero of=probe bs=4096 count=1 oflag=direct status=none 2>/dev/null ||
    { direct=; echo "   (no O_DIRECT in $work: direct=true not tested)"; }
rm -f probe

# Serve the members; slot $1 (if not empty) is 'missing'; more plugin
# parameters may follow.  Sets DEV.
up ()
{
    local miss=${1:-} args=() i
    shift $(( $# > 0 ))
    for (( i = 0; i < N; i++ )); do
        if [ "$i" = "$miss" ]; then args+=(disk=missing); else args+=("disk=$work/m$i"); fi
    done
    serve=$((serve + 1))
    attach_serve "$work/sock" "$work/pid" "$work/nbdkit.$serve.log" \
        "$PLUGIN" "${args[@]}" chunk=${CHUNK_KIB}K layout=left-symmetric \
        metadata=none "$@" || fail "nbdkit did not start"
    attach_dev "$work/sock" "$work" || fail "could not attach the export"
    DEV=$ATTACH_DEV
    echo "   served ${args[*]}${*:+ $*} -> $DEV ($ATTACH_METHOD)"
}

# Detach and stop nbdkit; nbdkit must exit cleanly and report no
# sanitizer error.
down ()
{
    attach_umount "$mnt" || fail "umount failed"
    attach_detach "$DEV" || fail "detach failed"
    local log=$work/nbdkit.$serve.log rc=0
    attach_stop_nbdkit "$ATTACH_NBDKIT_PID" || rc=$?
    if [ $rc != 0 ] || grep -qE 'ERROR: AddressSanitizer|runtime error:' "$log"; then
        fail "nbdkit exited with status $rc"
    fi
}

fsck_clean ()
{
    e2fsck -fn "$DEV" > "$work/fsck.out" 2>&1 ||
        { cat "$work/fsck.out" >&2; fail "e2fsck -fn found problems ($1)"; }
    echo "   e2fsck -fn clean ($1)"
}

sums_of () { (cd "$mnt/$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }

verify ()
{
    local s
    for s in "$@"; do
        (cd "$mnt/${s%%:*}" && sha256sum --quiet --strict -c "$work/${s#*:}") ||
            fail "checksum mismatch in ${s%%:*}"
    done
    echo "   checksums match: $*"
}

# Copy regular files of /usr/include whose running total (sorted by name)
# lies in [$1, $2) MiB into $mnt/$3; add a few random files of awkward sizes.
fill ()
{
    local from=$(($1 << 20)) to=$(($2 << 20)) dst=$mnt/$3
    mkdir -p "$dst/rand"
    find /usr/include -type f -printf '%s\t%P\n' | LC_ALL=C sort -t "$(printf '\t')" -k2 |
        awk -F'\t' -v a=$from -v b=$to '{ t += $1 } t > a && t <= b { print $2 }' \
        > "$work/list.$3"
    tar -C /usr/include -cf - -T "$work/list.$3" | tar -C "$dst" -xf -
    head -c $((5 << 20 | 1234)) /dev/urandom > "$dst/rand/big"
    head -c 65537 /dev/urandom > "$dst/rand/chunk-plus-one"
    head -c 1 /dev/urandom > "$dst/rand/one"
    head -c 4095 /dev/urandom > "$dst/rand/page-minus-one"
    sync -f "$dst"
    echo "   wrote $(wc -l < "$work/list.$3") files ($(du -sm "$dst" | cut -f1) MiB) into $3"
}

# parity-ok: every byte offset of the members XORs to zero (data-offset 0,
# member size a multiple of the chunk, so every byte belongs to a stripe).
# rebuild OUT IN...: OUT = XOR of the INs.
xor_members ()
{
    "$PY" - "$@" <<'EOF'
import sys
mode, args = sys.argv[1], sys.argv[2:]
out = open(args.pop(0), "wb") if mode == "rebuild" else None
files = [open(a, "rb") for a in args]
step, off = 1 << 20, 0
while True:
    bufs = [f.read(step) for f in files]
    if not bufs[0]:
        break
    x = 0
    for b in bufs:
        x ^= int.from_bytes(b, "little")
    if out:
        out.write(x.to_bytes(len(bufs[0]), "little"))
    elif x:
        bad = (x & -x).bit_length() // 8
        sys.exit("parity mismatch at member offset %d" % (off + bad))
    off += len(bufs[0])
EOF
}

stride=$((CHUNK_KIB / 4))
stripe_width=$((stride * (N - 1)))

step "1. healthy array: mkfs.ext4 -E stride=$stride,stripe_width=$stripe_width, write"
up
mkfs.ext4 -q -F -b 4096 -E stride=$stride,stripe_width=$stripe_width "$DEV"
dumpe2fs -h "$DEV" 2>/dev/null | grep -q "RAID stripe width: *$stripe_width" ||
    fail "mkfs did not record stripe_width=$stripe_width"
attach_mount "$DEV" "$mnt" || fail "mount failed"
fill 0 $DATA_MIB a
sums_of a > "$work/a.sums"
down
xor_members parity-ok "$work"/m? || fail "parity inconsistent after healthy writes"
echo "   parity consistent on all members"

step "2. healthy array again (${direct:-buffered}): fsck, verify"
up "" $direct
fsck_clean healthy
attach_mount "$DEV" "$mnt" ro || fail "mount failed"
verify a:a.sums
down

step "3. degraded array (slot $MISSING missing, ${direct:-buffered}): fsck, verify, write more"
up "$MISSING" $direct
fsck_clean degraded
attach_mount "$DEV" "$mnt" || fail "mount failed"
verify a:a.sums
fill $DATA_MIB $((DATA_MIB + (DATA_MIB + 2) / 3)) b
sums_of b > "$work/b.sums"
attach_umount "$mnt" || fail "umount failed"
fsck_clean "degraded, after writes"
down
up "$MISSING"
attach_mount "$DEV" "$mnt" ro || fail "mount failed"
verify a:a.sums b:b.sums
down

step "4. rebuild slot $MISSING as the XOR of the survivors, serve healthy"
survivors=()
for (( i = 0; i < N; i++ )); do [ $i = "$MISSING" ] || survivors+=("$work/m$i"); done
xor_members rebuild "$work/m$MISSING" "${survivors[@]}"
up
fsck_clean rebuilt
attach_mount "$DEV" "$mnt" ro || fail "mount failed"
verify a:a.sums b:b.sums
down

step "PASS"
