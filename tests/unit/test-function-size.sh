#!/usr/bin/env bash
# No function of the product (raid/ io/ array/ plugin/ tools/) is longer
# than 60 lines or takes more than 6 parameters (the design's limits; a
# variadic function's "..." is not counted).  Lengths and signatures come
# from universal-ctags (a real C parser): a function runs from the line
# of its name to its closing brace.  A callback whose signature a library
# imposes is named in tests/unit/function-size.allow with the reason; a
# name there that is no longer over a limit is itself an error, so the
# list only shrinks.  Each offender is listed as FILE:LINE NAME.
set -u
: "${abs_top_srcdir:?}"
command -v ctags >/dev/null && ctags --version 2>/dev/null | grep -q Universal ||
  { echo "SKIP: universal-ctags is not installed"; exit 77; }
cd "$abs_top_srcdir" || exit 1
allow=tests/unit/function-size.allow
MAX_LINES=60 MAX_PARAMS=6

ctags --fields=+neS --c-kinds=f -o - raid/*.c io/*.c array/*.c plugin/*.c \
  tools/*.c 2>/dev/null |
/usr/bin/python3 -c '
import sys
max_lines, max_params, allow_path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
allowed = {}
for line in open(allow_path):
    line = line.split("#", 1)[0].strip()
    if line:
        allowed[line.split()[0]] = False
bad = 0
for row in sys.stdin:
    f = row.rstrip("\n").split("\t")
    field = dict(x.split(":", 1) for x in f[3:] if ":" in x)
    if "line" not in field or "end" not in field:
        continue
    sig = field.get("signature", "()").strip()[1:-1]
    depth, params = 0, (0 if sig.strip() in ("", "void") else 1)
    for c in sig:
        depth += c in "(["
        depth -= c in ")]"
        params += c == "," and depth == 0
    if sig.rstrip().endswith("..."):
        params -= 1
    lines = int(field["end"]) - int(field["line"]) + 1
    over = lines > max_lines or params > max_params
    if f[0] in allowed:
        allowed[f[0]] = allowed[f[0]] or over
        continue
    if over:
        print("%s:%s %s (%d lines, %d parameters)" % (f[1], field["line"], f[0], lines, params))
        bad += 1
for name, still in allowed.items():
    if not still:
        print("%s: on %s but within the limits: take it off the list" % (name, allow_path))
        bad += 1
print("%d over the limits" % bad if bad else "every function within %d lines and %d parameters" % (max_lines, max_params))
sys.exit(1 if bad else 0)
' "$MAX_LINES" "$MAX_PARAMS" "$allow"
