#!/usr/bin/env bash
# scripts/pictures.sh [RAID5CTL]: draw docs/pictures/ again from
# docs/pictures/pictures.list with raid5ctl (default: build/tools/raid5ctl).
# Run it after changing what layout --svg or explain --svg draw;
# tests/tools/test-svg.sh fails while the pictures are out of date.
set -euo pipefail
top=$(cd "${0%/*}/.." && pwd)
raid5ctl=${1:-$top/build/tools/raid5ctl}
[ -x "$raid5ctl" ] || { echo "pictures.sh: $raid5ctl: not built" >&2; exit 1; }
while read -r file args; do
  case $file in ''|'#'*) continue ;; esac
  # shellcheck disable=SC2086
  "$raid5ctl" $args >"$top/docs/pictures/$file"
  echo "docs/pictures/$file: raid5ctl $args"
done <"$top/docs/pictures/pictures.list"
