# shellcheck shell=bash disable=SC2154  # work, csv, plugin, runtime...: bench.sh's
# scripts/bench-net.sh -- part 6 of scripts/bench.sh: members on other
# machines.  The same three member files (tmpfs) reached four ways by the
# raid5 plugin: as local files, and as exports of nbdkit's file plugin
# over TCP on 127.0.0.1 (the array's default member-connections each: the
# file plugin offers multi-conn), plain and with 2 ms and 10 ms added to
# every read, write and zero by nbdkit's delay filter on the member
# servers.  Each is measured with the four workloads of part 1, the cases
# alternating.
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

# Five runs (one in quick mode) of 2 s: 80 runs.
net_reps=$reps
net_rt=$(( runtime > 2 ? 2 : runtime ))

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

# The target rows of part 6 (DESIGN.md: members over TCP >= 0.8x of local
# for sequential I/O, >= 0.6x for 4K at QD32).
targets_net ()
{
    local w goal
    for w in "${wl_names[@]}"; do
        goal=0.80
        [ "${wl_bs[$w]}" = 4k ] && goal=0.60
        t_row "${wl_label[$w]} QD32, members over TCP / local files" ">=" "$goal" "${ratio[net-tcp-$w]}" "net-tcp-$w"
    done
}

report_net ()
{
    local w line c
    echo "## 6. Members on other machines: NBD over TCP on loopback (3 x $(setting main_mib) MiB, 512K chunk)"
    echo
    echo "The same three member files reached as local files, and as exports of"
    echo "nbdkit's file plugin on 127.0.0.1 (\`disk=nbd://127.0.0.1:PORT/\`, the"
    echo "default member-connections per member through multi-conn, every"
    echo "request's commands sharing them), plain and with 2 ms and 10 ms added"
    echo "to each member read, write and zero (nbdkit's delay filter on the"
    echo "member servers).  Medians of $(setting net_reps) runs, the cases alternating;"
    echo "a ratio is the median of the ratios of runs made next to each other,"
    echo "the lowest and highest of them beside it."
    echo "Loopback TCP costs copies and wakeups, not distance: the +2 ms and"
    echo "+10 ms columns show what a far member does to each workload."
    echo "Here the three member servers run on the same CPUs as fio and the"
    echo "array, and each member command wakes a thread in two processes: on"
    echo "a small machine the TCP column is bounded by CPU, not by the network"
    echo "(the member servers alone spend more CPU per 4K request than the"
    echo "whole array over local files).  Far members are bounded by commands"
    echo "in flight: each 4K read waits one round trip, each 4K write two"
    echo "(read, then write), with at most nbdkit's 16 request threads of the"
    echo "array's one client connection at once."
    echo
    echo "| workload | local MiB/s | TCP MiB/s | ratio (min-max) | +2 ms MiB/s | ratio (min-max) | +10 ms MiB/s | ratio (min-max) |"
    echo "|---|---|---|---|---|---|---|---|"
    for w in "${wl_names[@]}"; do
        line="| ${wl_label[$w]} QD32 | $(med net local net-local "$w")"
        for c in tcp tcp2ms tcp10ms; do
            line="$line | $(med net "$c" "net-$c" "$w") | ${ratio[net-$c-$w]} (${spread[net-$c-$w]/ /-})"
        done
        echo "$line |"
    done
    echo
}
