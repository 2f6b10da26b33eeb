#!/usr/bin/env bash
# raid5ctl create, judged by others: mdadm --examine (the superblocks, as
# mdadm and kernel md read them), member-check (parity = XOR of the data
# after the resync), and the plugin (serves the array with no geometry
# parameters, at the size create reported, whatever the disk= order).
# Then every refusal: non-zero exit, one line on stderr, disks unchanged.

. "${0%/*}/functions.sh"
requires_raid5ctl
requires nbdcopy --version

# md_data_offset MEMBER_SECTORS CHUNK_SECTORS: mdadm's default data offset
# (super1.c validate_geometry1), written out again here.
md_data_offset ()
{
  local dev=$1 chunk=$2 bm head=262144
  if (( dev < 128 )); then bm=0
  elif (( dev - 128 >= 419430400 )); then bm=256
  elif (( dev - 8 > 16777216 )); then bm=128
  else bm=8
  fi
  while (( head * 1024 > dev && head / 2 >= 2 * chunk )); do
    head=$(( head / 2 ))
  done
  echo $(( (24 + bm + head + 2047) / 2048 * 2048 ))
}

# check_members N CHUNK_K LAYOUT DOFF STATE FEATURE DISK...: mdadm reads
# every member as slot i of the expected array, and raid5ctl examine
# prints every line mdadm prints.
check_members ()
{
  local n=$1 chunk_k=$2 layout=$3 doff=$4 state=$5 feature=$6 slot=0 d
  local sectors kib aaa
  shift 6
  if [ -b "$1" ]; then sectors=$(( $(blockdev --getsize64 "$1") / 512 ))
  else sectors=$(( $(stat -c %s "$1") / 512 ))
  fi
  kib=$(( (sectors - doff) / (chunk_k * 2) * chunk_k * (n - 1) ))
  aaa=$(printf 'A%.0s' $(seq "$n"))
  for d in "$@"; do
    mdadm --examine "$d" >"$tmpdir/md.txt" 2>&1 ||
      fail "mdadm --examine $d: $(cat "$tmpdir/md.txt")"
    "$RAID5CTL" examine "$d" >"$tmpdir/ours.txt" || fail "examine $d"
    expect_field Checksum '[0-9a-f]+ - correct'
    expect_field 'Raid Level' raid5
    expect_field 'Raid Devices' "$n"
    expect_field Layout "$layout"
    expect_field 'Chunk Size' "${chunk_k}K"
    expect_field 'Data Offset' "$doff sectors"
    expect_field 'Array Size' "$kib KiB.*"
    expect_field State "$state"
    expect_field 'Feature Map' "$feature"
    expect_field 'Device Role' "Active device $slot"
    expect_field 'Array State' "$aaa .*"
    md_lines_agree "$tmpdir/md.txt" "$tmpdir/ours.txt"
    grep -q "raid5 plugin : yes, as slot $slot of $n" "$tmpdir/ours.txt" ||
      fail "$d: raid5ctl examine does not say the plugin serves it"
    slot=$(( slot + 1 ))
  done
  echo "mdadm agrees: $n members, ${chunk_k}K $layout, data offset $doff," \
       "$kib KiB, $state, feature map $feature"
}

expect_field ()
{
  local got
  got=$(md_field "$tmpdir/md.txt" "$1")
  [[ $got =~ ^$2$ ]] || fail "mdadm --examine: $1 is '$got', expected '$2'"
}

# examine_bitmap DISK: mdadm -X of the internal bitmap.  (mdadm -X reads
# a regular file as an external bitmap file, so copy the area out.)
examine_bitmap ()
{
  dd if="$1" of="$tmpdir/bitmap" bs=4096 skip=2 count=1 status=none
  mdadm -X "$tmpdir/bitmap" 2>&1 || fail "mdadm -X: bitmap of $1"
}

# export_sum DISK...: sha256 of the array served from these disks.
export_sum ()
{
  local disks
  mapfile -t disks < <(disk_args "$@")
  raid5_captive "${disks[@]}" -- nbdcopy @URI@ "$tmpdir/export" ||
    fail "serving $*"
  sha256sum <"$tmpdir/export" | cut -d' ' -f1
}

served_size ()
{
  local disks
  mapfile -t disks < <(disk_args "$@")
  raid5_captive "${disks[@]}" -- nbdinfo --size @URI@
}

# --- A: 3 members of random bytes; create syncs parity -----------------
for i in 0 1 2; do head -c 32M /dev/urandom >"$tmpdir/a$i"; done
A=("$tmpdir"/a0 "$tmpdir"/a1 "$tmpdir"/a2)
doff=$(md_data_offset 65536 128)
! "$MEMBER_CHECK" -q --chunk 64K --data-offset $(( doff * 512 )) "${A[@]}" \
  2>/dev/null || fail "random members already have consistent parity?"
"$RAID5CTL" create --chunk 64K "${A[@]}" >"$tmpdir/create.out" ||
  fail "create A"
cat "$tmpdir/create.out"
check_members 3 64 left-symmetric "$doff" clean 0x0 "${A[@]}"
member_check --chunk 64K --data-offset $(( doff * 512 )) "${A[@]}"
echo "A: parity is the XOR of the data in every stripe"

bytes=$(sed -n 's/^ *Array Size : .*, \([0-9]*\) bytes)$/\1/p' \
          "$tmpdir/create.out")
[ "$bytes" = $(( (65536 - doff) / 128 * 128 * 2 * 512 )) ] ||
  fail "create reported $bytes bytes"
[ "$(served_size "${A[@]}")" = "$bytes" ] || fail "served size differs"
# The command create printed serves it (with the built plugin for raid5).
read -r -a cmd < <(grep -A1 '^Serve it:' "$tmpdir/create.out" | tail -n 1)
[ "${cmd[0]} ${cmd[1]}" = "nbdkit raid5" ] || fail "serve line: ${cmd[*]}"
raid5_captive "${cmd[@]:2}" -- nbdinfo --size @URI@ >/dev/null ||
  fail "the printed command does not serve"
sum=$(export_sum "${A[@]}")
[ "$(export_sum "${A[2]}" "${A[0]}" "${A[1]}")" = "$sum" ] ||
  fail "disk= order changes the bytes served"
[ "$(export_sum "${A[1]}" "${A[2]}" "${A[0]}")" = "$sum" ] ||
  fail "disk= order changes the bytes served"
echo "A: served at $bytes bytes, same bytes in every disk= order"
uuid_a=$(md_field "$tmpdir/md.txt" 'Array UUID')
[ -n "$uuid_a" ] || fail "no Array UUID"

# --- B: 4 zero members, --assume-clean, internal bitmap ----------------
make_members b 4 16M
B=("${MEMBERS[@]}")
doff=$(md_data_offset 32768 256)
"$RAID5CTL" create --assume-clean --bitmap internal --layout ra \
  --chunk 128K --name test-b "${B[@]}" >"$tmpdir/create.out" ||
  fail "create B"
check_members 4 128 right-asymmetric "$doff" clean 0x1 "${B[@]}"
expect_field 'Internal Bitmap' '8 sectors from superblock'
name=$(md_field "$tmpdir/md.txt" Name)
[[ $name == *test-b* ]] || fail "name is '$name'"
examine_bitmap "${B[0]}" >"$tmpdir/bitmap.txt"
[ "$(md_field "$tmpdir/bitmap.txt" UUID)" = \
  "$(md_field "$tmpdir/md.txt" 'Array UUID')" ] || fail "bitmap UUID"
md_bits=$(sed -n 's/^ *Bitmap : \([0-9]*\) bits (chunks), \([0-9]*\) dirty.*/\1 \2/p' \
            "$tmpdir/bitmap.txt")
our_bits=$(sed -n 's/^ *Bitmap : \([0-9]*\) bits of .*, \([0-9]*\) set .*/\1 \2/p' \
             "$tmpdir/ours.txt")
[ -n "$md_bits" ] && [ "$md_bits" = "$our_bits" ] ||
  fail "bitmap: mdadm -X says '$md_bits', raid5ctl '$our_bits'"
grep -q '^ *Chunksize : 64 MB' "$tmpdir/bitmap.txt" || fail "bitmap chunk"
member_check --layout ra --chunk 128K --data-offset $(( doff * 512 )) "${B[@]}"
[ "$(served_size "${B[@]}")" = $(( (32768 - doff) / 256 * 256 * 3 * 512 )) ] ||
  fail "B: served size"
echo "B: bitmap bits (total, set): $md_bits; served"

# --- md's layouts 4 and 5 on random bytes; create syncs parity ----------
# mdadm --examine must name them; the plugin, from the superblocks alone,
# must serve what member-check (md's rule, written again) reads as the
# array's data, and parity must be their XOR.  (Parity alone would not
# tell the layouts apart: a XOR is the same whichever member holds it.)
doff=$(md_data_offset 32768 128)
for l in parity-first parity-last; do
  for i in 0 1 2 3; do head -c 16M /dev/urandom >"$tmpdir/$l.$i"; done
  P=("$tmpdir/$l".{0,1,2,3})
  "$RAID5CTL" create --chunk 64K --layout $l "${P[@]}" >"$tmpdir/create.out" ||
    fail "create, $l"
  check_members 4 64 $l "$doff" clean 0x0 "${P[@]}"
  mapfile -t disks < <(disk_args "${P[@]}")
  raid5_captive "${disks[@]}" -- nbdcopy @URI@ "$tmpdir/export" ||
    fail "serving $l"
  member_check --layout $l --chunk 64K --data-offset $(( doff * 512 )) \
    --model "$tmpdir/export" "${P[@]}"
  echo "$l: served where md's rule puts the data; parity synced"
done

# --- Members of different sizes: the smallest decides, as in mdadm -------
truncate -s 20M "$tmpdir/m0"; truncate -s 16M "$tmpdir/m1"
truncate -s 18M "$tmpdir/m2"
M=("$tmpdir"/m0 "$tmpdir"/m1 "$tmpdir"/m2)
"$RAID5CTL" create --assume-clean --chunk 64K "${M[@]}" >/dev/null 2>"$tmpdir/create.err" ||
  fail "create M"
# mdadm warns when the largest exceeds the size by more than 1%: so do we.
grep -q "^raid5ctl create: note: $tmpdir/m0 (20 MiB) is larger than the smallest member" \
  "$tmpdir/create.err" || fail "no note of the unused room: $(cat "$tmpdir/create.err")"
doff=$(md_data_offset 40960 128)         # mdadm's rule, first disk's size
size=$(( (32768 - doff) / 128 * 128 ))   # the smallest member's room
for i in 0 1 2; do
  mdadm --examine "${M[$i]}" >"$tmpdir/md.txt" 2>&1
  expect_field Checksum '[0-9a-f]+ - correct'
  expect_field 'Data Offset' "$doff sectors"
  expect_field 'Array Size' "$(( size * 2 / 2 )) KiB.*"
  avail=$(( $(stat -c %s "${M[$i]}") / 512 - doff ))
  expect_field 'Avail Dev Size' "$avail sectors.*"
  if [ "$avail" != "$size" ]; then
    expect_field 'Used Dev Size' "$size sectors.*"
  fi
done
[ "$(served_size "${M[@]}")" = $(( size * 2 * 512 )) ] ||
  fail "members of different sizes: served size"
echo "different sizes: component $size sectors from the smallest member"

# --- C: members over 100 GiB get a bitmap by default (sparse files) ----
for i in 0 1 2; do truncate -s 101G "$tmpdir/c$i"; done
C=("$tmpdir"/c0 "$tmpdir"/c1 "$tmpdir"/c2)
doff=$(md_data_offset $(( 101 << 21 )) 1024)
"$RAID5CTL" create --assume-clean "${C[@]}" >/dev/null || fail "create C"
check_members 3 512 left-symmetric "$doff" clean 0x1 "${C[0]}"
examine_bitmap "${C[0]}" | grep -q '^ *Chunksize : 64 MB' ||
  fail "C: bitmap chunk"
[ -n "$(served_size "${C[@]}")" ] || fail "C: not served"
for i in 0 1 2; do rm -f "$tmpdir/c$i"; truncate -s 100G "$tmpdir/c$i"; done
"$RAID5CTL" create --assume-clean "${C[@]}" >/dev/null || fail "create C'"
check_members 3 512 left-symmetric "$(md_data_offset $(( 100 << 21 )) 1024)" \
  clean 0x0 "${C[0]}"
rm -f "${C[@]}"

# --- Refusals: one line, non-zero exit, nothing written ----------------
# Small disks (each case checksums them all before and after): R holds
# an array of its own, the others are random bytes.
for i in 0 1 2; do head -c 4M /dev/urandom >"$tmpdir/r$i"; done
R=("$tmpdir"/r0 "$tmpdir"/r1 "$tmpdir"/r2)
"$RAID5CTL" create --assume-clean --chunk 64K --name test-r "${R[@]}" \
  >/dev/null || fail "create R"
uuid_r=$(mdadm --examine "${R[0]}" | sed -n 's/^ *Array UUID : //p')
for i in 0 1 2; do head -c 4M /dev/urandom >"$tmpdir/f$i"; done
F=("$tmpdir"/f0 "$tmpdir"/f1 "$tmpdir"/f2)
head -c 1M /dev/urandom >"$tmpdir/tiny"
mkdir "$tmpdir/adir"
ln -s "${F[0]}" "$tmpdir/link-to-f0"
DISKS=("${R[@]}" "${F[@]}" "$tmpdir/tiny")
many=()
for i in $(seq 0 32); do many+=("$tmpdir/many.$i"); done
expect_refused 'at least 3 disks' create "${F[0]}" "${F[1]}"
expect_refused '33 disks' create --force "${many[@]}"
expect_refused 'chunk 3K' create --chunk 3K "${F[@]}"
expect_refused 'chunk 128M' create --chunk 128M "${F[@]}"
expect_refused 'layout pf: expected .*parity-first' create --layout pf "${F[@]}"
expect_refused 'bitmap sometimes' create --bitmap sometimes "${F[@]}"
expect_refused 'data-offset 6K' create --data-offset 6K "${F[@]}"
expect_refused "name" create --name 0123456789abcdef0123456789abcdef "${F[@]}"
expect_refused 'unknown option --frobnicate' create --frobnicate "${F[@]}"
# A flag given a value names the flag, not a short option never typed;
# an option with a value given twice is refused (mdadm: "may only be
# specified once"), not the last one taken.
expect_refused '^raid5ctl create: option --force takes no value$' create --force=yes "${F[@]}"
expect_refused '^raid5ctl create: option --chunk given twice' create --chunk 64K \
  --chunk 128K "${F[@]}"
expect_refused '^raid5ctl replace: option --with given twice' replace --slot 1 \
  --with "$tmpdir/w1" --with "$tmpdir/w2" "${F[@]}"
expect_refused "^raid5ctl: unknown command 'bogus'" help bogus
expect_refused "^raid5ctl: unknown option '--bogus'" --bogus
expect_refused "^raid5ctl create: --name '--assume-clean': a name does not start with '-'" \
  create --name --assume-clean "${F[@]}"
expect_refused 'nonexistent: No such file' create "${F[0]}" "${F[1]}" \
  "$tmpdir/nonexistent"
expect_refused 'adir: is a directory' create "${F[@]}" "$tmpdir/adir"
expect_refused 'null: is not a regular file' create "${F[@]}" /dev/null
expect_refused 'tiny is too small' create --chunk 64K "${F[0]}" \
  "$tmpdir/tiny" "${F[1]}"
expect_refused 'f0: given twice' create "${F[@]}" "${F[0]}"
expect_refused 'link-to-f0: given twice' create "${F[@]}" \
  "$tmpdir/link-to-f0"
expect_refused "r1 already holds an md superblock.*$uuid_r.*test-r" create \
  --chunk 64K "${F[0]}" "${R[1]}" "${F[1]}"
# Superblocks of the other md versions, where those versions keep them.
off10=$(plant_md 1.0 "${R[0]}" "${F[2]}")
off09=$(plant_md 0.90 - "${F[1]}")
uuid09=5eed0090:5eed0091:5eed0092:5eed0093     # plant_md's
expect_refused "f1 already holds an md superblock \\(v0.90.0, at byte \
$off09\\): it belongs to array UUID $uuid09 \\(" create --chunk 64K "${F[@]}"
expect_refused "f2 already holds an md superblock \\(v1.0, at byte $off10\\).*test-r" \
  create --chunk 64K "${F[0]}" "${F[2]}" "${F[1]}"
expect_refused 'no room for the internal bitmap' create --force \
  --data-offset 8K --bitmap internal "${F[@]}"
# A member being served is locked by the plugin: not even --force.
mapfile -t disks < <(disk_args "${R[@]}")
"$NBDKIT" -U "$tmpdir/sock" -P "$tmpdir/pid" "$PLUGIN" "${disks[@]}" ||
  fail "cannot serve R"
cleanup_fn 'kill_ours "$(cat "$tmpdir/pid")"'
expect_refused 'r1: in use.*being served' create --force --chunk 64K \
  "${F[0]}" "${R[1]}" "${F[1]}"
pid=$(cat "$tmpdir/pid")
kill "$pid"
while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
[ "$failures" -eq 0 ] || fail "$failures refusal cases failed"

# --- Block devices (loop devices; root only) ----------------------------
if [ "$(id -u)" = 0 ] && losetup --version >/dev/null 2>&1; then
  L=()
  for i in 0 1 2; do
    truncate -s 20M "$tmpdir/loop$i"
    dev=$(losetup -f --show "$tmpdir/loop$i" 2>/dev/null) || break
    cleanup_fn "losetup -d $dev"
    L+=("$dev")
  done
fi
if [ "${#L[@]}" = 3 ]; then
  "$RAID5CTL" create --chunk 64K "${L[@]}" >/dev/null || fail "create on ${L[*]}"
  check_members 3 64 left-symmetric "$(md_data_offset 40960 128)" clean 0x0 \
    "${L[@]}"
  [ "$(served_size "${L[@]}")" = $(( (40960 - 2048) / 128 * 128 * 2 * 512 )) ] ||
    fail "loop devices: served size"
  # A device someone holds exclusively (as a mount or md would).
  python3 -c 'import os, sys, time
os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL); print("held", flush=True)
time.sleep(60)' "${L[1]}" "$tmpdir" >"$tmpdir/held" &   # $tmpdir: kill_ours
  holder=$!
  cleanup_fn "kill_ours $holder"
  while ! grep -q held "$tmpdir/held"; do
    kill -0 $holder 2>/dev/null || fail "cannot hold ${L[1]}"
    sleep 0.1
  done
  DISKS=("$tmpdir"/loop?)
  expect_refused "${L[1]}: in use: something holds the device exclusively" \
    create --force "${L[@]}"
  kill $holder
  [ "$failures" -eq 0 ] || fail "the held loop device was not refused"
  echo "loop devices: created, served, held one refused"
else
  echo "loop devices: not tried (needs root and free loop devices)"
fi

# A slot given as "missing": made degraded and clean, as mdadm --create
# makes it (no resync: nothing to sync; md refuses a dirty degraded
# array), no bitmap bit set; served degraded, then rebuilt onto a new
# disk, after which every byte reads back and parity checks.  Two
# "missing" are refused, nothing written.
DEG=("$tmpdir"/deg0 "$tmpdir"/deg1 "$tmpdir"/deg2 "$tmpdir"/deg3)
truncate -s 32M "${DEG[@]}"
DISKS=("${DEG[@]}")
expect_refused "missing: given for slots 0 and 2: RAID-5 survives the loss of one member only" \
  create missing "${DEG[1]}" missing
"$RAID5CTL" create --chunk 64K --bitmap internal "${DEG[0]}" missing "${DEG[2]}" \
  >"$tmpdir/missing.out" 2>&1 || { cat "$tmpdir/missing.out"; fail "create with missing"; }
grep -q 'Parity : nothing to sync (degraded: slot 1 is missing' "$tmpdir/missing.out" ||
  fail "create with missing: $(cat "$tmpdir/missing.out")"
grep -q 'resync' "$tmpdir/missing.out" && fail "a degraded create resynced: $(cat "$tmpdir/missing.out")"
for d in "${DEG[0]}" "${DEG[2]}"; do
  ex=$(mdadm --examine "$d")
  [ "$(md_field <(echo "$ex") State)/$(md_field <(echo "$ex") 'Array State' | cut -c1-3)" = "clean/A.A" ] ||
    fail "$d after create with missing: $(echo "$ex" | grep -E 'State')"
  grep -q 'Resync Offset' <<<"$ex" && fail "$d: a resync is due: $(grep 'Resync Offset' <<<"$ex")"
  dd if="$d" of="$tmpdir/deg.bitmap" bs=4096 skip=2 count=1 status=none
  [ "$(mdadm --examine-bitmap "$tmpdir/deg.bitmap" | sed -n 's/.* bits (chunks), \([0-9]*\) dirty.*/\1/p')" = 0 ] ||
    fail "$d: bitmap bits set in a degraded new array: $(mdadm --examine-bitmap "$tmpdir/deg.bitmap" 2>&1 | grep -i 'dirty\|bitmap')"
done
[ -s "${DEG[1]}" ] && [ -z "$(tr -d '\0' <"${DEG[1]}" | head -c 1)" ] ||
  fail "the disk left out was written to"
head -c $((60 << 20)) /dev/urandom >"$tmpdir/missing.model"
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" disk="${DEG[0]}" disk=missing disk="${DEG[2]}" \
  --run "nbdcopy '$tmpdir/missing.model' \"\$uri\"" ||
  fail "writing the degraded new array"
"$RAID5CTL" rebuild --slot 1 --new "${DEG[3]}" "${DEG[0]}" "${DEG[2]}" >/dev/null 2>&1 ||
  fail "rebuild onto the missing slot"
"$RAID5CTL" check "${DEG[0]}" "${DEG[3]}" "${DEG[2]}" >"$tmpdir/missing.check" 2>&1 ||
  fail "check after the rebuild: $(cat "$tmpdir/missing.check")"
"$NBDKIT" -U "$(captive_sock)" "$PLUGIN" disk="${DEG[0]}" disk="${DEG[3]}" disk="${DEG[2]}" \
  --run "nbdcopy \"\$uri\" '$tmpdir/missing.back'" || fail "reading it whole"
cmp -n $((60 << 20)) "$tmpdir/missing.model" "$tmpdir/missing.back" ||
  fail "wrong bytes after the rebuild onto the missing slot"
rm -f "${DEG[@]}" "$tmpdir"/missing.* "$tmpdir/deg.bitmap"
echo "missing: degraded and clean, rebuilt whole"

# --force wipes them (a resync follows, so even inside the data area).
"$RAID5CTL" create --force --chunk 64K "${F[@]}" >/dev/null 2>&1 ||
  fail "create --force over old v1.0 and v0.90 superblocks"
[ "$(od -An -tx4 -j "$off10" -N4 "${F[2]}")" = " 00000000" ] &&
  [ "$(od -An -tx4 -j "$off09" -N4 "${F[1]}")" = " 00000000" ] ||
  fail "--force left an old superblock"
member_check --chunk 64K --data-offset 1048576 "${F[@]}"

# --force makes a new array over an old one.
"$RAID5CTL" create --force --assume-clean "${A[@]}" >/dev/null ||
  fail "create --force"
[ "$(mdadm --examine "${A[0]}" | sed -n 's/^ *Array UUID : //p')" != \
  "$uuid_a" ] || fail "--force kept the old array"
"$RAID5CTL" create --help | grep -q '^usage: raid5ctl create' ||
  fail "create --help"
echo "refusals and --force: ok"

# A bitmap or a PPL filling the room before the data leaves no place for
# the bad-block log: mdadm's other place, the 8 sectors just before the
# data, is on top of them.  None is reserved then.
for opt in "--bitmap internal --data-offset 12K" \
           "--consistency-policy ppl --data-offset 1032K"; do
  # shellcheck disable=SC2086
  "$RAID5CTL" create --force --assume-clean --chunk 64K $opt "${F[@]}" \
    >/dev/null 2>&1 || fail "create $opt"
  ! mdadm --examine "${F[0]}" | grep -q "Bad Block Log" ||
    fail "create $opt: a bad-block log on the bitmap's or the PPL's area: $(mdadm --examine "${F[0]}" | grep -i 'bad block\|bitmap\|ppl' | tr '\n' ' ')"
done
echo "a bitmap or a PPL filling the room before the data: no bad-block log on it: ok"
