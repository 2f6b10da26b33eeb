# shellcheck shell=bash
# scripts/check-package.sh -- layer 6 of scripts/check.sh: the Debian
# package.  From a fresh clone of the commit checked out (HEAD: what is
# not committed is not in it), `dpkg-buildpackage -us -uc -b`, then
# lintian with no error, then -- as root -- the .deb installed on this
# machine: `nbdkit raid5` finds the plugin by name, `man -w` the pages,
# the unit and the completion are where systemd and bash look; then it
# is removed again.  Not root: its files are unpacked into a throwaway
# root and looked for there.  Sourced by check.sh (record, banner,
# elapsed, with_timeout are its).

R5_PACKAGE_PACKAGES=(debhelper dpkg-dev lintian git man-db)

# pkg_look DEB ROOT: the installed (or unpacked) files where they go.
pkg_look ()
{
    local deb=$1 root=$2 f
    for f in usr/bin/raid5ctl usr/share/man/man8/raid5ctl.8.gz \
             usr/share/man/man1/nbdkit-raid5-plugin.1.gz \
             usr/lib/systemd/system/nbdkit-raid5@.service \
             usr/share/bash-completion/completions/raid5ctl \
             "$(pkg-config --variable=plugindir nbdkit | cut -c2-)/nbdkit-raid5-plugin.so"; do
        [ -e "$root/$f" ] || { echo "--- $deb: no /$f"; return 1; }
    done
}

# pkg_installed: the installed package, used as a user would.
pkg_installed ()
{
    nbdkit --dump-plugin raid5 | grep -qx 'name=raid5' &&
        nbdkit raid5 --help 2>&1 | grep -q 'disk=PATH' &&
        man -w raid5ctl | grep -q raid5ctl.8 &&
        man -w nbdkit-raid5-plugin | grep -q nbdkit-raid5-plugin.1 &&
        pkg_look installed ""
}

package_layer ()
{
    local t0=$SECONDS tmp deb st=0 lint how
    banner "6. package: dpkg-buildpackage from a fresh clone, lintian, install"
    if ! git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
        record package SKIP "not a git checkout: nothing to clone"
        return
    fi
    tmp=$(mktemp -d /var/tmp/r5-package.XXXXXX)
    git clone -q "$top" "$tmp/nbdkit-raid5" &&
        (cd "$tmp/nbdkit-raid5" &&
         DEB_BUILD_OPTIONS="parallel=$(nproc)" with_timeout 900 \
             dpkg-buildpackage -us -uc -b) >"$tmp/build.log" 2>&1 || st=$?
    deb=$(ls "$tmp"/nbdkit-raid5_*.deb 2>/dev/null | head -n 1)
    if [ $st != 0 ] || [ -z "$deb" ]; then
        tail -n 20 "$tmp/build.log"
        record package FAIL "dpkg-buildpackage failed (exit $st)"
        return
    fi
    lint=$(lintian "$tmp"/nbdkit-raid5_*.changes 2>&1 | grep -v 'running with root')
    [ -z "$lint" ] || printf '%s\n' "$lint"
    if grep -q '^E: ' <<<"$lint"; then
        record package FAIL "lintian: $(grep -c '^E: ' <<<"$lint") errors"
        return
    fi
    if [ "$(id -u)" = 0 ] && ! dpkg -s nbdkit-raid5 >/dev/null 2>&1; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$deb" >"$tmp/install.log" 2>&1 &&
            pkg_installed || st=1
        dpkg -r nbdkit-raid5 >/dev/null 2>&1 || st=1
        how="installed, found by nbdkit and man, removed"
    else
        dpkg-deb -x "$deb" "$tmp/root" && pkg_look "$deb" "$tmp/root" || st=1
        how="unpacked into a throwaway root (not root, or already installed)"
    fi
    if [ $st = 0 ]; then
        record package PASS "${deb##*/}: lintian $(grep -c '^W: ' <<<"$lint") warnings, 0 errors; $how, $(elapsed $t0)"
        rm -rf "$tmp"
    else
        record package FAIL "${deb##*/}: $how: failed (see $tmp)"
    fi
}
