#!/bin/bash
# tests/vm/test-md-metadata.sh -- md v1.2 superblocks between the plugin
# (metadata=auto) and kernel md, both directions, with ext4 and files.
#   A  here -> md: raid5ctl create (64K chunk, internal bitmap) on the host;
#      served with no geometry parameters, ext4 + a file tree through the
#      host kernel (nbdfuse + loop, scripts/lib-attach.sh); clean stop.  In
#      the guest: mdadm --assemble (all members, no resync), check:
#      mismatch_cnt 0, e2fsck -fn clean, every file intact.
#   B  md -> here -> md: plain mdadm --create --level=5 --raid-devices=3
#      in the guest (512K chunk, left-symmetric, md's data offset), B1
#      without and B2 with --bitmap=internal; ext4 + the tree; stopped.  On
#      the host, served with NO geometry parameters (disk= in reverse
#      order): e2fsck -fn, the tree intact, the tree written again, clean
#      stop (superblocks clean, events advanced).  In the guest again:
#      mdadm --assemble cleanly, check: mismatch_cnt 0, e2fsck -fn, both
#      trees intact.
# Two guest boots.  A is skipped (one line) until raid5ctl is built.
. "${0%/*}/lib.sh"
need_plugin
need_cmds mdadm mkfs.ext4 e2fsck md5sum
[[ $(id -u) == 0 ]] || skip "needs root (losetup, mount)"
. "$TOP/scripts/lib-attach.sh"
why=$(ATTACH_METHOD=fuse attach_why_not) || skip "$why"
export ATTACH_METHOD=fuse        # the host kernel, whatever nbd driver it has
find_raid5ctl

# Undo attachments first, then lib.sh's cleanup (keeps $W on failure).
trap 'rc=$?; attach_cleanup; (exit $rc); _vm_cleanup' EXIT
make_tree "$W/tree"
for d in a0 a1 a2 b0 b1 b2 c0 c1 c2; do truncate -s 32M "$W/$d.img"; done
MNT=$W/mnt
fails=0
bad () { echo "not ok $*"; fails=$((fails + 1)); }

# field IMG NAME: one "NAME : value" of mdadm --examine.
field () { mdadm --examine "$1" 2>/dev/null | sed -n "s/^ *$2 : \(.*\)\$/\1/p" | head -n1; }

# clean_sbs WHAT IMG...: every superblock clean, checksum correct, AAA.
clean_sbs () {
    local what=$1 f; shift
    for f in "$@"; do
        [[ $(field "$f" State) == clean && $(field "$f" Checksum) == *'- correct' &&
           $(field "$f" 'Array State') == 'AAA '* ]] ||
            { bad "$what: ${f##*/}: State '$(field "$f" State)', Checksum '$(field "$f" Checksum)', Array State '$(field "$f" 'Array State')'"; return 1; }
    done
}

# serve NAME DISK...: the plugin with no geometry parameters, attached.
serve () {
    local name=$1; shift
    attach_serve "$W/$name.sock" "$W/$name.pid" "$W/nbdkit-$name.log" "$PLUGIN" \
        "${@/#/disk=}" || return 1
    attach_dev "$W/$name.sock" "$W" || return 1
    DEV=$ATTACH_DEV
}

# unserve NAME: detach, stop nbdkit (status 0, no error lines).
unserve () {
    local rc=0
    attach_umount "$MNT" && attach_detach "$DEV" && attach_stop_nbdkit "$ATTACH_NBDKIT_PID" || rc=$?
    if [[ $rc != 0 ]] || grep -q 'error' "$W/nbdkit-$1.log"; then
        bad "$1: nbdkit stopped with status $rc: $(grep error "$W/nbdkit-$1.log" | head -n 3)"; return 1
    fi
}

t0=$SECONDS
# ---- A: raid5ctl create -> ext4 through the plugin ----
if [[ ! -x $RAID5CTL ]]; then
    say "A skipped: raid5ctl is not built ($RAID5CTL)"
elif ! out=$("$RAID5CTL" create --chunk 64K --bitmap internal --name vmA "$W"/a{0,1,2}.img 2>&1); then
    bad "A: raid5ctl create: $out"
elif serve A "$W"/a{0,1,2}.img; then
    if mkfs.ext4 -q -F -E stride=16,stripe_width=32 "$DEV" && attach_mount "$DEV" "$MNT" &&
       tar -C "$MNT" -xf "$W/tree.tar" --one-top-level=tree && attach_umount "$MNT"; then
        unserve A && clean_sbs A "$W"/a{0,1,2}.img && : >"$W/A" &&
            echo "ok A: raid5ctl create, ext4 + files through the plugin, clean stop"
    else
        bad "A: mkfs.ext4 + files through the plugin"; unserve A || :
    fi
else
    bad "A: serving the raid5ctl-made members"
fi
say "host A: $((SECONDS - t0))s"; t0=$SECONDS

# ---- first boot: A -> md; B1, B2 made by mdadm ----
imgs=("$W"/a{0,1,2}.img "$W"/b{0,1,2}.img "$W"/c{0,1,2}.img)
vm_run -e MODE=first -e TREE="$W/tree" "$VM_TESTS/guest-md-metadata.sh" "${imgs[@]}" ||
    fails=$((fails + 1))
say "guest, first boot: $((SECONDS - t0))s"; t0=$SECONDS

# ---- B1, B2 on the host: no geometry parameters, reverse order ----
for b in "B1 b" "B2 c"; do
    set -- $b
    name=$1 m=("$W/${2}2.img" "$W/${2}1.img" "$W/${2}0.img")
    [[ -s $W/$name.examine ]] || { bad "$name: no array from the guest"; continue; }
    clean_sbs "$name (made by md)" "${m[@]}" || continue
    ev=$(field "${m[0]}" Events)
    say "$name: md made chunk $(field "${m[0]}" 'Chunk Size'), $(field "${m[0]}" Layout)," \
        "data offset $(field "${m[0]}" 'Data Offset'), bitmap '$(field "${m[0]}" 'Internal Bitmap')', events $ev"
    serve "$name" "${m[@]}" || { bad "$name: serving md's members with no geometry parameters"; continue; }
    if ! e2fsck -fn "$DEV" >"$W/$name.fsck" 2>&1; then
        bad "$name: e2fsck -fn through the plugin: $(tail -n 3 "$W/$name.fsck")"; unserve "$name" || :; continue
    fi
    if attach_mount "$DEV" "$MNT" && (cd "$MNT/tree" && md5sum -c --quiet "$W/tree.md5") &&
       tar -C "$MNT" -xf "$W/tree.tar" --one-top-level=more && attach_umount "$MNT" &&
       e2fsck -fn "$DEV" >"$W/$name.fsck" 2>&1; then
        unserve "$name" || continue
        clean_sbs "$name (after the plugin)" "${m[@]}" || continue
        [[ $(field "${m[0]}" Events) -gt $ev ]] || { bad "$name: events did not advance ($ev)"; continue; }
        : >"$W/$name.served"
        echo "ok $name: md's array served with no geometry parameters: e2fsck clean, files intact, more written, clean stop"
    else
        bad "$name: files through the plugin (md5sum, writing more, e2fsck)"; unserve "$name" || :
    fi
done
say "host B: $((SECONDS - t0))s"; t0=$SECONDS

# ---- second boot: B1, B2 -> md ----
vm_run -e MODE=second -e TREE="$W/tree" "$VM_TESTS/guest-md-metadata.sh" "${imgs[@]}" ||
    fails=$((fails + 1))
say "guest, second boot: $((SECONDS - t0))s; $fails failed"
[[ $fails == 0 ]]
