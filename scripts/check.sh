#!/bin/bash
# scripts/check.sh -- build and test everything; the test command of the
# README and of CI (.ci/run).
#
#   1. packages    apt-get install what dpkg lacks (root; see lib-build.sh)
#   2. build       autoreconf -fi; out-of-tree build in build/ (--enable-werror)
#   3. tests       make check in build/: unit, integration, kernel layers
#   4. sanitizers  second build in build-sanitize/ (--enable-sanitizers
#                  --enable-werror); unit, tool, kernel and most integration
#                  tests under ASan and UBSan (the long repetitions run in the
#                  plain build only), nbdkit (not instrumented) runs with libasan
#                  preloaded; a canary plugin proves that wiring catches bugs
#   5. vm          scripts/vm.sh test, when that script exists
#   6. package     the Debian package from a fresh clone, lintian, installed
#                  and used, removed (scripts/check-package.sh)
#   7. soak        scripts/soak.sh on build/: 60 random faults under a
#                  verified workload with a fixed seed and 60 with a new
#                  seed (printed), the two runs at once (about 4 minutes on
#                  2 cores), each over two arrays: one with a bitmap, then
#                  one with a partial parity log (the fixed seed; a new one:
#                  that or none); members NBD and local when root (network
#                  namespaces), local files otherwise
# Then a summary; the exit status is non-zero if anything failed.
# --quick is the layer to run while working (under 3 minutes here): the
# build, every unit test and a smoke of the data path (QUICK_SMOKE); the
# full run, without options, is what CI runs.

usage ()
{
    cat <<EOF
usage: scripts/check.sh [options]
  --quick               the developer's layer: build, unit tests and a
                        smoke of the data path only (under 3 minutes)
  --no-sanitize         skip the sanitizer build (layer 4)
  --no-install          never apt-get; only report missing packages
  --no-vm               skip scripts/vm.sh
  --no-soak             skip scripts/soak.sh (layer 7)
  --no-sanitize-kernel  run only unit and integration tests under the sanitizers
  --reconf              force autoreconf -fi
  -h, --help            this text
Environment (applied when stdin is not a terminal, as in CI):
R5_CHECK_TIMEOUT (s, default 1500) bounds each make check,
R5_VM_TIMEOUT (s, default 900) bounds scripts/vm.sh,
R5_SOAK_TIMEOUT (s, default 900) bounds each soak run.
R5_SOAK_SEED (default 1) is the fixed seed; R5_SOAK_EVENTS (default 60).
EOF
}

set -u
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top" || exit 1
. "$top/scripts/lib-build.sh"
. "$top/scripts/check-package.sh"

quick=0 sanitize=1 no_install=0 vm=1 sanitize_kernel=1 reconf= soak=1
while [ $# -gt 0 ]; do
    case $1 in
        --quick) quick=1 sanitize=0 vm=0 soak=0 ;;
        --soak) soak=1 ;;
        --no-soak) soak=0 ;;
        --no-sanitize) sanitize=0 ;;
        --no-install) no_install=1 ;;
        --no-vm) vm=0 ;;
        --no-sanitize-kernel) sanitize_kernel=0 ;;
        --reconf) reconf=force ;;
        -h|--help) usage; exit 0 ;;
        *) echo "check.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done

build=$top/build
sbuild=$top/build-sanitize
# The data path's smoke for --quick: random verified I/O checked against
# md's layout on the members, a member lost and found, a crash and its
# resync, create and check from raid5ctl, the export's sizes.
QUICK_SMOKE="tests/integration/test-random-io.sh tests/integration/test-degraded.sh
  tests/integration/test-crash.sh tests/integration/test-export-info.sh
  tests/tools/test-create.sh tests/tools/test-check.sh"
check_timeout=${R5_CHECK_TIMEOUT:-1500}
start=$SECONDS
SUMMARY=()
failed=0

banner () { echo; echo "=== $* ==="; }
elapsed () { local s=$((SECONDS - $1)); printf '%dm%02ds' $((s / 60)) $((s % 60)); }

# record LAYER STATUS DETAIL -- one summary row; FAIL makes check.sh fail.
record ()
{
    SUMMARY+=("$(printf '%-26s %-5s %s' "$1" "$2" "$3")")
    [ "$2" = FAIL ] && failed=1
    return 0
}

layer_of ()
{
    case $1 in
        tests/unit/*) echo unit ;;
        tests/integration/*) echo integration ;;
        tests/tools/*) echo tools ;;
        tests/kernel/*) echo kernel ;;
        tests/vm/*) echo vm-tests ;;
        *) echo other ;;
    esac
}

# with_timeout SECS CMD...: bound CMD when nobody is watching (CI: stdin is
# not a terminal).  timeout(1) runs CMD in its own process group, which a
# terminal's Ctrl-C would not reach, so interactive runs go unbounded.
with_timeout ()
{
    local secs=$1; shift
    if [ -t 0 ]; then "$@"; else timeout -k 30 "$secs" "$@"; fi
}

# Print the value of make variable $2 in build dir $1.
make_var ()
{
    printf 'r5-print-var:\n\t@echo $(%s)\n' "$2" |
        make -s --no-print-directory -C "$1" -f Makefile -f - r5-print-var
}

# Tests of $TESTS (or of the TESTS make variable) without a .trs in $1.
unfinished ()
{
    local t
    for t in ${TESTS_RUN:-$(make_var "$1" TESTS)}; do
        [ -f "$1/$t.trs" ] || [ -f "$1/${t%.*}.trs" ] || printf ' %s' "${t##*/}"
    done
}

# collect BUILDDIR SUFFIX MAKE_STATUS -- summary rows per test layer from
# the .trs files that make check left (they were removed beforehand).
collect ()
{
    local b=$1 suffix=$2 status=$3 trs rel layer res
    declare -A pass=() skip=() fail=() notes=()
    while IFS= read -r trs; do
        rel=${trs#"$b"/}; rel=${rel%.trs}
        layer=$(layer_of "$rel")
        [ -n "${pass[$layer]+x}" ] || { pass[$layer]=0; skip[$layer]=0; fail[$layer]=0; notes[$layer]=; }
        while read -r res; do
            case $res in
                PASS|XFAIL) pass[$layer]=$((pass[$layer] + 1)) ;;
                SKIP) skip[$layer]=$((skip[$layer] + 1))
                      notes[$layer]+="; ${rel##*/}: $(grep -v '^\s*$' "${trs%.trs}.log" | tail -n 1 | cut -c1-100)" ;;
                *) fail[$layer]=$((fail[$layer] + 1)); notes[$layer]+="; ${rel##*/} $res" ;;
            esac
        done < <(sed -n 's/^:test-result: *\([A-Z]*\).*/\1/p' "$trs")
    done < <(find "$b/tests" -name '*.trs' 2>/dev/null | sort)
    local any=0 anyfail=0 st
    for layer in unit integration tools kernel vm-tests other; do
        [ -n "${pass[$layer]+x}" ] || continue
        any=1 st=PASS
        if [ "${fail[$layer]}" != 0 ]; then st=FAIL anyfail=1
        elif [ "${pass[$layer]}" = 0 ]; then st=SKIP; fi
        record "$layer$suffix" $st "${pass[$layer]} passed, ${skip[$layer]} skipped, ${fail[$layer]} failed${notes[$layer]}"
    done
    if [ "$status" = 124 ]; then
        record "make check$suffix" FAIL "timed out after ${check_timeout}s; no result from:$(unfinished "$b")"
    elif [ "$status" != 0 ] && [ $anyfail = 0 ]; then
        record "make check$suffix" FAIL "exit status $status (build of test programs, or the harness)"
    elif [ $any = 0 ]; then
        record "tests$suffix" SKIP "no tests in TESTS yet"
    fi
}

# slowest BUILDDIR [N] -- the N (default 12) tests that took longest, from
# each .log's birth (the harness opens it as the test starts) to its .trs
# (written as it ends): where the suite's time goes, for keeping it inside
# CI's budget.  Prints nothing where the filesystem keeps no birth time.
slowest ()
{
    local b=$1 n=${2:-12} log born ended
    while IFS= read -r log; do
        [ -f "${log%.log}.trs" ] || continue
        born=$(stat -c %W "$log") ended=$(stat -c %Y "${log%.log}.trs")
        [ "$born" -gt 0 ] 2>/dev/null || return 0
        printf '%5ds %s\n' $((ended - born)) "${log#"$b"/}"
    done < <(find "$b/tests" -name '*.log' 2>/dev/null) | sort -rn | head -n "$n"
}

# run_check BUILDDIR SUFFIX [make args...] -- make check, print the failed
# tests' logs (test-suite.log) and add summary rows.
run_check ()
{
    local b=$1 suffix=$2 t0=$SECONDS status=0; shift 2
    find "$b/tests" -name '*.trs' -delete 2>/dev/null
    with_timeout "$check_timeout" make -C "$b" --no-print-directory \
        -j"$(nproc 2>/dev/null || echo 2)" check "$@" || status=$?
    [ $status = 124 ] && echo "make check timed out after ${check_timeout}s"
    if [ $status != 0 ] && [ -f "$b/test-suite.log" ]; then
        banner "test-suite.log of failures ($b)"
        cat "$b/test-suite.log"
    fi
    echo "make check$suffix: $(elapsed $t0); the slowest tests:"
    slowest "$b"
    collect "$b" "$suffix" $status
}

# --- sanitizer wiring -------------------------------------------------------

# The plugin is dlopen'ed by an uninstrumented nbdkit: the ASan runtime must
# be preloaded into nbdkit.  Leak checking is off for nbdkit (it does not free
# everything at exit and it dlcloses the plugin); UBSan aborts on the first
# error (-fno-sanitize-recover).  Writes the wrapper to $1/asan-bin/nbdkit.
#
# libp11-kit (nbdkit -> gnutls -> p11-kit) calls newlocale() in its
# constructor.  A preloaded libasan initialises after it, lazily, inside
# that newlocale's malloc while glibc's locale lock is held for writing;
# ASan's start-up dlerror() then read-unlocks that lock, and the process
# hangs at exit in p11-kit's freelocale() once anything called strerror()
# (e.g. a plugin reporting "No such file or directory").  Preloading
# libp11-kit before libasan runs libasan's constructor first; it defines no
# symbol that ASan intercepts, so verify_asan_link_order=0 is safe.
make_nbdkit_wrapper ()
{
    local dir=$1/asan-bin asan real pre opts
    asan=$(gcc -print-file-name=libasan.so)
    real=$(command -v nbdkit) || { echo "nbdkit not found"; return 1; }
    [ -f "$asan" ] || { echo "libasan.so not found (gcc -print-file-name)"; return 1; }
    pre=$(ldd "$real" | awk '/libp11-kit\.so/ { print $3 }')
    opts=detect_leaks=0:halt_on_error=1:detect_stack_use_after_return=1
    [ -z "$pre" ] || opts=$opts:verify_asan_link_order=0
    mkdir -p "$dir"
    cat > "$dir/nbdkit" <<EOF
#!/bin/sh
# Generated by scripts/check.sh: run the uninstrumented nbdkit with the ASan
# runtime preloaded so that an ASan/UBSan-instrumented plugin can be loaded
# (see make_nbdkit_wrapper there for why libp11-kit comes first).
LD_PRELOAD="${pre:+$pre:}$asan\${LD_PRELOAD:+:\$LD_PRELOAD}"
ASAN_OPTIONS="\${R5_NBDKIT_ASAN_OPTIONS:-$opts}"
UBSAN_OPTIONS="\${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export LD_PRELOAD ASAN_OPTIONS UBSAN_OPTIONS
exec "$real" "\$@"
EOF
    chmod +x "$dir/nbdkit"
}

# A tiny plugin built with the project's sanitizer flags that overflows a
# heap buffer (bug=asan) or a signed int (bug=ubsan) when configured: proves
# that an error inside a dlopen'ed plugin is reported and fails nbdkit.
# bug=strerror fails config_complete with strerror(ENOENT): nbdkit must
# exit promptly (the p11-kit deadlock above).
sanitizer_canary ()
{
    local dir=$1/canary wrapper=$1/asan-bin/nbdkit flags out
    flags=$(make_var "$1" SANITIZER_CFLAGS)
    [ -n "$flags" ] || { echo "SANITIZER_CFLAGS is empty in $1"; return 1; }
    mkdir -p "$dir"
    cat > "$dir/canary.c" <<'EOF'
#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL
static const char *bug = "none";
static int canary_config (const char *key, const char *value)
{ if (strcmp (key, "bug") != 0) return -1; bug = value; return 0; }
static int canary_config_complete (void)
{
  if (strcmp (bug, "asan") == 0) {
    volatile int i = 8; char *p = malloc (8); p[i] = 1; free (p);
  }
  if (strcmp (bug, "ubsan") == 0) {
    volatile int x = INT_MAX; x = x + 1; (void) x;
  }
  if (strcmp (bug, "strerror") == 0) {
    nbdkit_error ("canary: %s", strerror (ENOENT));
    return -1;
  }
  return 0;
}
static void *canary_open (int readonly) { (void) readonly; return NBDKIT_HANDLE_NOT_NEEDED; }
static int64_t canary_get_size (void *h) { (void) h; return 512; }
static int canary_pread (void *h, void *buf, uint32_t count, uint64_t offset, uint32_t flags)
{ (void) h; (void) offset; (void) flags; memset (buf, 0, count); return 0; }
static struct nbdkit_plugin plugin = {
  .name = "canary", .config = canary_config, .config_complete = canary_config_complete,
  .open = canary_open, .get_size = canary_get_size, .pread = canary_pread,
};
NBDKIT_REGISTER_PLUGIN (plugin)
EOF
    # shellcheck disable=SC2086  # flags are a list
    gcc $flags -g -fPIC -shared -o "$dir/canary.so" "$dir/canary.c" ||
        { echo "cannot build the canary plugin"; return 1; }
    "$wrapper" -U "$dir/none.sock" "$dir/canary.so" bug=none --run true > "$dir/none.out" 2>&1 ||
        { cat "$dir/none.out"; echo "clean canary failed under the wrapper"; return 1; }
    timeout 20 "$wrapper" -U "$dir/strerror.sock" "$dir/canary.so" bug=strerror --run true > "$dir/strerror.out" 2>&1
    [ $? = 1 ] || { cat "$dir/strerror.out"; echo "nbdkit hung or did not fail after a plugin error"; return 1; }
    out=$("$wrapper" -U "$dir/asan.sock" "$dir/canary.so" bug=asan --run true 2>&1) &&
        { echo "heap overflow in the canary was not reported"; return 1; }
    grep -q 'AddressSanitizer: heap-buffer-overflow' <<< "$out" ||
        { echo "$out"; echo "no ASan report for the canary"; return 1; }
    out=$("$wrapper" -U "$dir/ubsan.sock" "$dir/canary.so" bug=ubsan --run true 2>&1) &&
        { echo "signed overflow in the canary was not reported"; return 1; }
    grep -q 'runtime error: signed integer overflow' <<< "$out" ||
        { echo "$out"; echo "no UBSan report for the canary"; return 1; }
}

sanitizer_layer ()
{
    local t0=$SECONDS tests plugin msg
    banner "4. sanitizers: build-sanitize/ (--enable-sanitizers --enable-werror)"
    if ! r5_configure "$top" "$sbuild" --enable-sanitizers --enable-werror ||
       ! r5_make "$sbuild" --no-print-directory; then
        record "build (asan+ubsan)" FAIL "configure/make failed in build-sanitize/"
        return
    fi
    record "build (asan+ubsan)" PASS "build-sanitize/, $(elapsed $t0)"
    if ! msg=$(make_nbdkit_wrapper "$sbuild" 2>&1) || ! msg=$(sanitizer_canary "$sbuild" 2>&1); then
        echo "$msg"
        record "sanitizer canary" FAIL "${msg##*$'\n'}"
        return
    fi
    record "sanitizer canary" PASS "ASan and UBSan errors in a dlopen'ed plugin are caught; error exit does not hang"
    plugin=$sbuild/plugin/.libs/nbdkit-raid5-plugin.so
    if [ -f "$plugin" ] && ! ldd "$plugin" | grep -q libasan; then
        record "plugin instrumented" FAIL "$plugin does not link libasan"
    fi
    local keep='^tests/(unit|integration|tools)/'
    [ $sanitize_kernel = 1 ] && keep='^tests/(unit|integration|tools|kernel)/'
    tests=$(make_var "$sbuild" TESTS | tr ' ' '\n' | grep -E "$keep" | tr '\n' ' ')
    if [ -z "${tests// /}" ]; then
        record "tests (asan+ubsan)" SKIP "no tests in TESTS yet"
        return
    fi
    # Here the tests look for memory errors, not for more of the logic
    # the plain build already ran: the random workloads, torn writes and
    # kills run in fewer rounds (below), the grow under kills at three
    # times the speed, and the tests that repeat paths
    # others here also take, or that time things, are left out (they ran
    # in the plain build):
    #   md's every-slot walks (test-md-return, test-md-crash,
    #   test-md-failure: their assembly, force and re-add paths run here in
    #   test-one-behind, test-crash and test-member-failure); the large
    #   generated and model reads (test-read-generated,
    #   test-readback-missing, test-degraded: degraded reads run here in
    #   test-member-failure, test-nbd-eio, test-bad-blocks, test-replace);
    #   the slow rebuilds and spares (test-rebuild, test-spare,
    #   test-grow-member-failure: rebuilds run here in test-rebuild-resume,
    #   test-bad-blocks and test-replace); test-grow-online,
    #   test-grow-crash-bitmap and test-grow-offline (the reshape, its
    #   restarts and raid5ctl grow's own loop run here in test-grow-crash,
    #   test-grow-backup and test-grow-size); NBD members'
    #   failures and TLS (test-nbd-members, test-nbd-tls: the NBD I/O path
    #   runs here in test-nbd-pipeline, test-nbd-order, test-nbd-eio);
    #   superblock bytes and md's tools' agreement (test-md-metadata,
    #   test-create, test-create-mdadm, test-examine: the parsers run here
    #   in the unit tests, fuzzing included, and raid5ctl create in nearly
    #   every test); pictures and teaching text (test-svg, test-teach);
    #   the test tool member-check (test-member-check); loop devices and
    #   namespaces (test-blockdev, test-nbd-netns); and the timings of md's
    #   KiB/s rule and of the latency target (test-rate, test-pace: their
    #   code runs in the unit tests and in every test that sets a speed).
    # That keeps the whole of scripts/check.sh inside CI's budget.
    local skip_san='test-(md-return|md-crash|md-failure|read-generated|readback-missing|degraded|rebuild|spare|grow-member-failure|grow-online|grow-crash-bitmap|grow-offline|nbd-members|nbd-tls|md-metadata|create|create-mdadm|examine|svg|teach|member-check|blockdev|nbd-netns|rate|pace)\.sh$'
    tests=$(tr ' ' '\n' <<<"$tests" | grep -vE "/$skip_san" | tr '\n' ' ')
    # CRITERION_JOBS=1: Criterion 2.4's runner, running tests on two
    # workers at once, now and then leaks 48 bytes of its own (calloc'd in
    # libcriterion, reached from criterion_run_all_tests in the parent, no
    # frame of ours: 1 run in 3 of test-array-member-fail here), which
    # LeakSanitizer rightly reports; one worker costs no time that shows.
    CRITERION_JOBS=1 TESTS_RUN=$tests PATH=$sbuild/asan-bin:$PATH \
    PPL_ROUNDS=${PPL_ROUNDS:-8} HOLE_ROUNDS=${HOLE_ROUNDS:-4} OPS=${OPS:-400} \
    KILLS=${KILLS:-4} GROW_KILLS=${GROW_KILLS:-4} GROW_SPEED=${GROW_SPEED:-1500} \
    UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
        run_check "$sbuild" " (asan+ubsan)" TESTS="$tests" NBDKIT="$sbuild/asan-bin/nbdkit"
}

vm_layer ()
{
    local t0=$SECONDS status=0
    banner "5. vm: scripts/vm.sh test"
    PLUGIN=$build/plugin/.libs/nbdkit-raid5-plugin.so \
    abs_top_srcdir=$top abs_top_builddir=$build NBDKIT=$(command -v nbdkit) \
        with_timeout "${R5_VM_TIMEOUT:-900}" bash "$top/scripts/vm.sh" test || status=$?
    case $status in
        0) record vm PASS "scripts/vm.sh test, $(elapsed $t0)" ;;
        77) record vm SKIP "scripts/vm.sh test skipped, $(elapsed $t0)" ;;
        124) record vm FAIL "scripts/vm.sh test timed out" ;;
        *) record vm FAIL "scripts/vm.sh test exited $status, $(elapsed $t0)" ;;
    esac
}

# soak_start NAME ARGS...: one scripts/soak.sh run on build/ in the
# background, its output in build/soak-NAME.log and its exit status in
# build/soak-NAME.rc.
soak_start ()
{
    local name=$1 members=local
    shift
    [ "$(id -u)" = 0 ] && command -v ip >/dev/null && members=mixed
    rm -f "$build/soak-$name.rc"
    ( status=0
      with_timeout "${R5_SOAK_TIMEOUT:-900}" bash "$top/scripts/soak.sh" --build "$build" \
          --members $members --events "${R5_SOAK_EVENTS:-60}" --epoch 30 "$@" \
          > "$build/soak-$name.log" 2>&1 < /dev/null || status=$?
      echo $status > "$build/soak-$name.rc" ) &
    soak_pids+=($!)
}

# soak_report NAME LABEL: its log (the events only if it failed) and a
# summary row from its last lines (the seed, bytes verified, bytes lost).
soak_report ()
{
    local name=$1 label=$2 log=$build/soak-$1.log status seed members
    status=$(cat "$build/soak-$name.rc" 2>/dev/null || echo 1)
    banner "soak ($label): $log"
    if [ "$status" = 0 ]; then grep -v '^soak: *[0-9]' "$log"; else cat "$log"; fi
    seed=$(sed -n 's/^soak: seed \([0-9]*\),.*/\1/p' "$log" | head -n 1)
    members=$(sed -n 's/^soak: seed .*, members \([a-z]*\).*/\1/p' "$log" | head -n 1)
    case $status in
        0) record "soak ($label)" PASS "seed $seed, $members, $(grep -m1 '^bytes verified' "$log" | cut -d' ' -f3) bytes verified, $(tail -n 1 "$log"), $(sed -n 's/^time: \([0-9ms]*\) .*/\1/p' "$log")" ;;
        77) record "soak ($label)" SKIP "$(tail -n 1 "$log")" ;;
        124) record "soak ($label)" FAIL "seed $seed: timed out after ${R5_SOAK_TIMEOUT:-900}s" ;;
        *) record "soak ($label)" FAIL "seed $seed: $(grep -m1 '^soak: FAIL' "$log" | cut -c1-160); $(grep '^bytes lost' "$log" | tail -n 1)" ;;
    esac
}

# Both runs at once: each keeps about one processor busy (two in a row
# took 9 minutes here, together 6), and a machine loaded by the other is
# a fault of its own kind (timeouts, jobs racing the workload).
soak_layer ()
{
    local t0=$SECONDS soak_pids=()
    banner "7. soak: scripts/soak.sh, ${R5_SOAK_EVENTS:-60} faults with seed ${R5_SOAK_SEED:-1} and with a new seed, at once"
    soak_start fixed --seed "${R5_SOAK_SEED:-1}"
    soak_start new
    wait "${soak_pids[@]}"
    soak_report fixed "fixed seed"
    soak_report new "new seed"
    echo "soak: both runs in $(elapsed $t0)"
}

# --- main -------------------------------------------------------------------

banner "1. packages"
all_packages=("${R5_BUILD_PACKAGES[@]}" "${R5_TEST_PACKAGES[@]}" "${R5_PACKAGE_PACKAGES[@]}")
if r5_install_packages $no_install "${all_packages[@]}"; then
    record packages ok "all present"
else
    record packages WARN "missing: $(r5_missing_packages "${all_packages[@]}")"
fi

banner "2. build: build/ (--enable-werror)"
t0=$SECONDS
built=0
if r5_autoreconf "$top" $reconf && r5_configure "$top" "$build" "${R5_MAIN_CONFIGURE_ARGS[@]}" &&
   r5_make "$build" --no-print-directory; then
    record build PASS "build/, $(elapsed $t0)"
    built=1
else
    record build FAIL "autoreconf/configure/make failed"
fi

if [ $built = 1 ] && [ $quick = 1 ]; then
    banner "3. tests (--quick): unit tests and the data path's smoke"
    quick_tests="$(for t in $(make_var "$build" TESTS); do
                       case $t in tests/unit/*) echo "$t" ;; esac; done) $QUICK_SMOKE"
    TESTS_RUN=$quick_tests run_check "$build" " (quick)" TESTS="$(echo $quick_tests)"
elif [ $built = 1 ]; then
    banner "3. tests: make check in build/"
    run_check "$build" ""
fi

if [ $sanitize = 0 ]; then
    record sanitizers SKIP "$([ $quick = 1 ] && echo --quick || echo --no-sanitize)"
elif [ $built = 1 ]; then
    sanitizer_layer
else
    record sanitizers SKIP "the main build failed"
fi

if [ $vm = 0 ]; then
    record vm SKIP "$([ $quick = 1 ] && echo --quick || echo --no-vm)"
elif [ ! -f "$top/scripts/vm.sh" ]; then
    record vm SKIP "scripts/vm.sh not present yet"
elif [ $built = 0 ]; then
    record vm SKIP "the main build failed"
else
    vm_layer
fi

if [ $quick = 1 ]; then
    record package SKIP "--quick"
elif [ $built = 1 ]; then
    package_layer
else
    record package SKIP "the main build failed"
fi

if [ $soak = 0 ]; then
    record soak SKIP "$([ $quick = 1 ] && echo --quick || echo --no-soak)"
elif [ $built = 1 ]; then
    soak_layer
else
    record soak SKIP "the main build failed"
fi

banner "summary ($(elapsed $start))"
printf '%s\n' "${SUMMARY[@]}"
if [ $failed = 0 ]; then
    echo "RESULT: PASS"
else
    echo "RESULT: FAIL"
fi
exit $failed
