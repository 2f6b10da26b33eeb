#!/bin/bash
# scripts/vm.sh: run tests inside a throwaway Linux guest (Debian's kernel under
# qemu TCG) for what the host kernel cannot do here: nbd-client -> /dev/nbd0, and
# kernel md as the oracle of the on-disk layout.  See tests/vm/README.md.
#
#   scripts/vm.sh prepare [-f]          fetch the kernel (apt-get download, never
#                                       installed), build vmlinux + initramfs, cache them
#   scripts/vm.sh run [-t SECS] [-e VAR=VALUE]... [-w DIR] SCRIPT [IMAGE...]
#                                       boot, attach IMAGEs as /dev/vda, vdb, ... run
#                                       SCRIPT (a host path) with bash in the guest,
#                                       print its output, exit with its status (125:
#                                       the guest did not finish); DIR: work folder
#   scripts/vm.sh test [NAME...|all]   the VM suite (tests/vm/test-NAME.sh): one line
#                                       per test, PASS/FAIL/SKIP; exit 0, 1, or 77 when
#                                       no guest can be booted at all (or all skipped)
#   scripts/vm.sh list [all]            names of the tests (all: with diagnostic ones)
#   scripts/vm.sh info                  cache, kernel, plugin in use
#
# The guest sees the host's root read-only over 9p and chroots into it, so it runs
# the host's own nbdkit, plugin, nbd-client, mdadm and mkfs.  /tmp and /run are
# tmpfs in the guest; each run gets a work folder (shared read-write over 9p at
# the same path) for its files and results.
#
# Environment:
#   VM_CACHE    cache folder (root: /var/cache/nbdkit-raid5-vm, else ~/.cache/...)
#   VM_KERNEL_PKG  kernel package (default: what linux-image-amd64 depends on)
#   VM_MEM, VM_SMP  guest MiB (2048) and CPUs (2);  VM_APPEND  more kernel arguments
#   VM_TIMEOUT  seconds per boot (300);  VM_KEEP=1  keep work folders
#   VM_VERBOSE=1  show every test's output;  VM_TRACE=1  trace guest scripts
#   VM_REQUIRE=1  a guest that cannot boot is a failure, not a skip
#   PLUGIN      nbdkit-raid5-plugin.so to test (default: newest build*/plugin/.libs/)
set -euo pipefail

VM_SH=$(readlink -f "${BASH_SOURCE[0]}")
TOP=$(dirname "$(dirname "$VM_SH")")
VM_MODULES="9p 9pnet_virtio virtio_pci virtio_blk nbd loop ext4 raid456 dm_mod"

die() { echo "vm.sh: $*" >&2; exit 1; }

cache_root() {
    if [[ -n ${VM_CACHE:-} ]]; then echo "$VM_CACHE"
    elif [[ $(id -u) == 0 ]]; then echo /var/cache/nbdkit-raid5-vm
    else echo "${XDG_CACHE_HOME:-$HOME/.cache}/nbdkit-raid5-vm"
    fi
}

# The kernel package, e.g. linux-image-6.1.0-57-amd64: the last one prepared (unless
# asked to refresh), else from apt (linux-image-amd64's dependency), else the newest
# one already in the cache.
kernel_pkg() {
    local pkg refresh=${1:-} cur
    cur=$(cache_root)/current
    if [[ -n ${VM_KERNEL_PKG:-} ]]; then echo "$VM_KERNEL_PKG"; return; fi
    if [[ -z $refresh && -s $cur && -s $(cache_root)/$(cat "$cur")/vmlinux ]]; then cat "$cur"; return; fi
    pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
          sed -n 's/^ *Depends: \(linux-image-[0-9].*\)$/\1/p' | head -n1)
    if [[ -z $pkg && $(id -u) == 0 ]]; then
        apt-get update -q >/dev/null 2>&1 || true   # package lists never fetched here
        pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
              sed -n 's/^ *Depends: \(linux-image-[0-9].*\)$/\1/p' | head -n1)
    fi
    if [[ -z $pkg ]]; then
        pkg=$(ls -1 "$(cache_root)" 2>/dev/null | grep '^linux-image-' | sort -V | tail -n1)
    fi
    [[ -n $pkg ]] || die "cannot find Debian's kernel package (apt-cache depends linux-image-amd64)"
    echo "$pkg"
}

# The initramfs of this version of the script: a hash of /init, the modules, busybox.
initrd_key() {
    (write_init /dev/stdout; echo "$VM_MODULES"; ls -l /bin/busybox) | md5sum | cut -c1-12
}

# Writes the guest's /init.  Kept here so that its hash keys the initramfs.
write_init() {
    cat >"$1" <<'EOF'
#!/bin/busybox sh
# Guest init: modules, host root over 9p (ro), work folder over 9p (rw), chroot, run.
export PATH=/bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
while read -r m args; do insmod "/lib/modules/$m" $args || echo "init: insmod $m failed"; done </modules.load
work=$(sed -n 's/.*raid5vm_work=\([^ ]*\).*/\1/p' /proc/cmdline)
o9p=trans=virtio,version=9p2000.L,msize=262144
mount -t 9p -o $o9p,ro,cache=loose hostroot /host || echo "init: cannot mount the host root"
mount -t proc proc /host/proc; mount -t sysfs sys /host/sys; mount -t devtmpfs dev /host/dev
mkdir -p /host/dev/pts /host/dev/shm; mount -t devpts devpts /host/dev/pts
ln -s /proc/self/fd /host/dev/fd; for f in stdin:0 stdout:1 stderr:2; do ln -s /proc/self/fd/${f#*:} /host/dev/${f%:*}; done
for d in /host/tmp /host/run /host/dev/shm; do mount -t tmpfs -o mode=1777 tmpfs $d; done
mkdir -p "/host$work"; mount -t 9p -o $o9p work "/host$work" || echo "init: cannot mount $work"
stty -F /dev/ttyS1 -opost 2>/dev/null
echo "init: running $work/job" >/dev/console
chroot /host /bin/bash "$work/job" </dev/null >/dev/ttyS1 2>&1
rc=$?
echo "$rc" >"/host$work/rc"
sync; umount "/host$work"
echo "init: job exited with $rc" >/dev/console
poweroff -f; echo o >/proc/sysrq-trigger; sleep 10
EOF
}

# Fetches and unpacks the kernel into $dir; builds vmlinux and the initramfs.
prepare() (
    local force=${1:-}
    local root pkg dir tmp kver vmlinuz off key
    command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 is missing (apt-get install qemu-system-x86)"
    root=$(cache_root); pkg=$(kernel_pkg $force); dir=$root/$pkg
    mkdir -p "$dir"
    exec 9>"$root/lock"; flock 9
    tmp=$(mktemp -d "$dir/tmp.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    if [[ $force == -f ]]; then rm -f "$dir"/*.deb "$dir"/vmlinux "$dir"/initrd-*; fi
    if ! ls "$dir"/*.deb >/dev/null 2>&1; then
        echo "vm.sh: fetching $pkg with apt-get download" >&2
        (cd "$tmp" && apt-get download -q "$pkg" 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2) || true
        if ! ls "$tmp"/*.deb >/dev/null 2>&1 && [[ $(id -u) == 0 ]]; then
            # A machine whose package lists were never fetched (or were cleaned).
            echo "vm.sh: apt-get download failed; running apt-get update and retrying" >&2
            apt-get update -q >/dev/null 2>&1 || true
            (cd "$tmp" && apt-get download -q "$pkg" 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2) || true
        fi
        ls "$tmp"/*.deb >/dev/null 2>&1 || die "apt-get download $pkg failed"
        mv "$tmp"/*.deb "$dir/"
    fi
    write_init "$tmp/init"
    key=$(initrd_key)
    if [[ -s $dir/vmlinux && -s $dir/initrd-$key.cpio ]]; then
        echo "$pkg" >"$root/current"
        echo "$dir"; exit 0
    fi
    echo "vm.sh: unpacking $pkg (never installed on the host)" >&2
    dpkg-deb -x "$dir"/*.deb "$tmp/x"
    kver=$(ls "$tmp/x/lib/modules")
    vmlinuz=$tmp/x/boot/vmlinuz-$kver
    # An uncompressed vmlinux boots in about half the time under TCG (no xz in the guest).
    off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$vmlinuz" | head -n1 | cut -d: -f1)
    # (xz stops after the stream, so tail may die of SIGPIPE: only xz's status counts.)
    if [[ -n $off ]] && { tail -c +$((off + 1)) "$vmlinuz" || true; } | xz -dcq --single-stream >"$tmp/vmlinux" &&
       [[ $(head -c4 "$tmp/vmlinux" | od -An -tx1 | tr -d ' ') == 7f454c46 ]]; then
        mv "$tmp/vmlinux" "$dir/vmlinux"
    else
        echo "vm.sh: cannot decompress vmlinux (xz-utils missing?): booting the slower bzImage" >&2
        cp "$vmlinuz" "$dir/vmlinux"
    fi
    build_initramfs "$tmp" "$kver" "$dir/initrd-$key.cpio"
    # Other versions of this script (other clones) may still use their own: keep a few.
    ls -1t "$dir"/initrd-*.cpio | tail -n +4 | xargs -r rm -f
    echo "$kver" >"$dir/kver"
    echo "$pkg" >"$root/current"
    # Older kernels are of no use any more.
    find "$root" -mindepth 1 -maxdepth 1 -type d -name 'linux-image-*' ! -name "$pkg" -exec rm -rf {} +
    echo "$dir"
)

build_initramfs() {
    local tmp=$1 kver=$2 out=$3 ir=$1/ir m line f
    depmod -b "$tmp/x" "$kver"
    mkdir -p "$ir"/{bin,proc,sys,dev,host,lib/modules}
    cp /bin/busybox "$ir/bin/busybox"
    for f in sh mount umount insmod mkdir sed chroot stty sync poweroff sleep cat echo; do
        ln -s busybox "$ir/bin/$f"
    done
    cp "$tmp/init" "$ir/init"; chmod 755 "$ir/init"
    : >"$ir/modules.load"
    for m in $VM_MODULES; do
        # -C /dev/null: the host's modprobe.d options (md-mod start_ro=1 ...) are not ours.
        modprobe -C /dev/null -d "$tmp/x" -S "$kver" --show-depends "$m" |
        while read -r line; do
            f=${line#insmod }; f=${f%% *}
            [[ $line == insmod* ]] || continue
            # Needs SSE4.2, which qemu's default TCG CPU lacks; crc32c_generic does the job.
            [[ $f == */crc32c-intel.ko ]] && continue
            grep -qx "$(basename "$f")" "$ir/modules.load" 2>/dev/null && continue
            cp "$f" "$ir/lib/modules/"
            basename "$f" >>"$ir/modules.load"
        done
    done
    (cd "$ir" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$out.tmp"
    mv "$out.tmp" "$out"
}

# Prints the cached kernel dir, preparing it if needed.
kernel_dir() {
    local dir
    dir=$(prepare) || return 1
    echo "$dir"
}

# The plugin to test: $PLUGIN, else the newest built one in build*/.
find_plugin() {
    if [[ -n ${PLUGIN:-} ]]; then echo "$PLUGIN"; return; fi
    ls -1t "$TOP"/build*/plugin/.libs/nbdkit-raid5-plugin.so 2>/dev/null | head -n1
}

# run [-t SECS] [-e VAR=VALUE]... [-w WORKDIR] SCRIPT [IMAGE...]
run() {
    local timeout=${VM_TIMEOUT:-300} work="" envs=() script dir kernel initrd img rc
    local qemu=() own_work=
    while [[ $# -gt 0 ]]; do
        case $1 in
            -t) timeout=$2; shift 2 ;;
            -e) envs+=("$2"); shift 2 ;;
            -w) work=$2; shift 2 ;;
            --) shift; break ;;
            -*) die "run: unknown option $1" ;;
            *) break ;;
        esac
    done
    [[ $# -ge 1 ]] || die "usage: vm.sh run [-t SECS] [-e VAR=VALUE]... [-w WORKDIR] SCRIPT [IMAGE...]"
    script=$(readlink -f "$1"); shift
    [[ -r $script ]] || die "run: cannot read $script"
    dir=$(kernel_dir)
    kernel=$dir/vmlinux
    initrd=$dir/initrd-$(initrd_key).cpio
    if [[ -z $work ]]; then
        work=$(mktemp -d "${TMPDIR:-/var/tmp}/raid5-vm.XXXXXX"); own_work=1
    fi
    work=$(readlink -f "$work")
    rm -f "$work/rc"
    # /tmp and /run are the guest's own tmpfs: a script there (say, a clone of the
    # repository in /tmp) goes into the work folder, with a guest-lib.sh beside it.
    case $script in
        /tmp/*|/run/*|/dev/shm/*)
            mkdir -p "$work/guest-scripts"
            cp "$script" "$work/guest-scripts/"
            [[ ! -f ${script%/*}/guest-lib.sh ]] || cp "${script%/*}/guest-lib.sh" "$work/guest-scripts/"
            script=$work/guest-scripts/${script##*/} ;;
    esac
    {
        echo "# generated by scripts/vm.sh run"
        echo "export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        printf 'export VM_WORK=%q TOP=%q\n' "$work" "$TOP"
        for e in "${envs[@]}"; do printf 'export %q\n' "$e"; done
        printf 'cd %q || exit 125\n' "$work"
        printf 'exec /bin/bash %q\n' "$script"
    } >"$work/job"
    qemu=(qemu-system-x86_64 -accel tcg -m "${VM_MEM:-2048}" -smp "${VM_SMP:-2}"
          -nodefaults -display none -no-reboot -nic none
          -kernel "$kernel" -initrd "$initrd"
          -append "console=ttyS0 quiet panic=-1 raid5vm_work=$work ${VM_APPEND:-}"
          -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap
          -virtfs local,path="$work",mount_tag=work,security_model=none,multidevs=remap
          -serial file:"$work/console.log"
          -chardev stdio,id=out,signal=off -serial chardev:out)
    for img in "$@"; do
        [[ -e $img ]] || die "run: no such image $img"
        qemu+=(-drive "file=$(readlink -f "$img"),if=virtio,format=raw,cache=unsafe")
    done
    rc=0
    timeout -k 5 "$timeout" "${qemu[@]}" </dev/null 2>"$work/qemu.err" || rc=$?
    if [[ -s $work/rc ]]; then
        rc=$(cat "$work/rc")
    else
        if [[ $rc == 124 ]]; then echo "vm.sh: guest timed out after ${timeout}s" >&2
        else echo "vm.sh: guest did not finish (qemu exit $rc)" >&2; fi
        sed 's/^/qemu: /' "$work/qemu.err" >&2
        tail -n 30 "$work/console.log" 2>/dev/null | sed 's/^/console: /' >&2
        echo "vm.sh: work folder kept: $work" >&2
        return 125
    fi
    if [[ $rc != 0 && -n $own_work ]]; then
        echo "vm.sh: exit $rc; console log: $work/console.log" >&2
    elif [[ -n $own_work && -z ${VM_KEEP:-} ]]; then
        rm -rf "$work"
    fi
    return "$rc"
}

# Test names (tests/vm/test-NAME.sh); with "all", also the diagnostic ones
# (a "# vm-test: diagnostic" line), which otherwise run only to explain a failure.
list_tests() {
    local t
    shopt -s nullglob
    for t in "$TOP"/tests/vm/test-*.sh; do
        [[ ${1:-} != all ]] && grep -q '^# vm-test: diagnostic' "$t" && continue
        t=${t##*/test-}; echo "${t%.sh}"
    done
}

# run_test NAME: runs tests/vm/test-NAME.sh, prints PASS/FAIL/SKIP; returns its status.
run_test() {
    local t=$1 out rc=0 start=$SECONDS secs
    if [[ ! -f $TOP/tests/vm/test-$t.sh ]]; then echo "FAIL: $t (no tests/vm/test-$t.sh)"; return 1; fi
    out=$(bash "$TOP/tests/vm/test-$t.sh" 2>&1) || rc=$?
    secs=$((SECONDS - start))
    case $rc in
        0) echo "PASS: $t (${secs}s)" ;;
        77) echo "SKIP: $t (${secs}s): $(echo "$out" | grep -m1 '^SKIP: ' | cut -c7-)" ;;
        *) echo "FAIL: $t (${secs}s, exit $rc)" ;;
    esac
    [[ $rc == 0 || $rc == 77 ]] && [[ -z ${VM_VERBOSE:-} ]] || echo "$out" | sed "s/^/  $t: /"
    return $rc
}

# test [NAME...]: a smoke boot first (77 if it fails), then each test.
suite() {
    local names=("$@") t out rc start fails=0 skips=0
    local t0=$SECONDS
    [[ ${#names[@]} -gt 0 ]] || mapfile -t names < <(list_tests)
    [[ ${names[0]:-} == all ]] && mapfile -t names < <(list_tests all)
    command -v qemu-system-x86_64 >/dev/null || skip_all "qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)"
    out=$(kernel_dir 2>&1) || skip_all "cannot prepare the guest kernel: ${out##*$'\n'}"
    t=$(mktemp -d "${TMPDIR:-/var/tmp}/raid5-vm-smoke.XXXXXX")
    echo 'echo guest-ok' >"$t/smoke.sh"
    start=$SECONDS
    if ! out=$(run -t 120 -w "$t" "$t/smoke.sh" 2>&1) || [[ $out != *guest-ok* ]]; then
        rm -rf "$t"
        out=$( (echo "$out" | grep -m1 '^qemu: ' || echo "$out" | grep -m1 '^vm.sh: ' || echo "$out" | head -n1) |
               sed -e 's/^qemu: //' -e 's/^vm.sh: //')
        skip_all "qemu cannot boot a guest: $out"
    fi
    rm -rf "$t"
    echo "vm: a guest boots and powers off in $((SECONDS - start))s (kernel $(cat "$(kernel_dir)/kver"))"
    PLUGIN=$(find_plugin)
    export VM_SH TOP PLUGIN
    for t in "${names[@]}"; do
        rc=0; run_test "$t" || rc=$?
        case $rc in 0) ;; 77) skips=$((skips + 1)) ;; *) fails=$((fails + 1)) ;; esac
        if [[ $t == nbd-ext4 && $rc != 0 && $rc != 77 ]]; then
            echo "vm: nbd-ext4 failed; is it the harness or the plugin? nbdkit's memory plugin on the same path:"
            run_test nbd-memory && echo "vm: the harness works: the failure above is the raid5 plugin's" || true
        fi
    done
    echo "vm: ${#names[@]} tests, $fails failed, $skips skipped, $((SECONDS - t0))s"
    [[ $fails == 0 ]] || return 1
    [[ $skips -lt ${#names[@]} ]] || return 77
}

skip_all() {
    if [[ -n ${VM_REQUIRE:-} ]]; then echo "FAIL: vm: $1"; exit 1; fi
    echo "SKIP: vm: $1"
    exit 77
}

info() {
    local dir
    echo "cache:  $(cache_root)"
    echo "kernel: $(kernel_pkg)"
    dir=$(cache_root)/$(kernel_pkg)
    [[ -s $dir/vmlinux ]] && echo "vmlinux: $dir/vmlinux ($(cat "$dir/kver" 2>/dev/null))" || echo "vmlinux: not prepared"
    echo "plugin: $(find_plugin)"
}

cmd=${1:-}
shift || true
case $cmd in
    prepare) dir=$(prepare "${1:--r}") && echo "vm.sh: ready: $dir ($(cat "$dir/kver"))" ;;
    run) run "$@" ;;
    test) suite "$@" ;;
    list) list_tests "$@" ;;
    info) info ;;
    *) sed -n '2,/^set -e/p' "$VM_SH" | sed -e '$d' -e 's/^# \{0,1\}//'; [[ $cmd == -h || $cmd == --help ]] ;;
esac
