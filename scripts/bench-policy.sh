# shellcheck shell=bash disable=SC2154  # work, csv, plugin, raid5ctl, runtime...: bench.sh's
# scripts/bench-policy.sh -- part 7 of scripts/bench.sh: what each of md's
# consistency policies costs writes.  Three arrays of 3 members on tmpfs
# (512K chunk, md superblocks, made by raid5ctl create
# --consistency-policy resync, bitmap and ppl), served side by side, each
# written with three workloads: seq write 1M (full stripes: the log holds
# entries without partial parity), 4K and 64K random writes (partial
# stripes: each logs its partial parity before its data).  The policies
# alternate; ratios are to resync, which writes nothing extra.
# Sourced by bench.sh after lib-bench.sh.

# Three runs (one in quick mode), not five: the whole of bench.sh stays
# under 15 minutes with parts 9-11.
pol_reps=$(( reps < 3 ? reps : 3 ))
pol_names=(resync bitmap ppl)
pol_wls=(seqwrite randwrite randwrite64k)
declare -A pol_rw=([seqwrite]=write [randwrite]=randwrite [randwrite64k]=randwrite)
declare -A pol_bs=([seqwrite]=1M [randwrite]=4k [randwrite64k]=64k)
declare -A pol_label=([seqwrite]="seq write 1M" [randwrite]="4K rand write"
                      [randwrite64k]="64K rand write")

part_policy ()
{
    local p i r w order v
    b_say "7. consistency policies (3 x $sweep_mib MiB, 512K chunk): resync, bitmap, ppl, ${runtime} s per run, $pol_reps runs each"
    for p in "${pol_names[@]}"; do
        for i in 0 1 2; do truncate -s "${sweep_mib}M" "$work/$p$i.img"; done
        "$raid5ctl" create --consistency-policy "$p" --assume-clean \
            "$work/$p"{0,1,2}.img > "$work/create-$p.out" 2>&1 ||
            b_die "raid5ctl create --consistency-policy $p: $(tail -n 1 "$work/create-$p.out")"
        b_serve "pol-$p" "$plugin" "disk=$work/${p}0.img" "disk=$work/${p}1.img" \
            "disk=$work/${p}2.img"
        b_say "  fill $p"
        b_fill "pol-$p"
    done
    b_rounds "$pol_reps" pol_wls pol_names pol_run
    for p in "${pol_names[@]}"; do
        b_alive "pol-$p"
        b_stop "pol-$p"
    done
    rm -f "$work"/resync?.img "$work"/bitmap?.img "$work"/ppl?.img
}

# pol_run POLICY WORKLOAD ROUND: one run (b_rounds).
pol_run ()
{
    local v
    v=$(b_fio "pol-$1" "${pol_rw[$2]}" "${pol_bs[$2]}" 32 1 "$runtime")
    b_record policy "$1" "pol-$1" "$2" "$3" "$v" MiB/s
    b_say "  policy $1: ${pol_label[$2]} #$3: $v MiB/s"
}

ratios_policy ()
{
    local p w
    for p in bitmap ppl; do
        for w in "${pol_wls[@]}"; do
            b_pair "pol-$p-$w" policy "$p" "pol-$p" "$w" resync pol-resync
        done
    done
}

# The target rows of part 7: md documents PPL's cost at 30-40% of write
# throughput (Documentation/driver-api/md/raid5-ppl.rst); ours must stay
# below it.  The bitmap's on 4K random writes: <= 10%.
targets_policy ()
{
    local w
    for w in "${pol_wls[@]}"; do
        t_row "${pol_label[$w]} QD32, ppl / resync" ">=" 0.70 "${ratio[pol-ppl-$w]}" "pol-ppl-$w"
    done
    t_row "4K rand write QD32, bitmap / resync" ">=" 0.90 "${ratio[pol-bitmap-randwrite]}" pol-bitmap-randwrite
}

report_policy ()
{
    local w line p
    echo "## 7. Consistency policies: what resync, bitmap and ppl cost writes (3 x $(setting sweep_mib) MiB, 512K chunk)"
    echo
    echo "Three arrays made by \`raid5ctl create --consistency-policy\` resync,"
    echo "bitmap (md's internal write-intent bitmap, 64 MiB a bit) and ppl (md's"
    echo "partial parity log: before a stripe's data, the XOR of the chunks the"
    echo "write leaves alone goes to the log on the stripe's parity member, one"
    echo "FUA write per group of requests; a log has one such write whose"
    echo "stripes are not all written, and the members written under it are"
    echo "synced before the next).  Medians of $(setting pol_reps) runs, the policies"
    echo "alternating; a ratio is to resync, in runs made next to each other."
    echo "On tmpfs FUA and sync cost little: on disks the log's writes cost"
    echo "what a flush costs there."
    echo
    echo "| workload | resync MiB/s | bitmap MiB/s | ratio | ppl MiB/s | ratio |"
    echo "|---|---|---|---|---|---|"
    for w in "${pol_wls[@]}"; do
        line="| ${pol_label[$w]} QD32 | $(med policy resync pol-resync "$w")"
        for p in bitmap ppl; do
            line="$line | $(med policy "$p" "pol-$p" "$w") | ${ratio[pol-$p-$w]}"
        done
        echo "$line |"
    done
    echo
}
