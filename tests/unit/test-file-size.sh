#!/usr/bin/env bash
# No source file of the product (raid/ io/ array/ plugin/ tools/, .c and
# .h) is 600 lines or longer: the design's limit for small files.  Each
# offender is listed as FILE (N lines).
set -u
: "${abs_top_srcdir:?}"
cd "$abs_top_srcdir" || exit 1
MAX_LINES=599

bad=0
for f in raid/*.[ch] io/*.[ch] array/*.[ch] plugin/*.[ch] tools/*.[ch]; do
  [ -f "$f" ] || continue
  n=$(wc -l <"$f")
  if [ "$n" -gt "$MAX_LINES" ]; then
    echo "$f ($n lines): split it by theme"
    bad=$((bad + 1))
  fi
done
if [ "$bad" -gt 0 ]; then
  echo "$bad files of $((MAX_LINES + 1)) lines or more"
  exit 1
fi
echo "every source file under $((MAX_LINES + 1)) lines"
