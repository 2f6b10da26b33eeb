# tests/vm/guest-md.sh -- in the guest: kernel md as the oracle of the on-disk
# layout.  Geometry G of $VM_WORK/geoms (see md-lib.sh) lives on partition G+4
# of /dev/vda, vdb, ... (one per member).
#
# MODE=create (md -> here): mdadm --create --assume-clean (metadata 1.2, md's own
#   data offset), write the first array-size bytes of $PAT to it, stop; write
#   $VM_WORK/md-G.info (md's data offset, array size, what --examine says) for the
#   host, which then serves the members with metadata=none.
# MODE=check (here -> md): the host wrote $PAT through the plugin (data offset
#   1M); mdadm --create --assume-clean with that geometry (writes superblocks
#   only), a parity check must find mismatch_cnt 0 and /dev/mdG must equal $PAT.

. "${BASH_SOURCE[0]%/*}/guest-lib.sh"

# devs G N [MISSING]: the member partitions of geometry G ("missing" for slot MISSING).
devs () {
    local i letters=abcde
    for ((i = 0; i < $2; i++)); do
        if [[ $i == "${3:--}" ]]; then echo -n "missing "; else echo -n "/dev/vd${letters:i:1}$(($1 + 4)) "; fi
    done
}

# missing_of NAME: the missing slot of a degraded geometry (NAME ends in -missingK).
missing_of () { [[ $1 =~ -missing([0-9])$ ]] && echo "${BASH_REMATCH[1]}"; }

# md_create G N LAYOUT CHUNK NAME [MDADM OPTIONS...]
md_create () {
    local g=$1 n=$2 layout=$3 chunk=$4 miss; miss=$(missing_of "$5"); shift 5
    # shellcheck disable=SC2046
    run mdadm --create /dev/md$g --run --assume-clean --metadata=1.2 --level=5 \
        --raid-devices=$n --chunk=$chunk --layout=$layout --bitmap=none "$@" $(devs $g $n $miss)
}

create_one () {
    local g=$1 n=$2 layout=$3 chunk=$4 name=$7 size ex
    md_create $g $n $layout $chunk $name || { not_ok "$name: mdadm --create"; return; }
    size=$(blockdev --getsize64 /dev/md$g)
    if ! run dd if="$PAT" of=/dev/md$g bs=1M iflag=count_bytes count=$size oflag=direct; then
        not_ok "$name: writing the pattern to /dev/md$g"; md_stop md$g; return
    fi
    for ex in $(devs $g $n $(missing_of $name)); do [[ $ex == missing ]] || break; done
    ex=$(mdadm --examine $ex)
    md_stop md$g || { not_ok "$name: mdadm --stop"; return; }
    {
        [[ $ex =~ Data\ Offset\ :\ ([0-9]+)\ sectors ]] && echo "offset_sectors=${BASH_REMATCH[1]}"
        echo "size=$size"
        [[ $ex =~ Layout\ :\ ([a-z-]+) ]] && echo "layout=${BASH_REMATCH[1]}"
        [[ $ex =~ Chunk\ Size\ :\ ([0-9]+K) ]] && echo "chunk=${BASH_REMATCH[1]}"
    } >"$VM_WORK/md-$g.info"
    ok "$name: md wrote the pattern"
}

# mismatches MD CHUNK: where md's check found parity != XOR of data (its kernel
# log, member sectors relative to the data offset).
mismatches () {
    local line sec n=0 cs=$(( ${2%K} * 2 ))
    while read -r line; do
        [[ $line =~ $1:\ mismatch\ sector\ in\ range\ ([0-9]+)-([0-9]+) ]] || continue
        sec=${BASH_REMATCH[1]}
        echo "#   md: mismatch at member sectors ${BASH_REMATCH[1]}-${BASH_REMATCH[2]} after the data offset: stripe $((sec / cs)), +$(( (sec % cs) * 512 )) bytes into the chunk"
        ((++n < 5)) || break
    done < <(dmesg)
}

check_one () {
    local g=$1 n=$2 layout=$3 chunk=$4 name=$7 size want mm out
    read -r want <"$VM_WORK/exp-$g.size" 2>/dev/null || { log "$name: skipped (the host failed)"; return; }
    md_create $g $n $layout $chunk $name --data-offset=1M || { not_ok "$name: mdadm --create"; return; }
    size=$(blockdev --getsize64 /dev/md$g)
    if [[ $name == control-* ]]; then
        mm=$(md_check md$g)
        if [[ $mm == 8 ]] && cmp -s -n $size /dev/md$g "$PAT"; then
            ok "$name: a flipped parity byte is noticed (mismatch_cnt 8, data equal)"
            mismatches md$g $chunk
        else
            not_ok "$name: a flipped parity byte gave mismatch_cnt '$mm' (want 8)"
        fi
    elif [[ $size != "$want" ]]; then
        not_ok "$name: md's array is $size bytes, the plugin's export $want"
    elif [[ -n $(missing_of $name) ]]; then
        # Degraded: no parity check; md's reads of the missing member go through parity.
        if out=$(cmp -n $size /dev/md$g "$PAT" 2>&1); then
            ok "$name: md (degraded) reads what the plugin wrote degraded"
        else
            not_ok "$name: md (degraded) reads other data than written through the plugin: $out"
        fi
    elif ! mm=$(md_check md$g); then
        not_ok "$name: md check did not run"
    elif [[ $mm != 0 ]]; then
        not_ok "$name: md check: mismatch_cnt $mm (sectors with parity != XOR of data)"
        mismatches md$g $chunk
    elif ! out=$(cmp -n $size /dev/md$g "$PAT" 2>&1); then
        not_ok "$name: md reads other data than written through the plugin: $out"
    else
        ok "$name: md check mismatch_cnt 0, data equal"
    fi
    md_stop md$g || not_ok "$name: mdadm --stop"
}

while read -r -u 3 line; do
    log "${line##* }"
    case ${MODE:-} in
        create) create_one $line ;;
        check) check_one $line ;;
        *) echo "guest-md.sh: MODE must be create or check"; exit 2 ;;
    esac
done 3<"$VM_WORK/geoms"
log "done, $GUEST_FAILS not ok"
[[ $GUEST_FAILS == 0 ]]
