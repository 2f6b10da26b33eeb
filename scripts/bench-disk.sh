# shellcheck shell=bash disable=SC2154  # work, csv, plugin, raid5ctl, runtime...: bench.sh's
# scripts/bench-disk.sh -- part 10 of scripts/bench.sh: members as image
# files on the machine's own disk (DISK_DIR, default /var/tmp: a disk
# file system, not tmpfs), as users keep them.
#   - direct=true against nbdkit's file plugin with cache=none (its
#     nearest: it has no O_DIRECT), and direct=false against the file
#     plugin's default, each on a file of the array's size in the same
#     folder; and fio straight on three files like the members (io_uring,
#     O_DIRECT, one job over the three: not the members themselves, whose
#     parity raw writes would break) as what the device gives;
#   - seq read and write 1M QD32, 4K random read and write at QD32 and
#     QD1, with p50 and p99 completion latency (fio's);
#   - check and rebuild (raid5ctl, --direct, page cache dropped first)
#     against three parallel `dd iflag=direct` reads of the members.
# One run each (the device, not the noise of a shared CPU, sets these):
# part 10 is informative; its targets are in the Targets table.
# Sourced by bench.sh after lib-bench.sh.

disk_wls=(seqread seqwrite randread randread1 randwrite randwrite1)
declare -A disk_rw=([seqread]=read [seqwrite]=write [randread]=randread
                    [randread1]=randread [randwrite]=randwrite [randwrite1]=randwrite)
declare -A disk_bs=([seqread]=1M [seqwrite]=1M [randread]=4k [randread1]=4k
                    [randwrite]=4k [randwrite1]=4k)
declare -A disk_qd=([seqread]=32 [seqwrite]=32 [randread]=32 [randread1]=1
                    [randwrite]=32 [randwrite1]=1)
declare -A disk_label=([seqread]="seq read 1M QD32" [seqwrite]="seq write 1M QD32"
                       [randread]="4K rand read QD32" [randread1]="4K rand read QD1"
                       [randwrite]="4K rand write QD32" [randwrite1]="4K rand write QD1")
disk_cases=(raid5-direct file-none raid5-cached file-default raw memory)
# The memory case (nbdkit's memory plugin, the same fio) is what NBD and
# the client cost alone on these processors: the transport's ceiling for
# the random reads it is run for.
declare -A disk_memory_wls=([randread]=1 [randread1]=1)
disk_rt=$(( runtime < 2 ? runtime : 2 ))

# disk_fio_json ARGS...: "MiB/s p50_us p99_us" of a fio run (reads and
# writes together: the larger p50 and p99 of the two).
disk_fio_json ()
{
    local bw p50r p99r p50w p99w
    read -r bw p50r p99r p50w p99w <<< "$(b_fio_json "part 10" "$@")"
    echo "$bw $(b_max "$p50r" "$p50w") $(b_max "$p99r" "$p99w")"
}

# disk_run CASE WL: one run of WL against CASE's server (or the raw
# files), with the processors' busy percent over it.
disk_run ()
{
    local c=$1 w=$2 v args c0 c1
    args=(--name=disk --rw="${disk_rw[$w]}" --bs="${disk_bs[$w]}"
          --iodepth="${disk_qd[$w]}" --time_based --runtime="$disk_rt")
    c0=$(b_cpu_ticks)
    if [ "$c" = raw ]; then
        v=$(disk_fio_json "${args[@]}" --ioengine=io_uring --direct=1 \
                --filename="$disk_dir/r0.img:$disk_dir/r1.img:$disk_dir/r2.img" \
                --file_service_type=random)
    else
        v=$(disk_fio_json "${args[@]}" --ioengine=nbd --uri="$(b_uri "disk-$c")")
    fi
    c1=$(b_cpu_ticks)
    read -r bw p50 p99 <<< "$v"
    b_record disk "$c" "$w" mibs 1 "$bw" MiB/s
    b_record disk "$c" "$w" p50 1 "$p50" us
    b_record disk "$c" "$w" p99 1 "$p99" us
    b_record disk "$c" "$w" cpu 1 "$(b_cpu_busy "$c0" "$c1")" %
    b_say "  $c: ${disk_label[$w]}: $bw MiB/s, p50 $p50 us, p99 $p99 us, CPUs $(b_cpu_busy "$c0" "$c1")% busy"
}

drop_caches () { sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || :; }

# disk_jobs: check and rebuild with --direct against dd iflag=direct,
# in $disk_rounds rounds, each dd then check then rebuild, so that each
# job is compared with the device as it was just before (this shared
# disk moved from 280 to 390 MiB/s per member between runs).
disk_rounds=3
disk_jobs ()
{
    local r v dd own
    for (( r = 1; r <= disk_rounds; r++ )); do
        dd=$(disk_dd)
        b_record disk raw dd-direct mibs "$r" "$dd" MiB/s/member
        v=$(disk_job "$r" check)
        b_record disk check raid5ctl mibs "$r" "$v" MiB/s/member
        b_say "  round $r: parallel dd iflag=direct $dd, check --direct $v MiB/s per member"
        dd=$(disk_dd)
        b_record disk raw dd-before-rebuild mibs "$r" "$dd" MiB/s/member
        own=$(disk_dd_rebuild_io)
        b_record disk raw dd-rebuild-io mibs "$r" "$own" MiB/s/member
        v=$(disk_job "$r" rebuild)
        b_record disk rebuild raid5ctl mibs "$r" "$v" MiB/s/member
        b_say "  round $r: parallel dd iflag=direct $dd, its own I/O by dd $own, rebuild --direct $v MiB/s per member"
    done
}

# disk_dd_rebuild_io: MiB/s per member of a rebuild's own I/O done by dd,
# all at once: two members read, the third's bytes written to a zeroed
# spare (iflag=direct, oflag=direct; caches dropped first).  A disk
# whose writes are slower than its reads holds a rebuild below three
# readers whatever it does.
disk_dd_rebuild_io ()
{
    local t0 t1 f pids=()
    b_zero_files "$job_mib" "$disk_dir/dspare.img"
    drop_caches
    t0=$(b_now_ns)
    for f in d0 d2; do
        dd if="$disk_dir/$f.img" of=/dev/null bs=1M iflag=direct status=none & pids+=($!)
    done
    dd if="$disk_dir/d1.img" of="$disk_dir/dspare.img" bs=1M iflag=direct \
        oflag=direct conv=notrunc status=none & pids+=($!)
    for f in "${pids[@]}"; do wait "$f" || b_die "dd could not read or write the members"; done
    t1=$(b_now_ns)
    awk -v m="$job_mib" -v ns=$((t1 - t0)) 'BEGIN { printf "%.1f\n", m / (ns / 1e9) }'
}

# disk_dd: MiB/s per member of three dd iflag=direct reading the members
# at once, caches dropped first.
disk_dd ()
{
    drop_caches
    b_raw_read --direct "$disk_dir/d0.img" "$disk_dir/d1.img" "$disk_dir/d2.img"
}

# disk_job ROUND check|rebuild: MiB/s per member of raid5ctl's job with
# --direct, caches dropped first (a rebuild of member 1 onto a zeroed
# spare, which then takes member 1's place for the next round).
disk_job ()
{
    local d=("$disk_dir/d0.img" "$disk_dir/d1.img" "$disk_dir/d2.img") log=$work/d$2-$1.log
    if [ "$2" = check ]; then
        drop_caches
        "$raid5ctl" check --direct "${d[@]}" > "$log" 2>&1 ||
            b_die "raid5ctl check --direct (part 10): $(tail -n 1 "$log")"
    else
        b_zero_files "$job_mib" "$disk_dir/dspare.img"
        drop_caches
        "$raid5ctl" rebuild --direct --slot 1 --new "$disk_dir/dspare.img" "${d[0]}" "${d[2]}" \
            > "$log" 2>&1 ||
            b_die "raid5ctl rebuild --direct (part 10): $(tail -n 1 "$log")"
        # the rebuilt spare is member 1 now; the old one is stale
        mv "$disk_dir/dspare.img" "${d[1]}"
    fi
    b_job_speed "$log"
}

part_disk ()
{
    local i c w fs
    disk_dir=$(mktemp -d "${DISK_DIR:-/var/tmp}/raid5-bench-disk.XXXXXX") ||
        b_die "cannot make a folder in ${DISK_DIR:-/var/tmp}"
    fs=$(df -PT "$disk_dir" | awk 'NR == 2 { print $2 " on " $1 }')
    b_record meta disk disk fs 1 "$fs" -
    b_say "10. members on the disk ($disk_dir: $fs), 3 x $job_mib MiB, 512K chunk, ${disk_rt} s per run"
    for i in 0 1 2; do truncate -s "${job_mib}M" "$disk_dir/d$i.img"; done
    "$raid5ctl" create --assume-clean "$disk_dir"/d{0,1,2}.img > "$work/create-d.out" 2>&1 ||
        b_die "raid5ctl create (part 10): $(tail -n 1 "$work/create-d.out")"
    b_zero_files $(( 2 * job_mib )) "$disk_dir/file.img"
    b_zero_files "$job_mib" "$disk_dir"/r{0,1,2}.img
    local m=("disk=$disk_dir/d0.img" "disk=$disk_dir/d1.img" "disk=$disk_dir/d2.img")
    b_serve disk-raid5-direct "$plugin" "${m[@]}" direct=true
    b_fill disk-raid5-direct
    b_stop disk-raid5-direct
    for w in "${disk_wls[@]}"; do
        for c in "${disk_cases[@]}"; do
            [ "$c" != memory ] || [ -n "${disk_memory_wls[$w]:-}" ] || continue
            case $c in
                raid5-direct) b_serve disk-$c "$plugin" "${m[@]}" direct=true ;;
                raid5-cached) b_serve disk-$c "$plugin" "${m[@]}" ;;
                file-none) b_serve disk-$c file "$disk_dir/file.img" cache=none ;;
                file-default) b_serve disk-$c file "$disk_dir/file.img" ;;
                memory) b_serve disk-$c memory "$(( 2 * job_mib ))M" ;;
            esac
            [ "$c" = raw ] || [ "$c" = raid5-cached ] || [ "$c" = file-default ] || drop_caches
            disk_run "$c" "$w"
            [ "$c" = raw ] || b_stop "disk-$c"
        done
    done
    disk_jobs
    rm -rf "$disk_dir"
}

ratios_disk ()
{
    local w
    for w in "${disk_wls[@]}"; do
        ratio[disk-direct-$w]=$(b_ratio "$(med disk raid5-direct "$w" mibs)" "$(med disk file-none "$w" mibs)")
        ratio[disk-cached-$w]=$(b_ratio "$(med disk raid5-cached "$w" mibs)" "$(med disk file-default "$w" mibs)")
        ratio[disk-raw-$w]=$(b_ratio "$(med disk raid5-direct "$w" mibs)" "$(med disk raw "$w" mibs)")
    done
    # the median of the rounds' own ratios (each against its dd)
    b_pair disk-check disk check raid5ctl mibs raw dd-direct
    b_pair disk-rebuild disk rebuild raid5ctl mibs raw dd-before-rebuild
    [ -n "${ratio[disk-rebuild]}" ] ||    # a CSV from before the rounds
        b_pair disk-rebuild disk rebuild raid5ctl mibs raw dd-direct
    b_pair disk-rebuild-io disk rebuild raid5ctl mibs raw dd-rebuild-io
}

targets_disk ()
{
    t_row "disk, direct=true: 4K rand read QD32 / the members' own (fio, O_DIRECT)" ">=" 0.80 "${ratio[disk-raw-randread]}"
    t_row "disk: check --direct / parallel dd iflag=direct, per member" ">=" 0.95 "${ratio[disk-check]}" disk-check
    t_row "disk: rebuild --direct / parallel dd iflag=direct, per member" ">=" 0.90 "${ratio[disk-rebuild]}" disk-rebuild
}

report_disk ()
{
    local w c line v
    echo
    echo "## 10. Members on the machine's disk ($(setting fs))"
    echo
    echo "Three member files of $(setting job_mib) MiB in one folder on the disk, one run of"
    echo "${disk_rt} s each.  *direct*: the plugin with direct=true against nbdkit's file plugin"
    echo "with cache=none (its nearest: it has no O_DIRECT) on a file of the array's"
    echo "size in the same folder, caches dropped first; *cached*: direct=false"
    echo "against the file plugin's default; *members*: fio straight on three files"
    echo "like the members (io_uring, O_DIRECT, one job over the three), what the"
    echo "device gives.  MiB/s, then p50 / p99 completion latency in microseconds."
    echo
    echo "| workload | raid5 direct | file cache=none | ratio | raid5 cached | file default | ratio | members (fio) | direct / members | NBD alone (memory plugin) |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    for w in "${disk_wls[@]}"; do
        line="| ${disk_label[$w]}"
        for c in raid5-direct file-none; do
            line="$line | $(med disk "$c" "$w" mibs) ($(med disk "$c" "$w" p50) / $(med disk "$c" "$w" p99))"
        done
        line="$line | ${ratio[disk-direct-$w]}"
        for c in raid5-cached file-default; do
            line="$line | $(med disk "$c" "$w" mibs) ($(med disk "$c" "$w" p50) / $(med disk "$c" "$w" p99))"
        done
        line="$line | ${ratio[disk-cached-$w]} | $(med disk raw "$w" mibs) ($(med disk raw "$w" p50) / $(med disk raw "$w" p99)) | ${ratio[disk-raw-$w]}"
        if [ -n "${disk_memory_wls[$w]:-}" ]; then
            line="$line | $(med disk memory "$w" mibs) ($(med disk memory "$w" p50) / $(med disk memory "$w" p99)) |"
        else
            line="$line | - |"
        fi
        echo "$line"
    done
    echo
    echo "The processors' busy share over each run (2 CPUs; fio, nbdkit and"
    echo "the disk's interrupts share them): where the array's random reads"
    echo "stop short of the members' own, the processors are what is left."
    echo
    echo "| workload | raid5 direct | file cache=none | raid5 cached | file default | members (fio) | memory plugin |"
    echo "|---|---|---|---|---|---|---|"
    for w in "${disk_wls[@]}"; do
        line="| ${disk_label[$w]}"
        for c in raid5-direct file-none raid5-cached file-default raw memory; do
            v=$(med disk "$c" "$w" cpu)
            line="$line | ${v:-n/a}${v:+%}"
        done
        echo "$line |"
    done
    echo
    echo "Check and rebuild with --direct (caches dropped first) against three"
    echo "\`dd iflag=direct bs=1M\` reading the members at once just before, MiB/s"
    echo "per member, medians of $(awk -F, '$1 == "disk" && $2 == "check" && $4 == "mibs" { n++ } END { print n + 0 }' "$csv") rounds (the ratio: the median of the rounds' own):"
    echo
    echo "| job | MiB/s per member | dd iflag=direct | ratio |"
    echo "|---|---|---|---|"
    echo "| check | $(med disk check raid5ctl mibs) | $(med disk raw dd-direct mibs) | ${ratio[disk-check]}$(b_spread_note "${ratio[disk-check]}" "${spread[disk-check]}") |"
    local ddr
    ddr=$(med disk raw dd-before-rebuild mibs)
    echo "| rebuild (reads 2, writes 1) | $(med disk rebuild raid5ctl mibs) | ${ddr:-$(med disk raw dd-direct mibs)} | ${ratio[disk-rebuild]}$(b_spread_note "${ratio[disk-rebuild]}" "${spread[disk-rebuild]}") |"
    [ -z "${ratio[disk-rebuild-io]}" ] || {
        echo
        echo "The rebuild against its own I/O done by dd just before (two members"
        echo "read, the third's bytes written to a zeroed spare, all at once; the"
        echo "target above is against three readers, which a disk whose writes are"
        echo "slower than its reads keeps out of a rebuild's reach):"
        echo
        echo "| job | MiB/s per member | dd: 2 reads + 1 write | ratio |"
        echo "|---|---|---|---|"
        echo "| rebuild | $(med disk rebuild raid5ctl mibs) | $(med disk raw dd-rebuild-io mibs) | ${ratio[disk-rebuild-io]}$(b_spread_note "${ratio[disk-rebuild-io]}" "${spread[disk-rebuild-io]}") |"
    }
}

# disk.dat: per workload, MiB/s of each case.
plot_data_disk ()
{
    local w c line v
    {
        echo "# workload ${disk_cases[*]}"
        for w in "${disk_wls[@]}"; do
            line="\"${disk_label[$w]}\""
            for c in "${disk_cases[@]}"; do
                v=$(med disk "$c" "$w" mibs)
                line="$line ${v:--}"
            done
            echo "$line"
        done
    } > "$work/disk.dat"
}
