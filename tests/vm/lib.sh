# tests/vm/lib.sh -- host-side helpers for tests/vm/test-*.sh.
#
# Source it first thing:   . "${0%/*}/lib.sh"
# Environment (set by `scripts/vm.sh test`; defaults for running a test by hand):
#   VM_SH     scripts/vm.sh          TOP   the source tree
#   PLUGIN    the built nbdkit-raid5-plugin.so (default: newest build*/ one)
#   VM_KEEP=1 keep the work folder even when the test passes
# Exit status: 0 pass, 77 skip (a line "SKIP: why"), anything else fail.

set -euo pipefail
: "${TOP:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${VM_SH:=$TOP/scripts/vm.sh}"
VM_TESTS=$TOP/tests/vm
test_name=$(basename "$0" .sh); test_name=${test_name#test-}

skip () { echo "SKIP: $*"; exit 77; }
fail () { echo "FAIL: $test_name: $*"; exit 1; }
say () { echo "$test_name: $*"; }

# A work folder, outside /tmp by default (the guest sees it at the same path,
# read-write).  Removed at exit when the test passed, kept otherwise.
W=$(mktemp -d "${TMPDIR:-/var/tmp}/raid5-vm-$test_name.XXXXXX")
_vm_cleanup () {
    local rc=$?
    badsector_stop
    if [[ $rc == 0 && -z ${VM_KEEP:-} ]]; then rm -rf "$W"; exit 0; fi
    if [[ $rc != 0 && $rc != 77 && -s $W/console.log ]]; then
        echo "$test_name: guest kernel messages (warnings and errors):"
        grep -v '^init: ' "$W/console.log" | tail -n 15 | sed 's/^/  console: /'
    fi
    echo "$test_name: work folder kept: $W"
    exit $rc
}
trap _vm_cleanup EXIT

# vm_run [vm.sh run options] SCRIPT [IMAGE...]: one guest boot in $W.
vm_run () { "$VM_SH" run -w "$W" ${VM_TRACE:+-e VM_TRACE=1} "$@"; }

# need_plugin: skip unless a loadable raid5 plugin is built; copies it into $W
# (so the guest sees it even if it lives under /tmp) and sets PLUGIN to the copy.
need_plugin () {
    local p=${PLUGIN:-}
    [[ -n $p ]] || p=$(ls -1t "$TOP"/build*/plugin/.libs/nbdkit-raid5-plugin.so 2>/dev/null | head -n1)
    [[ -n $p && -f $p ]] || skip "no built raid5 plugin (build/plugin/.libs/nbdkit-raid5-plugin.so)"
    nbdkit "$p" --dump-plugin >/dev/null 2>&1 || fail "nbdkit cannot load $p"
    cp "$p" "$W/nbdkit-raid5-plugin.so"
    say "plugin: $p"
    BUILT_PLUGIN=$p
    PLUGIN=$W/nbdkit-raid5-plugin.so
    export PLUGIN
}

# find_raid5ctl (after need_plugin): RAID5CTL, by default the raid5ctl of
# the build the plugin came from.  need_raid5ctl: the same, and skip the
# test unless it is built.
find_raid5ctl () {
    RAID5CTL=${RAID5CTL:-$(dirname "$(dirname "$(dirname "$BUILT_PLUGIN")")")/tools/raid5ctl}
}
need_raid5ctl () {
    find_raid5ctl
    [[ -x $RAID5CTL ]] || skip "raid5ctl is not built ($RAID5CTL)"
}

# need_badsector (after need_raid5ctl): BADSECTOR, the tests' nbdkit
# plugin serving a file as a disk with bad sectors (make check builds
# it); skip the test unless it is built.
need_badsector () {
    BADSECTOR=$(dirname "$RAID5CTL")/../tests/integration/.libs/nbdkit-badsector-plugin.so
    [[ -f $BADSECTOR ]] || skip "the badsector plugin is not built ($BADSECTOR: make check builds it)"
}

# badsector_start NAME IMG LIST: IMG served as a disk whose sectors LIST
# says are bad, on $W/NAME.sock (its log of failed and remapped sectors
# $W/NAME.badlog, nbdkit's $W/NAME.nbdkit.log); waits at most 5 s for
# the socket.  badsector_stop: every one started stops (at exit too).
BADSECTOR_PIDS=()
badsector_start () {
    local i
    nbdkit -f -U "$W/$1.sock" "$BADSECTOR" file="$2" bad="$3" \
        log="$W/$1.badlog" >"$W/$1.nbdkit.log" 2>&1 &
    BADSECTOR_PIDS+=($!)
    for (( i = 0; i < 100; i++ )); do [[ -S $W/$1.sock ]] && return 0; sleep 0.05; done
    fail "the badsector server $1 did not start: $(cat "$W/$1.nbdkit.log")"
}
# badsector_met LOG SECTOR: did the server whose log is LOG fail a read
# of SECTOR (a "read-error START COUNT" line covering it)?
badsector_met () {
    awk -v b="$2" '$1 == "read-error" && $2 <= b && b < $2 + $3 { f = 1 } END { exit !f }' "$1"
}
badsector_stop () {
    (( ${#BADSECTOR_PIDS[@]} > 0 )) || return 0
    kill "${BADSECTOR_PIDS[@]}" 2>/dev/null || :
    wait "${BADSECTOR_PIDS[@]}" 2>/dev/null || :
    BADSECTOR_PIDS=()
}

# kill_past PID LIMIT PROBE...: runs PROBE (a command that prints a number,
# or nothing yet) every 20 ms, for at most 6 s, until it prints more than
# LIMIT; then kills PID (-9) and waits for it: a job stopped part way.
kill_past () {
    local pid=$1 limit=$2 i p; shift 2
    for (( i = 0; i < 300; i++ )); do
        p=$("$@")
        [[ -n $p && $p -gt $limit ]] && break
        sleep 0.02
    done
    kill -9 "$pid" 2>/dev/null || :; wait "$pid" 2>/dev/null || :
}

# grown_part_way: $W/g0..3.img, 32 MiB each, a 3-member raid5ctl array
# (64K chunks) holding $W/pattern (the array's bytes), grown to 4 by
# raid5ctl and killed in its first half; sets CHUNK_SECTORS, the reshape
# position P (KiB of the array), the data offsets OLD and NEW (sectors).
grown_part_way () {
    local size i
    CHUNK_SECTORS=128
    for i in 0 1 2 3; do truncate -s 32M "$W/g$i.img"; done
    "$RAID5CTL" create --assume-clean --chunk 64K --bitmap none "$W"/g{0,1,2}.img \
        >"$W/create.out" 2>&1 || { cat "$W/create.out"; fail "raid5ctl create"; }
    size=$(nbdkit -U - "$PLUGIN" disk="$W"/g{0,1,2}.img --run 'nbdinfo --size "$uri"')
    head -c "$size" /dev/urandom >"$W/pattern"
    nbdkit -U - "$PLUGIN" disk="$W"/g{0,1,2}.img --run "nbdcopy '$W/pattern' \"\$uri\"" ||
        fail "writing the pattern"
    "$RAID5CTL" grow --add "$W/g3.img" --max-speed 4M "$W"/g{0,1,2}.img >"$W/grow.out" 2>&1 &
    kill_past $! 8192 reshape_kib "$W/g0.img"
    P=$(reshape_kib "$W/g0.img")
    [[ -n $P && $P -gt 0 && $P -lt $((size / 1024 / 2)) ]] ||
        fail "the grow was not stopped in its first half (reshape at '${P:-none}' KiB of $((size / 1024)))"
    OLD=$(mdadm --examine "$W/g1.img" | sed -n 's/^ *Data Offset : \([0-9]*\) sectors.*/\1/p')
    NEW=$(mdadm --examine "$W/g1.img" | sed -n 's/^ *New Offset : \([0-9]*\) sectors.*/\1/p')
    NEW=${NEW:-$OLD}
    say "grow killed with the reshape at $P KiB; data offset $OLD sectors, new $NEW"
}
reshape_kib () { mdadm --examine "$1" | sed -n "s/^ *Reshape pos'n : \([0-9]*\) .*/\1/p"; }
doff_of () { mdadm --examine "$1" | sed -n 's/^ *Data Offset : \([0-9]*\) sectors.*/\1/p'; }

# pattern_array NAME [PATTERN_MIB]: a raid5ctl array (64K chunks,
# --assume-clean) on $W/NAME{0,1,2}.img, 32 MiB each, holding $W/pattern
# (PATTERN_MIB MiB of random bytes, 4 by default) written through the
# plugin; DOFF its data offset in sectors.
pattern_array () {
    local n=$1 i
    for i in 0 1 2; do truncate -s 32M "$W/$n$i.img"; done
    head -c $((${2:-4} << 20)) /dev/urandom >"$W/pattern"
    "$RAID5CTL" create --assume-clean --chunk 64K "$W/${n}0.img" "$W/${n}1.img" \
        "$W/${n}2.img" >"$W/create.out" 2>&1 || { cat "$W/create.out"; fail "raid5ctl create"; }
    nbdkit -U - "$PLUGIN" disk="$W/${n}0.img" disk="$W/${n}1.img" disk="$W/${n}2.img" \
        --run "nbdcopy '$W/pattern' \"\$uri\"" || fail "writing the pattern"
    DOFF=$(doff_of "$W/${n}1.img")
    [[ -n $DOFF ]] || fail "no data offset: $(mdadm --examine "$W/${n}1.img" 2>&1 | head -n 3)"
}

need_cmds () {
    local c
    for c in "$@"; do command -v "$c" >/dev/null || fail "$c is not installed"; done
}

# make_tree DIR: a file tree of about 10 MiB (a 4 MiB file crossing many
# stripes, odd sizes, names with spaces, nesting, a symlink, an empty file),
# DIR.tar (one 9p read in the guest is much faster than 150 small ones) and
# DIR.md5 with the checksum of every file.
make_tree () {
    local d=$1 i n
    mkdir -p "$d/big" "$d/small/deep/er" "$d/with space"
    head -c $((4 << 20)) /dev/urandom >"$d/big/four-mib.bin"
    head -c $((1 << 20)) /dev/urandom >"$d/big/one-mib.bin"
    head -c $((777777)) /dev/urandom >"$d/big/odd.bin"
    for i in $(seq 1 120); do
        n=$(( (i * 7919) % 40000 + 1 ))
        head -c $n /dev/urandom >"$d/small/f$i"
        [[ $((i % 10)) == 0 ]] && head -c $((n * 3)) /dev/urandom >"$d/small/deep/er/g $i.dat"
        [[ $((i % 15)) == 0 ]] && head -c $((n * 5)) /dev/urandom >"$d/with space/h $i"
    done
    : >"$d/empty"
    ln -s big/odd.bin "$d/link"
    (cd "$d" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum) >"$d.md5"
    tar -C "$d" -cf "$d.tar" .
}
