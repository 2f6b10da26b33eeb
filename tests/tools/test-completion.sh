#!/usr/bin/env bash
# tools/raid5ctl.bash-completion, driven as bash drives it (COMP_WORDS,
# COMP_CWORD, then the function complete -p names): "raid5ctl ch"
# completes to check, "raid5ctl m" to map, mkfs-hint and monitor,
# "raid5ctl check --f" to --files and --fs-offset, "raid5ctl --control S
# s" to speed and status, "raid5ctl --tls" to the TLS options and
# "raid5ctl --tls-certificates DIR ch" to check, "raid5ctl monitor --on"
# to --oneshot, a file argument to the files there; check, monitor and
# create offer their options (check the TLS ones too).
. "${0%/*}/functions.sh"
requires_raid5ctl

# comp WORDS...: the completions of the last word (the one being typed).
comp ()
{
  bash -c '
    . "$1"; shift
    fn=$(complete -p raid5ctl | sed -n "s/.*-F \([^ ]*\) raid5ctl$/\1/p")
    COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 ))
    "$fn"; printf "%s\n" "${COMPREPLY[@]}"' _ \
    "$abs_top_srcdir/tools/raid5ctl.bash-completion" "$RAID5CTL" "$@"
}

# expect WANT WORDS...: the completions are exactly WANT (one per line).
expect ()
{
  local want=$1 got
  shift
  got=$(comp "$@" | sort)
  [ "$got" = "$(printf '%s\n' $want | sort)" ] ||
    fail "completing '$*': got '$(echo $got)', want '$want'"
  echo "   raid5ctl $* -> $(echo $got)"
}

expect "check" ch
expect "monitor mkfs-hint map" m
expect "--files --fs-offset" check --f
expect "status speed" --control "$tmpdir/s" s
expect "--tls-certificates --tls-psk --tls-username --tls=require" --tls
expect "check" --tls-certificates "$tmpdir" ch
expect "--oneshot" monitor --on
touch "$tmpdir/a.img" "$tmpdir/b.img"
expect "$tmpdir/a.img" check "$tmpdir/a"

# The options a user reaches for, offered (they come from --help: a
# command whose --help lost one would not offer it).
offered ()
{
  local cmd=$1 o got
  shift
  got=$(comp "$cmd" --)
  for o in "$@"; do
    grep -qx -- "$o" <<<"$got" || fail "raid5ctl $cmd --: $o is not offered"
  done
  echo "   raid5ctl $cmd -- offers $*"
}
offered check --json --list --integrity --files --fs-offset
offered monitor --program --oneshot --test --delay
offered create --chunk --layout --consistency-policy
offered check --tls-certificates --tls-psk --tls-username --tls
