#!/usr/bin/env bash
# raid/ is pure: it compiles against an include path that holds only
# raid/ itself, the C library and ISA-L -- no io/, array/ or plugin/
# header, no liburing, nbdkit, libnbd, libblkid or Criterion.  The system
# headers are a copy of /usr/include's top level without those libraries
# (symlinks), the compiler's own headers and the multiarch folder, used
# with -nostdinc so the default path cannot bring them back.  A probe that
# includes <liburing.h> (and one that includes "io/member.h") must fail to
# compile against the same path, or the fence proves nothing.
set -u
: "${abs_top_srcdir:?}" "${abs_top_builddir:?}"
CC=${CC:-gcc}
command -v "$CC" >/dev/null || { echo "SKIP: no C compiler ($CC)"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

mkdir -p "$tmp/sys" "$tmp/src"
for e in /usr/include/*; do
  case ${e##*/} in
    liburing*|nbdkit-*|libnbd*|blkid|criterion|json-c|x86_64-linux-gnu) ;;
    *) ln -s "$e" "$tmp/sys/" ;;
  esac
done
ln -s "$abs_top_srcdir/raid" "$tmp/src/raid"
multiarch=$("$CC" -print-multiarch 2>/dev/null)
flags=(-std=gnu11 -fsyntax-only -nostdinc -isystem "$($CC -print-file-name=include)"
       -isystem "$tmp/sys" -I "$tmp/src" -I "$abs_top_builddir")
[ -n "$multiarch" ] && [ -d "/usr/include/$multiarch" ] &&
  flags+=(-isystem "/usr/include/$multiarch")

fails=0
for f in "$abs_top_srcdir"/raid/*.c; do
  if ! out=$("$CC" "${flags[@]}" "$f" 2>&1); then
    echo "not pure: ${f#"$abs_top_srcdir"/}: $(echo "$out" | grep -m1 error)"
    fails=$((fails + 1))
  fi
done
for probe in '#include <liburing.h>' '#include <nbdkit-plugin.h>' \
             '#include "io/member.h"'; do
  printf '%s\nint x;\n' "$probe" >"$tmp/probe.c"
  if "$CC" "${flags[@]}" "$tmp/probe.c" >/dev/null 2>&1; then
    echo "the fence does not hold: '$probe' compiles"
    fails=$((fails + 1))
  fi
done
[ $fails = 0 ] || { echo "FAIL: test-raid-purity: $fails"; exit 1; }
echo "test-raid-purity: raid/*.c compile with only raid/, libc and ISA-L; the probes do not"
