# tests/vm/guest-md-bbscrub.sh -- in the guest: kernel md's check, repair
# and resync over a row a member's bad-block log lists (run by
# tests/vm/test-md-bbscrub.sh, which judges the disks afterwards).
#
# Disks: vda-vdc  c: member 1 lists a row, its page stale     -> check
#        vdd-vdf  r: the same                                 -> repair
#        vdg-vdi  s: the same, the superblocks dirty          -> resync
#        vdj-vdl  t: members 1 and 2 list the row             -> check
#        vdm-vdo  w: as c, member 1 marked WriteErrorSeen     -> check
#
# A  each runs to its end (last_sync_action says it ran), mismatch_cnt 0,
#    no member failed.

. "${BASH_SOURCE[0]%/*}/guest-lib.sh"

# sync SET ACTION DISK...: assemble, run ACTION (a resync starts alone on
# a dirty array), wait for it, stop.
sync () {
    local set=$1 action=$2 md=/sys/block/md1/md last mm detail failed; shift 2
    run mdadm --assemble /dev/md1 "$@" || { not_ok "A$set: mdadm --assemble"; return; }
    [[ $set == w ]] && { echo write_error >$md/dev-${2#/dev/}/state ||
                         not_ok "Aw: write_error through sysfs"; }
    [[ $action == resync ]] || echo "$action" >$md/sync_action
    nap 0.5
    if ! wait_idle md1; then
        not_ok "A$set: the $action did not end"
        md_stop md1
        return
    fi
    read -r last <$md/last_sync_action
    read -r mm <$md/mismatch_cnt
    detail=$(mdadm --detail /dev/md1)
    failed=$(sed -n 's/^ *Failed Devices : //p' <<<"$detail")
    [[ $last == "$action" && $mm == 0 && $failed == 0 ]] &&
        ok "A$set: md's $action ran, mismatch_cnt 0, no member failed" ||
        not_ok "A$set: last_sync_action $last, mismatch_cnt $mm, $failed failed"
    md_stop md1
}

sync c check /dev/vda /dev/vdb /dev/vdc
sync r repair /dev/vdd /dev/vde /dev/vdf
sync s resync /dev/vdg /dev/vdh /dev/vdi
sync t check /dev/vdj /dev/vdk /dev/vdl
sync w check /dev/vdm /dev/vdn /dev/vdo
exit $((GUEST_FAILS > 0))
