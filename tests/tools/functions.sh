# tests/tools/functions.sh -- helpers for the raid5ctl tests.  Source it
# first thing:   . "${0%/*}/functions.sh"
#
# Builds on tests/integration/functions.sh (skip, fail, requires, $tmpdir
# removed on exit, checksum_members, raid5_captive, member_check, ...) and
# adds:
#   RAID5CTL           the built raid5ctl
#   requires_raid5ctl  skip (77) unless raid5ctl, mdadm, nbdkit, the plugin
#                      and member-check are all there
#   md_field FILE KEY  the value of the "KEY : value" line of an
#                      mdadm --examine style report
#   expect_refused REGEX ARGS...  raid5ctl ARGS must fail with one line on
#                      stderr matching REGEX and leave $DISKS byte-identical
#   flip_byte FILE OFFSET  invert one byte (a fixed value might be there
#                      already); prints the new value as two hex digits

. "${0%/*}/../integration/functions.sh"

RAID5CTL="$abs_top_builddir/tools/raid5ctl"

requires_raid5ctl ()
{
  [ -x "$RAID5CTL" ] || skip "not built: $RAID5CTL"
  requires mdadm --version
  requires_plugin
  requires nbdinfo --version
}

md_field ()
{
  sed -n "s/^ *$2 : //p" "$1" | head -n 1
}

# md_lines_agree MDADM_REPORT OUR_REPORT: every line mdadm printed about a
# disk (but its first, which names the disk) is also in ours, verbatim.
md_lines_agree ()
{
  local line
  while IFS= read -r line; do
    [ -n "$line" ] || continue
    grep -qxF -- "$line" "$2" ||
      fail "raid5ctl examine lacks mdadm's line '$line' (see $2)"
  done < <(tail -n +2 "$1")
}

failures=0
expect_refused ()
{
  ( check_refused "$@" ) || failures=$(( failures + 1 ))
}

# run_refused ARGS...: run raid5ctl ARGS (60 s at most) and fail unless
# it is refused -- a non-zero exit, kept in refused_status -- with one
# line on stderr ($tmpdir/err) that does not say "out of memory", and
# every member of DISKS as it was.
run_refused ()
{
  local sums lines
  refused_status=0
  sums=$(checksum_members "${DISKS[@]}")
  timeout 60 "$RAID5CTL" "$@" >"$tmpdir/out" 2>"$tmpdir/err" ||
    refused_status=$?
  echo "raid5ctl ${*//$tmpdir\//} -> exit $refused_status: $(head -c 300 "$tmpdir/err")"
  [ $refused_status -ne 0 ] || fail "accepted: raid5ctl $*"
  lines=$(grep -c . "$tmpdir/err" || :)
  [ "$lines" -eq 1 ] ||
    fail "raid5ctl $*: expected one line on stderr, got $lines"
  ! grep -qi "out of memory" "$tmpdir/err" || fail "raid5ctl $*: out of memory"
  [ "$(checksum_members "${DISKS[@]}")" = "$sums" ] ||
    fail "raid5ctl $*: a disk changed"
}

# check_refused RE ARGS...: refused, the line matching RE (grep -E).
check_refused ()
{
  local re=$1
  shift
  run_refused "$@"
  grep -Eq -- "$re" "$tmpdir/err" || fail "raid5ctl $*: error lacks '$re'"
}

# check_refused_prefix PREFIX ARGS...: refused with exit status 1, the
# line starting with PREFIX (a fixed string).
check_refused_prefix ()
{
  local prefix=$1
  shift
  run_refused "$@"
  [ $refused_status -eq 1 ] || fail "raid5ctl $*: exit $refused_status, not 1"
  [ "$(head -c ${#prefix} "$tmpdir/err")" = "$prefix" ] ||
    fail "raid5ctl $*: the error does not start with '$prefix'"
}

flip_byte ()
{
  local b
  b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  printf "\\$(printf '%03o' $(( b ^ 255 )))" |
    dd of="$1" bs=1 seek="$2" conv=notrunc status=none
  printf '%02x\n' $(( b ^ 255 ))
}

plant_md ()
{
  python3 - "$@" <<'EOF'
import os, struct, sys
version, src, dst = sys.argv[1:4]
sectors = os.path.getsize(dst) // 512
with open(dst, 'r+b') as f:
    if version == '0.90':
        # md_magic, major/minor/patch version 0.90.0, gvalid_words,
        # set_uuid0, ctime, level 5, size 0, 3 of 3 disks (md_p.h); the
        # rest of the 4 KiB is zero, as libblkid expects of a real one.
        off = ((sectors & ~127) - 128) * 512
        sb = struct.pack('<16I', 0xa92b4efc, 0, 90, 0, 0, 0x5eed0090, 0,
                         5, 0, 3, 3, 0, 0, 0x5eed0091, 0x5eed0092,
                         0x5eed0093)
        f.seek(off)
        f.write(sb + bytes(4096 - len(sb)))
    else:
        off = ((sectors - 16) & ~7) * 512
        sb = bytearray(open(src, 'rb').read()[4096:8192])
        struct.pack_into('<QQQ', sb, 128, 0, off // 512, off // 512)
        sb[216:220] = bytes(4)
        n = 256 + 2 * struct.unpack_from('<I', sb, 220)[0]
        acc = sum(struct.unpack_from('<%dI' % (n // 4), sb, 0))
        struct.pack_into('<I', sb, 216,
                         ((acc & 0xffffffff) + (acc >> 32)) & 0xffffffff)
        f.seek(off)
        f.write(sb)
print(off)
EOF
}

# partitioned_disk SIZE: $tmpdir/disk.img, SIZE bytes with a dos table
# whose partition 1 starts at sector 64 and holds $tmpdir/part.img, an
# ext4 of $tmpdir/tree (4 KiB blocks).
partitioned_disk ()
{
  local size=$1

  truncate -s "$size" "$tmpdir/disk.img"
  echo 'start=64, type=83' | sfdisk -q "$tmpdir/disk.img" || fail "sfdisk"
  mke2fs -q -t ext4 -b 4096 -d "$tmpdir/tree" -F "$tmpdir/part.img" \
    $(( (size - 32768) / 1024 / 4 * 4 ))k >/dev/null
  dd if="$tmpdir/part.img" of="$tmpdir/disk.img" bs=512 seek=64 \
    conv=notrunc status=none
}
