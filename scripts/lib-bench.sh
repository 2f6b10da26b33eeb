# shellcheck shell=bash disable=SC2154  # work, csv, raid5ctl: the caller's
# scripts/lib-bench.sh -- helpers of scripts/bench.sh: servers, fio runs,
# member files, raw samples, medians.  Source from bash after setting
#
#   work      a scratch folder (sockets, logs, tmpfs members), removed by
#             the caller
#   csv       the raw CSV: one line per sample,
#             part,case,server,workload,sample,value,unit
#   raid5ctl  the raid5ctl program (for b_counters)
#
# Servers are nbdkit processes in the foreground of a background job; their
# pids are kept in b_pid[NAME] so that b_stop_all ends exactly those.
# Functions that fail print one line "bench.sh: ..." and exit (in a command
# substitution the caller's set -e ends the script as well).

declare -A b_pid=()
b_start=$SECONDS

b_say () { printf '[%3ds] %s\n' $((SECONDS - b_start)) "$*" >&2; }
b_die () { echo "bench.sh: $*" >&2; exit 1; }

# b_record PART CASE SERVER WORKLOAD SAMPLE VALUE UNIT
b_record () { local IFS=,; echo "$*" >> "$csv"; }

# b_rounds REPS WORKLOADS CASES FN: REPS rounds of every workload of the
# array named WORKLOADS on every case of the array named CASES, the cases
# in their order in odd rounds and reversed in even ones, so that the
# machine's drift falls on each case alike; FN CASE WORKLOAD ROUND runs
# one.  Every part that compares servers measures this one way.
b_rounds ()
{
    local b_reps=$1 b_fn=$4 b_r b_w b_c b_i
    local -n b_wls=$2 b_cases=$3
    local b_order=()
    for (( b_r = 1; b_r <= b_reps; b_r++ )); do
        b_order=()
        for (( b_i = 0; b_i < ${#b_cases[@]}; b_i++ )); do
            if [ $((b_r % 2)) = 1 ]; then b_order+=("${b_cases[b_i]}")
            else b_order=("${b_cases[b_i]}" "${b_order[@]}"); fi
        done
        for b_w in "${b_wls[@]}"; do
            for b_c in "${b_order[@]}"; do
                "$b_fn" "$b_c" "$b_w" "$b_r"
            done
        done
    done
}

# --- servers ---------------------------------------------------------------

# b_serve NAME PLUGIN ARGS...: nbdkit on the Unix socket $work/NAME.sock
# (its control socket, if ARGS ask for one, should be $work/NAME.ctl).
# Returns when it accepts connections (nbdkit writes its pid file then).
b_serve ()
{
    local name=$1; shift
    rm -f "$work/$name.sock" "$work/$name.pid" "$work/$name.ctl"
    nbdkit -f -U "$work/$name.sock" -P "$work/$name.pid" "$@" \
        2>> "$work/$name.log" &
    b_pid[$name]=$!
    b_ready "$name"
}

# b_ready NAME: wait until the server NAME, just started in the
# background with -P $work/NAME.pid, accepts connections.
b_ready ()
{
    local name=$1 _
    for _ in $(seq 150); do
        [ -s "$work/$name.pid" ] && return 0
        kill -0 "${b_pid[$name]}" 2>/dev/null || break
        sleep 0.1
    done
    b_die "nbdkit ($name) did not start: $(tail -n 1 "$work/$name.log")"
}

b_uri () { echo "nbd+unix:///?socket=$work/$1.sock"; }

# b_stop NAME: end the server and wait until its members are free again.
b_stop ()
{
    local pid=${b_pid[$1]:-}
    [ -n "$pid" ] || return 0
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    unset "b_pid[$1]"
    rm -f "$work/$1.sock" "$work/$1.pid" "$work/$1.ctl"
}

b_stop_all () { local n; for n in "${!b_pid[@]}"; do b_stop "$n"; done; }

# b_hwm NAME: peak resident set (VmHWM, KiB) of the server NAME.
b_hwm ()
{
    awk '/^VmHWM:/ { print $2; ok = 1 } END { exit !ok }' \
        "/proc/${b_pid[$1]}/status" 2>/dev/null ||
        b_die "no VmHWM for the server $1 (did it exit?)"
}

# b_alive NAME: die with the server's last words if it has gone.
b_alive ()
{
    kill -0 "${b_pid[$1]}" 2>/dev/null ||
        b_die "nbdkit ($1) exited: $(tail -n 1 "$work/$1.log")"
}

# --- fio -------------------------------------------------------------------

# b_fio NAME RW BS QD JOBS SECONDS [FIO OPTION...]: MiB/s (read + write) of
# a fio run with its nbd engine against server NAME (one NBD connection
# per job): time based for SECONDS, or with SECONDS=0 until --size is done.
b_fio ()
{
    local name=$1 rw=$2 bs=$3 qd=$4 jobs=$5 secs=$6 out time=(); shift 6
    [ "$secs" = 0 ] || time=(--time_based --runtime="$secs")
    out=$(fio --name=bench --ioengine=nbd --uri="$(b_uri "$name")" \
              --rw="$rw" --bs="$bs" --iodepth="$qd" --numjobs="$jobs" \
              --group_reporting "${time[@]}" \
              --output-format=terse "$@" 2> "$work/fio.err") ||
        b_die "fio $rw $bs against $name failed: $(tail -n 1 "$work/fio.err")" \
              "(server: $(tail -n 1 "$work/$name.log" 2>/dev/null))"
    # terse v3: field 7 read KiB/s, field 48 write KiB/s
    awk -F';' 'NF > 50 { printf "%.1f\n", ($7 + $48) / 1024; ok = 1 }
               END { exit !ok }' <<< "$out" ||
        b_die "fio $rw $bs against $name printed no result: $(tail -n 1 "$work/fio.err")"
}

# b_fio_json WHAT FIO-ARGS...: a fio run with JSON output; prints "MiB/s
# p50_read p99_read p50_write p99_write" (completion latency, us; 0 for
# a direction with no I/O), every job summed.  WHAT names it in errors.
b_fio_json ()
{
    local what=$1; shift
    fio --output-format=json "$@" > "$work/fio.json" 2> "$work/fio.err" ||
        b_die "fio ($what) failed: $(tail -n 1 "$work/fio.err")"
    /usr/bin/python3 - "$work/fio.json" <<'PY' || b_die "no result in fio's output ($what)"
import json, sys
t = open(sys.argv[1]).read()    # the nbd engine says "connected" first
jobs = json.loads(t[t.index("{"):])["jobs"]
bw = sum(x["read"]["bw"] + x["write"]["bw"] for x in jobs) / 1024
def pct(d, p):
    return max([x[d]["clat_ns"].get("percentile", {}).get(p, 0)
                for x in jobs if x[d]["io_bytes"]] or [0]) / 1000
print("%.1f %.0f %.0f %.0f %.0f" % (bw, pct("read", "50.000000"),
      pct("read", "99.000000"), pct("write", "50.000000"),
      pct("write", "99.000000")))
PY
}

# b_max A B: the larger of two numbers.
b_max () { awk -v a="$1" -v b="$2" 'BEGIN { print (a + 0 > b + 0 ? a : b) }'; }

# b_fill NAME: write the whole export once, front to back (so tmpfs pages
# exist and parity matches the data); not timed.  fio's buffers are random
# bytes, not zeros.
b_fill ()
{
    fio --name=fill --ioengine=nbd --uri="$(b_uri "$1")" --rw=write \
        --bs=1M --iodepth=32 --size=100% --output-format=terse \
        > /dev/null 2> "$work/fio.err" ||
        b_die "fio could not fill $1: $(tail -n 1 "$work/fio.err")"
}

# --- members and raw reads -------------------------------------------------

# b_zero_files MIB FILE...: files of MIB MiB of written zeros (real blocks,
# not holes: reading a hole costs no I/O).
b_zero_files ()
{
    local mib=$1 f; shift
    for f in "$@"; do
        dd if=/dev/zero of="$f" bs=1M count="$mib" conv=fsync status=none ||
            b_die "cannot write $f"
    done
}

# b_now_ns: monotonic enough for seconds-long runs.
b_now_ns () { date +%s%N; }

# b_runq_ns PID: nanoseconds the threads of process PID that serve
# clients (all but the jobs', named raid5-*) have spent ready to run but
# waiting for a processor (schedstat's run_delay), summed.  Two readings
# around a run tell how much of a client's latency was a CPU to wait for.
b_runq_ns ()
{
    local t sum=0 comm rd _
    for t in /proc/"$1"/task/*; do
        comm=$(cat "$t/comm" 2>/dev/null) || continue
        case $comm in raid5-*) continue ;; esac
        read -r _ rd _ < "$t/schedstat" 2>/dev/null || continue
        sum=$(( sum + rd ))
    done
    echo "$sum"
}

# b_cpu_ticks: "busy idle" jiffies of all processors (/proc/stat).
b_cpu_ticks () { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $5 + $6 }' /proc/stat; }

# b_settle: wait up to $settle seconds (the caller's; 0: no wait) until
# the processors were at least 90% idle over half a second, so that a
# timed sample does not share them with another job's burst.  Counts the
# waits that ran out in b_unsettled.
b_unsettled=0
b_settle ()
{
    local t a b
    for (( t = 0; t < ${settle:-0} * 2; t++ )); do
        a=$(b_cpu_ticks); sleep 0.5; b=$(b_cpu_ticks)
        [ "$(b_cpu_busy "$a" "$b")" -gt 10 ] || return 0
    done
    [ "${settle:-0}" = 0 ] || b_unsettled=$((b_unsettled + 1))
}

# b_cpu_busy BEFORE AFTER: percent of the processors busy between two
# b_cpu_ticks readings (each "busy idle", quoted).
b_cpu_busy ()
{
    awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " ");
        d = (y[1] - x[1]) + (y[2] - x[2]); printf "%.0f", d ? 100 * (y[1] - x[1]) / d : 0 }'
}

# b_raw_read [--direct] FILE...: read every file at once, each with its
# own dd (bs=1M; iflag=direct with --direct).  Prints MiB/s per file: the
# size of one file over the time until all are read (as raid5ctl reports
# a job).
b_raw_read ()
{
    local t0 t1 f mib pids=() flags=()
    [ "$1" != --direct ] || { flags=(iflag=direct); shift; }
    mib=$(( $(stat -c %s "$1") >> 20 ))
    t0=$(b_now_ns)
    for f in "$@"; do
        dd if="$f" of=/dev/null bs=1M "${flags[@]}" status=none & pids+=($!)
    done
    for f in "${pids[@]}"; do wait "$f" || b_die "dd could not read the members"; done
    t1=$(b_now_ns)
    awk -v m="$mib" -v ns=$((t1 - t0)) 'BEGIN { printf "%.1f\n", m / (ns / 1e9) }'
}

# b_job_speed LOG: the "(X UNIT/s per member)" of a raid5ctl job's last
# line, in MiB/s.
b_job_speed ()
{
    awk '{ if (match ($0, /\([0-9.]+ [KMGT]iB\/s per member\)/)) {
               split (substr ($0, RSTART + 1, RLENGTH - 2), w, " ")
               u = substr (w[2], 1, 1)
               f = u == "K" ? 1 / 1024 : u == "M" ? 1 : u == "G" ? 1024 : 1048576
               v = sprintf ("%.1f", w[1] * f); ok = 1 } }
         END { if (ok) print v; exit !ok }' "$1" ||
        b_die "no speed in raid5ctl's output: $(tail -n 1 "$1")"
}

# --- the served array's counters --------------------------------------------

# b_counters NAME: "key value" lines of the counters of raid5ctl status
# --json of the server NAME (control socket $work/NAME.ctl).
b_counters ()
{
    "$raid5ctl" --control "$work/$1.ctl" status --json 2> "$work/ctl.err" |
        tr -d ' \n' | sed 's/.*"counters":{\([^}]*\)}.*/\1/' | tr ',' '\n' |
        tr -d '"' | tr ':' ' ' | grep . ||
        b_die "raid5ctl status gave no counters: $(tail -n 1 "$work/ctl.err")"
}

# b_delta BEFORE AFTER KEY: AFTER's KEY minus BEFORE's (texts of b_counters).
b_delta ()
{
    awk -v k="$3" '$1 == k { v[FNR == NR] = $2 } END { print v[0] - v[1] }' \
        <(echo "$1") <(echo "$2")
}

# --- results ----------------------------------------------------------------

# b_median PART CASE SERVER WORKLOAD [UNIT]: the median of the matching
# samples of the CSV (empty if there are none).
b_median ()
{
    awk -F, -v p="$1" -v c="$2" -v s="$3" -v w="$4" -v u="${5:-}" '
        $1 == p && $2 == c && $3 == s && $4 == w && (u == "" || $7 == u) {
            v[++n] = $6 + 0 }
        END {
            if (!n) exit
            for (i = 2; i <= n; i++)           # insertion sort (mawk)
                for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
                    t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
            m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
            printf "%.1f\n", m
        }' "$csv"
}

# b_paired_stats PART CASE SERVER WORKLOAD BASE_CASE BASE_SERVER
# [BASE_WORKLOAD]: "MEDIAN MIN MAX" over samples of (this sample / the
# base's sample of the same number), two decimals each (empty without
# any).  Runs with the same number ran next to each other, so the
# machine's drift (other jobs come and go) cancels out of each ratio,
# which a ratio of two medians would not do.
b_paired_stats ()
{
    awk -F, -v p="$1" -v c="$2" -v s="$3" -v w="$4" -v bc="$5" -v bs="$6" \
        -v bw="${7:-$4}" '
        $1 == p && $2 == c && $3 == s && $4 == w { a[$5] = $6 + 0 }
        $1 == p && $2 == bc && $3 == bs && $4 == bw { b[$5] = $6 + 0 }
        END {
            for (k in a) if ((k in b) && b[k] > 0) r[++n] = a[k] / b[k]
            if (!n) exit
            for (i = 2; i <= n; i++)
                for (j = i; j > 1 && r[j - 1] > r[j]; j--) {
                    t = r[j]; r[j] = r[j - 1]; r[j - 1] = t }
            printf "%.2f %.2f %.2f\n", n % 2 ? r[(n + 1) / 2] : (r[n / 2] + r[n / 2 + 1]) / 2,
                   r[1], r[n]
        }' "$csv"
}

# b_paired_ratio (as b_paired_stats): the median alone.
b_paired_ratio () { b_paired_stats "$@" | awk '{ print $1 }'; }

# b_pair KEY (as b_paired_stats): ratio[KEY], the median, and
# spread[KEY], "MIN MAX", in the caller's arrays ratio and spread.
b_pair ()
{
    local key=$1 m lo hi; shift
    read -r m lo hi <<< "$(b_paired_stats "$@")" || true
    # shellcheck disable=SC2034,SC2004  # the caller's associative arrays
    ratio[$key]=${m:-}
    # shellcheck disable=SC2034,SC2004

    spread[$key]=${lo:+$lo $hi}
}

# b_range PART CASE SERVER WORKLOAD [UNIT]: "MIN MAX" of the matching
# samples (empty if there are none).
b_range ()
{
    awk -F, -v p="$1" -v c="$2" -v s="$3" -v w="$4" -v u="${5:-}" '
        $1 == p && $2 == c && $3 == s && $4 == w && (u == "" || $7 == u) {
            v = $6 + 0; if (!n++ || v < lo) lo = v; if (n == 1 || v > hi) hi = v }
        END { if (n) printf "%.1f %.1f\n", lo, hi }' "$csv"
}

# b_noisy MEDIAN MIN MAX: "noisy" when the rounds spread over more than
# a fifth of their median (nothing otherwise).
b_noisy ()
{
    awk -v m="$1" -v lo="$2" -v hi="$3" 'BEGIN {
        if (m + 0 > 0 && lo != "" && (hi - lo) > 0.2 * m) print "noisy" }'
}

# b_spread_note MEDIAN "MIN MAX": " (MIN-MAX)", with ", noisy" when it
# is: what a table puts beside a median (nothing without a spread).
b_spread_note ()
{
    local lo hi n
    read -r lo hi <<< "$2" || true
    [ -n "${lo:-}" ] || return 0
    n=$(b_noisy "$1" "$lo" "$hi")
    echo " ($lo-$hi${n:+, $n})"
}

# b_processor: "MODEL (N cores; widest SIMD)" of this machine (no comma:
# it goes into the CSV).
b_processor ()
{
    local simd=SSE2
    grep -qw avx2 /proc/cpuinfo && simd=AVX2
    grep -qw avx512f /proc/cpuinfo && simd=AVX-512
    grep -qw asimd /proc/cpuinfo && simd=NEON
    echo "$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo | tr -d ,) ($(nproc) cores; $simd)"
}

# b_ratio A B: A / B with two decimals (empty if either is missing or B is 0).
b_ratio ()
{
    awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b + 0 > 0) printf "%.2f\n", a / b }'
}

# b_pass VALUE OP GOAL: PASS or MISS (OP is >= or <=); "n/a" when VALUE is
# not a number (empty, or "n/a": the part did not run).
b_pass ()
{
    awk -v v="$1" -v op="$2" -v g="$3" 'BEGIN {
        if (v !~ /^-?[0-9]+(\.[0-9]+)?$/) { print "n/a"; exit }  # none measured
        ok = op == ">=" ? v + 0 >= g + 0 : v + 0 <= g + 0
        print ok ? "PASS" : "MISS" }'
}
