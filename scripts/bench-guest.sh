# shellcheck shell=bash disable=SC2154  # work, csv, raid5ctl...: bench.sh's
# scripts/bench-guest.sh -- part 11 of scripts/bench.sh: a mailing-list post asked
# why md's check ran at a third of the disks' speed.  In a qemu guest
# (scripts/vm.sh, TCG), on the same three 384 MiB virtio disks (an array
# raid5ctl create made here, 64K chunk, no bitmap): kernel md's check
# (mdadm --assemble, sync_action=check, speed limits lifted) and raid5ctl
# check (buffered, and --direct), each against the three disks read at
# once with dd iflag=direct.  What runs there (the guest's CPU flags, the
# kernel's XOR routine, CPUs) is recorded, because TCG emulates every
# instruction: see report_guest.  Skipped (one line) where no guest
# boots.  Sourced by bench.sh after lib-bench.sh.

guest_mib=384
guest_n=0

part_guest ()
{
    local d=$work/guest line name secs
    b_say "11. the slow md check, in a guest: md's check and raid5ctl check against raw reads, 3 x $guest_mib MiB virtio disks"
    if ! "$top/scripts/vm.sh" info > "$work/vm-info.out" 2>&1 ||
       ! "$top/scripts/vm.sh" prepare > "$work/vm-prepare.out" 2>&1; then
        b_say "  skipped: no guest can be booted here ($(tail -n 1 "$work/vm-prepare.out" 2>/dev/null))"
        b_record meta guest guest skipped 1 1 -
        return 0
    fi
    mkdir -p "$d"
    b_zero_files "$guest_mib" "$d"/g{0,1,2}.img
    "$raid5ctl" create --assume-clean --chunk 64K --bitmap none "$d"/g{0,1,2}.img \
        > "$work/create-g.out" 2>&1 ||
        b_die "raid5ctl create (part 11): $(tail -n 1 "$work/create-g.out")"
    "$top/scripts/vm.sh" run -t 600 -w "$d" -e "RAID5CTL=$raid5ctl" \
        "$top/scripts/bench-guest-run.sh" "$d"/g{0,1,2}.img > "$work/guest.out" 2>&1 ||
        b_die "the guest run failed (part 11): $(tail -n 3 "$work/guest.out" | tr '\n' ' ')"
    while read -r line; do
        case $line in
            RESULT\ *)
                read -r _ name secs _ <<< "$line"
                b_record guest "$name" guest seconds "$(( ++guest_n ))" "$secs" s
                b_say "  $name: $secs s" ;;
            INFO\ *)
                line=${line#INFO }
                line=${line//,/;}
                b_record meta guest guest "guest_${line%% *}" 1 "${line#* }" -
                b_say "  ${line%% *}: ${line#* }" ;;
            ERROR\ *) b_die "in the guest (part 11): ${line#ERROR }" ;;
        esac
    done < "$work/guest.out"
    rm -rf "$d"
}

ratios_guest ()
{
    local raw
    raw=$(med guest raw guest seconds)
    ratio[guest-md]=$(b_ratio "$raw" "$(med guest md guest seconds)")
    ratio[guest-r5]=$(b_ratio "$raw" "$(med guest r5 guest seconds)")
    ratio[guest-r5direct]=$(b_ratio "$raw" "$(med guest r5direct guest seconds)")
}

plot_data_guest ()
{
    {
        echo "# check speed / raw parallel reads, in the guest"
        echo "\"md check\" ${ratio[guest-md]:--}"
        echo "\"raid5ctl check\" ${ratio[guest-r5]:--}"
        echo "\"raid5ctl check --direct\" ${ratio[guest-r5direct]:--}"
    } > "$work/guest.dat"
}

report_guest ()
{
    echo
    echo "## 11. Seed 003 in a guest: md's check, ours, and the disks"
    echo
    if [ "$(setting skipped)" = 1 ] || [ -z "$(med guest raw guest seconds)" ]; then
        echo "Not measured: no guest could be booted (scripts/vm.sh prepare)."
        return
    fi
    echo "In a qemu guest (TCG: every instruction emulated; $(setting guest_cpus) CPUs; CPU flags"
    echo "ISA-L could use: $(setting guest_flags); the guest kernel's $(setting guest_kernel-xor)),"
    echo "on three $guest_mib MiB virtio disks holding one array (64K chunk): the three"
    echo "read at once with \`dd iflag=direct\`, kernel md's check (speed limits"
    echo "lifted), raid5ctl check (buffered, then --direct).  Seconds (the raw read"
    echo "before and after), and each as a fraction of the raw read's speed."
    echo
    echo "| what | seconds | speed / raw |"
    echo "|---|---|---|"
    echo "| 3 x dd iflag=direct | $(med guest raw guest seconds) | 1.00 |"
    echo "| md check | $(med guest md guest seconds) | ${ratio[guest-md]} |"
    echo "| raid5ctl check | $(med guest r5 guest seconds) | ${ratio[guest-r5]} |"
    echo "| raid5ctl check --direct | $(med guest r5direct guest seconds) | ${ratio[guest-r5direct]} |"
    echo
    echo "What TCG distorts: reads cost little (qemu hands the guest the host's"
    echo "page cache), XOR costs a lot (each SIMD instruction is emulated, and"
    echo "the guest CPU offers only the flags above, so ISA-L and the kernel take"
    echo "their SSE or plain routines), so both checks are bound by emulated"
    echo "XOR, which real hardware does at tens of GB/s a core.  What carries"
    echo "over: how many passes over the data each makes and how many threads"
    echo "share it (md: one thread per array, raid5ctl: one per CPU), not the"
    echo "ratio to the disks; the 0.08-0.16 x reported on real disks is md's own."
}
