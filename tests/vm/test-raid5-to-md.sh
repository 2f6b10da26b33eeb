#!/bin/bash
# tests/vm/test-raid5-to-md.sh -- here -> md.  On the host, for every geometry
# (4 layouts x chunk 16K/64K/512K x 3/4 members, 5 members with 64K
# chunks, and parity-first/parity-last with 64K chunks on 3/4 members), raw
# members are served with
# metadata=none data-offset=1M.  A random pattern is written through the
# plugin over another one (that one in 4 KiB requests on 4 connections, the
# pattern in random pieces of odd sizes at odd offsets, 64 in flight:
# write-pieces.py), so partial-stripe writes must keep parity right.  The
# members go into partitions of the virtio disks.  In the guest, mdadm
# --create --assume-clean with the same geometry and data offset (it only writes
# superblocks), then a parity check: mismatch_cnt must be 0 and /dev/mdN must
# equal the pattern.
. "${0%/*}/lib.sh"
. "${0%/*}/md-lib.sh"
need_plugin
need_cmds nbdinfo nbdcopy cmp
t0=$SECONDS
geometries
make_disks
head -c $((12 << 20)) /dev/urandom >"$W/pattern"
head -c $((12 << 20)) /dev/urandom >"$W/other"
export W
# Two passes, so that parity must follow partial-stripe writes over old data.
if /usr/bin/python3 -c 'import nbd' 2>/dev/null; then
    # 4K requests on 4 connections, then the pattern in random pieces (odd
    # sizes and offsets, 64 in flight on one connection).
    # shellcheck disable=SC2016
    WRITES='nbdcopy --request-size=4096 -C 4 "$W/other.$size" "$uri" &&
            /usr/bin/python3 "$VM_TESTS/write-pieces.py" "$uri" "$W/pattern" $size $chunk $g >/dev/null'
else
    say "no python3-libnbd: the pattern goes in 4K requests only (no odd sizes)"
    # shellcheck disable=SC2016
    WRITES='nbdcopy "$W/other.$size" "$uri" && nbdcopy --request-size=4096 -C 4 "$W/pattern.$size" "$uri"'
fi

fails=0
while read -r -u 3 g n l c s p name; do
    GD=$W/g$g; mkdir -p "$GD"
    for i in $(seq 0 $((n - 1))); do truncate -s $((p * 512)) "$GD/m$i"; done
    # shellcheck disable=SC2046
    set -- "$PLUGIN" $(disks $n $(missing_of $name)) metadata=none chunk=$c layout=$l data-offset=1M
    if ! size=$(nbdkit -U - "$@" --run 'nbdinfo --size "$uri"' 2>&1); then
        echo "not ok $name: nbdkit: $size"; fails=$((fails + 1)); continue
    fi
    echo "$size" >"$W/exp-$g.size"
    # nbdcopy wants a source no larger than the export (and a file, not a pipe, for -C 4).
    for f in other pattern; do [[ -f $W/$f.$size ]] || head -c "$size" "$W/$f" >"$W/$f.$size"; done
    export size g chunk=$(( ${c%K} * 1024 )) VM_TESTS
    # shellcheck disable=SC2016
    if ! out=$(nbdkit -U - "$@" --run "$WRITES"' && nbdcopy "$uri" - | cmp -n '"$size"' - "$W/pattern"' 2>&1); then
        echo "not ok $name: writing or reading back through the plugin: $(echo "$out" | tail -n 2 | tr '\n' ' ')"
        fails=$((fails + 1)); continue
    fi
    if [[ $name == control-* ]]; then
        # Negative control: one byte of stripe 0's parity (member 2 for
        # left-symmetric on 3) flipped; md's check must count one 4K row: 8.
        b=$(od -An -tu1 -j $((1048576 + 5)) -N1 "$GD/m2")
        put "$GD/m2" $((1048576 + 5)) "$(printf '\\x%02x' $((b ^ 255)))"
    fi
    implant $g $n $s
    rm -rf "$GD"
done 3<"$W/geoms"
say "host writes: $((SECONDS - t0))s"; t0=$SECONDS
vm_run -e MODE=check -e PAT="$W/pattern" "$VM_TESTS/guest-md.sh" "$W"/disk{0,1,2,3,4}.img || fails=$((fails + 1))
say "guest: $((SECONDS - t0))s"
[[ $fails == 0 ]] || echo "#   reproduce (kept disks): $VM_SH run -w $W -e MODE=check -e PAT=$W/pattern $VM_TESTS/guest-md.sh $W/disk{0,1,2,3,4}.img"
[[ $fails == 0 ]]
