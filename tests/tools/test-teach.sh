#!/usr/bin/env bash
# raid5ctl's teaching commands (layout, map, explain, mkfs-hint) against
# values worked out by hand from md's formulas (the reference's section 1),
# never from the code under test:
#  - layout: the tables of 3 and 4 members in all six layouts, member
#    offsets and array bytes of a row, the repeat marker (once when parity
#    never moves);
#  - map: the reference's worked example (3 members, 64K chunk, data offset
#    2048 sectors: array sector 600 is member 1, sector 2392) and others,
#    and the pieces of a range;
#  - explain: the classic costs (4K write: RCW 1 read + 2 writes on 3
#    members, RMW 2 + 2 on 5; a full stripe reads nothing), degraded
#    writes and reads, zero and trim, a three-segment write;
#  - mkfs-hint: stride/stripe_width and su/sw (the seed posts' numbers),
#    the plugin's preferred block size, partition alignment;
#  - explain check: parity says a row is wrong but every member is a
#    culprit; checksums name the spoiled one (computed, not printed text);
#  - explain grow: the new shape's rows are md's layout of N+K members
#    with the old chunks in array order and zeroes past the old end; the
#    window is the LCM of both stripes, the data offset moves down by
#    mdadm's min_offset_change, and every window's writes stay below the
#    old bytes the recorded line still counts (an own walk of the rule);
#  - --json parses; --from on members made by raid5ctl create says what
#    the same flags say; bad input: one line on stderr, non-zero exit.

. "${0%/*}/functions.sh"
[ -x "$RAID5CTL" ] || skip "not built: $RAID5CTL"
requires /usr/bin/python3 --version

R=$RAID5CTL

# rows ARGS...: the cells of each row of `raid5ctl layout ARGS`, one row a
# line ("D0 D1 P").
rows ()
{
  "$R" layout "$@" | awk '/^ *[0-9]+  / { s = ""
    for (i = 5; i <= NF; i++) s = s (i > 5 ? " " : "") $i; print s }'
}

# expect_rows WHAT EXPECTED ARGS...
expect_rows ()
{
  local what=$1 want=$2 got
  shift 2
  got=$(rows "$@") || fail "layout $*: exit $?"
  [ "$got" = "$want" ] || fail "$what: layout $* gave
$got
expected
$want"
}

# ---- layout: hand-written tables (stripes 0..N-1 from md's formulas,
# then the same pattern with chunk numbers advanced by N*(N-1)) ----
expect_rows "3 members, left-symmetric" "D0 D1 P
D3 P D2
P D4 D5
D6 D7 P
D9 P D8
P D10 D11" --disks 3 --layout left-symmetric
expect_rows "3 members, left-asymmetric" "D0 D1 P
D2 P D3
P D4 D5
D6 D7 P
D8 P D9
P D10 D11" --disks 3 --layout la
expect_rows "3 members, right-symmetric" "P D0 D1
D3 P D2
D4 D5 P
P D6 D7
D9 P D8
D10 D11 P" --disks 3 --layout rs
expect_rows "3 members, right-asymmetric" "P D0 D1
D2 P D3
D4 D5 P
P D6 D7
D8 P D9
D10 D11 P" --disks 3 --layout right-asymmetric
expect_rows "4 members, left-symmetric" "D0 D1 D2 P
D4 D5 P D3
D8 P D6 D7
P D9 D10 D11
D12 D13 D14 P" --disks 4 --stripes 5
expect_rows "4 members, left-asymmetric" "D0 D1 D2 P
D3 D4 P D5
D6 P D7 D8
P D9 D10 D11
D12 D13 D14 P" --disks 4 --layout la --stripes 5
expect_rows "4 members, right-symmetric" "P D0 D1 D2
D5 P D3 D4
D7 D8 P D6
D9 D10 D11 P
P D12 D13 D14" --disks 4 --layout rs --stripes 5
expect_rows "4 members, right-asymmetric" "P D0 D1 D2
D3 P D4 D5
D6 D7 P D8
D9 D10 D11 P
P D12 D13 D14" --disks 4 --layout ra --stripes 5
# parity-first (md 4): parity on member 0, data chunk k of a stripe on
# member k+1; parity-last (md 5): parity on member N-1, data k on member k.
expect_rows "3 members, parity-first" "P D0 D1
P D2 D3
P D4 D5
P D6 D7
P D8 D9
P D10 D11" --disks 3 --layout parity-first
expect_rows "3 members, parity-last" "D0 D1 P
D2 D3 P
D4 D5 P
D6 D7 P
D8 D9 P
D10 D11 P" --disks 3 --layout parity-last
expect_rows "4 members, parity-first" "P D0 D1 D2
P D3 D4 D5
P D6 D7 D8
P D9 D10 D11
P D12 D13 D14" --disks 4 --layout parity-first --stripes 5
expect_rows "4 members, parity-last" "D0 D1 D2 P
D3 D4 D5 P
D6 D7 D8 P
D9 D10 D11 P
D12 D13 D14 P" --disks 4 --layout parity-last --stripes 5

out=$("$R" layout --chunk 64K --data-offset 1M)
grep -Eq '^ +1  1088K +\[128K, 256K\) +D3 +P +D2$' <<<"$out" ||
  fail "layout row 1 (member offset 1M + 64K, array [128K, 256K)): $out"
grep -q 'stripe 3: the pattern of stripe 0 again' <<<"$out" ||
  fail "layout: no repeat marker before stripe 3"
grep -q 'LEFT' <<<"$out" && grep -q 'SYMMETRIC' <<<"$out" ||
  fail "layout: the legend lacks the layout's rule"
[ "$(rows --disks 5 | wc -l)" = 10 ] || fail "layout: default is 2N rows"
out=$("$R" layout --layout parity-last --disks 4)
[ "$(grep -c 'the pattern of stripe 0 again' <<<"$out")" = 1 ] &&
grep -q 'stripe 1 and on: the pattern of stripe 0 again (parity never moves)' <<<"$out" ||
  fail "layout parity-last: not one repeat marker before stripe 1: $out"
grep -q 'LAST' <<<"$out" && grep -q 'Parity of stripe s is on member N-1\.' <<<"$out" ||
  fail "layout parity-last: the legend lacks the layout's rule: $out"
"$R" layout --layout parity-first | grep -q 'Parity of stripe s is on member 0\.' ||
  fail "layout parity-first: the legend lacks the parity member"
"$R" layout --missing 1 | grep -q 'm1\*' || fail "layout: missing not marked"

# ---- JSON of every command, kept for one python check below ----
J=$tmpdir/json
mkdir "$J"
j () { local name=$1; shift; "$R" "$@" --json >"$J/$name" || fail "$* --json: exit $?"; }
j layout3 layout --disks 3 --layout ls --chunk 64K
j layout_pf layout --disks 3 --layout parity-first --chunk 64K
# map: the reference's worked example, and two more by hand:
#  4 members la, 64K: byte 5*64K+100 is chunk 5 = stripe 1, index 2;
#    parity 3-1 = 2; asymmetric: 2 >= 2 -> member 3, offset 64K + 100;
#  5 members rs, 32K: byte 1000000 is chunk 30 (+16960) = stripe 7,
#    index 2; parity 7 mod 5 = 2; symmetric (2+1+2) mod 5 = member 0,
#    offset 7*32K + 16960 = 246336.
j map_ref map 600s --chunk 64K --data-offset 2048s
j map_la map $((5 * 65536 + 100)) --disks 4 --layout la --chunk 64K
j map_rs map 1000000 --disks 5 --layout rs --chunk 32K
j map_range map 60K 8K --chunk 64K
#  4 members, 64K, byte 5*64K+100 (stripe 1, index 2): parity-first puts
#    it on member 2+1 = 3, parity on 0; parity-last on member 2, parity on
#    3; both at member offset 64K + 100.
j map_pf map $((5 * 65536 + 100)) --disks 4 --layout parity-first --chunk 64K
j map_pl map $((5 * 65536 + 100)) --disks 4 --layout parity-last --chunk 64K
# explain: the classic cases
j w3 explain write 0 4K --chunk 64K
j w5 explain write 0 4K --chunk 64K --disks 5
j w4 explain write 0 4K --chunk 64K --disks 4
j full explain write 0 128K --chunk 64K
j full2 explain write 128K 256K --chunk 64K
j miss0 explain write 0 4K --chunk 64K --missing 0
j miss1 explain write 0 4K --chunk 64K --missing 1
j miss2 explain write 0 4K --chunk 64K --missing 2
j rd explain read 0 4K --chunk 64K
j drd explain read 0 4K --chunk 64K --missing 0
j zero explain zero 0 256K --chunk 64K
j trim explain trim 4K 4K --chunk 64K
j seg3 explain write 60K 72K --chunk 64K --disks 5
j wpf explain write 100K 300K --chunk 64K --layout parity-first
j mk3 mkfs-hint --chunk 64K
j mk32 mkfs-hint --chunk 32K
j mk4 mkfs-hint --chunk 64K --disks 4

/usr/bin/python3 - "$J" <<'EOF' || fail "JSON checks"
import json, os, sys
d = {n: json.load(open(os.path.join(sys.argv[1], n))) for n in os.listdir(sys.argv[1])}
def eq(what, got, want):
    if got != want:
        sys.exit(f"{what}: got {got!r}, want {want!r}")

eq("layout cells", [s["cells"] for s in d["layout3"]["stripes"][:3]],
   [["D0", "D1", "P"], ["D3", "P", "D2"], ["P", "D4", "D5"]])
eq("layout row 2", (d["layout3"]["stripes"][2]["member_offset"],
                    d["layout3"]["stripes"][2]["array_offset"]), (131072, 262144))
eq("parity-first period", d["layout_pf"]["period"], 1)
eq("parity-first parity", [s["parity"] for s in d["layout_pf"]["stripes"]], [0] * 6)
eq("parity-first md layout", d["layout_pf"]["geometry"]["md_layout"], 4)

m = d["map_ref"]
eq("map 600s", (m["offset"], m["chunk_number"], m["stripe"], m["data_index"],
                m["parity"], m["member"], m["member_sector"], m["member_offset"]),
   (307200, 4, 2, 0, 0, 1, 2392, 1224704))
eq("map la", (d["map_la"]["member"], d["map_la"]["member_offset"],
              d["map_la"]["parity"]), (3, 65636, 2))
eq("map rs", (d["map_rs"]["member"], d["map_rs"]["member_offset"],
              d["map_rs"]["stripe"], d["map_rs"]["data_index"]), (0, 246336, 7, 2))
eq("map parity-first", (d["map_pf"]["member"], d["map_pf"]["parity"],
                        d["map_pf"]["member_offset"]), (3, 0, 65636))
eq("map parity-last", (d["map_pl"]["member"], d["map_pl"]["parity"],
                       d["map_pl"]["member_offset"]), (2, 3, 65636))
eq("map pieces", [(p["offset"], p["member"], p["member_offset"], p["length"])
                  for p in d["map_range"]["pieces"]],
   [(61440, 0, 61440, 4096), (65536, 1, 0, 4096)])

def cost(n):
    c = d[n]["cost"]
    return (c["strategies"], c["reads"], c["writes"])
eq("4K write, 3 members", cost("w3"), ({"rcw": 1}, 1, 2))
eq("4K write, 5 members", cost("w5"), ({"rmw": 1}, 2, 2))
eq("4K write, 4 members", cost("w4"), ({"rcw": 1}, 2, 2))
eq("full stripe", cost("full"), ({"full-stripe": 1}, 0, 3))
eq("two full stripes", cost("full2"), ({"full-stripe": 2}, 0, 6))
eq("missing touched D0", cost("miss0"), ({"rcw": 1}, 1, 1))
eq("missing untouched D1", cost("miss1"), ({"rmw": 1}, 2, 2))
eq("missing parity", cost("miss2"), ({"data-only": 1}, 0, 1))
eq("read", cost("rd"), ({"read": 1}, 1, 0))
eq("degraded read", cost("drd"), ({"degraded-read": 1}, 2, 0))
eq("degraded read xor", d["drd"]["stripes"][0]["xors"][0]["sources"], ["D1", "P"])
eq("zero 2 stripes", (d["zero"]["cost"]["strategies"], d["zero"]["cost"]["zeroes"],
                      d["zero"]["cost"]["reads"]), ({"zero-stripe": 2}, 6, 0))
eq("partial trim", (d["trim"]["cost"]["member_ios"], d["trim"]["cost"]["strategies"]),
   (0, {}))
eq("three segments", cost("seg3"), ({"rcw": 2, "rmw": 1}, 6, 4))
# parity-first, 3 members: new P always to member 0, new Dk to k mod 2 + 1
for s in d["wpf"]["stripes"]:
    eq("parity-first stripe parity", s["parity"], 0)
    for w in s["writes"]:
        k = w["what"].split()[1]
        eq("parity-first " + w["what"], w["member"],
           0 if k == "P" else int(k[1:]) % 2 + 1)
eq("parity-first stripes", len(d["wpf"]["stripes"]), 4)
eq("amplification", (d["w3"]["cost"]["write_amplification"],
                     d["full"]["cost"]["write_amplification"],
                     d["w5"]["cost"]["reads_per_client_byte"]), (2.0, 1.5, 2.0))
eq("bytes", (d["w3"]["cost"]["read_bytes"], d["w3"]["cost"]["write_bytes"]),
   (4096, 8192))
for n in d:
    if "planner_agrees" in d[n]:
        eq(n + " planner agrees", d[n]["planner_agrees"], True)

eq("ext4 64K", (d["mk3"]["ext4"]["stride"], d["mk3"]["ext4"]["stripe_width"]), (16, 32))
eq("xfs 64K", (d["mk3"]["xfs"]["su"], d["mk3"]["xfs"]["sw"]), ("64k", 2))
eq("ext4 32K (seed)", (d["mk32"]["ext4"]["stride"], d["mk32"]["ext4"]["stripe_width"]), (8, 16))
eq("preferred 3x64K", d["mk3"]["nbd_preferred_block"], 131072)
eq("preferred 4x64K", d["mk4"]["nbd_preferred_block"], 65536)
eq("nbd-client -b", d["mk3"]["nbd_client_block"], 4096)
st = {s["sector"]: s for s in d["mk3"]["partition_starts"]}
eq("sector 63: a 64K write touches", st[63]["chunk_write"]["chunks"], 2)
eq("sector 2048: aligned", (st[2048]["stripe_aligned"], st[2048]["chunk_write"]["chunks"],
                            st[2048]["stripe_write"]["reads"]), (True, 1, 0))
eq("sector 63: stripe write reads", st[63]["stripe_write"]["reads"] > 0, True)
eq("4 members: start", d["mk4"]["recommended_start_sector"], 2304)
EOF

# ---- text: the words that teach ----
out=$("$R" explain write 0 4K --chunk 64K)
grep -qF "RCW (reconstruct-write): reads 1 untouched chunk (D1) instead of RMW's 2" <<<"$out" ||
  fail "explain: no RCW reason: $out"
grep -qE 'a 4K write, +3 members: RCW: 1 read \+ 2 writes' <<<"$out" &&
grep -qE 'a 4K write, +5 members: RMW: 2 reads \+ 2 writes' <<<"$out" &&
grep -qE 'a full stripe .*: 0 reads \+ 3 writes' <<<"$out" ||
  fail "explain: the classic lesson is missing: $out"
grep -qE '^ +xor +4K +new P = new D0 \^ old D1$' <<<"$out" ||
  fail "explain: XOR step not named: $out"
grep -q "write amplification 2.00" <<<"$out" || fail "explain: amplification"
"$R" explain write 0 4K --chunk 64K --missing 0 | grep -q "member 0 is missing and holds D0" ||
  fail "explain: degraded reason"
out=$("$R" map 600s --chunk 64K --data-offset 2048s)
grep -q "member offset  1224704 (sector 2392)" <<<"$out" || fail "map text: $out"
out=$("$R" map $((5 * 65536 + 100)) --disks 4 --layout parity-first --chunk 64K)
grep -qE '^  parity member  0 +=  ?0 in every stripe +\[parity-first\]$' <<<"$out" &&
grep -qE '^  member +3 += index \+ 1 = 2 \+ 1 ' <<<"$out" ||
  fail "map parity-first text: $out"
out=$("$R" map $((5 * 65536 + 100)) --disks 4 --layout parity-last --chunk 64K)
grep -qE '^  parity member  3 += N-1 = 3 in every stripe +\[parity-last\]$' <<<"$out" &&
grep -qE '^  member +2 += index = 2 ' <<<"$out" ||
  fail "map parity-last text: $out"
"$R" explain write 0 4K --chunk 64K --layout parity-last |
  grep -qF "parity-last: parity is on m2 in every stripe, so every write also writes m2" ||
  fail "explain parity-last: the lesson does not name the parity member"
"$R" explain write 0 4K --chunk 64K | grep -q "in every stripe" &&
  fail "explain left-symmetric: a fixed-parity lesson"
out=$("$R" mkfs-hint --chunk 64K)
grep -qF -- "-E stride=16,stripe_width=32" <<<"$out" &&
grep -qF -- "-d su=64k,sw=2" <<<"$out" &&
grep -qF -- "nbd-client -b 4096" <<<"$out" ||
  fail "mkfs-hint text: $out"
"$R" mkfs-hint --chunk 16K | grep -qF "stride=4,stripe_width=8" ||
  fail "mkfs-hint: the seed's 16K chunk"
# After a grow by one: one data chunk more per stripe (3 -> 4 members of
# 64K: 3 data chunks; XFS's sunit/swidth in 512-byte units).
out=$("$R" mkfs-hint --chunk 64K)
grep -qF "tune2fs -E stride=16,stripe_width=48 DEVICE" <<<"$out" &&
  grep -qF "resize2fs DEVICE" <<<"$out" &&
  grep -qF "xfs_growfs MOUNTPOINT, and mount with -o sunit=128,swidth=384" <<<"$out" ||
  fail "mkfs-hint's grow hints: $out"
for c in layout map explain mkfs-hint; do
  "$R" $c --help | grep -q "^Examples:" || fail "$c --help"
done

# ---- --from: members made by raid5ctl create say what the flags say ----
D=()
for i in 0 1 2 3; do truncate -s 8M "$tmpdir/m$i"; D+=("$tmpdir/m$i"); done
"$R" create --chunk 64K --layout ra --assume-clean "${D[@]}" >/dev/null 2>&1 ||
  fail "raid5ctl create"
doff=$(( $(od -An -tu8 -j $((4096 + 128)) -N8 "${D[0]}") * 512 ))
flags=(--disks 4 --chunk 64K --layout ra --data-offset "${doff}b")
[ "$(rows "${flags[@]}")" = "$(rows --from "${D[@]}")" ] ||
  fail "layout --from differs from the flags"
for cmd in "map 300K 200K" "explain write 60K 200K" "explain read 0 1M" "mkfs-hint"; do
  a=$("$R" $cmd "${flags[@]}" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); d["geometry"].pop("capacity"); print(json.dumps(d, sort_keys=True))')
  b=$("$R" $cmd --json --from "${D[@]}" | python3 -c 'import json,sys; d=json.load(sys.stdin); d["geometry"].pop("capacity"); print(json.dumps(d, sort_keys=True))')
  [ "$a" = "$b" ] || fail "$cmd: --from differs from the flags"
done
a=$("$R" explain write 0 4K "${flags[@]}" --missing 2 --json)
b=$("$R" explain write 0 4K --json --from "${D[0]}" "${D[1]}" missing "${D[3]}")
[ "$(sed '/"capacity"/d' <<<"$a")" = "$(sed '/"capacity"/d' <<<"$b")" ] ||
  fail "--from with a member missing differs from --missing 2"
"$R" layout --from "${D[1]}" missing "${D[3]}" "${D[0]}" | grep -q "member 2 is missing" ||
  fail "--from: the missing slot is not named"

# ---- bad input: one line on stderr, non-zero exit ----
truncate -s 1M "$tmpdir/plain"
bad ()
{
  local re=$1 status=0 lines
  shift
  "$R" "$@" >"$tmpdir/out" 2>"$tmpdir/err" || status=$?
  [ $status -ne 0 ] || fail "accepted: raid5ctl $*"
  lines=$(wc -l <"$tmpdir/err")
  [ "$lines" -eq 1 ] || fail "raid5ctl $*: $lines lines on stderr"
  grep -Eq -- "$re" "$tmpdir/err" || fail "raid5ctl $*: '$(cat "$tmpdir/err")' lacks '$re'"
}
bad "--disks 2" layout --disks 2
bad "--disks 33" layout --disks 33
bad "power of two" layout --chunk 3000b
bad "power of two" map 0 --chunk 2K
bad "--layout pf: expected .*parity-last" layout --layout pf
bad "multiple of 512" map 0 --data-offset 1000b
bad "--stripes" layout --stripes 0
bad "unknown option" layout --bogus
bad "unexpected argument" layout extra
bad "no OFFSET" map
bad "OFFSET 'x'" map x
bad "LENGTH 0" map 1M 0
bad "beyond" map 9223372036854775807
bad "expected read, write, zero or trim" explain scribble 0 4K
bad "expected read" explain write 0
bad "LENGTH 0" explain write 0 0
bad "members 0 to 2" explain write 0 4K --missing 3
bad "--missing x" explain write 0 4K --missing x
bad "--block" mkfs-hint --block 3000
bad "larger than the chunk" mkfs-hint --block 64K --chunk 32K
bad "needs the member disks" layout --from
bad "No such file" layout --from "$tmpdir/nonexistent"
bad "no md v1.2 superblock" map 0 --from "$tmpdir/plain"
bad "drop --disks" layout --chunk 64K --from "${D[@]}"
bad "beyond the end of the array" explain write 100M 4K --from "${D[@]}"
bad "--member 5: the array has 5 members" explain check --disks 5 --member 5
bad "--stripe x: expected a whole number" explain check --stripe x
bad "slots 1 and 2 have no member" layout --from "${D[0]}" "${D[3]}"
bad "already out of service" layout --missing 1 --from "${D[0]}" "${D[1]}" "${D[3]}"

# explain check: the row's XOR is zero, then not; each member's answer
# makes the row right again (parity cannot locate); the checksums name
# the spoiled member alone, and the unit rebuilt from the others matches
# its record -- on 3 members (default: the stripe's second data member),
# 5 members spoiling member 3 in stripe 7, and the parity member itself.
for args in "--chunk 64K" "--disks 5 --member 3 --stripe 7" \
            "--disks 4 --stripe 1 --member 2"; do
  "$R" explain check $args --json >"$tmpdir/ec.json" || fail "explain check $args: exit $?"
  "$R" explain check $args >"$tmpdir/ec.txt" || fail "explain check $args: exit $?"
  /usr/bin/python3 - "$tmpdir/ec.json" "$tmpdir/ec.txt" "$args" <<'PY' || fail "explain check $args"
import json, sys
r, text, args = json.load(open(sys.argv[1])), open(sys.argv[2]).read(), sys.argv[3].split()
n = int(args[args.index("--disks") + 1]) if "--disks" in args else 3
assert r["row_right_before"] and not r["row_right_after"], r
assert r["candidates"] == n, r
if "--member" in args:
    assert r["spoiled_member"] == int(args[args.index("--member") + 1]), r
assert r["named_member"] == r["spoiled_member"], r
assert [m["member"] for m in r["members"] if m["fails"]] == [r["spoiled_member"]], r
assert r["rebuilt_matches_record"], r
assert text.count("were wrong, it should be") == n, text
assert "The checksum names member %d." % r["spoiled_member"] in text, text
PY
done
# explain grow against md's formulas and mdadm's numbers, worked out here.
for args in "--chunk 64K" "--chunk 4K --disks 4 --add 2 --layout parity-last" \
            "--chunk 8K --disks 5 --layout right-asymmetric" \
            "--chunk 16K --layout left-asymmetric --add 3"; do
  "$R" explain grow $args >"$tmpdir/eg.txt" || fail "explain grow $args: exit $?"
  /usr/bin/python3 - "$tmpdir/eg.txt" "$args" <<'PY' || fail "explain grow $args"
import math, re, sys
text, args = open(sys.argv[1]).read(), sys.argv[2].split()
def opt(name, default):
    return args[args.index(name) + 1] if name in args else default
n, add = int(opt("--disks", "3")), int(opt("--add", "1"))
chunk = int(opt("--chunk", "512K")[:-1])               # KiB
layout = opt("--layout", "left-symmetric")
def parity(g, s):
    return {"left-asymmetric": g - 1 - s % g, "right-asymmetric": s % g,
            "left-symmetric": g - 1 - s % g, "right-symmetric": s % g,
            "parity-first": 0, "parity-last": g - 1}[layout]
def member(g, s, d):
    p = parity(g, s)
    if layout in ("left-symmetric", "right-symmetric"):
        return (p + 1 + d) % g
    if layout == "parity-first":
        return d + 1
    return d if d < p else d + 1
old_data, new_data = n - 1, n + add - 1
window = chunk * old_data * new_data // math.gcd(old_data, new_data)
shift = window // old_data
m = re.search(r"a window of (\d+)K at a time", text)
assert m and int(m.group(1)) == window, (m and m.group(1), window)
m = re.search(r"moves down by (\d+)K first \(from (\d+)K to (\d+)K", text)
assert m and int(m.group(1)) == shift and int(m.group(2)) - int(m.group(3)) == shift, m.groups()
old_off, new_off = int(m.group(2)), int(m.group(3))
m = re.search(r"grows from (\d+)K to (\d+)K", text)
old_cap, new_cap = int(m.group(1)), int(m.group(2))
stripes = old_cap // (chunk * old_data)
assert new_cap == stripes * chunk * new_data, (old_cap, new_cap)
after = text.split("After (the new shape):")[1].split("(offsets")[0].strip().splitlines()[1:]
# A long table is cut with a line saying how many rows are left out,
# and up to which offset (the table covers the whole member otherwise).
if after and after[-1].strip().startswith("..."):
    m = re.match(r"\.\.\. +\((\d+) more rows, to offset (\d+)K\)$", after.pop().strip())
    assert m and int(m.group(2)) == new_off + (len(after) + int(m.group(1)) - 1) * chunk, m
    assert int(m.group(1)) > 2, "a cut that leaves out only %s rows" % m.group(1)
g = n + add
for row, line in enumerate(after):
    cells = line.split()
    assert int(cells[0]) == new_off + row * chunk, line
    want = ["P"] * g
    for d in range(new_data):
        k = row * new_data + d
        want[member(g, row, d)] = "D%d" % k if k * chunk < old_cap else "0"
    assert cells[1:] == want, (row, cells, want)
# The rule, walked here: a window may be written only while its writes
# end at or below where the old bytes the recorded line counts begin.
lines = re.findall(r"window at array (\d+)K: (record the line here first; )?.*?"
                   r"write new \[(\d+)K, (\d+)K\); the old bytes the superblocks "
                   r"count as not moved start at (\d+)K", text)
assert len(lines) == -(-new_cap // window), (len(lines), new_cap, window)
safe = 0
for at, rec, w0, w1, keep in lines:
    at, w0, w1, keep = int(at), int(w0), int(w1), int(keep)
    if rec:
        safe = at
    assert keep == old_off + safe // (chunk * old_data) * chunk, (at, keep, safe)
    assert w1 <= keep or safe >= old_cap, ("writes pass the old bytes", at, w1, keep)
    assert w0 == new_off + at // (chunk * new_data) * chunk, (at, w0)
PY
done
bad "--add 30: expected a whole number from 1 to 29" explain grow --add 30
bad "grow: unexpected argument 'x'" explain grow x
bad "option --add given twice" explain grow --add 1 --add 2

echo "test-teach: ok"
