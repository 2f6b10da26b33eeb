# shellcheck shell=bash disable=SC2154  # work, csv, plugin, runtime...: bench.sh's
# scripts/bench-net.sh -- part 6 of scripts/bench.sh: members on other
# machines.  The same three member files (tmpfs) reached four ways by the
# raid5 plugin: as local files, and as exports of nbdkit's file plugin
# over TCP on 127.0.0.1 (eight connections each: the file plugin offers
# multi-conn), plain and with 2 ms and 10 ms added to every read, write
# and zero by nbdkit's delay filter on the member servers.  Each is
# measured with the four workloads of part 1, the cases alternating.
# Sourced by bench.sh after lib-bench.sh.

net_cases=(local tcp tcp2ms tcp10ms)
declare -A net_label=([local]="local files" [tcp]="TCP" [tcp2ms]="TCP +2 ms"
                      [tcp10ms]="TCP +10 ms")
declare -A net_delay=([tcp]="" [tcp2ms]=2ms [tcp10ms]=10ms)

# net_free_port: a TCP port on 127.0.0.1 nothing listens on just now.
net_free_port ()
{
    /usr/bin/python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' ||
        b_die "cannot find a free TCP port on 127.0.0.1"
}

# net_serve_tcp NAME PORT ARGS...: nbdkit on 127.0.0.1:PORT (else as
# b_serve: ready when its pid file is written).
net_serve_tcp ()
{
    local name=$1 port=$2; shift 2
    rm -f "$work/$name.pid"
    nbdkit -f -i 127.0.0.1 -p "$port" -P "$work/$name.pid" "$@" \
        2>> "$work/$name.log" &
    b_pid[$name]=$!
    b_ready "$name"
}

# net_members CASE: the member servers of CASE (not local), one per file;
# sets net_disks to the disk= parameters of the array over them.  (Not
# printed: in a command substitution the servers' pids would be lost.)
net_members ()
{
    local c=$1 i port filter=() delay=()
    net_disks=()
    [ -z "${net_delay[$c]}" ] || {
        filter=(--filter=delay)
        delay=("delay-read=${net_delay[$c]}" "delay-write=${net_delay[$c]}"
               "delay-zero=${net_delay[$c]}")
    }
    for i in 0 1 2; do
        port=$(net_free_port)
        net_serve_tcp "$c-m$i" "$port" "${filter[@]}" file "$work/n$i.img" \
            "${delay[@]}"
        net_disks+=("disk=nbd://127.0.0.1:$port/")
    done
}

# Three runs (one in quick mode), not five: the whole of bench.sh stays
# under 15 minutes with part 9.
net_reps=$(( reps < 3 ? reps : 3 ))
net_rt=$(( runtime > 2 ? 2 : runtime ))     # 2 s a run: 48 runs

part_net ()
{
    local c r w order
    b_say "6. members over TCP on loopback (3 x $main_mib MiB, 512K chunk): local files, TCP, TCP +2 ms, TCP +10 ms, ${net_rt} s per run, $net_reps runs each"
    for r in 0 1 2; do truncate -s "${main_mib}M" "$work/n$r.img"; done
    for c in "${net_cases[@]}"; do
        if [ "$c" = local ]; then
            net_disks=("disk=$work/n0.img" "disk=$work/n1.img" "disk=$work/n2.img")
        else
            net_members "$c"
        fi
        b_serve "net-$c" "$plugin" "${net_disks[@]}" chunk=512K metadata=none
    done
    b_say "  fill (local files)"
    b_fill net-local
    b_rounds "$net_reps" wl_names net_cases net_run
    for c in "${net_cases[@]}"; do
        b_alive "net-$c"
        b_stop "net-$c"
        [ "$c" = local ] || for r in 0 1 2; do b_stop "$c-m$r"; done
    done
    rm -f "$work"/n?.img
}

# net_run CASE WORKLOAD ROUND: one run (b_rounds).
net_run () { run_wl net "$1" "net-$1" "$2" "$3" "$net_rt"; }

ratios_net ()
{
    local c w
    for c in tcp tcp2ms tcp10ms; do
        for w in "${wl_names[@]}"; do
            b_pair "net-$c-$w" net "$c" "net-$c" "$w" local net-local
        done
    done
}

# The target rows of part 6 (DESIGN.md: members over TCP >= 0.8x of local).
targets_net ()
{
    local w
    for w in "${wl_names[@]}"; do
        t_row "${wl_label[$w]} QD32, members over TCP / local files" ">=" 0.80 "${ratio[net-tcp-$w]}" "net-tcp-$w"
    done
}

report_net ()
{
    local w line c
    echo "## 6. Members on other machines: NBD over TCP on loopback (3 x $(setting main_mib) MiB, 512K chunk)"
    echo
    echo "The same three member files reached as local files, and as exports of"
    echo "nbdkit's file plugin on 127.0.0.1 (\`disk=nbd://127.0.0.1:PORT/\`, eight"
    echo "connections per member through multi-conn), plain and with 2 ms and"
    echo "10 ms added to each member read, write and zero (nbdkit's delay filter"
    echo "on the member servers).  Medians of $(setting net_reps) runs, the cases alternating;"
    echo "a ratio is the median of the ratios of runs made next to each other."
    echo "Loopback TCP costs copies and wakeups, not distance: the +2 ms and"
    echo "+10 ms columns show what a far member does to each workload."
    echo "Here the three member servers run on the same CPUs as fio and the"
    echo "array, and each member command wakes a thread in two"
    echo "processes: on a small machine the TCP column is bounded by CPU, not by"
    echo "the network (measured on 2 cores: 4K random reads spent about 80 us"
    echo "of CPU per request over TCP, 10 local, most of it switching threads)."
    echo "With members on their own hosts that share is theirs.  Far members"
    echo "are bounded by commands in flight: each 4K read waits one round trip,"
    echo "each 4K write two (read old data and parity, then write), with at most"
    echo "nbdkit's 16 request threads of the array at once."
    echo
    echo "| workload | local MiB/s | TCP MiB/s | ratio | +2 ms MiB/s | ratio | +10 ms MiB/s | ratio |"
    echo "|---|---|---|---|---|---|---|---|"
    for w in "${wl_names[@]}"; do
        line="| ${wl_label[$w]} QD32 | $(med net local net-local "$w")"
        for c in tcp tcp2ms tcp10ms; do
            line="$line | $(med net "$c" "net-$c" "$w") | ${ratio[net-$c-$w]}"
        done
        echo "$line |"
    done
    echo
}
