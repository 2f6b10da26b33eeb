# tests/vm/guest-md-readonly.sh -- in the guest: kernel md's read-only
# array (mdadm --assemble --readonly), the oracle of the plugin's
# readonly=true (run by tests/vm/test-md-readonly.sh).
#
# Disks: vda vdb vdc (32 MiB, blank) = array M, made here by mdadm;
#        vdd vde vdf = array R, made and written on the host by raid5ctl
#        and the plugin, whose server was killed: dirty.
# Env: PAT (4 MiB pattern), MODEL (R's bytes, 4 MiB), BAD_AT (member
# sectors past the data offset, 8 of them, that fail reads on M's member 1),
# BAD2_AT (the same on member 2, in another stripe of the same 256 KiB).
#
# M  md -> here: mdadm --create, the pattern written, stopped.  Assembled
#    --readonly: /proc/mdstat says (read-only), a write is refused, the
#    pattern reads back, and no byte of a member changes.  Then member 1
#    behind a device-mapper table whose sectors BAD_AT.. fail reads
#    (dm's error target), and member 2 whose sectors BAD2_AT.. do: md
#    reads the pattern anyway (each row from the rest of it), keeps both
#    in service (mdadm --detail: 3 active, 0 failed) and writes nothing.  The host then serves the same disks
#    with readonly=true and the same sectors failing.
# R  here -> md: md assembles the dirty array --readonly: no resync runs
#    (mdstat: resync=PENDING), the host's bytes read back, nothing is
#    written (the superblocks still say active); the host then serves it
#    read-only too and finds it as dirty as before.

. "${BASH_SOURCE[0]%/*}/guest-lib.sh"
export DM_DISABLE_UDEV=1   # no udev here: dmsetup makes its own nodes

sums () { md5sum "$@" | cut -c1-32 | tr '\n' ' '; }

# reads_as MD FILE WHAT: the first bytes of MD are FILE's.
reads_as () {
    if cmp -s <(dd if=/dev/$1 bs=1M count=4 iflag=direct status=none) "$2"; then
        ok "$3"
    else
        not_ok "$3: the bytes differ"
    fi
}

# ---- M: md's array, read-only ----
log "M: mdadm --create, the pattern, stop"
run mdadm --create /dev/md1 --run --metadata=1.2 --level=5 --raid-devices=3 \
    --chunk=64 --assume-clean --bitmap=none --homehost=ro --name=m \
    /dev/vda /dev/vdb /dev/vdc || { not_ok "M: mdadm --create"; exit 1; }
run dd if="$PAT" of=/dev/md1 bs=1M oflag=direct status=none || not_ok "M: pattern"
md_stop md1
DOFF=$(mdadm --examine /dev/vdb | sed -n 's/^ *Data Offset : \([0-9]*\) sectors.*/\1/p')
echo "DOFF=$DOFF" >"$VM_WORK/M.info"
before=$(sums /dev/vda /dev/vdb /dev/vdc)

run mdadm --assemble --readonly /dev/md1 /dev/vda /dev/vdb /dev/vdc ||
    { not_ok "M: mdadm --assemble --readonly"; exit 1; }
grep -q '^md1 : active (read-only) raid5' /proc/mdstat &&
    ok "M: mdstat says active (read-only)" ||
    not_ok "M: mdstat: $(grep '^md1' /proc/mdstat)"
if dd if="$PAT" of=/dev/md1 bs=4096 count=1 oflag=direct status=none 2>/dev/null; then
    not_ok "M: md took a write while read-only"
else
    ok "M: md refuses a write while read-only"
fi
reads_as md1 "$PAT" "M: md reads the pattern read-only"
md_stop md1
[[ $(sums /dev/vda /dev/vdb /dev/vdc) == "$before" ]] &&
    ok "M: md wrote nothing read-only" || not_ok "M: a member changed read-only"

log "M: member 1's sectors $BAD_AT+8 and member 2's $BAD2_AT+8 past the data offset fail reads"
# failing NAME DEV AT: DEV as /dev/mapper/NAME, its 8 sectors from AT
# failing reads.
failing () {
    local size bad
    size=$(blockdev --getsz "$2")
    bad=$((DOFF + $3))
    printf '%s\n' "0 $bad linear $2 0" "$bad 8 error" \
        "$((bad + 8)) $((size - bad - 8)) linear $2 $((bad + 8))" |
        run dmsetup create --noudevsync "$1"
}
failing e1 /dev/vdb "$BAD_AT" && failing e2 /dev/vdc "$BAD2_AT" ||
    { not_ok "M: dmsetup create"; exit 1; }
bad=$((DOFF + BAD_AT))
if dd if=/dev/mapper/e1 of=/dev/null bs=512 skip=$bad count=1 iflag=direct status=none 2>/dev/null; then
    not_ok "M: control: the error target read (the test proves nothing)"
else
    ok "M: control: member 1's sector $bad fails reads"
fi
run mdadm --assemble --readonly /dev/md1 /dev/vda /dev/mapper/e1 /dev/mapper/e2 ||
    { not_ok "M: assemble --readonly with the failing member"; exit 1; }
reads_as md1 "$PAT" "M: md reads the pattern over members 1's and 2's read errors"
detail=$(mdadm --detail /dev/md1)
active=$(sed -n 's/^ *Active Devices : //p' <<<"$detail")
failed=$(sed -n 's/^ *Failed Devices : //p' <<<"$detail")
echo "MD_ACTIVE=$active MD_FAILED=$failed" >>"$VM_WORK/M.info"
[[ $active == 3 && $failed == 0 ]] &&
    ok "M: md keeps members 1 and 2 in service read-only (3 active, 0 failed)" ||
    not_ok "M: after the read error md has $active active, $failed failed"
md_stop md1
run dmsetup remove e1 && run dmsetup remove e2 || not_ok "M: dmsetup remove"
[[ $(sums /dev/vda /dev/vdb /dev/vdc) == "$before" ]] &&
    ok "M: md wrote nothing over the read error (no rewrite read-only)" ||
    not_ok "M: a member changed after the read error"

# ---- R: our dirty array, read-only in md ----
log "R: the plugin's dirty array, assembled --readonly"
before=$(sums /dev/vdd /dev/vde /dev/vdf)
run mdadm --assemble --readonly /dev/md2 /dev/vdd /dev/vde /dev/vdf ||
    { not_ok "R: mdadm --assemble --readonly"; exit 1; }
grep -A2 '^md2 : ' /proc/mdstat | sed 's/^/#   /'
grep -q '^md2 : active (read-only) raid5' /proc/mdstat &&
    ok "R: mdstat says active (read-only)" || not_ok "R: mdstat: $(grep '^md2' /proc/mdstat)"
grep -A2 '^md2 : ' /proc/mdstat | grep -q 'resync=PENDING' &&
    ok "R: md's resync waits (resync=PENDING)" || not_ok "R: md does not say resync=PENDING"
reads_as md2 "$MODEL" "R: md reads the plugin's bytes read-only"
nap 1
read -r action </sys/block/md2/md/sync_action
[[ $action == idle ]] && ok "R: no resync ran" || not_ok "R: sync_action $action"
md_stop md2
[[ $(sums /dev/vdd /dev/vde /dev/vdf) == "$before" ]] &&
    ok "R: md wrote nothing read-only (not even the superblocks)" ||
    not_ok "R: a member changed read-only"
exit $((GUEST_FAILS > 0))
