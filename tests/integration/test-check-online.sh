#!/usr/bin/env bash
# Online check and repair (control socket) against corruption made behind
# the plugin's back, compared with the offline raid5ctl check.
# An array made by raid5ctl create is filled by random-io (model kept) and
# served with control=PATH.  While it is served, chosen bytes of its
# member files are changed with dd (the plugin is told nothing): one byte
# of the parity chunk of stripe A; three 4 KiB units of the parity chunk of
# stripe B; one byte of a data chunk of stripe C; a whole 4 KiB unit (the
# last) of the parity chunk of stripe D.  Meanwhile random-io writes and
# reads over 4 connections in a region of the array that holds none of
# those stripes.  Asserts:
#   - `check` (a second one while it runs is refused as busy) ends with
#     last_job check 0, mismatch_sectors = 8 per wrong 4 KiB unit (md's
#     count: 8+24+8+8), stripes_bad 4, and found[] names exactly stripes
#     A, B, C, D with their parity member, the member offset of the first
#     wrong unit, the number of wrong units and the array range;
#   - the same corruption checked OFFLINE (clean stop, raid5ctl check
#     --json) gives the same stripes, fields and count (offline = online);
#   - served again, `repair` under the load reports the same count; a
#     `check` after it reports 0 and found [];
#   - no client error, every read = the model, and the whole export reads
#     back as the model, in which only the changed data byte of stripe C
#     differs from what was written (repair rewrites parity, never data);
#   - after a clean stop: raid5ctl check 0; member-check: parity = XOR and
#     data = the model where md's layout puts it;
#   - `check` on a degraded array is refused.
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
. "${0%/*}/job-functions.sh"
requires_jobs
start=$SECONDS

n=3
md_create co "$n" 48M --chunk 64K --layout left-symmetric --assume-clean --bitmap none
m=("${MEMBERS[@]}")
mapfile -t disks < <(disk_args "${m[@]}")
geom=(--chunk "$MD_CHUNK" --layout "$MD_LAYOUT" --data-offset "$MD_DOFF")
model=$tmpdir/model
C=65536
SD=$(( (n - 1) * C ))                  # array bytes per stripe
A=3 B=150 SC=700 D=701                 # the load keeps to stripes 300..599
speed=(sync-speed-min=15000 sync-speed-max=30000)
region=$(( 300 * SD )):$(( 300 * SD ))

echo "== fill, then change member bytes behind the plugin's back"
serve_ctl "$tmpdir/serve.log" "${disks[@]}" "${speed[@]}" || fail "serve"
next_seed
"$RANDOM_IO" "$URI" auto --seed "$RIO_SEED" --ops 600 --threads 4 --chunk 64K \
  --model-out "$model" >/dev/null || fail "random-io (fill)"

# spoil FILE OFFSET LEN: LEN random bytes, each differing from the old one.
spoil ()
{
  /usr/bin/python3 - "$@" <<'END'
import os, sys
path, off, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(path, "r+b") as f:
    f.seek(off)
    old = f.read(n)
    new = bytes(b ^ (1 + r % 255) for b, r in zip(old, os.urandom(n)))
    f.seek(off)
    f.write(new)
END
}
expect=()                              # "stripe parity_member member_off units"
read -r pa oa < <(parity_byte_off $A $n $C "$MD_DOFF" "$MD_LAYOUT")
spoil "${m[$pa]}" $(( oa + 17 )) 1
expect+=("$A $pa $oa 1")
read -r pb ob < <(parity_byte_off $B $n $C "$MD_DOFF" "$MD_LAYOUT")
spoil "${m[$pb]}" $(( ob + 2 * 4096 + 100 )) 1
spoil "${m[$pb]}" $(( ob + 5 * 4096 + 4095 )) 1
spoil "${m[$pb]}" $(( ob + 15 * 4096 )) 1
expect+=("$B $pb $(( ob + 2 * 4096 )) 3")
read -r dc oc < <(data_byte_off $SC 1 $n $C "$MD_DOFF" "$MD_LAYOUT")
read -r pc opc < <(parity_byte_off $SC $n $C "$MD_DOFF" "$MD_LAYOUT")
spoil "${m[$dc]}" $(( oc + 7 * 4096 + 33 )) 1
expect+=("$SC $pc $(( opc + 7 * 4096 )) 1")
read -r pd od < <(parity_byte_off $D $n $C "$MD_DOFF" "$MD_LAYOUT")
spoil "${m[$pd]}" $(( od + 15 * 4096 )) 4096
expect+=("$D $pd $(( od + 15 * 4096 )) 1")
# The model learns the changed data byte (array offset of data chunk 1 of
# stripe C, + 7*4096 + 33): that is what a read must now return.
/usr/bin/python3 - "$model" $(( SC * SD + C + 7 * 4096 + 33 )) "${m[$dc]}" \
  $(( oc + 7 * 4096 + 33 )) <<'END'
import sys
model, aoff, member, moff = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
with open(member, "rb") as f:
    f.seek(moff); b = f.read(1)
with open(model, "r+b") as f:
    f.seek(aoff); f.write(b)
with open(model + ".known", "r+b") as f:
    f.seek(aoff // 8); k = f.read(1)[0]
    f.seek(aoff // 8); f.write(bytes([k | 1 << (aoff % 8)]))
END
printf '   %s\n' "${expect[@]/#/stripe, parity member, member offset, units: }"
printf '%s\n' "${expect[@]}" > "$tmpdir/expect"

# compare_found JSON KIND: JSON (a status --json, or raid5ctl check --json)
# must list exactly the expected stripes; 48 sectors in 4 stripes.
compare_found ()
{
  /usr/bin/python3 - "$1" "$2" "$tmpdir/expect" $SD <<'END' || fail "$2: not the expected mismatches"
import json, sys
path, kind, exp_path, sd = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
r = json.load(open(path))
if kind == "offline":
    found, sectors, bad = r["mismatches"], r["mismatch_sectors"], r["stripes_bad"]
else:
    found, lj = r["job"]["found"], r["last_job"]
    if lj["kind"] != kind or lj["result"] != 0:
        sys.exit("last_job is %s" % lj)
    sectors, bad = lj["mismatch_sectors"], lj["stripes_bad"]
exp = {}
for line in open(exp_path):
    s, p, off, u = map(int, line.split())
    exp[s] = {"stripe": s, "parity_member": p, "member_offset": off,
              "units_4k": u, "array_offset": s * sd, "array_length": sd}
got = {f["stripe"]: {k: f[k] for k in ("stripe", "parity_member",
       "member_offset", "units_4k", "array_offset", "array_length")}
       for f in found}
want_sectors = 8 * sum(e["units_4k"] for e in exp.values())
print("   %s: mismatch_cnt %d in %d stripes: %s" % (kind, sectors, bad,
      ", ".join("stripe %d (%d x 4K)" % (s, got[s]["units_4k"]) for s in sorted(got))))
errs = []
if sectors != want_sectors:
    errs.append("mismatch_cnt %d, expected %d" % (sectors, want_sectors))
if bad != len(exp):
    errs.append("stripes_bad %d, expected %d" % (bad, len(exp)))
if len(found) != len(got):
    errs.append("a stripe is listed twice: %s" % [f["stripe"] for f in found])
for s in sorted(set(exp) | set(got)):
    if got.get(s) != exp.get(s):
        errs.append("stripe %d: got %s, expected %s" % (s, got.get(s), exp.get(s)))
if errs:
    sys.exit("\n".join(errs))
END
}

echo "== online check under load"
load_start "$model" "$n" --region "$region"
sleep 0.3
ctl_ok check
ctl_refused "busy" check
ctl_progress check 30 2
load_alive || fail "the load ended before the check: it did not run under load"
ctl status --json > "$tmpdir/online.json" || fail "status --json"
compare_found "$tmpdir/online.json" check
load_stop
stop_server

echo "== the same corruption offline: raid5ctl check"
raid5ctl_check_json "$tmpdir/offline.json" "${m[@]}"
compare_found "$tmpdir/offline.json" offline

echo "== online repair under load, then check"
serve_ctl "$tmpdir/serve2.log" "${disks[@]}" "${speed[@]}" || fail "serve again"
load_start "$model" "$n" --region "$region"
sleep 0.3
ctl_ok repair
ctl_progress repair 30 2
ctl status --json > "$tmpdir/repair.json" || fail "status --json"
compare_found "$tmpdir/repair.json" repair
ctl_ok check
ctl_progress check 30 2
load_alive || fail "the load ended before the checks did"
[ "$(ctl_get '(s["last_job"]["kind"], s["last_job"]["result"], s["last_job"]["mismatch_sectors"], s["last_job"]["stripes_bad"], s["job"]["found"])')" = "('check', 0, 0, 0, [])" ] ||
  fail "check after repair: $(ctl_get 's["last_job"], s["job"]["found"]')"
echo "   check after repair: mismatch_cnt 0"
load_stop
stop_server
raid5ctl_clean "${m[@]}"
member_check "${geom[@]}" --model "$model" "${m[@]}"

echo "== check on a degraded array"
serve_ctl "$tmpdir/serve3.log" "${disks[@]}" || fail "serve a third time"
ctl_ok fail 1
ctl_refused "degraded" check
ctl_refused "degraded" repair
stop_server
echo "$test_name: OK ($(( SECONDS - start )) s)"
