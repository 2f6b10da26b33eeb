#!/usr/bin/env bash
# raid5ctl create over a disk that holds something: ext4, xfs, swap, a GPT
# and a DOS partition table (sfdisk), LUKS (if cryptsetup is there).
# Without --force each is refused with one line naming the disk and what
# libblkid found (type, label, UUID, offset), and no byte changes on any
# disk of the command, whether the disk comes first or last.  With
# --force the array is made, mdadm --examine reads every member, blkid -p
# calls each a linux_raid_member, and wipefs (which lists every signature
# libblkid finds, also those blkid -p does not report) finds nothing else.
# (md superblocks of every version: test-create.sh.)

. "${0%/*}/functions.sh"
requires_raid5ctl
requires blkid -V
requires wipefs -V
requires mkfs.ext4 -V
requires mkfs.xfs -V
requires mkswap -V
requires sfdisk -v

# Fixed UUIDs, so that the messages can be matched exactly.
UUID_EXT4=0b1e55ed-0000-4000-8000-00000000e474
UUID_XFS=0b1e55ed-0000-4000-8000-00000000a5f5
UUID_SWAP=0b1e55ed-0000-4000-8000-000000005a09
UUID_GPT=0b1e55ed-0000-4000-8000-0000000006b7
UUID_LUKS=0b1e55ed-0000-4000-8000-00000000c0de

# image NAME SIZE: a new sparse (zero) file $tmpdir/NAME.img.
image ()
{
  rm -f "$tmpdir/$1.img"
  truncate -s "$2" "$tmpdir/$1.img"
  echo "$tmpdir/$1.img"
}

# refused_then_forced IMAGE REGEX: IMAGE (made by the caller) with two
# clean disks is refused, first and last in the command, with REGEX (after
# "IMAGE holds "); then create --force makes an array of all three.
refused_then_forced ()
{
  local img=$1 re=$2 name clean0 clean1 d type others
  name=${img##*/}
  clean0=$(image clean0 16M)
  clean1=$(image clean1 16M)
  DISKS=("$img" "$clean0" "$clean1")
  expect_refused "/$name holds $re" create "$img" "$clean0" "$clean1"
  expect_refused "/$name holds $re" create "$clean0" "$clean1" "$img"
  [ "$failures" -eq 0 ] || fail "$name: not refused as expected"
  "$RAID5CTL" create --force "${DISKS[@]}" >/dev/null 2>"$tmpdir/err" ||
    fail "$name: create --force: $(cat "$tmpdir/err")"
  for d in "${DISKS[@]}"; do
    mdadm --examine "$d" >/dev/null 2>&1 || fail "$d: mdadm --examine"
    type=$(blkid -p -o value -s TYPE "$d") || :
    [ "$type" = linux_raid_member ] || fail "$d: blkid -p says '$type'"
    others=$(wipefs -n -O TYPE,OFFSET --noheadings "$d" |
               grep -v '^linux_raid_member  *0x1000$' || :)
    [ -z "$others" ] || fail "$d: left after create --force: $others"
  done
  echo "$name: refused, then wiped by --force"
}

# The end of each message.
IT=' \(--force overwrites it\)$'
THEM=' \(--force overwrites them\)$'

img=$(image ext4 16M)
mkfs.ext4 -q -F -L data -U "$UUID_EXT4" "$img"
what="an ext4 file system \\(label 'data', UUID $UUID_EXT4"
refused_then_forced "$img" "$what, at byte 1080\\)$IT"

img=$(image xfs 300M)           # mkfs.xfs makes nothing smaller
mkfs.xfs -q -f -L xdata -m uuid="$UUID_XFS" "$img"
what="an xfs file system \\(label 'xdata', UUID $UUID_XFS"
refused_then_forced "$img" "$what, at byte 0\\)$IT"

img=$(image swap 16M)
mkswap -q -L swp -U "$UUID_SWAP" "$img" 2>/dev/null
what="a swap signature \\(label 'swp', UUID $UUID_SWAP"
refused_then_forced "$img" "$what, at byte [0-9]+\\)$IT"    # page size - 10

# A GPT is three signatures: the header, its backup in the last sector
# and the protective MBR.
img=$(image gpt 16M)
printf 'label: gpt\nlabel-id: %s\n,8M\n' "$UUID_GPT" | sfdisk -q "$img"
what="a gpt partition table \\(UUID $UUID_GPT, at byte 512\\)"
refused_then_forced "$img" "$what; 2 more signatures$THEM"

img=$(image dos 16M)
printf 'label: dos\nlabel-id: 0x5eed0d05\n,8M\n' | sfdisk -q "$img"
refused_then_forced "$img" \
  "a dos partition table \\(UUID 5eed0d05, at byte 510\\)$IT"

# --assume-clean wipes too (ext4's superblock is before the data offset).
img=$(image ext4-clean 16M)
mkfs.ext4 -q -F -L data -U "$UUID_EXT4" "$img"
"$RAID5CTL" create --force --assume-clean "$img" "$(image clean0 16M)" \
  "$(image clean1 16M)" >/dev/null ||
  fail "create --force --assume-clean over ext4"
[ "$(blkid -p -o value -s TYPE "$img")" = linux_raid_member ] &&
  [ "$(wipefs -n -O TYPE --noheadings "$img")" = linux_raid_member ] ||
  fail "create --force --assume-clean left ext4 on $img"

# LUKS2 keeps a second header at 16 KiB.  (PBKDF2 with few iterations:
# argon2's memory is not needed for a header nobody opens.)
if cryptsetup --version >/dev/null 2>&1; then
  img=$(image luks 16M)
  printf secret >"$tmpdir/key"
  cryptsetup luksFormat -q --type luks2 --pbkdf pbkdf2 \
    --pbkdf-force-iterations 1000 --label cr --uuid "$UUID_LUKS" \
    --key-file "$tmpdir/key" "$img" >/dev/null 2>&1 ||
    fail "cryptsetup luksFormat $img"
  what="a crypto_LUKS encrypted volume \\(label 'cr', UUID $UUID_LUKS"
  refused_then_forced "$img" "$what, at byte 0\\); 1 more signature$THEM"
else
  echo "LUKS: not tried (no cryptsetup)"
fi
