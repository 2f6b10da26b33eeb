# shellcheck shell=bash disable=SC2154  # work, csv, plugin, raid5ctl, runtime...: bench.sh's
# scripts/bench-integrity.sh -- part 8 of scripts/bench.sh: what the
# integrity record (integrity=FILE: a crc32c of every 4 KiB of every
# member, reads verified, writes' checksums set) costs.  Two arrays of 3
# members on tmpfs (512K chunk, md superblocks, bitmap), one served with
# a record, side by side: seq read and write 1M, 4K random read and write,
# QD32; the two alternate, three runs each.  Ratios are to the array
# without a record.  Sourced by bench.sh after lib-bench.sh.

# Three runs (one in quick mode), not five: the whole of bench.sh stays
# under 15 minutes.
integ_reps=$(( reps < 3 ? reps : 3 ))
integ_names=(plain integrity)
integ_wls=(seqread seqwrite randread randwrite)
declare -A integ_rw=([seqread]=read [seqwrite]=write [randread]=randread [randwrite]=randwrite)
declare -A integ_bs=([seqread]=1M [seqwrite]=1M [randread]=4k [randwrite]=4k)
declare -A integ_label=([seqread]="seq read 1M" [seqwrite]="seq write 1M"
                        [randread]="4K rand read" [randwrite]="4K rand write")

# integ_run CASE WORKLOAD ROUND: one run (b_rounds).
integ_run ()
{
    local v
    v=$(b_fio "int-$1" "${integ_rw[$2]}" "${integ_bs[$2]}" 32 1 "$runtime")
    b_record integrity "$1" "int-$1" "$2" "$3" "$v" MiB/s
    b_say "  $1: ${integ_label[$2]} #$3: $v MiB/s"
}

part_integrity ()
{
    local p i r w order v args
    b_say "8. integrity record (3 x $sweep_mib MiB, 512K chunk): with and without, ${runtime} s per run, $integ_reps runs each"
    for p in "${integ_names[@]}"; do
        for i in 0 1 2; do truncate -s "${sweep_mib}M" "$work/i$p$i.img"; done
        "$raid5ctl" create --assume-clean "$work/i$p"{0,1,2}.img \
            > "$work/create-i$p.out" 2>&1 ||
            b_die "raid5ctl create (part 8): $(tail -n 1 "$work/create-i$p.out")"
        args=("disk=$work/i${p}0.img" "disk=$work/i${p}1.img" "disk=$work/i${p}2.img")
        [ "$p" = plain ] || args+=("integrity=$work/integrity.rec")
        rm -f "$work/integrity.rec"
        b_serve "int-$p" "$plugin" "${args[@]}"
        b_say "  fill $p"
        b_fill "int-$p"
    done
    b_rounds "$integ_reps" integ_wls integ_names integ_run
    for p in "${integ_names[@]}"; do
        b_alive "int-$p"
        b_stop "int-$p"
    done
    rm -f "$work"/iplain?.img "$work"/iintegrity?.img "$work/integrity.rec"
}

ratios_integrity ()
{
    local w
    for w in "${integ_wls[@]}"; do
        b_pair "int-$w" integrity integrity int-integrity "$w" plain int-plain
    done
}

report_integrity ()
{
    local w
    echo "## 8. The integrity record: what a checksum per 4 KiB costs (3 x $(setting sweep_mib) MiB, 512K chunk)"
    echo
    echo "Two arrays made by \`raid5ctl create\` (bitmap), one served with"
    echo "\`integrity=FILE\`: every unit read is verified against its crc32c"
    echo "(ISA-L), every write sets the checksums of the units it writes (writes"
    echo "are padded to whole 4 KiB units) and marks its 4 MiB regions of the"
    echo "record before.  Medians of $(setting integ_reps) runs, the two alternating;"
    echo "a ratio is to the array without a record, in runs made next to each"
    echo "other.  No target: the issue asks for the cost, measured."
    echo
    echo "| workload | without MiB/s | with MiB/s | ratio |"
    echo "|---|---|---|---|"
    for w in "${integ_wls[@]}"; do
        echo "| ${integ_label[$w]} QD32 | $(med integrity plain int-plain "$w") | $(med integrity integrity int-integrity "$w") | ${ratio[int-$w]}$(b_spread_note "${ratio[int-$w]}" "${spread[int-$w]}") |"
    done
    echo
}
