#!/bin/bash
# tests/vm/test-raid5-to-md.sh -- here -> md.  On the host, for every geometry
# (4 layouts x chunk 16K/64K/512K x 3/4 members), raw members are served with
# metadata=none data-offset=1M; a random pattern is written through the plugin
# twice (first another pattern in large requests, then the real one in 4 KiB
# requests over 4 connections, so partial-stripe writes must update parity);
# the members go into partitions of the virtio disks.  In the guest, mdadm
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

fails=0
while read -r -u 3 g n l c s p name; do
    GD=$W/g$g; mkdir -p "$GD"
    for i in $(seq 0 $((n - 1))); do truncate -s $((p * 512)) "$GD/m$i"; done
    # shellcheck disable=SC2046
    set -- "$PLUGIN" $(disks $n) metadata=none chunk=$c layout=$l data-offset=1M
    if ! size=$(nbdkit -U - "$@" --run 'nbdinfo --size "$uri"' 2>&1); then
        echo "not ok $name: nbdkit: $size"; fails=$((fails + 1)); continue
    fi
    echo "$size" >"$W/exp-$g.size"
    # shellcheck disable=SC2016
    if ! out=$(nbdkit -U - "$@" --run '
            head -c '"$size"' "$W/other" | nbdcopy - "$uri" &&
            head -c '"$size"' "$W/pattern" | nbdcopy --request-size=4096 -C 4 - "$uri" &&
            nbdcopy "$uri" - | cmp -n '"$size"' - "$W/pattern"' 2>&1); then
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
vm_run -e MODE=check -e PAT="$W/pattern" "$VM_TESTS/guest-md.sh" "$W"/disk{0,1,2,3}.img || fails=$((fails + 1))
say "guest: $((SECONDS - t0))s"
[[ $fails == 0 ]] || echo "#   reproduce (kept disks): $VM_SH run -w $W -e MODE=check -e PAT=$W/pattern $VM_TESTS/guest-md.sh $W/disk{0,1,2,3}.img"
[[ $fails == 0 ]]
