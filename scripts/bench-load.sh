# shellcheck shell=bash disable=SC2154  # work, csv, plugin, raid5ctl, runtime...: bench.sh's
# scripts/bench-load.sh -- part 9 of scripts/bench.sh: background jobs
# under client load.  A client keeps a steady 4K random read/write load
# on the array (fio's nbd engine, 8 deep, 2500 reads and 2500 writes a
# second); a check, then a rebuild of member 1 onto a spare, runs under
# it, paced three ways:
#   md        md's rule: sync-speed-max while idle, speed_min (1000
#             KiB/s) while clients are busy;
#   md-min    the same with speed_min raised to half of max (what an
#             admin does to make a job move under load);
#   latency   sync-latency-max=T, T = 1.1 x the client's p99 alone
#             (raid/pace.h: the job takes what the clients leave).
# Reported: the client's p99 (reads and writes, fio's completion
# latency) against the load alone, and the job's speed against its speed
# with no client (both at sync-speed-max=$load_max KiB/s).  Every
# measurement starts from the same members (kept copies), so each
# rebuild starts at the beginning.  Sourced by bench.sh after
# lib-bench.sh.

load_modes=(md md-min latency)
load_max=100000                 # KiB/s per member: sync-speed-max
load_iops=2500

# load_fio NAME SECONDS: the client load against server NAME for SECONDS;
# prints "p99_read_us p99_write_us MiB/s runq cpu srv": runq, the time the
# server's client threads waited for a processor (b_runq_ns), in ms per
# second, and cpu, the processors' busy percent, both over the run but
# its first and last half second (the connection's threads exist then);
# srv, the worst p99 of the server's own service times the pacer saw in
# its 100 ms windows, sampled 4 times a second (0: not paced by latency).
load_fio ()
{
    local bw p50r p99r p50w p99w fio q0 q1 c0 c1 t0 t1 srv v pid=${b_pid[$1]}
    b_fio_json "part 9, load against $1" \
        --name=load --ioengine=nbd --uri="$(b_uri "$1")" --rw=randrw \
        --bs=4k --iodepth=8 --rate_iops="$load_iops" --time_based \
        --runtime="$2" > "$work/load-fio.out" &
    fio=$!
    sleep 0.5
    q0=$(b_runq_ns "$pid") c0=$(b_cpu_ticks) t0=$(b_now_ns)
    srv=0
    while (( $(b_now_ns) - t0 < ($2 * 1000 - 1000) * 1000000 )); do
        sleep 0.25
        v=$(load_status load client_p99_us)
        (( ${v:-0} > srv )) && srv=$v
    done
    q1=$(b_runq_ns "$pid") c1=$(b_cpu_ticks) t1=$(b_now_ns)
    wait "$fio" || b_die "part 9: fio against $1 failed"
    read -r bw p50r p99r p50w p99w < "$work/load-fio.out"
    echo "$p99r $p99w $bw" \
        "$(awk -v q=$(( q1 - q0 )) -v t=$(( t1 - t0 )) 'BEGIN { printf "%.1f", (t > 0 ? q / 1e6 / (t / 1e9) : 0) }')" \
        "$(b_cpu_busy "$c0" "$c1")" "$srv"
}

# load_status NAME FIELD: a number at the top of the server's status
# --json (the pacer's last 100 ms window), or nothing without a control
# socket.  Read with sed, not Python: it runs 4 times a second inside
# the window whose latency is being measured, on the same 2 CPUs.
load_status ()
{
    [ -S "$work/$1.ctl" ] || return 0
    "$raid5ctl" --control "$work/$1.ctl" status --json 2>/dev/null |
        sed -n "s/.*\"$2\": *\([0-9]*\).*/\1/p" | head -n 1 || :
}

# load_done NAME: KiB per member the running job has done (0: none).
load_done ()
{
    "$raid5ctl" --control "$work/$1.ctl" status --json |
        /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["job"]["done_kib"])'
}

# load_restore: the members as they were after the fill.
load_restore ()
{
    local i
    for i in 0 1 2; do cp "$work/keep$i.img" "$work/l$i.img"; done
    b_zero_files "$job_mib" "$work/lspare.img"
}

# load_serve MODE [TARGET_US]: the array served for MODE.
load_serve ()
{
    local args=("disk=$work/l0.img" "disk=$work/l1.img" "disk=$work/l2.img"
                "control=$work/load.ctl" "sync-speed-max=$load_max")
    case $1 in
        md-min) args+=("sync-speed-min=$(( load_max / 2 ))") ;;
        latency) args+=("sync-latency-max=${2}us") ;;
    esac
    b_serve load "$plugin" "${args[@]}"
}

# load_start_job KIND: start a check, or fail member 1 and rebuild it
# onto the spare.
load_start_job ()
{
    local c=("$raid5ctl" --control "$work/load.ctl")
    if [ "$1" = check ]; then
        "${c[@]}" check > /dev/null || b_die "cannot start a check (part 9)"
    else
        "${c[@]}" fail 1 > /dev/null &&
            "${c[@]}" rebuild 1 "$work/lspare.img" > /dev/null ||
            b_die "cannot start a rebuild (part 9)"
    fi
}

# load_job MODE KIND LOADED [TARGET_US]: serve fresh members for MODE, run
# job KIND (with the client load if LOADED); record its speed (MiB/s per
# member over $runtime s) and, loaded, the client's p99s.
load_job ()
{
    local mode=$1 kind=$2 loaded=$3 d0 d1 t0 t1 lat=() before=() speed
    load_restore
    load_serve "$mode" "${4:-}"
    # The load alone on this very server just before: this shared machine
    # drifts by more than the rise to be measured, so each rise is paired
    # with its own base.
    [ "$loaded" = 0 ] || read -r -a before <<< "$(load_fio load "$runtime")"
    load_start_job "$kind"
    sleep 0.5
    d0=$(load_done load) t0=$(b_now_ns)
    if [ "$loaded" = 1 ]; then
        read -r -a lat <<< "$(load_fio load "$runtime")"
    else
        sleep "$runtime"
    fi
    d1=$(load_done load) t1=$(b_now_ns)
    b_alive load
    b_stop load
    speed=$(awk -v d=$(( d1 - d0 )) -v t=$(( t1 - t0 )) \
                'BEGIN { printf "%.1f", d / 1024 / (t / 1e9) }')
    (( d1 > d0 )) || b_say "  (the $kind had ended or not moved: $d0 -> $d1 KiB)"
    b_record load "$mode" "$kind" "$([ "$loaded" = 1 ] && echo loaded || echo alone)" 1 "$speed" MiB/s/member
    if [ "$loaded" = 1 ]; then
        b_record load "$mode" "$kind" p99read 1 "${lat[0]}" us
        b_record load "$mode" "$kind" p99write 1 "${lat[1]}" us
        b_record load "$mode" "$kind" p99before 1 \
            "$(b_max "${before[0]}" "${before[1]}")" us
        b_record load "$mode" "$kind" runq 1 "${lat[3]}" ms/s
        b_record load "$mode" "$kind" runqbefore 1 "${before[3]}" ms/s
        b_record load "$mode" "$kind" cpu 1 "${lat[4]}" %
        b_record load "$mode" "$kind" cpubefore 1 "${before[4]}" %
        b_record load "$mode" "$kind" srvp99 1 "${lat[5]}" us
        b_say "  $mode: $kind under load: $speed MiB/s per member; client p99 ${lat[0]} us read, ${lat[1]} us write (alone just before: ${before[0]}, ${before[1]}); server threads waited for a CPU ${lat[3]} ms/s (before: ${before[3]}); CPUs ${lat[4]}% busy (before: ${before[4]}%); the server's own p99 at worst ${lat[5]} us"
    else
        b_say "  $kind alone: $speed MiB/s per member"
    fi
}

part_load ()
{
    local i base=() target mode kind
    b_say "9. jobs under client load (3 x $job_mib MiB, 512K chunk): 4K randrw at $load_iops+$load_iops IOPS, QD8, ${runtime} s each"
    for i in 0 1 2; do truncate -s "${job_mib}M" "$work/l$i.img"; done
    "$raid5ctl" create --assume-clean "$work"/l{0,1,2}.img > "$work/create-l.out" 2>&1 ||
        b_die "raid5ctl create (part 9): $(tail -n 1 "$work/create-l.out")"
    b_serve load "$plugin" "disk=$work/l0.img" "disk=$work/l1.img" "disk=$work/l2.img"
    b_fill load
    load_fio load 1 > /dev/null             # warm up: the first second is slow
    for i in 1 2; do
        read -r -a base <<< "$(load_fio load "$runtime")"
        b_record load none none p99read "$i" "${base[0]}" us
        b_record load none none p99write "$i" "${base[1]}" us
        b_say "  the load alone #$i: p99 ${base[0]} us read, ${base[1]} us write, ${base[2]} MiB/s"
    done
    b_stop load
    base=("$(med load none none p99read)" "$(med load none none p99write)")
    for i in 0 1 2; do cp "$work/l$i.img" "$work/keep$i.img"; done
    # The target is the server's p99, which is under fio's (no transport).
    target=$(awk -v m="$(b_max "${base[0]}" "${base[1]}")" 'BEGIN { printf "%.0f", m * 1.1 }')
    (( target >= 50 )) || target=50
    b_record meta load load target_us 1 "$target" us
    for kind in check rebuild; do
        load_job md "$kind" 0
        for mode in "${load_modes[@]}"; do
            load_job "$mode" "$kind" 1 "$target"
        done
    done
    rm -f "$work"/l?.img "$work"/keep?.img "$work/lspare.img"
}

ratios_load ()
{
    local mode kind
    for kind in check rebuild; do
        for mode in "${load_modes[@]}"; do
            ratio[load-$mode-$kind-keep]=$(b_ratio \
                "$(med load "$mode" "$kind" loaded)" "$(med load md "$kind" alone)")
            # the worse of read and write, over the load alone just before
            ratio[load-$mode-$kind-rise]=$(awk -F, -v m="$mode" -v k="$kind" \
                '$1 == "load" && $2 == m && $3 == k && ($4 == "p99read" || $4 == "p99write") { if ($6 > x) x = $6 }
                 $1 == "load" && $2 == m && $3 == k && $4 == "p99before" { b = $6 }
                 END { if (b > 0 && x > 0) printf "%.2f", x / b - 1; else print "n/a" }' "$csv")
        done
    done
}

targets_load ()
{
    local kind
    for kind in check rebuild; do
        t_row "client p99 rise, $kind under load, latency target" "<=" 0.20 "${ratio[load-latency-$kind-rise]}"
        t_row "$kind speed under load / alone, latency target" ">=" 0.50 "${ratio[load-latency-$kind-keep]}"
    done
}

report_load ()
{
    local mode kind
    echo
    echo "## 9. Background jobs under client load (3 x $(setting job_mib) MiB, 512K chunk)"
    echo
    echo "A client keeps 4K random reads and writes going (fio's nbd engine, QD8,"
    echo "$load_iops reads and $load_iops writes a second) while a check, then a rebuild"
    echo "of member 1 onto a spare, runs under it, paced three ways: md's rule"
    echo "(speed_min, 1000 KiB/s, while clients are busy), the same with speed_min"
    echo "raised to half of max, and the latency target (sync-latency-max= 1.1 x"
    echo "the client's p99 alone: $(setting target_us) us).  sync-speed-max is $load_max KiB/s"
    echo "throughout.  *p99 rise*: the client's worst p99 (read or write) over the"
    echo "same load alone on the same server just before (this shared machine"
    echo "drifts by more than the rise between runs); *keeps*: the job's speed over"
    echo "its speed with no client.  One run each: p99 over 3 s is noisy here."
    echo "*CPU wait*: how long the server's client threads (all but the job's,"
    echo "named raid5-*) were ready to run but had no processor (schedstat's"
    echo "run_delay), in ms per second, over the load alone just before -> with"
    echo "the job; *busy*: the processors' busy share, the same two runs.  A"
    echo "request that waits for a processor is late in a way the server cannot"
    echo "see in its own service times, which are what the pacer steers by;"
    echo "*server p99*: the worst p99 of those service times the pacer saw in"
    echo "a 100 ms window (sampled 4 times a second; latency pacing only)."
    echo
    echo "| job | pacing | MiB/s per member | keeps | client p99 read / write (us) | p99 rise | CPU wait (ms/s) | busy | server p99 (us) |"
    echo "|---|---|---|---|---|---|---|---|---|"
    for kind in check rebuild; do
        echo "| $kind | no client | $(med load md "$kind" alone) | 1.00 | $(med load none none p99read) / $(med load none none p99write) (load alone) | 0 | | | |"
        for mode in "${load_modes[@]}"; do
            echo "| $kind | $mode | $(med load "$mode" "$kind" loaded) | ${ratio[load-$mode-$kind-keep]} | $(med load "$mode" "$kind" p99read) / $(med load "$mode" "$kind" p99write) (alone before: $(med load "$mode" "$kind" p99before)) | ${ratio[load-$mode-$kind-rise]} | $(med load "$mode" "$kind" runqbefore) -> $(med load "$mode" "$kind" runq) | $(med load "$mode" "$kind" cpubefore)% -> $(med load "$mode" "$kind" cpu)% | $(med load "$mode" "$kind" srvp99) |"
        done
    done
    echo
    echo "Targets: p99 rise <= 0.20 with the job keeping >= 0.50 of"
    echo "its speed alone.  md's rule keeps the latency and starves the job; a"
    echo "raised speed_min moves the job and takes the latency; the latency"
    echo "target is meant to do both."
}

# load.dat: per job, speed kept and p99 rise under each pacing.
plot_data_load ()
{
    local kind mode line v
    {
        echo "# job keep(md md-min latency) rise(md md-min latency)"
        for kind in check rebuild; do
            line="\"$kind\""
            for mode in "${load_modes[@]}"; do line="$line ${ratio[load-$mode-$kind-keep]:--}"; done
            for mode in "${load_modes[@]}"; do
                v=${ratio[load-$mode-$kind-rise]:--}
                line="$line ${v/n\/a/-}"
            done
            echo "$line"
        done
    } > "$work/load.dat"
}
