#!/usr/bin/env bash
# raid5ctl layout --svg and explain --svg, rendered in headless Chromium
# and read back from the screenshot (svg-boxes.py): the picture is well
# formed XML, the screenshot is not blank, and it shows the chunk boxes
# the geometry calls for, in the right colours:
#   - layout, 3 members at 16K, 32K and 64K (the seed geometries): 6
#     rows x 3 boxes, one parity box per row, the rest data;
#   - layout, 5 members, 7 rows, member 2 missing: 35 boxes, 7 missing,
#     and parity boxes where layout --json puts parity off member 2;
#   - explain write 0 4K on 5 members (RMW): one stripe, 3 rows x 5
#     boxes; the reads fall on 2 boxes (old D0, old P) and the writes on
#     2 (new D0, new P), as the text report's I/O lines say;
#   - explain write at sector 63 (seed 000: a stripe's worth, 128K into
#     the partition): 2 stripes, 18 boxes, touched bands on 3 (D2, D3,
#     D4), a read band per read and a written band per write;
#   - --svg with --json, and --svg for map, are refused with one line;
#   - docs/pictures/ holds what raid5ctl draws now (pictures.list), and
#     each of them renders with a box per member and row it draws.
# Without headless Chromium or python3-pil, says so and exits 77.
. "${0%/*}/functions.sh"
requires_raid5ctl
chromium=$(command -v chromium-headless-shell || command -v chromium || :)
[ -n "$chromium" ] || skip "needs headless Chromium (chromium-headless-shell)"
/usr/bin/python3 -c 'import PIL' 2>/dev/null || skip "needs python3-pil"
BOXES=$abs_top_srcdir/tests/tools/svg-boxes.py

# draw NAME RAID5CTL-ARGS...: the picture in $tmpdir/NAME.svg, checked as
# XML, its screenshot read back into $tmpdir/NAME.json.
draw ()
{
  local name=$1 w h
  shift
  "$RAID5CTL" "$@" >"$tmpdir/$name.svg" 2>"$tmpdir/$name.err" ||
    fail "raid5ctl $*: $(cat "$tmpdir/$name.err")"
  /usr/bin/python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' \
    "$tmpdir/$name.svg" 2>"$tmpdir/$name.xml" ||
    fail "raid5ctl $*: not well-formed XML: $(tail -n 1 "$tmpdir/$name.xml")"
  read -r w h < <(sed -n 's/.*<svg [^>]*width="\([0-9]*\)" height="\([0-9]*\)".*/\1 \2/p' \
                    "$tmpdir/$name.svg")
  [ -n "$w" ] && [ -n "$h" ] || fail "raid5ctl $*: no width and height"
  timeout 60 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --force-device-scale-factor=1 --window-size="$w,$h" \
    --screenshot="$tmpdir/$name.png" "file://$tmpdir/$name.svg" \
    >"$tmpdir/$name.chromium" 2>&1 && [ -s "$tmpdir/$name.png" ] ||
    fail "chromium did not take a screenshot of $name.svg: $(tail -n 2 "$tmpdir/$name.chromium")"
  /usr/bin/python3 "$BOXES" "$tmpdir/$name.svg" "$tmpdir/$name.png" \
    >"$tmpdir/$name.json" || fail "svg-boxes.py $name"
}

# val NAME EXPR: EXPR (python, on the JSON as s) of picture NAME.
val ()
{
  /usr/bin/python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
    "$tmpdir/$1.json" "$2"
}

# expect NAME EXPR WANT: EXPR of NAME's screenshot is WANT.
expect ()
{
  local got
  got=$(val "$1" "$2")
  [ "$got" = "$3" ] || fail "$1: $2 is $got, want $3 ($(cat "$tmpdir/$1.json"))"
}

# not_blank NAME: a fair share of the screenshot is drawn, not all of it.
not_blank ()
{
  expect "$1" "0.03 < s['nonwhite'] < 0.9" True
}

for chunk in 16 32 64; do
  draw "layout$chunk" layout --chunk "${chunk}K" --svg
  not_blank "layout$chunk"
  expect "layout$chunk" "s['boxes']" 18
  expect "layout$chunk" "s['dominant']['parity']" 6
  expect "layout$chunk" "s['dominant']['data']" 12
  grep -q ">3 members, left-symmetric, chunk ${chunk}K" "$tmpdir/layout$chunk.svg" ||
    fail "layout$chunk: the picture does not name its geometry"
  echo "   layout --chunk ${chunk}K: $(val "layout$chunk" "s['boxes']") boxes, $(val "layout$chunk" "s['dominant']")"
done

draw missing layout --disks 5 --stripes 7 --missing 2 --svg
not_blank missing
parity=$("$RAID5CTL" layout --disks 5 --stripes 7 --json |
  /usr/bin/python3 -c 'import json, sys; print(sum(1 for r in json.load(sys.stdin)["stripes"] if r["parity"] != 2))')
expect missing "s['boxes']" 35
expect missing "s['dominant']['missing']" 7
expect missing "s['dominant']['parity']" "$parity"
expect missing "s['dominant']['data']" $(( 28 - parity ))
echo "   layout --disks 5 --stripes 7 --missing 2: $(val missing "s['dominant']")"

# The text report's I/O lines name the members read and written; the
# picture's bands must fall on as many boxes.  members_doing VERB
# ARGS...: how many members raid5ctl ARGS's I/O lines VERB (read, write).
members_doing ()
{
  local verb=$1
  shift
  "$RAID5CTL" "$@" | awk -v verb="$verb" '$1 == verb && $2 ~ /^m[0-9]+$/ { print $2 }' |
    sort -u | wc -l
}
draw rmw explain write 0 4K --chunk 64K --disks 5 --svg
not_blank rmw
expect rmw "s['boxes']" 15
reads=$(members_doing read explain write 0 4K --chunk 64K --disks 5)
writes=$(members_doing write explain write 0 4K --chunk 64K --disks 5)
[ "$reads" = 2 ] && [ "$writes" = 2 ] ||
  fail "explain write 0 4K on 5 members: the text says $reads members read and $writes written, want 2 and 2"
expect rmw "s['with']['read']" "$reads"
expect rmw "s['with']['written']" "$writes"
expect rmw "s['with']['touched']" 1
grep -q "RMW (read-modify-write)" "$tmpdir/rmw.svg" || fail "rmw: the strategy is not named"
echo "   explain write 0 4K, 5 members: $(val rmw "s['boxes']") boxes, read on $reads, written on $writes"

off=$(( 63 * 512 + 131072 ))
draw sector63 explain write "$off" 128K --chunk 64K --svg
not_blank sector63
expect sector63 "s['boxes']" 18
# Here every I/O is on a box of its own (the text's I/O lines), so the
# bands are as many as the I/Os: 2 reads, 5 writes.
reads=$("$RAID5CTL" explain write "$off" 128K --chunk 64K | grep -c '^    read ')
writes=$("$RAID5CTL" explain write "$off" 128K --chunk 64K | grep -c '^    write ')
[ "$reads" = 2 ] && [ "$writes" = 5 ] ||
  fail "explain write at sector 63: the text says $reads reads, $writes writes, want 2 and 5"
expect sector63 "s['with']['read']" "$reads"
expect sector63 "s['with']['written']" "$writes"
expect sector63 "s['with']['touched']" 3
echo "   explain write at sector 63: $(val sector63 "s['boxes']") boxes, $(val sector63 "s['with']")"

status=0
out=$("$RAID5CTL" layout --svg --json 2>&1) || status=$?
[ $status = 1 ] && [ "$(wc -l <<<"$out")" = 1 ] && grep -q -- "--svg and --json" <<<"$out" ||
  fail "layout --svg --json: exit $status, '$out'"
status=0
out=$("$RAID5CTL" map 0 --svg 2>&1) || status=$?
[ $status = 1 ] && grep -q -- "--svg: only raid5ctl layout and explain" <<<"$out" ||
  fail "map --svg: exit $status, '$out'"
echo "   refused: $out"

list=$abs_top_srcdir/docs/pictures/pictures.list
n=0
while read -r file args; do
  case $file in ''|'#'*) continue ;; esac
  # shellcheck disable=SC2086
  "$RAID5CTL" $args >"$tmpdir/now.svg" || fail "raid5ctl $args"
  cmp -s "$tmpdir/now.svg" "$abs_top_srcdir/docs/pictures/$file" ||
    fail "docs/pictures/$file is not what 'raid5ctl $args' draws now (run scripts/pictures.sh)"
  # shellcheck disable=SC2086
  draw "doc$n" $args
  not_blank "doc$n"
  expect "doc$n" "s['boxes'] >= 9" True
  n=$(( n + 1 ))
done <"$list"
(( n >= 6 )) || fail "$list lists $n pictures"
echo "   docs/pictures: $n pictures, each as raid5ctl draws it and rendering"
