# scripts/bench-guest-run.sh -- run inside the guest by bench-guest.sh
# (scripts/vm.sh run): the slow-check question, kernel md's check against
# raid5ctl check on the same three virtio disks (/dev/vda, vdb, vdc: an
# array raid5ctl create made on the host), each against the three disks
# read at once with dd iflag=direct.  Prints "RESULT NAME SECONDS" lines
# and "INFO" lines about what runs here (CPU flags ISA-L can use, the
# kernel's XOR routine, CPUs).
set -u
disks=(/dev/vda /dev/vdb /dev/vdc)
now () { date +%s.%N; }
secs () { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

echo "INFO cpus $(nproc)"
flags=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' |
        grep -E '^(ssse3|sse4_1|sse4_2|avx|avx2|avx512f|avx512bw)$' | tr '\n' ' ')
echo "INFO flags ${flags:-none of ssse3 sse4 avx avx2 avx512 (SSE2 at most)}"
echo "INFO kernel-xor $(dmesg | grep -m1 -o 'xor: using function: .*' || echo '?')"
echo "INFO raid6 $(dmesg | grep -m1 -o 'raid6: using .*' || echo '?')"

raw () {
    local t0 t1 d pids=()
    t0=$(now)
    for d in "${disks[@]}"; do dd if="$d" of=/dev/null bs=1M iflag=direct status=none & pids+=($!); done
    wait "${pids[@]}"
    t1=$(now)
    echo "RESULT raw $(secs "$t0" "$t1")"
}

md_check () {
    local t0 t1 i
    mdadm --assemble /dev/md0 "${disks[@]}" >/dev/null 2>&1 || { echo "ERROR mdadm --assemble"; return 1; }
    echo 2000000 > /proc/sys/dev/raid/speed_limit_max
    echo 2000000 > /proc/sys/dev/raid/speed_limit_min
    t0=$(now)
    echo check > /sys/block/md0/md/sync_action
    for (( i = 0; i < 6000; i++ )); do
        [ "$(cat /sys/block/md0/md/sync_action)" = idle ] && break
        sleep 0.02
    done
    t1=$(now)
    echo "RESULT md $(secs "$t0" "$t1") mismatch_cnt $(cat /sys/block/md0/md/mismatch_cnt)"
    mdadm --stop /dev/md0 >/dev/null 2>&1
}

r5_check () {
    local t0 t1
    t0=$(now)
    "$RAID5CTL" check --buffered "${disks[@]}" > "$VM_WORK/r5check.log" 2>&1 || { echo "ERROR raid5ctl check: $(tail -n 1 "$VM_WORK/r5check.log")"; return 1; }
    t1=$(now)
    echo "RESULT r5 $(secs "$t0" "$t1") $(grep -o 'mismatch_cnt [0-9]*' "$VM_WORK/r5check.log")"
    "$RAID5CTL" check --direct "${disks[@]}" > "$VM_WORK/r5check.log" 2>&1 || { echo "ERROR raid5ctl check --direct"; return 1; }
    echo "RESULT r5direct $(secs "$t1" "$(now)")"
}

raw
md_check
r5_check
raw
