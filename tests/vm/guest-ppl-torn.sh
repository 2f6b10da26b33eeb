# tests/vm/guest-ppl-torn.sh -- in the guest: /dev/vda vdb vdc hold an array
# with partial parity logs torn on the host (test-ppl-torn-md.sh), vdd vde
# copies of two of them.  $GOLD is the array as it was before, $CHUNK its
# chunk; second data chunks were never written.

. "${BASH_SOURCE[0]%/*}/guest-lib.sh"

if run mdadm --assemble /dev/md0 /dev/vda /dev/vdb /dev/vdc; then
    read -r policy </sys/block/md0/md/consistency_policy
    read -r rs </sys/block/md0/md/resync_start
    ok "whole: started, consistency_policy $policy, resync_start $rs"
    wait_idle md0
    mm=$(md_check md0) && [[ $mm == 0 ]] && ok "whole: md check: mismatch_cnt 0" ||
        not_ok "whole: md check: mismatch_cnt ${mm:-?}"
    md_stop md0 || not_ok "mdadm --stop md0"
else
    not_ok "mdadm --assemble of the torn array"
fi
if run mdadm --assemble --run /dev/md1 /dev/vdd /dev/vde; then
    read -r deg </sys/block/md1/md/degraded
    ok "degraded: started dirty with $deg missing"
    if out=$(/usr/bin/python3 - "$GOLD" "$CHUNK" <<'PY' 2>&1
import os, sys
gold, chunk = open(sys.argv[1], "rb").read(), int(sys.argv[2])
fd = os.open("/dev/md1", os.O_RDONLY)
bad = [s for s in range(len(gold) // (2 * chunk))
       if os.pread(fd, chunk, s * 2 * chunk + chunk) !=
          gold[s * 2 * chunk + chunk:(s + 1) * 2 * chunk]]
print("%d of %d second data chunks wrong%s" % (len(bad), len(gold) // (2 * chunk),
      ": stripes " + " ".join(map(str, bad[:10])) if bad else ""))
sys.exit(1 if bad else 0)
PY
    ); then ok "degraded: $out"; else not_ok "degraded: $out"; fi
    md_stop md1 || not_ok "mdadm --stop md1"
else
    not_ok "mdadm --assemble --run of the torn array without one member"
fi
dmesg | grep -i 'ppl\|dirty degraded' | sed 's/^/# dmesg: /' | tail -n 5
exit $((GUEST_FAILS > 0))
