# tests/vm/guest-md-create-missing.sh -- in the guest: an array created
# with one slot "missing", by mdadm --create and by raid5ctl create, kernel
# md the oracle (run by tests/vm/test-md-create-missing.sh).
#
# Members are loop devices over sparse files in the guest's tmpfs (32 MiB
# each), slot 1 missing; for each consistency policy (none: --bitmap none;
# bitmap: an internal bitmap; ppl: a partial parity log):
#   same   mdadm --examine says the same of md's members and ours (geometry,
#          state, events, roles, "A.A"), their superblocks are the same
#          bytes but for UUIDs, name, times and checksum, and with a bitmap
#          mdadm --examine-bitmap the same (no bit set);
#   ours -> md   md assembles ours degraded without --run, writes a
#          pattern; raid5ctl rebuild puts a new member in slot 1; md then
#          assembles all three with no recovery to do, a check finds
#          mismatch_cnt 0 and the pattern reads back (no bitmap, bitmap);
#   md -> here   the same with md's array: md writes the pattern, raid5ctl
#          rebuilds slot 1, md checks it whole (bitmap, PPL).
# Env: PAT (4 MiB pattern), RAID5CTL.

. "${BASH_SOURCE[0]%/*}/guest-lib.sh"
D=/tmp/cm
mkdir -p "$D"
MD=0

# loops NAME: three 32 MiB sparse files on loop devices (L).
loops () {
    local i
    L=()
    for i in 0 1 2; do
        truncate -s 32M "$D/$1.$i" || return 1
        L+=("$(losetup -f --show "$D/$1.$i")") || return 1
    done
}

# sb_differs A B: offsets of the superblock bytes that differ, outside
# the set UUID, name and ctime (16-71), device UUID (168-183), utime
# (192-199) and checksum (216-219).
sb_differs () {
    local a b
    blockdev --flushbufs "$1" "$2"
    a=$(dd if="$1" bs=4096 skip=1 count=1 status=none | od -An -v -tx1 -w1)
    b=$(dd if="$2" bs=4096 skip=1 count=1 status=none | od -An -v -tx1 -w1)
    paste <(echo "$a") <(echo "$b") | awk '{ o = NR - 1 }
      $1 != $2 && !((o >= 16 && o < 72) || (o >= 168 && o < 184) ||
      (o >= 192 && o < 200) || (o >= 216 && o < 220)) { printf "%d ", o }'
}

KEYS=('Feature Map' 'Raid Devices' 'Avail Dev Size' 'Array Size'
      'Used Dev Size' 'Data Offset' 'Super Offset' 'Unused Space'
      'Internal Bitmap' 'PPL' 'Bad Block Log' 'Layout' 'Chunk Size' 'State'
      'Events' 'Device Role' 'Array State')
BKEYS=('Version' 'Events' 'Events Cleared' 'State' 'Chunksize' 'Sync Size'
       'Bitmap')

# whole WHAT PATTERN-FILE M0 M1 M2: md assembles the three, has nothing to
# recover, checks parity clean and reads the pattern.
whole () {
    local what=$1 pat=$2 mm
    shift 2
    MD=$((MD + 1))
    run mdadm --assemble "/dev/md$MD" "$@" || { not_ok "$what: md does not assemble it whole"; return; }
    grep -A1 "^md$MD : " /proc/mdstat | grep -q '\[UUU\]' &&
        ok "$what: md assembles it whole ([UUU])" || not_ok "$what: $(grep -A1 "^md$MD" /proc/mdstat)"
    read -r action </sys/block/md$MD/md/sync_action
    [[ $action == idle ]] && ok "$what: md has nothing to recover" || not_ok "$what: md runs $action"
    mm=$(md_check md$MD) && [[ $mm == 0 ]] && ok "$what: md's check: mismatch_cnt 0" ||
        not_ok "$what: md's check: mismatch_cnt $mm"
    cmp -s <(dd if=/dev/md$MD bs=1M count=4 iflag=direct status=none) "$pat" &&
        ok "$what: the pattern reads back" || not_ok "$what: the pattern does not read back"
    md_stop md$MD
}

# degraded_write WHAT PATTERN M0 M2: md assembles the two (no --run: the
# array was made without slot 1) and writes the pattern.
degraded_write () {
    local what=$1 pat=$2
    shift 2
    MD=$((MD + 1))
    run mdadm --assemble "/dev/md$MD" "$@" || { not_ok "$what: md does not assemble it"; return 1; }
    grep -A1 "^md$MD : " /proc/mdstat | grep -q '\[U_U\]' &&
        ok "$what: md starts it degraded ([U_U])" || not_ok "$what: $(grep -A1 "^md$MD" /proc/mdstat)"
    run dd if="$pat" of=/dev/md$MD bs=1M oflag=direct status=none || not_ok "$what: writing"
    md_stop md$MD
}

rebuild () {
    local what=$1
    shift
    run "$RAID5CTL" rebuild --slot 1 --new "$@" && ok "$what: raid5ctl rebuild of slot 1" ||
        not_ok "$what: raid5ctl rebuild"
}

for pol in none bitmap ppl; do
    case $pol in
    none) mdo=(--bitmap=none) ours=(--bitmap none) ;;
    bitmap) mdo=(--bitmap=internal) ours=(--bitmap internal) ;;
    ppl) mdo=(--consistency-policy=ppl) ours=(--consistency-policy ppl) ;;
    esac
    log "$pol"
    loops "md-$pol" || { not_ok "$pol: loop devices"; continue; }
    A=("${L[@]}")
    loops "ours-$pol" || { not_ok "$pol: loop devices"; continue; }
    B=("${L[@]}")
    MD=$((MD + 1))
    run mdadm --create "/dev/md$MD" --run --metadata=1.2 --level=5 --raid-devices=3 \
        --chunk=64 --homehost=cm --name="$pol" "${mdo[@]}" "${A[0]}" missing "${A[2]}" ||
        { not_ok "$pol: mdadm --create with missing"; continue; }
    md_stop md$MD
    run "$RAID5CTL" create --chunk 64K --name "$pol" "${ours[@]}" "${B[0]}" missing "${B[2]}" ||
        { not_ok "$pol: raid5ctl create with missing"; continue; }
    for i in 0 2; do
        md_same "$pol: member $i" --examine "${A[i]}" "${B[i]}" "${KEYS[@]}"
        d=$(sb_differs "${A[i]}" "${B[i]}")
        [[ -z $d ]] && ok "$pol: member $i: the same superblock bytes" ||
            not_ok "$pol: member $i: superblock bytes differ at $d"
    done
    [[ $pol != bitmap ]] || md_same "$pol" --examine-bitmap "${A[0]}" "${B[0]}" "${BKEYS[@]}"
    # Both ways with a bitmap (the one whose bits differ from a whole
    # create's), one way each for the others: TCG makes every rebuild dear.
    [[ $pol == ppl ]] ||
        { degraded_write "$pol: ours -> md" "$PAT" "${B[0]}" "${B[2]}" &&
          rebuild "$pol: ours -> md" "${B[1]}" "${B[0]}" "${B[2]}" &&
          whole "$pol: ours -> md" "$PAT" "${B[@]}"; }
    [[ $pol == none ]] ||
        { degraded_write "$pol: md -> here" "$PAT" "${A[0]}" "${A[2]}" &&
          rebuild "$pol: md -> here" "${A[1]}" "${A[0]}" "${A[2]}" &&
          whole "$pol: md -> here" "$PAT" "${A[@]}"; }
    for l in "${A[@]}" "${B[@]}"; do losetup -d "$l"; done
    rm -f "$D"/*
done
exit $((GUEST_FAILS > 0))
