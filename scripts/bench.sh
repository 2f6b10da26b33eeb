#!/bin/bash
# scripts/bench.sh -- quick throughput comparison, side by side in one run:
# the raid5 plugin (3 members on tmpfs) against nbdkit's own file plugin
# serving one tmpfs file of the array's size (the transport ceiling), both
# driven by fio's nbd engine.  Prints a markdown table with ratios.
#
#   scripts/bench.sh [--runtime SECS] [--chunk SIZE] [--plugin PATH]
#
# Timings on shared machines are noisy: read the ratios, not the MiB/s,
# and run it more than once before believing a change.

set -eu -o pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
runtime=8 chunk=512K
plugin=$top/build/plugin/.libs/nbdkit-raid5-plugin.so
while [ $# -gt 0 ]; do
    case $1 in
        --runtime) runtime=$2; shift ;;
        --chunk) chunk=$2; shift ;;
        --plugin) plugin=$2; shift ;;
        -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
        *) echo "bench.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
for c in fio nbdkit; do
    command -v $c >/dev/null || { echo "bench.sh: $c is not installed" >&2; exit 1; }
done
[ -f "$plugin" ] || { echo "bench.sh: plugin not built: $plugin (run scripts/check.sh or make)" >&2; exit 1; }

work=$(mktemp -d /dev/shm/raid5-bench.XXXXXX)
pids=()
cleanup () { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

member=$((520 << 20))
for i in 0 1 2; do truncate -s $member "$work/m$i.img"; done
truncate -s $((1 << 30)) "$work/file.img"

serve () { # name args...
    local name=$1; shift
    nbdkit -f -U "$work/$name.sock" -P "$work/$name.pid" "$@" &
    pids+=($!)
    for _ in $(seq 100); do [ -s "$work/$name.pid" ] && return 0; sleep 0.1; done
    echo "bench.sh: nbdkit ($name) did not start" >&2; exit 1
}
serve file file "$work/file.img"
serve raid5 "$plugin" disk="$work/m0.img" disk="$work/m1.img" disk="$work/m2.img" chunk=$chunk metadata=none

# fio_mib NAME RW BS -> MiB/s (read + write)
fio_mib () {
    fio --name=b --ioengine=nbd --uri="nbd+unix:///?socket=$work/$1.sock" \
        --rw=$2 --bs=$3 --iodepth=32 --size=512M --runtime=$runtime --time_based \
        --output-format=terse 2>/dev/null |
        awk -F';' 'NF > 50 { printf "%.0f", ($7 + $48) / 1024 }'
}

echo "| workload | file plugin MiB/s | raid5 MiB/s | ratio |"
echo "|---|---|---|---|"
row () { # label rw bs [server]
    local f r
    f=$(fio_mib file "$2" "$3"); r=$(fio_mib "${4:-raid5}" "$2" "$3")
    awk -v l="$1" -v f="$f" -v r="$r" 'BEGIN { printf "| %s | %d | %d | %.2f |\n", l, f, r, f ? r / f : 0 }'
}
row "seq write 1M QD32" write 1M
row "seq read 1M QD32" read 1M
row "rand write 4K QD32" randwrite 4k
row "rand read 4K QD32" randread 4k
# The members are locked while served: stop the healthy array first.
kill "$(cat "$work/raid5.pid")"
while [ -e "$work/raid5.pid" ] && kill -0 "$(cat "$work/raid5.pid")" 2>/dev/null; do sleep 0.1; done
serve degraded "$plugin" disk="$work/m0.img" disk=missing disk="$work/m2.img" chunk=$chunk metadata=none
row "degraded seq read 1M QD32" read 1M degraded
