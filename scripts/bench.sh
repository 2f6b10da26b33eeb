#!/bin/bash
# scripts/bench.sh -- the performance targets of DESIGN.md, measured side by
# side in one run, members on tmpfs (/dev/shm), fio's nbd engine:
#
#   1. raid5 (3 members, 512K chunk), healthy and with one member missing,
#      against nbdkit's own file plugin serving one tmpfs file of the
#      array's size (the transport ceiling): seq read/write 1M QD32, 4K
#      random read/write QD32; the runs alternate, the median is kept
#   2. offline check and rebuild (raid5ctl) against reading the members
#      directly, all at once (dd bs=1M)
#   3. a chunk sweep, 16K to 1M, of the same four workloads
#   4. alignment: writes 63, 64 and 2048 sectors into the array, and the
#      planner's counters (full-stripe, rcw, rmw) for each
#   5. the plugin's peak RSS at QD128 over 4 connections
#   6. members over TCP on loopback (nbdkit file plugin servers), plain and
#      with 2 ms and 10 ms of delay, against the same members as local
#      files (scripts/bench-net.sh)
#   7. md's consistency policies, resync, bitmap and ppl, on writes
#      (scripts/bench-policy.sh)
#   8. the integrity record: with and without, reads and writes
#      (scripts/bench-integrity.sh)
#   9. background jobs under client load: a check and a rebuild under a
#      steady 4K random load, paced as md paces them, with speed_min
#      raised, and by a latency target (scripts/bench-load.sh)
#  10. members as files on the machine's disk (DISK_DIR, /var/tmp):
#      direct=true and false against the file plugin, fio on the files,
#      check and rebuild against dd iflag=direct (scripts/bench-disk.sh)
#  11. the slow md check in a qemu guest: kernel md's check and raid5ctl check on
#      the same virtio disks against raw reads (scripts/bench-guest.sh)
#
# Writes OUT/bench.csv (every sample), OUT/results.md (the tables, each
# target PASS or MISS) and OUT/*.png (gnuplot).  As root on Debian it
# installs what it lacks (fio, gnuplot-nox, the build dependencies) and
# builds the plugin out of tree first.
#
#   scripts/bench.sh [--quick] [--runtime SECS] [--out DIR] [--parts LIST]
#                    [--builddir DIR] [--no-install] [--settle SECS] [--replot]
#
#   --quick         a smoke run: small members, 1 s per run, one repetition,
#                   three chunk sizes
#   --runtime SECS  seconds per fio run of part 1 (default 3; the sweep
#                   and the alignment run a third of it, rounded up)
#   --out DIR       where the results go (default docs/bench)
#   --parts LIST    only these parts (numbers, comma-separated: 9,10): for
#                   working on one part; the other tables say n/a
#   --builddir DIR  the build folder (default build-bench)
#   --no-install    do not apt-get anything
#   --settle SECS   part 2: before each timed sample wait up to SECS for
#                   the processors to be 90% idle over half a second (on
#                   a machine shared with other jobs; default 0: no wait)
#   --replot        measure nothing: remake results.md and the plots from
#                   OUT/bench.csv (after editing the tables or plots)
#
# Timings on shared machines are noisy: read the ratios, not the MiB/s,
# and run it more than once before believing a change.

set -eu -o pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
quick=0 runtime='' out=$top/docs/bench builddir=$top/build-bench no_install=0 replot=0
settle=0
all_parts=1,2,3,4,5,6,7,8,9,10,11
parts=$all_parts

usage_die () { echo "bench.sh: $* (try --help)" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
        --quick) quick=1 ;;
        --runtime|--out|--builddir|--parts|--settle)
            [ $# -ge 2 ] || usage_die "$1 needs a value"
            case $1 in
                --runtime) runtime=$2 ;;
                --parts) parts=$2 ;;
                --out) out=$2 ;;
                --builddir) builddir=$2 ;;
                --settle) settle=$2 ;;
            esac
            shift ;;
        --no-install) no_install=1 ;;
        --replot) replot=1 ;;
        -h|--help) sed -n '2,55p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) usage_die "unknown option $1" ;;
    esac
    shift
done
[ -z "$runtime" ] || [[ $runtime =~ ^[1-9][0-9]*$ ]] ||
    usage_die "--runtime takes whole seconds, not '$runtime'"
[[ $settle =~ ^[0-9]+$ ]] || usage_die "--settle takes whole seconds, not '$settle'"

# Sizes (MiB per member) and repetitions.
if [ "$quick" = 1 ]; then
    runtime=${runtime:-1} reps=1 job_reps=1
    main_mib=128 job_mib=128 sweep_mib=64 align_mib=32 align_write=8M
else
    runtime=${runtime:-3} reps=5 job_reps=5
    main_mib=512 job_mib=512 sweep_mib=256 align_mib=128 align_write=64M
fi
sweep_rt=$(( (runtime + 2) / 3 ))   # informative, not targets: short
rss_rt=$(( runtime > 3 ? runtime : 3 ))
chunks=(16K 32K 64K 128K 256K 512K 1M)
[ "$quick" = 0 ] || chunks=(16K 128K 1M)
geoms=("3 64K" "5 64K")     # alignment: members, chunk

. "$top/scripts/lib-build.sh"
. "$top/scripts/lib-bench.sh"
. "$top/scripts/bench-net.sh"
. "$top/scripts/bench-policy.sh"
. "$top/scripts/bench-integrity.sh"
. "$top/scripts/bench-load.sh"
. "$top/scripts/bench-disk.sh"
. "$top/scripts/bench-guest.sh"

case $builddir in /*) ;; *) builddir=$PWD/$builddir ;; esac
case $out in /*) ;; *) out=$PWD/$out ;; esac

# The four workloads of parts 1 and 3: fio rw, block size, label.
wl_names=(seqread seqwrite randread randwrite)
declare -A wl_rw=([seqread]=read [seqwrite]=write [randread]=randread [randwrite]=randwrite)
declare -A wl_bs=([seqread]=1M [seqwrite]=1M [randread]=4k [randwrite]=4k)
declare -A wl_label=([seqread]="seq read 1M" [seqwrite]="seq write 1M"
                     [randread]="4K rand read" [randwrite]="4K rand write")

# run_wl PART CASE SERVER WORKLOAD SAMPLE SECONDS: one QD32 run, recorded.
run_wl ()
{
    local v
    v=$(b_fio "$3" "${wl_rw[$4]}" "${wl_bs[$4]}" 32 1 "$6")
    b_record "$1" "$2" "$3" "$4" "$5" "$v" MiB/s
    b_say "  $1 $2: ${wl_label[$4]}, $3 #$5: $v MiB/s"
}

# --- install, build -----------------------------------------------------------

build ()
{
    b_say "packages: fio, gnuplot-nox and the build dependencies"
    r5_install_packages "$no_install" fio gnuplot-nox "${R5_BUILD_PACKAGES[@]}" >&2 ||
        b_say "warning: some packages are missing; going on"
    local c
    for c in fio nbdkit gnuplot dd awk; do
        command -v "$c" >/dev/null || b_die "$c is not installed"
    done
    b_say "build in $builddir"
    # What is measured is what is built now, not what the tree holds at
    # the end of the run.
    built_from=$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)
    [ -z "$(git -C "$top" status --porcelain -- raid io array plugin tools 2>/dev/null)" ] ||
        built_from="$built_from (with uncommitted changes)"
    r5_autoreconf "$top" >&2 || b_die "autoreconf failed"
    r5_configure "$top" "$builddir" >&2 ||
        b_die "configure failed (see $builddir/config.log)"
    r5_make "$builddir" --no-print-directory > "$builddir/make.out" 2>&1 ||
        b_die "make failed: $(grep -m 1 -i 'error' "$builddir/make.out" ||
                               tail -n 1 "$builddir/make.out")"
    plugin=$builddir/plugin/.libs/nbdkit-raid5-plugin.so
    raid5ctl=$builddir/tools/raid5ctl
    [ -f "$plugin" ] || b_die "no plugin after make: $plugin"
    [ -x "$raid5ctl" ] || b_die "no raid5ctl after make: $raid5ctl"
}

# --- 1. healthy and degraded against the file plugin ---------------------------

# The servers part 1 compares, and one run of one of them (b_rounds).
main_servers=(file raid5 degraded)
main_run ()
{
    case $1 in
        file) run_wl main ceiling file "$2" "$3" "$runtime" ;;
        raid5) run_wl main healthy raid5 "$2" "$3" "$runtime" ;;
        degraded) run_wl main degraded degraded "$2" "$3" "$runtime" ;;
    esac
}

part_main ()
{
    local arr_mib=$((main_mib * 2)) m s r w order
    b_say "1. raid5 (3 x $main_mib MiB, 512K chunk) and the file plugin, ${runtime} s per run, $reps runs each"
    truncate -s "${arr_mib}M" "$work/file.img"
    for m in h0 h1 h2 d0 d2; do truncate -s "${main_mib}M" "$work/$m.img"; done
    b_serve file file "$work/file.img"
    b_serve raid5 "$plugin" disk="$work/h0.img" disk="$work/h1.img" \
        disk="$work/h2.img" chunk=512K metadata=none control="$work/raid5.ctl"
    b_serve degraded "$plugin" disk="$work/d0.img" disk=missing \
        disk="$work/d2.img" chunk=512K metadata=none control="$work/degraded.ctl"
    for s in file raid5 degraded; do
        b_say "  fill $s ($arr_mib MiB)"
        b_fill $s
    done
    b_rounds "$reps" wl_names main_servers main_run
    for s in file raid5 degraded; do
        b_alive $s
        b_record main qd32 "$s" vmhwm 1 "$(b_hwm $s)" KiB
    done
    b_say "  planner counters, healthy: $(b_counters raid5 |
        awk '$1 ~ /^(read|full-stripe|rcw|rmw)$/ { printf "%s %s  ", $1, $2 }')"
    b_say "  planner counters, degraded: $(b_counters degraded |
        awk '$1 ~ /^(read|degraded-read|full-stripe|rcw|rmw)$/ { printf "%s %s  ", $1, $2 }')"
    b_stop degraded
    b_stop raid5
    b_stop file
}

# --- 5. peak RSS at QD128 over 4 connections (fresh servers) -------------------

# The workloads of part 5: name, fio block size and options.
rss_names=(4k 64k 1m-4k)
declare -A rss_bs=([4k]=4k [64k]=64k [1m-4k]=4k)
declare -A rss_opt=([4k]="" [64k]="" [1m-4k]="--bssplit=1m/50:4k/50")
declare -A rss_label=([4k]="4K" [64k]="64K" [1m-4k]="1M and 4K, half each")

part_rss ()
{
    local s v hwm w opt
    b_say "5. peak RSS: 4 connections x QD128, random reads and writes (${rss_names[*]}), ${rss_rt} s each, fresh servers"
    # The members (tmpfs) read and written with pread and pwrite: through
    # their mapping (io/memmap.h) the member pages the server touches count
    # in its RSS (RssShmem), the members' memory, not what it allocates.
    b_say "  raid5's tmpfs members with pread and pwrite (RAID5_MEMBER_ACCESS=read)"
    for w in "${rss_names[@]}"; do
        RAID5_MEMBER_ACCESS=read b_serve rss "$plugin" disk="$work/h0.img" \
            disk="$work/h1.img" disk="$work/h2.img" chunk=512K metadata=none
        b_serve rssfile file "$work/file.img"
        for s in rss rssfile; do
            read -r -a opt <<< "${rss_opt[$w]}"
            v=$(b_fio $s randrw "${rss_bs[$w]}" 128 4 "$rss_rt" "${opt[@]}")
            b_alive $s
            hwm=$(b_hwm $s)
            b_record rss "qd128x4-$w" "$s" randrw 1 "$v" MiB/s
            b_record rss "qd128x4-$w" "$s" vmhwm 1 "$hwm" KiB
            b_say "  $w, $s: $v MiB/s, VmHWM $((hwm / 1024)) MiB"
        done
        b_stop rss
        b_stop rssfile
    done
    rm -f "$work"/h?.img "$work"/d?.img "$work/file.img"
}

# --- 2. offline check and rebuild against raw parallel reads ------------------

# The cases of part 2, run in b_rounds order (raw first in odd rounds,
# last in even ones) with the state they share: the members j, the spare.
# shellcheck disable=SC2034  # b_rounds takes them by name
jobs_cases=(raw check rebuild grow) jobs_one=(offline)
jobs_run ()
{
    local r=$3 v
    b_settle
    case $1 in
        raw)
            v=$(b_raw_read "${j[@]}")
            b_record jobs raw dd read "$r" "$v" MiB/s/member
            b_say "  raw parallel read #$r: $v MiB/s per member" ;;
        check)
            "$raid5ctl" check "${j[@]}" > "$work/check.log" 2>&1 ||
                b_die "raid5ctl check failed: $(tail -n 1 "$work/check.log")"
            v=$(b_job_speed "$work/check.log")
            b_record jobs check raid5ctl check "$r" "$v" MiB/s/member
            b_say "  check #$r: $v MiB/s per member" ;;
        rebuild) jobs_rebuild "$r" ;;
        grow) jobs_grow "$r" ;;
    esac
}

# Slot 1 onto the spare (written zeros); the old member becomes the next
# round's spare.
jobs_rebuild ()
{
    local v t
    b_zero_files "$job_mib" "$spare"
    b_settle
    "$raid5ctl" rebuild --slot 1 --new "$spare" "${j[0]}" "${j[2]}" \
        > "$work/rebuild.log" 2>&1 ||
        b_die "raid5ctl rebuild failed: $(tail -n 1 "$work/rebuild.log")"
    v=$(b_job_speed "$work/rebuild.log")
    b_record jobs rebuild raid5ctl rebuild "$1" "$v" MiB/s/member
    b_say "  rebuild #$1: $v MiB/s per member"
    t=${j[1]}; j[1]=$spare; spare=$t
}

# Grow a copy of the three by a fourth (written zeros): reads 3, writes
# 4, the whole array moved.
jobs_grow ()
{
    local v t
    for t in 0 1 2; do cp "${j[t]}" "$work/g$t.img"; done
    b_zero_files "$job_mib" "$work/g3.img"
    b_settle
    "$raid5ctl" grow --add "$work/g3.img" "$work"/g{0,1,2}.img \
        > "$work/grow.log" 2>&1 ||
        b_die "raid5ctl grow failed: $(tail -n 1 "$work/grow.log")"
    v=$(grep 'reshape:' "$work/grow.log" > "$work/grow.speed"; b_job_speed "$work/grow.speed")
    b_record jobs grow raid5ctl grow "$1" "$v" MiB/s/member
    b_say "  grow 3 -> 4 #$1: $v MiB/s per member"
    rm -f "$work"/g?.img
}

part_jobs ()
{
    j=("$work/j0.img" "$work/j1.img" "$work/j2.img") spare=$work/j3.img
    b_say "2. check and rebuild (3 x $job_mib MiB of written data) against raw reads, $job_reps rounds"
    b_zero_files "$job_mib" "${j[@]}" "$spare"
    "$raid5ctl" create --assume-clean --chunk 512K "${j[@]}" > "$work/create.log" 2>&1 ||
        b_die "raid5ctl create failed: $(tail -n 1 "$work/create.log")"
    b_serve jobs "$plugin" disk="${j[0]}" disk="${j[1]}" disk="${j[2]}"
    b_fill jobs
    b_stop jobs
    b_rounds "$job_reps" jobs_one jobs_cases jobs_run
    "$raid5ctl" check "${j[@]}" > "$work/check.log" 2>&1 ||
        b_die "the rebuilt array does not check clean: $(tail -n 1 "$work/check.log")"
    rm -f "${j[@]}" "$spare"
}

# --- 3. chunk sweep -------------------------------------------------------------

part_sweep ()
{
    local c w m i
    b_say "3. chunk sweep (3 x $sweep_mib MiB), ${sweep_rt} s per run, raid5 and file plugin alternating"
    truncate -s "$((sweep_mib * 2))M" "$work/sfile.img"
    for m in s0 s1 s2; do truncate -s "${sweep_mib}M" "$work/$m.img"; done
    b_serve sfile file "$work/sfile.img"
    b_fill sfile
    for (( i = 0; i < ${#chunks[@]}; i++ )); do
        c=${chunks[$i]}
        b_serve raid5 "$plugin" disk="$work/s0.img" disk="$work/s1.img" \
            disk="$work/s2.img" chunk="$c" metadata=none
        b_fill raid5
        for w in "${wl_names[@]}"; do
            run_wl sweep ceiling sfile "$w" $((i + 1)) "$sweep_rt"
            run_wl sweep "$c" raid5 "$w" 1 "$sweep_rt"
        done
        b_stop raid5
    done
    b_stop sfile
    rm -f "$work"/s?.img "$work/sfile.img"
}

# --- 4. alignment -----------------------------------------------------------------

# stripe_of CHUNK MEMBERS: the data width of a stripe, as fio's bs.
stripe_of () { echo "$(( ${1%K} * ($2 - 1) ))k"; }

part_align ()
{
    local g n c m bs off before after v d k line disks
    b_say "4. alignment: sequential writes from 63, 64 and 2048 sectors over $align_write, ${sweep_rt} s each"
    for g in "${geoms[@]}"; do
        read -r n c <<< "$g"
        disks=()
        for (( m = 0; m < n; m++ )); do
            b_zero_files "$align_mib" "$work/a$m.img"
            disks+=("disk=$work/a$m.img")
        done
        b_serve align "$plugin" "${disks[@]}" chunk="$c" metadata=none \
            control="$work/align.ctl"
        for bs in 4k 64k "$(stripe_of "$c" "$n")"; do
            for off in 63 64 2048; do
                before=$(b_counters align)
                v=$(b_fio align write "$bs" 32 1 "$sweep_rt" \
                        --offset=$((off * 512)) --size="$align_write")
                after=$(b_counters align)
                b_record align "${n}x$c" raid5 "off$off-$bs" 1 "$v" MiB/s
                line="$v MiB/s"
                for k in writes full-stripe rcw rmw; do
                    d=$(b_delta "$before" "$after" "$k")
                    b_record align "${n}x$c" raid5 "off$off-$bs" 1 "$d" "$k"
                    line="$line, $k $d"
                done
                b_say "  ${n}x$c $bs at $off sectors: $line"
            done
        done
        b_stop align
        rm -f "$work"/a?.img
    done
}

# --- results --------------------------------------------------------------------

med () { b_median "$@"; }
# medr PART CASE SERVER WORKLOAD: the median with its rounds' spread.
medr () { local m; m=$(b_median "$@"); echo "$m$(b_spread_note "$m" "$(b_range "$@")")"; }
# processor: what the run was measured on (older CSVs: from "machine").
processor () { local p; p=$(setting processor); echo "${p:-$(setting machine)}"; }
# part_seconds: "part 1 190 s, part 5 20 s, ..." from the CSV (older CSVs
# have none).
part_seconds ()
{
    awk -F, 'BEGIN { split("main jobs sweep align rss net policy integrity load disk guest", p, " ")
                     for (i in p) n[p[i]] = i }
             $1 == "meta" && $2 == "seconds" { s = s (s ? ", " : "") "part " n[$4] " " $6 " s" }
             END { print s ? s : "no part timings" }' "$csv"
}
# setting NAME: a setting of the measuring run, from the CSV.
setting () { awk -F, -v k="$1" '$1 == "meta" && $4 == k { v = $6 } END { print v }' "$csv"; }

declare -A ratio=() spread=()   # spread[KEY]: "MIN MAX" of ratio[KEY]'s rounds
# srv CASE: the server of part 1's case healthy or degraded.
srv () { if [ "$1" = healthy ]; then echo raid5; else echo degraded; fi; }
main_rows=("seqread healthy" "seqwrite healthy" "randread healthy" "randwrite healthy"
           "seqread degraded" "seqwrite degraded" "randread degraded" "randwrite degraded")

ratios ()
{
    local row w k
    for row in "${main_rows[@]}"; do
        read -r w k <<< "$row"
        b_pair "$w-$k" main "$k" "$(srv "$k")" "$w" ceiling file
    done
    ratios_net
    ratios_policy
    ratios_integrity
    ratios_load
    ratios_disk
    ratios_guest
    b_pair check jobs check raid5ctl check raw dd read
    b_pair rebuild jobs rebuild raid5ctl rebuild raw dd read
    b_pair grow jobs grow raid5ctl grow raw dd read
    for w in "${rss_names[@]}"; do
        ratio[rss-$w]=$(mib "$(med rss "qd128x4-$w" rss vmhwm)")
        ratio[rssfile-$w]=$(mib "$(med rss "qd128x4-$w" rssfile vmhwm)")
        ratio[rssown-$w]=$(awk -v a="${ratio[rss-$w]}" -v b="${ratio[rssfile-$w]}" \
                               'BEGIN { if (a != "" && b != "") printf "%.1f\n", a - b }')
    done
    for c in "${chunks[@]}"; do
        for w in "${wl_names[@]}"; do
            ratio[$c-$w]=$(b_ratio "$(med sweep "$c" raid5 "$w")" "$(med sweep ceiling sfile "$w")")
        done
    done
}

# mib KIB: MiB with one decimal (empty for empty).
mib () { awk -v k="$1" 'BEGIN { if (k != "") printf "%.1f\n", k / 1024 }'; }

# t_row LABEL OP GOAL VALUE [KEY]: a target's row; with KEY, the rounds'
# spread (spread[KEY]) beside the value, and "noisy" when it is.
t_row ()
{
    local lo='' hi='' n=''
    [ -z "${5:-}" ] || read -r lo hi <<< "${spread[$5]:-}" || true
    [ -z "$lo" ] || n=$(b_noisy "$4" "$lo" "$hi")
    echo "| $1 | $2 $3 | $4${lo:+ ($lo-$hi)} | $(b_pass "$4" "$2" "$3")${n:+, $n} |"
}

report ()
{
    local row w k l c g n bs off line s
    echo "# nbdkit-raid5 benchmark results"
    echo
    echo "**Processor: $(processor).**"
    echo
    echo "Made by \`scripts/bench.sh$([ "$(setting quick)" = 1 ] && echo " --quick")\`"
    echo "on $(setting date), commit $(setting commit): $(setting machine)."
    echo
    echo "Members and files on tmpfs (part 10: on the disk), fio's nbd engine over a Unix socket;"
    echo "$(setting runtime) s per run in part 1 (median of $(setting reps) runs, file plugin and"
    echo "raid5 alternating), $(setting sweep_rt) s per run in the sweep.  The whole run took"
    echo "$(setting elapsed) s, with the build ($(part_seconds)).  The machine may be shared with other"
    echo "jobs: figures move by 10-20% from run to run, so read the ratios,"
    echo "not the MiB/s, and compare more than one run before believing a change."
    echo "Beside a median: the lowest and highest of its rounds; *noisy* marks"
    echo "a figure whose rounds spread over more than a fifth of it."
    [ "$(setting quick)" = 0 ] || echo "**A --quick smoke run: these figures mean little.**"
    echo
    echo "## Targets (DESIGN.md)"
    echo
    echo "| target | goal | measured | result |"
    echo "|---|---|---|---|"
    t_row "seq read 1M QD32 / file plugin" ">=" 0.90 "${ratio[seqread-healthy]}" seqread-healthy
    t_row "seq write 1M QD32 / file plugin" ">=" 0.60 "${ratio[seqwrite-healthy]}" seqwrite-healthy
    t_row "4K random read QD32 / file plugin" ">=" 0.85 "${ratio[randread-healthy]}" randread-healthy
    t_row "4K random write QD32 / file plugin" ">=" 0.35 "${ratio[randwrite-healthy]}" randwrite-healthy
    t_row "degraded seq read 1M QD32 / file plugin" ">=" 0.50 "${ratio[seqread-degraded]}" seqread-degraded
    t_row "check / raw parallel read, per member" ">=" 0.95 "${ratio[check]}" check
    t_row "rebuild / raw parallel read, per member" ">=" 0.90 "${ratio[rebuild]}" rebuild
    t_row "grow 3 -> 4 / raw parallel read, per member" ">=" 0.50 "${ratio[grow]}" grow
    t_row "plugin peak RSS (MiB), 4 connections x QD128, 4K random" "<=" 64 "${ratio[rss-4k]}"
    t_row "plugin peak RSS (MiB), 4 connections x QD128, 64K random" "<=" 64 "${ratio[rss-64k]}"
    t_row "plugin peak RSS over the file plugin's (MiB), 4 x QD128, 1M/4K random" "<=" 64 "${ratio[rssown-1m-4k]}"
    targets_net
    targets_policy
    targets_load
    targets_disk
    echo
    echo "## 1. Against the file plugin (3 x $(setting main_mib) MiB members, 512K chunk)"
    echo
    echo "Degraded: member 1 missing (\`disk=missing\`).  MiB/s are medians;"
    echo "a ratio is the median of the ratios of runs made next to each other."
    echo
    echo "| workload | file plugin MiB/s | raid5 MiB/s | ratio |"
    echo "|---|---|---|---|"
    for row in "${main_rows[@]}"; do
        read -r w k <<< "$row"
        l=${wl_label[$w]}
        [ "$k" = healthy ] || l="degraded $l"
        echo "| $l QD32 | $(medr main ceiling file "$w") | $(medr main "$k" "$(srv "$k")" "$w") | ${ratio[$w-$k]}$(b_spread_note "${ratio[$w-$k]}" "${spread[$w-$k]}") |"
    done
    echo
    echo "## 2. Offline check and rebuild (3 x $(setting job_mib) MiB, 512K chunk, md superblocks)"
    echo
    echo "Raw: the three members read at once by three \`dd bs=1M\`; the jobs'"
    echo "figures are raid5ctl's own \"per member\" speeds.  Medians of $(setting job_reps) rounds,"
    echo "raw first in odd rounds and last in even ones; the ratio is the median"
    echo "of each round's job / raw."
    if [ "$(setting settle)" -gt 0 ] 2>/dev/null; then
        echo "Each sample waited for idle processors first (--settle: up to"
        echo "$(setting settle) s; $(setting unsettled) waits ran out)."
    fi
    echo
    echo "| job | job MiB/s per member | raw MiB/s per member | ratio |"
    echo "|---|---|---|---|"
    echo "| check | $(medr jobs check raid5ctl check) | $(medr jobs raw dd read) | ${ratio[check]}$(b_spread_note "${ratio[check]}" "${spread[check]}") |"
    echo "| rebuild (reads 2, writes 1) | $(medr jobs rebuild raid5ctl rebuild) | $(medr jobs raw dd read) | ${ratio[rebuild]}$(b_spread_note "${ratio[rebuild]}" "${spread[rebuild]}") |"
    echo "| grow 3 -> 4 (reads 3, writes 4) | $(medr jobs grow raid5ctl grow) | $(medr jobs raw dd read) | ${ratio[grow]}$(b_spread_note "${ratio[grow]}" "${spread[grow]}") |"
    echo
    echo "The new member of a rebuild has its blocks already (written zeros), as"
    echo "a disk would: allocating tmpfs pages is not what the ratio measures."
    echo
    echo "## 3. Chunk sweep (3 x $(setting sweep_mib) MiB), ratio to the file plugin"
    echo
    echo "One raid5 run per chunk and workload, each next to a file plugin run"
    echo "of the same workload; the ratio is to the median of those file runs."
    echo
    echo "| chunk | seq read 1M | seq write 1M | 4K rand read | 4K rand write |"
    echo "|---|---|---|---|---|"
    for c in "${chunks[@]}"; do
        line="| $c"
        for w in "${wl_names[@]}"; do line="$line | ${ratio[$c-$w]}"; done
        echo "$line |"
    done
    line="| file plugin, MiB/s"
    for w in "${wl_names[@]}"; do line="$line | $(med sweep ceiling sfile "$w")"; done
    echo "$line |"
    echo
    echo "## 4. Alignment: sequential writes from an offset, QD32"
    echo
    echo "Each run writes $(setting sweep_rt) s, front to back and round again, over"
    echo "$(setting align_write) from the offset.  Offsets in 512-byte sectors: 63 is the old"
    echo "DOS partition start, 64 is 32 KiB, 2048 is 1 MiB.  Requests and"
    echo "per-stripe segments by the planner's strategy come from raid5ctl"
    echo "status --json (after minus before); on tmpfs the extra member reads"
    echo "of a misaligned write cost little, on disks they cost seeks."
    echo
    echo "| members x chunk | write size | offset | MiB/s | requests | full-stripe | rcw | rmw |"
    echo "|---|---|---|---|---|---|---|---|"
    for g in "${geoms[@]}"; do
        read -r n c <<< "$g"
        for bs in 4k 64k "$(stripe_of "$c" "$n")"; do
            for off in 63 64 2048; do
                line="| ${n}x$c | $bs | $off | $(med align "${n}x$c" raid5 "off$off-$bs" MiB/s)"
                for k in writes full-stripe rcw rmw; do
                    line="$line | $(med align "${n}x$c" raid5 "off$off-$bs" "$k" | sed 's/\.0$//')"
                done
                echo "$line |"
            done
        done
    done
    echo
    echo "## 5. Peak RSS (VmHWM), 4 connections x QD128, random reads and writes"
    echo
    echo "Each workload on fresh servers (VmHWM only grows).  nbdkit runs 16"
    echo "threads per connection, each holding its request's buffer: with 1 MiB"
    echo "requests the transport alone passes 64 MiB (the file plugin's figure),"
    echo "so there the target is the raid5 plugin's own share, over the file"
    echo "plugin's.  That share is mostly parity and read scratch, drawn from a"
    echo "pool bounded at 16 MiB and, for small requests, 64 buffers of 256 KiB"
    echo "(array/scratch_pool.h, array/internal.h)."
    echo
    echo "| workload | raid5 MiB/s | raid5 VmHWM MiB | file plugin MiB/s | file plugin VmHWM MiB | raid5 over file MiB |"
    echo "|---|---|---|---|---|---|"
    for w in "${rss_names[@]}"; do
        echo "| ${rss_label[$w]} | $(med rss "qd128x4-$w" rss randrw) | ${ratio[rss-$w]} | $(med rss "qd128x4-$w" rssfile randrw) | ${ratio[rssfile-$w]} | ${ratio[rssown-$w]} |"
    done
    echo
    report_net
    report_policy
    report_integrity
    report_load
    report_disk
    report_guest
    echo "Plots: [throughput.png](throughput.png), [chunk-sweep.png](chunk-sweep.png),"
    echo "[alignment.png](alignment.png), [load.png](load.png), [disk.png](disk.png),"
    echo "[guest.png](guest.png);"
    echo "every sample: [bench.csv](bench.csv)."
}

# --- plots ------------------------------------------------------------------------

plot_data ()
{
    local row w k l tg c kib line g n bs off wq v
    # throughput.dat: ratios with their targets.
    {
        echo "# label ratio target"
        for row in "${main_rows[@]}"; do
            read -r w k <<< "$row"
            l=${wl_label[$w]}; [ "$k" = healthy ] || l="degr. $l"
            case $w-$k in
                seqread-healthy) tg=0.90 ;; seqwrite-healthy) tg=0.60 ;;
                randread-healthy) tg=0.85 ;; randwrite-healthy) tg=0.35 ;;
                seqread-degraded) tg=0.50 ;; *) tg=- ;;
            esac
            echo "\"$l\" ${ratio[$w-$k]:--} $tg"
        done
        echo "\"check\" ${ratio[check]:--} 0.95"
        echo "\"rebuild\" ${ratio[rebuild]:--} 0.90"
    } > "$work/throughput.dat"
    plot_data_load
    plot_data_disk
    plot_data_guest
    # sweep.dat: chunk (KiB) and one ratio per workload.
    {
        echo "# chunk_kib seqread seqwrite randread randwrite"
        for c in "${chunks[@]}"; do
            case $c in *K) kib=${c%K} ;; *M) kib=$(( ${c%M} * 1024 )) ;; esac
            line=$kib
            for w in "${wl_names[@]}"; do line="$line ${ratio[$c-$w]:--}"; done
            echo "$line"
        done
    } > "$work/sweep.dat"
    # align-mibs.dat: MiB/s per offset; align-seg.dat: segments per request.
    : > "$work/align-mibs.dat"
    : > "$work/align-seg.dat"
    for g in "${geoms[@]}"; do
        read -r n c <<< "$g"
        for bs in 4k 64k "$(stripe_of "$c" "$n")"; do
            line="\"${n}x$c, $bs\""
            for off in 63 64 2048; do
                v=$(med align "${n}x$c" raid5 "off$off-$bs" MiB/s)
                line="$line ${v:--}"
                wq=$(med align "${n}x$c" raid5 "off$off-$bs" writes)
                echo "\"${n}x$c $bs at $off\" $(for k in full-stripe rcw rmw; do
                    awk -v v="$(med align "${n}x$c" raid5 "off$off-$bs" "$k")" -v q="$wq" \
                        'BEGIN { printf "%.2f ", (q > 0 ? v / q : 0) }'; done)" >> "$work/align-seg.dat"
            done
            echo "$line" >> "$work/align-mibs.dat"
        done
    done
}

plots ()
{
    local term="pngcairo font 'sans,10'"
    gnuplot -e 'set terminal pngcairo' 2>/dev/null || term="png"
    plot_data
    gnuplot > "$work/gnuplot.log" 2>&1 <<GNUPLOT ||
set datafile missing "-"
set termoption noenhanced
set style data histograms
set style fill solid 0.8 border -1
set grid ytics
set key top right

set terminal $term size 1000,520
set output "$out/throughput.png"
set title "nbdkit-raid5 / its ceiling: the file plugin, or raw parallel reads for check and rebuild"
set style histogram clustered gap 1
set ylabel "ratio"
set yrange [0:*]
set xtics rotate by -30 scale 0
plot "$work/throughput.dat" using 2:xtic(1) title "measured" lc rgb "#3572a5", \
     "" using 3 title "target" lc rgb "#c8c8c8"

set output "$out/chunk-sweep.png"
set title "Chunk sweep: raid5 (3 members) / file plugin, QD32"
set style data linespoints
set logscale x 2
set xlabel "chunk (KiB)"
set xtics rotate by 0 scale 1
set xrange [12:1400]
set key outside right
plot for [i=2:5] "$work/sweep.dat" using 1:i title word("seq-read-1M seq-write-1M 4K-rand-read 4K-rand-write", i - 1) lw 2 pt 7
unset logscale x
unset xlabel
set autoscale x

set terminal $term size 1100,820
set output "$out/alignment.png"
set multiplot layout 2,1
set style data histograms
set style histogram clustered gap 1
set title "Sequential writes from 63, 64 and 2048 sectors (members x chunk, write size): MiB/s"
set ylabel "MiB/s"
set key outside right
set xtics rotate by 0 scale 0 font ",10"
plot "$work/align-mibs.dat" using 2:xtic(1) title "at 63" lc rgb "#c0392b", \
     "" using 3 title "at 64" lc rgb "#e6a23c", \
     "" using 4 title "at 2048" lc rgb "#3572a5"
set title "Per-stripe segments per request, by the planner's strategy"
set ylabel "segments / request"
set offsets 0, 0, graph 0.1, 0
set style histogram rowstacked
set xtics rotate by -45 scale 0 font ",8"
plot "$work/align-seg.dat" using 2:xtic(1) title "full-stripe" lc rgb "#3572a5", \
     "" using 3 title "rcw" lc rgb "#e6a23c", \
     "" using 4 title "rmw" lc rgb "#c0392b"
unset multiplot

set output "$out/load.png"
set multiplot layout 1,2
set style histogram clustered gap 1
set style data histograms
set offsets 0, 0, 0, 0
set key top left
set xtics rotate by 0 scale 0 font ",10"
set yrange [0:*]
set title "Jobs under a client load: speed kept (job under load / alone)"
set ylabel "ratio"
plot "$work/load.dat" using 2:xtic(1) title "md" lc rgb "#c0392b", \
     "" using 3 title "md, min raised" lc rgb "#e6a23c", \
     "" using 4 title "latency target" lc rgb "#3572a5"
set title "... and the client's p99 rise over the load alone"
plot "$work/load.dat" using 5:xtic(1) title "md" lc rgb "#c0392b", \
     "" using 6 title "md, min raised" lc rgb "#e6a23c", \
     "" using 7 title "latency target" lc rgb "#3572a5"
unset multiplot

set output "$out/disk.png"
set title "Members on the disk: MiB/s (raid5 direct=true, file plugin cache=none, fio on the files)"
set ylabel "MiB/s"
set logscale y
set yrange [*:*]
set key outside right
set xtics rotate by -30 scale 0
plot "$work/disk.dat" using 2:xtic(1) title "raid5 direct" lc rgb "#3572a5", \
     "" using 3 title "file cache=none" lc rgb "#c8c8c8", \
     "" using 4 title "raid5 cached" lc rgb "#6aa84f", \
     "" using 5 title "file default" lc rgb "#e6a23c", \
     "" using 6 title "members (fio)" lc rgb "#333333", \
     "" using 7 title "NBD alone (memory plugin)" lc rgb "#b04a9e"
unset logscale y

set output "$out/guest.png"
set title "Seed 003 in a qemu guest (TCG): check speed / the disks read at once"
set ylabel "speed / raw parallel reads"
set yrange [0:*]
set key off
set xtics rotate by 0 scale 0
set style histogram clustered gap 1
plot "$work/guest.dat" using 2:xtic(1) lc rgb "#3572a5"
GNUPLOT
        plot_failed "$(grep -v '^ *$' "$work/gnuplot.log" | tail -n 2 | tr '\n' ' ')"
}

# plot_failed WHY: fatal in a full run; with --parts, the parts left out
# have nothing to plot, so only said.
plot_failed ()
{
    [ "$parts" != "$all_parts" ] || b_die "gnuplot failed: $1"
    b_say "some plots are empty (--parts $parts): $1"
}

# --- main ---------------------------------------------------------------------------

work=$(mktemp -d /dev/shm/raid5-bench.XXXXXX) || b_die "cannot make a folder in /dev/shm"
cleanup () { b_stop_all; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$out" || b_die "cannot make $out"
csv=$work/bench.csv

if [ "$replot" = 1 ]; then
    [ -s "$out/bench.csv" ] || b_die "no $out/bench.csv to replot"
    cp "$out/bench.csv" "$csv"
else
    need_mib=$(( main_mib * 7 + 256 ))     # 3 + 2 members, the file of 2
    free_mib=$(df -Pm "$work" | awk 'NR == 2 { print $4 }')
    [ "$free_mib" -ge "$need_mib" ] ||
        b_die "/dev/shm has $free_mib MiB free, the benchmark needs $need_mib MiB"
    b_say "processor: $(b_processor)"
    build
    echo "part,case,server,workload,sample,value,unit" > "$csv"
    part_no=(main jobs sweep align rss net policy integrity load disk guest)
    for part in main rss jobs sweep align net policy integrity load disk guest; do
        for (( n = 0; n < ${#part_no[@]}; n++ )); do [ "${part_no[n]}" = "$part" ] && break; done
        [[ ",$parts," == *",$(( n + 1 )),"* ]] || continue
        t0=$SECONDS
        "part_$part"
        b_record meta seconds - "$part" 1 $((SECONDS - t0)) s
    done
    for kv in "quick=$quick" "cpus=$(nproc)" "runtime=$runtime" "reps=$reps" "sweep_rt=$sweep_rt" \
              "integ_reps=$integ_reps" "net_reps=$net_reps" "pol_reps=$pol_reps" \
              "job_reps=$job_reps" "main_mib=$main_mib" "job_mib=$job_mib" \
              "settle=$settle" "unsettled=$b_unsettled" \
              "sweep_mib=$sweep_mib" "align_write=$align_write" \
              "date=$(date -u '+%Y-%m-%d %H:%M UTC')" \
              "commit=$built_from" "processor=$(b_processor)" \
              "machine=$(nproc) CPUs ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo | tr -d ,)); Linux $(uname -r); $(nbdkit --version 2>/dev/null | head -n 1); $(fio --version)" \
              "elapsed=$((SECONDS - b_start))"; do
        b_record meta setting - "${kv%%=*}" 1 "${kv#*=}" -
    done
    cp "$csv" "$out/bench.csv"
fi

b_say "results: tables and plots in $out"
ratios
report > "$out/results.md"
plots
b_say "done in $((SECONDS - b_start)) s: $out/results.md"
echo "Processor: $(processor)"
sed -n '/^## Targets/,/^## 1/p' "$out/results.md" | sed '$d'
