#!/bin/bash
# scripts/demo.sh -- from a fresh Debian 12 machine (as root) to ext4 on a
# userspace RAID-5: install what is missing, build, make three member
# images, serve them as one RAID-5 with the raid5 plugin, attach the export
# as a kernel block device, mkfs + mount + write, lose a member and read
# everything back, clean up, and say how to serve the array again.
#
#   scripts/demo.sh [--no-install]     work folder: $DEMO_DIR or ./demo-work
#
# The members get Linux md superblocks (raid5ctl create), so the array
# serves with no geometry parameters and kernel md could assemble it too.

set -eu -o pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
no_install=0
case ${1:-} in
    --no-install) no_install=1 ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    '') ;;
    *) echo "demo.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
esac

. "$top/scripts/lib-build.sh"
. "$top/scripts/lib-attach.sh"

N=3
SIZE=256M
CHUNK_KIB=64
work=$(mkdir -p "${DEMO_DIR:-$PWD/demo-work}" && cd "${DEMO_DIR:-$PWD/demo-work}" && pwd)
sock=$work/raid5.sock
plugin=$top/build/plugin/.libs/nbdkit-raid5-plugin.so
n_step=0

step () { n_step=$((n_step + 1)); echo; echo "==> $n_step. $*"; }
say () { echo "    $*"; }
run () { echo "    \$ $*"; "$@"; }

step "Install what is missing (apt-get, only for packages dpkg does not list)"
say "Build: nbdkit + its plugin headers, liburing (io_uring), ISA-L (parity),"
say "libnbd; to use the array: e2fsprogs, fuse3, util-linux (losetup), nbd-client."
r5_install_packages $no_install "${R5_BUILD_PACKAGES[@]}" \
    e2fsprogs fuse3 util-linux nbd-client kmod ||
    say "(continuing; the build will say what it lacks)"

step "Build out of tree in build/"
r5_autoreconf "$top"
r5_configure "$top" "$top/build" "${R5_MAIN_CONFIGURE_ARGS[@]}"
r5_make "$top/build" --no-print-directory
say "The plugin: ${plugin#"$top"/}"

step "Make $N member images of $SIZE in $work"
say "Sparse files stand in for disks; any block device works the same way."
echo '*' > "$work/.gitignore"     # keep the demo out of git status
disks=()
for (( i = 0; i < N; i++ )); do
    rm -f "$work/disk$i.img"
    run truncate -s $SIZE "$work/disk$i.img"
    disks+=("disk=$work/disk$i.img")
done

step "Write Linux md superblocks on them (raid5ctl create)"
say "Each member gets an md v1.2 superblock at 4 KiB saying the array's UUID,"
say "geometry and this member's slot, exactly as mdadm --create writes it, so"
say "kernel md could assemble these members too.  The images are all zeroes,"
say "and the XOR of zeroes is zero: parity is already right (--assume-clean)."
run "$top/build/tools/raid5ctl" create --chunk ${CHUNK_KIB}K --assume-clean \
    "$work"/disk?.img | sed 's/^/    /'
run "$top/build/tools/raid5ctl" examine "$work/disk1.img" | grep -E 'Raid Devices|Layout|Chunk Size|Data Offset|Device Role|Array State' | sed 's/^/    /'

attach_trap
# On failure, show what the server said.
ATTACH_ON_FAILURE='echo "--- nbdkit log:" >&2; cat "$work/nbdkit.log" >&2'
ctl=$work/control.sock
args=("$plugin" "${disks[@]}" control=$ctl)

step "Serve the three images as one RAID-5 over NBD (a unix socket)"
say "control=$ctl lets raid5ctl watch and steer the running array."
say "The superblocks say everything (chunk ${CHUNK_KIB}K, md's left-symmetric"
say "layout, each member's slot): no geometry parameters, any disk= order.  Each"
say "stripe holds $((N - 1)) data chunks and 1 parity chunk, and the parity chunk"
say "moves one member to the left on every stripe."
echo "    \$ nbdkit -U $sock -f ${args[*]} &"
attach_serve "$sock" "$work/nbdkit.pid" "$work/nbdkit.log" "${args[@]}"
echo "    \$ nbdinfo --size 'nbd+unix:///?socket=$sock'"
say "$(nbdinfo --size "nbd+unix:///?socket=$sock") bytes = (member size / chunk) stripes x chunk x $((N - 1)) data members"

if [ "$(id -u)" != 0 ]; then
    say
    say "Mounting needs root (mount, losetup or nbd-client).  Run this as root"
    say "to go on: sudo scripts/demo.sh"
    exit 1
fi
why=$(attach_why_not) || { say "Cannot attach a block device here: $why"; exit 1; }

step "Attach the export as a kernel block device"
if [ "$(attach_pick_method)" = nbd ]; then
    say "This kernel has the nbd driver: nbd-client hands the socket to it."
    say "\$ nbd-client -unix $sock /dev/nbdN -b 4096"
else
    say "No nbd driver in this kernel: nbdfuse shows the export as a file,"
    say "and a loop device turns that file into a block device."
    say "\$ nbdfuse $work/fuse --unix $sock &"
    say "\$ losetup -f --show $work/fuse/nbd"
fi
attach_dev "$sock" "$work"
dev=$ATTACH_DEV
say "-> $dev"

stride=$((CHUNK_KIB / 4))
step "Make ext4 that knows the geometry"
say "stride = chunk / block = ${CHUNK_KIB}K / 4K = $stride blocks;"
say "stripe_width = stride x data members = $stride x $((N - 1)) = $((stride * (N - 1)))."
say "ext4 then aligns large allocations to whole stripes and spreads its"
say "bitmaps over the members, so big writes can be full-stripe writes"
say "(parity computed from the new data alone, nothing read back)."
run mkfs.ext4 -q -F -E stride=$stride,stripe_width=$((stride * (N - 1))) "$dev"

step "Mount it and write files"
mnt=$work/mnt
run mkdir -p "$mnt"
echo "    \$ mount $dev $mnt"
attach_mount "$dev" "$mnt"
run cp -r /usr/share/common-licenses "$mnt/licenses"
run dd if=/dev/urandom of="$mnt/random.bin" bs=1M count=40 status=none
echo "hello from a userspace RAID-5" > "$mnt/hello.txt"
run ls -l "$mnt"
run df -h "$mnt"
(cd "$mnt" && find . -type f -print0 | sort -z | xargs -0 sha256sum) > "$work/sums"
say "Recorded the sha256 of every file ($(wc -l < "$work/sums") files)."

r5ctl="$top/build/tools/raid5ctl"
step "Watch it and look after it: status, a check, a member failing, a rebuild"
say "md-style status through the control socket ([UUU]: all members in service):"
run "$r5ctl" --control "$ctl" status
say "A check reads every stripe and compares parity with the XOR of the data"
say "(md's check; it counts mismatches in sectors and says where they are):"
run "$r5ctl" --control "$ctl" check --wait
say "Now member 1 dies (here: taken out by hand, as mdadm --fail does)."
run "$r5ctl" --control "$ctl" fail 1
run "$r5ctl" --control "$ctl" status
say "Files still read: member 1's chunks are rebuilt from the others on the fly."
run cat "$mnt/hello.txt"
say "A new blank disk takes slot 1 and is rebuilt while the array is in use:"
run truncate -s $SIZE "$work/disk1-new.img"
run "$r5ctl" --control "$ctl" rebuild 1 "$work/disk1-new.img" --wait
run "$r5ctl" --control "$ctl" status
rm -f "$work/disk1.img"        # the failed member; slot 1 is disk1-new.img now
mv "$work/disk1-new.img" "$work/disk1.img"   # the server keeps its open file
if (cd "$mnt" && sha256sum --quiet -c "$work/sums"); then
    say "all $(wc -l < "$work/sums") files still match"
else
    say "MISMATCH after the rebuild"; exit 1
fi

step "Unmount, detach, stop the server"
echo "    \$ umount $mnt"
attach_umount "$mnt"
if [ "$ATTACH_METHOD" = nbd ]; then
    echo "    \$ nbd-client -d $dev"
else
    echo "    \$ losetup -d $dev; fusermount3 -u $work/fuse"
fi
attach_detach "$dev"
echo "    \$ kill \$(cat $work/nbdkit.pid)      # nbdkit syncs the members and exits"
attach_stop_nbdkit "$ATTACH_NBDKIT_PID"
run ls -ls "$work"/disk?.img
say "(first column: space the sparse images really use; each member holds"
say "its share of the data plus parity)"

step "Lose a member: serve with disk1 missing and read everything back"
say "Any lost chunk is the XOR of the other chunks of its stripe."
degraded=("$plugin" "disk=$work/disk0.img" disk=missing "disk=$work/disk2.img")
echo "    \$ nbdkit -U $sock -f ${degraded[*]} &"
attach_serve "$sock" "$work/nbdkit.pid" "$work/nbdkit.log" "${degraded[@]}"
attach_dev "$sock" "$work"
dev=$ATTACH_DEV
attach_mount "$dev" "$mnt" ro
run cat "$mnt/hello.txt"
echo "    \$ sha256sum -c (every file)"
if (cd "$mnt" && sha256sum --quiet -c "$work/sums"); then
    say "all $(wc -l < "$work/sums") files match"
else
    say "MISMATCH: the degraded array returned wrong data"; exit 1
fi
attach_umount "$mnt"
attach_detach "$dev"
attach_stop_nbdkit "$ATTACH_NBDKIT_PID"
trap - EXIT INT TERM
attach_cleanup
rm -f "$work/sums" "$work/nbdkit.log"
rmdir "$mnt" "$work/fuse" 2>/dev/null || true

step "Done.  To serve the array again"
say "(nothing was written while disk1 was missing, so all three are in sync)"
echo
echo "    nbdkit -U $sock -P $work/nbdkit.pid \\"
echo "        $plugin \\"
echo "        disk=$work/disk0.img disk=$work/disk1.img disk=$work/disk2.img"
echo
say "(after 'make -C build install', 'nbdkit raid5 ...' finds the plugin by name)"
say "Then, as root, with the kernel's nbd driver:"
echo
echo "    modprobe nbd"
echo "    nbd-client -unix $sock /dev/nbd0 -b 4096"
echo "    mount /dev/nbd0 /mnt"
echo "    ...   umount /mnt; nbd-client -d /dev/nbd0"
echo
say "Without the nbd driver (containers, this demo's fallback):"
echo
echo "    mkdir -p /tmp/r5fuse; nbdfuse /tmp/r5fuse --unix $sock &"
echo "    dev=\$(losetup -f --show /tmp/r5fuse/nbd); mount \$dev /mnt"
echo "    ...   umount /mnt; losetup -d \$dev; fusermount3 -u /tmp/r5fuse"
echo
say "Stop the server: kill \$(cat $work/nbdkit.pid)"
