# tests/vm/md-lib.sh -- host side of the md oracle tests (test-md-to-raid5.sh,
# test-raid5-to-md.sh).  Sourced after lib.sh.
#
# Every geometry (members x chunk x layout) gets its own partition on each of
# five disk images, so that one guest boot covers all of them: geometry g is
# logical partition g+4 (/dev/vda5, vdb5, ...; an msdos table written here, no
# partitioning tool needed).  Geometries with fewer members leave their
# partitions on the last disks unused.

LAYOUTS=${MD_LAYOUTS:-"left-symmetric left-asymmetric right-symmetric right-asymmetric"}
CHUNKS=${MD_CHUNKS:-"16K 64K 512K"}
MEMBERS=${MD_MEMBERS:-"3 4"}
# Also 5 members with 64K chunks: there a small write is read-modify-write
# (on 3 and 4 members the planner always picks reconstruct-write).
WIDE=${MD_WIDE-5}
# md's parity-first and parity-last (layouts 4 and 5): parity never moves,
# so 64K chunks on $MEMBERS members show where everything goes.
FIXED=${MD_FIXED_LAYOUTS-"parity-first parity-last"}
NDISKS=5

# part_mib CHUNK: partition size.  Room for md's default data offset (1 MiB, or
# 2 MiB for 512K chunks on small devices) and more than one full rotation of
# parity over 4 members (16 stripes of 64K, 6 of 512K).
part_mib () { case $1 in 512K) echo 5 ;; *) echo 2 ;; esac; }

short () { echo "$1" | sed -e 's/left-/l/' -e 's/right-/r/' -e 's/asymmetric/a/' -e 's/symmetric/s/' \
                          -e 's/parity-first/pf/' -e 's/parity-last/pl/'; }

# geometries: writes $W/geoms, one line per geometry:
#   G N LAYOUT CHUNK START_SECTOR SIZE_SECTORS NAME
# The last one, named control-..., is a negative control: the test makes it
# wrong on purpose and expects the oracle to notice.
geometries () {
    local g=0 n c l e=2048 p
    : >"$W/geoms"
    add () {
        g=$((g + 1)); p=$(( $(part_mib "$3") * 2048 ))
        echo "$g $1 $2 $3 $((e + 2048)) $p $4" >>"$W/geoms"
        e=$((e + 2048 + p))
    }
    for n in $MEMBERS; do for c in $CHUNKS; do for l in $LAYOUTS; do
        add $n $l $c "$(short $l)-$n-$c"
    done; done; done
    for n in $WIDE; do for l in $LAYOUTS; do add $n $l 64K "$(short $l)-$n-64K"; done; done
    for n in $MEMBERS; do for l in $FIXED; do add $n $l 64K "$(short $l)-$n-64K"; done; done
    # Degraded from the start, slot k missing (k = 0..3 over the layouts): md
    # writes and reads through parity where the plugin must, and vice versa.
    # Then parity-first without its parity member (slot 0), parity-last
    # without data member 1.
    local k=0
    for l in $LAYOUTS; do add 4 $l 64K "$(short $l)-4-64K-missing$k"; k=$(( (k + 1) % 4 )); done
    k=0
    for l in $FIXED; do add 4 $l 64K "$(short $l)-4-64K-missing$k"; k=$((k + 1)); done
    add 3 left-symmetric 64K control-ls-3-64K
    DISK_SECTORS=$((e + 2048))
}

le32 () { printf '\\x%02x\\x%02x\\x%02x\\x%02x' $(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) $(($1 >> 24 & 255)); }

# put IMG BYTE-OFFSET PRINTF-FORMAT
put () { printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none; }

# mbr_entry IMG SECTOR SLOT TYPE START SIZE: one 16-byte partition entry (LBA only).
mbr_entry () {
    put "$1" $(($2 * 512 + 446 + $3 * 16)) "\\x00\\xfe\\xff\\xff\\x$4\\xfe\\xff\\xff$(le32 $5)$(le32 $6)"
    put "$1" $(($2 * 512 + 510)) '\x55\xaa'
}

# make_disks: $W/disk0..3.img, sparse, each with the same table: one extended
# partition from sector 2048; in it, per geometry, an EBR then 1 MiB later the
# logical partition.
make_disks () {
    local g n l c s p name next i
    truncate -s $((DISK_SECTORS * 512)) "$W/table.img"
    mbr_entry "$W/table.img" 0 0 05 2048 $((DISK_SECTORS - 2048))
    while read -r g n l c s p name; do
        mbr_entry "$W/table.img" $((s - 2048)) 0 83 2048 "$p"
        next=$((s + p))
        if [[ $g -lt $(wc -l <"$W/geoms") ]]; then
            mbr_entry "$W/table.img" $((s - 2048)) 1 05 $((next - 2048)) $((2048 + p))
        fi
    done <"$W/geoms"
    for i in $(seq 0 $((NDISKS - 1))); do cp --sparse=always "$W/table.img" "$W/disk$i.img"; done
    rm -f "$W/table.img"
}

# extract G N START SIZE: member i of geometry G from disk i to $W/g$G/m$i.
extract () {
    local i
    mkdir -p "$W/g$1"
    for i in $(seq 0 $(($2 - 1))); do
        dd if="$W/disk$i.img" of="$W/g$1/m$i" bs=1M skip=$(($3 * 512)) count=$(($4 * 512)) \
           iflag=skip_bytes,count_bytes conv=sparse status=none
    done
}

# implant G N START: the members of geometry G into its partitions.
implant () {
    local i
    for i in $(seq 0 $(($2 - 1))); do
        dd if="$W/g$1/m$i" of="$W/disk$i.img" bs=1M seek=$(($3 * 512)) oflag=seek_bytes \
           conv=notrunc,sparse status=none
    done
}

# missing_of NAME: the missing slot of a degraded geometry (NAME ends in -missingK).
missing_of () { [[ $1 =~ -missing([0-9])$ ]] && echo "${BASH_REMATCH[1]}"; }

# disks N [MISSING]: disk=... arguments for geometry dir $GD, slot MISSING absent.
disks () {
    local i
    for i in $(seq 0 $(($1 - 1))); do
        if [[ $i == "${2:--}" ]]; then echo -n "disk=missing "; else echo -n "disk=$GD/m$i "; fi
    done
}

# where OFFSET N CHUNK: names the array byte OFFSET (md's mapping) for reports.
where () {
    local off=$1 n=$2 c=$(( ${3%K} * 1024 )) d chunkno stripe dd
    d=$((n - 1)); chunkno=$((off / c)); stripe=$((chunkno / d)); dd=$((chunkno % d))
    echo "array byte $off = chunk $chunkno (stripe $stripe, data index $dd, +$((off % c)))"
}

# compare_export WHAT N CHUNK SIZE PATTERN -- NBDKIT ARGS: the export must be
# SIZE bytes and equal PATTERN's first SIZE bytes.  Prints why not.
compare_export () {
    local what=$1 n=$2 c=$3 size=$4 pat=$5 out; shift 6
    # shellcheck disable=SC2016
    out=$(nbdkit -U - "$@" --run '
        got=$(nbdinfo --size "$uri") || exit 1
        [ "$got" = '"$size"' ] || { echo "export is $got bytes, md'"'"'s array '"$size"'"; exit 1; }
        nbdcopy "$uri" - | cmp -n '"$size"' - '"$pat" 2>&1) && return 0
    if [[ $out =~ differ:\ byte\ ([0-9]+) ]]; then
        echo "$what: differs from md's, first at $(where $((BASH_REMATCH[1] - 1)) "$n" "$c")"
    else
        echo "$what: $(echo "$out" | tail -n 2 | tr '\n' ' ')"
    fi
    return 1
}
