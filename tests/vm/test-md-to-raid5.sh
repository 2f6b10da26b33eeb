#!/bin/bash
# tests/vm/test-md-to-raid5.sh -- md -> here.  In the guest, kernel md creates a
# RAID-5 (mdadm --create --assume-clean --metadata=1.2) on partitions of the
# virtio disks for every geometry (4 layouts x chunk 16K/64K/512K x 3/4
# members, 5 members with 64K chunks, and parity-first/parity-last with 64K
# chunks on 3/4 members) and writes a random pattern (a host
# file read through 9p) to it.  On the host the same members are served with
# metadata=none, the same chunk and layout and data-offset = md's (mdadm
# --examine): the export must equal the pattern byte for byte, healthy and with
# each member missing (so parity sits where md puts it too).  MD_AUTO=1: also
# served with metadata=auto and no geometry parameters (md's v1.2 superblocks
# say it all).
. "${0%/*}/lib.sh"
. "${0%/*}/md-lib.sh"
need_plugin
need_cmds nbdinfo nbdcopy cmp
geometries
make_disks
head -c $((12 << 20)) /dev/urandom >"$W/pattern"
t0=$SECONDS
vm_run -e MODE=create -e PAT="$W/pattern" "$VM_TESTS/guest-md.sh" "$W"/disk{0,1,2,3,4}.img || true
say "guest: $((SECONDS - t0))s"; t0=$SECONDS

fails=0
while read -r -u 3 g n l c s p name; do
    GD=$W/g$g
    if [[ ! -s $W/md-$g.info ]]; then echo "not ok $name: no result from the guest"; fails=$((fails + 1)); continue; fi
    offset_sectors='' size='' layout='' chunk=''
    # shellcheck disable=SC1090
    . "$W/md-$g.info"
    if [[ -z $offset_sectors || -z $size || $layout != "$l" || $chunk != "$c" ]]; then
        echo "not ok $name: md says: $(tr '\n' ' ' <"$W/md-$g.info")"; fails=$((fails + 1)); continue
    fi
    extract $g $n $s $p
    if [[ $name == control-* ]]; then
        # Negative control: served as right-symmetric (parity elsewhere), the
        # comparison must fail, or it proves nothing.
        # shellcheck disable=SC2046
        if why=$(compare_export "served as right-symmetric" $n $c $size "$W/pattern" -- "$PLUGIN" \
                 $(disks $n) metadata=none chunk=$c layout=right-symmetric data-offset=$((offset_sectors * 512))); then
            echo "not ok $name: a wrong layout was not noticed"; fails=$((fails + 1))
        else
            echo "ok $name: a wrong layout is noticed ($why)"
        fi
        continue
    fi
    why=
    slots="- $(seq 0 $((n - 1)))"
    k=$(missing_of $name) && slots=$k    # md wrote it degraded: serve it so
    for miss in $slots; do
        what=healthy; [[ $miss == - ]] || what="member $miss missing"
        # shellcheck disable=SC2046
        why+=$(compare_export "$what" $n $c $size "$W/pattern" -- "$PLUGIN" $(disks $n $miss) \
               metadata=none chunk=$c layout=$l data-offset=$((offset_sectors * 512)))${why:+; } || true
    done
    if [[ -n ${MD_AUTO:-} ]]; then
        # metadata=auto: md's superblocks alone must give the same export
        # (a slot md left out has none: it is served as missing).
        # shellcheck disable=SC2046
        why+=$(compare_export "metadata=auto" $n $c $size "$W/pattern" -- "$PLUGIN" $(disks $n $k))${why:+; } || true
    fi
    if [[ -z $why ]]; then
        desc="healthy + each member missing"; [[ -n $k ]] && desc="md wrote it with member $k missing"
        echo "ok $name (md data offset $((offset_sectors / 2))K, $((size >> 10))K array; $desc)"
        rm -rf "$GD"
    else
        echo "not ok $name: $why"
        echo "#   reproduce: nbdkit -U - $PLUGIN $(disks $n) metadata=none chunk=$c layout=$l data-offset=$((offset_sectors * 512)) --run 'nbdcopy \"\$uri\" - | cmp - $W/pattern'"
        fails=$((fails + 1))
    fi
done 3<"$W/geoms"
say "host checks: $((SECONDS - t0))s; $fails of $(wc -l <"$W/geoms") geometries failed"
[[ $fails == 0 ]]
