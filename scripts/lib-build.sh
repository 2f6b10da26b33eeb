# scripts/lib-build.sh -- install what the project needs and build it out of
# tree.  Shared by scripts/check.sh and scripts/demo.sh.  Source from bash:
#
#   r5_install_packages NO_INSTALL PKG...   apt-get what dpkg lacks (root only)
#   r5_autoreconf SRCDIR [force]            autoreconf -fi when needed
#   r5_configure SRCDIR BUILDDIR ARGS...    configure BUILDDIR unless it was
#                                           already configured with ARGS
#   r5_make BUILDDIR [TARGET...]            make -j$(nproc)
#
# Functions print what they do, return non-zero on failure and never exit.

R5_BUILD_PACKAGES=(build-essential autoconf automake libtool pkg-config
    nbdkit nbdkit-plugin-dev liburing-dev libisal-dev libnbd-dev libnbd-bin
    libcriterion-dev libblkid-dev libjson-c-dev libext2fs-dev comerr-dev)
R5_TEST_PACKAGES=(e2fsprogs fuse3 util-linux fio mdadm nbd-client
    qemu-system-x86 busybox-static cpio kmod xz-utils python3-libnbd
    xfsprogs fdisk cryptsetup-bin strace universal-ctags
    chromium-headless-shell python3-pil fonts-dejavu-core gnutls-bin iproute2
    procps dmsetup)

# configure arguments of the main build in build/ (check.sh and demo.sh
# share that folder, so they must agree).
R5_MAIN_CONFIGURE_ARGS=(--enable-werror)

r5_say () { echo "--- $*"; }

# Print the packages of "$@" that dpkg does not list as installed.
r5_missing_packages ()
{
    local p missing=()
    for p in "$@"; do
        [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] ||
            missing+=("$p")
    done
    echo "${missing[*]}"
}

# r5_install_packages NO_INSTALL PKG...: NO_INSTALL=1 only reports.
# Returns 0 if everything is (now) installed, 1 otherwise.
r5_install_packages ()
{
    local no_install=$1; shift
    local missing
    if ! command -v dpkg-query >/dev/null; then
        r5_say "not a Debian system (no dpkg-query): install by hand: $*"
        return 1
    fi
    missing=$(r5_missing_packages "$@")
    if [ -z "$missing" ]; then
        r5_say "packages: all $# present"
        return 0
    fi
    if [ "$no_install" = 1 ]; then
        r5_say "packages missing: $missing (--no-install: not installing)"
        return 1
    fi
    if [ "$(id -u)" != 0 ]; then
        r5_say "packages missing: $missing (not root: skipping apt-get;" \
               "run as root or: sudo apt-get install $missing)"
        return 1
    fi
    r5_say "apt-get install $missing"
    # A shell with no tty (CI) must never be asked anything.
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null || { r5_say "apt-get update failed"; return 1; }
    # shellcheck disable=SC2086  # a list of package names
    apt-get install -y -q --no-install-recommends $missing ||
        { r5_say "apt-get install failed"; return 1; }
    missing=$(r5_missing_packages "$@")
    [ -z "$missing" ] || { r5_say "still missing after apt-get: $missing"; return 1; }
}

# Regenerate the build system if configure is missing or older than its
# inputs (or if $2 is "force").  Changes to Makefile.inc files after that
# are picked up by make itself (automake's rebuild rules).
r5_autoreconf ()
{
    local src=$1 force=${2:-}
    if [ "$force" != force ] && [ -x "$src/configure" ] &&
       [ -z "$(find "$src/configure.ac" "$src/Makefile.am" -newer "$src/configure" 2>/dev/null)" ]; then
        r5_say "configure is up to date (no autoreconf)"
        return 0
    fi
    r5_say "autoreconf -fi"
    (cd "$src" && autoreconf -fi) || { r5_say "autoreconf failed"; return 1; }
}

# Configure BUILDDIR out of tree.  The arguments are remembered in
# BUILDDIR/.configure-args; the same arguments again skip configure.
r5_configure ()
{
    local src=$1 build=$2; shift 2
    local want="$*"
    if [ -f "$src/config.status" ]; then
        r5_say "$src is configured in tree; run 'make distclean' there first"
        return 1
    fi
    if [ -f "$build/config.status" ] && [ -f "$build/.configure-args" ] &&
       [ "$(cat "$build/.configure-args")" = "$want" ]; then
        r5_say "$build already configured ($want)"
        return 0
    fi
    mkdir -p "$build" || return 1
    r5_say "configure $want (in ${build#"$PWD"/}, output in configure.out)"
    if ! (cd "$build" && "$src/configure" "$@" > configure.out 2>&1); then
        tail -n 30 "$build/configure.out"
        r5_say "configure failed; see $build/config.log"
        return 1
    fi
    echo "$want" > "$build/.configure-args"
}

r5_make ()
{
    local build=$1; shift
    make -C "$build" -j"$(nproc 2>/dev/null || echo 2)" "$@"
}
