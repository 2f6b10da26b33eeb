#!/usr/bin/env bash
# systemd/nbdkit-raid5@.service and its /etc/nbdkit-raid5/NAME.conf:
#   - systemd-analyze verify finds nothing wrong with the unit;
#   - where systemd runs (as root): the unit installed under /run, a conf
#     for an array of image files, systemctl start: the export's size on
#     /run/nbdkit-raid5/NAME.sock, raid5ctl status on NAME.ctl; stop: the
#     array recorded clean;
#   - where it does not (CI): the unit's ExecStart line itself, expanded
#     as systemd expands it (%i; $VAR split into words, from the
#     EnvironmentFile), with the paths moved under the test's folder and
#     nbdkit and the plugin the built ones, run: it forks once listening
#     and writes its pid file (Type=forking, PIDFile=; waited for, as
#     systemd waits), serves the array
#     and its control socket, and SIGTERM (systemd's stop) leaves the
#     array clean.
. "${0%/*}/functions.sh"
. "${0%/*}/../integration/md-functions.sh"
requires_raid5ctl
requires nbdinfo --version
requires mdadm --version
requires /usr/bin/python3 --version

UNIT=$abs_top_srcdir/systemd/nbdkit-raid5@.service
NAME=t$$
md_create sd 3 16M --chunk 64K
m=("${MEMBERS[@]}")
size=$("$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "${m[@]/#/disk=}" --run 'nbdinfo --size "$uri"')
cat >"$tmpdir/$NAME.conf" <<EOF
# a comment, as in raid5.conf.example
DISKS="${m[*]/#/disk=}"
OPTIONS="sync-speed-max=50000"
EOF

if command -v systemd-analyze >/dev/null; then
  cp "$UNIT" "$tmpdir/nbdkit-raid5@$NAME.service"
  systemd-analyze verify --man=no "$tmpdir/nbdkit-raid5@$NAME.service" \
    >"$tmpdir/verify.out" 2>&1 || { cat "$tmpdir/verify.out" >&2; fail "systemd-analyze verify"; }
  ! grep -v "^$" "$tmpdir/verify.out" ||
    fail "systemd-analyze verify has something to say about the unit"
  echo "   systemd-analyze verify: nothing to say"
else
  echo "   (no systemd-analyze here: the unit is not verified)"
fi

# clean_stop: the members' superblocks say clean.
clean_stop ()
{
  local st
  st=$(mdadm --examine "${m[0]}" 2>/dev/null | sed -n 's/^ *State : //p')
  [ "$st" = clean ] || fail "after the stop the array is '$st', not clean"
  echo "   stopped: the array is clean"
}

if [ -d /run/systemd/system ] && [ "$(id -u)" = 0 ]; then
  echo "== systemd runs here: the unit started"
  mkdir -p /etc/nbdkit-raid5
  cp "$tmpdir/$NAME.conf" "/etc/nbdkit-raid5/$NAME.conf"
  cp "$UNIT" /run/systemd/system/
  cleanup_fn "systemctl stop nbdkit-raid5@$NAME; rm -f /etc/nbdkit-raid5/$NAME.conf /run/systemd/system/nbdkit-raid5@.service; systemctl daemon-reload"
  systemctl daemon-reload
  systemctl start "nbdkit-raid5@$NAME" || fail "systemctl start"
  RUN=/run/nbdkit-raid5
else
  echo "== no systemd running here: the unit's ExecStart run as systemd would"
  RUN=$tmpdir/run
  mkdir -p "$RUN"                   # RuntimeDirectory=
  mapfile -t argv < <(/usr/bin/python3 - "$UNIT" "$tmpdir/$NAME.conf" "$NAME" \
                        "$RUN" "$NBDKIT" "$PLUGIN" <<'PY'
import re, shlex, sys
unit, conf, name, run, nbdkit, plugin = sys.argv[1:]
lines = open(unit).read().splitlines()
key = lambda k: [l.split("=", 1)[1] for l in lines if l.startswith(k + "=")]
assert key("EnvironmentFile") == ["/etc/nbdkit-raid5/%i.conf"], key("EnvironmentFile")
assert key("Type") == ["forking"] and key("PIDFile") == ["/run/nbdkit-raid5/%i.pid"]
env = {}
for l in open(conf):                  # systemd's EnvironmentFile syntax
    l = l.strip()
    if l and not l.startswith("#"):
        k, v = l.split("=", 1)
        env[k] = " ".join(shlex.split(v))
(cmd,) = key("ExecStart")
out = []
for w in cmd.replace("%i", name).split():
    m = re.fullmatch(r"\$(\w+)", w)
    if m:                               # $VAR: its value split into words
        out += env.get(m.group(1), "").split()
        continue
    w = re.sub(r"\$\{(\w+)\}", lambda m: env.get(m.group(1), ""), w)
    w = w.replace("/run/nbdkit-raid5", run)
    out.append({"/usr/bin/nbdkit": nbdkit, "raid5": plugin}.get(w, w))
print("\n".join(out))
PY
  ) || fail "the unit's ExecStart could not be read"
  echo "   ExecStart: ${argv[*]//$tmpdir\//}"
  "${argv[@]}" || fail "ExecStart failed"
  # nbdkit's parent returns once it listens; its child writes the pid
  # file just after, and systemd waits for it (Type=forking, PIDFile=).
  for (( i = 0; i < 100; i++ )); do [ -s "$RUN/$NAME.pid" ] && break; sleep 0.1; done
  [ -s "$RUN/$NAME.pid" ] || fail "no pid file 10 s after ExecStart returned"
  cleanup_fn "kill_ours -9 $(cat "$RUN/$NAME.pid")"
fi

got=$(nbdinfo --size "nbd+unix:///?socket=$RUN/$NAME.sock") || fail "nbdinfo on $NAME.sock"
[ "$got" = "$size" ] || fail "the export is $got bytes, not $size"
echo "   $NAME.sock serves the array: $got bytes"
"$RAID5CTL" status --control "$RUN/$NAME.ctl" --json |
  /usr/bin/python3 -c 'import json, sys; s = json.load(sys.stdin); assert s["health"] == "[UUU]" and s["speed_max_kib"] == 50000, s' ||
  fail "raid5ctl status on $NAME.ctl (the OPTIONS too)"
echo "   $NAME.ctl answers: [UUU], sync-speed-max from OPTIONS"

if [ "$RUN" = /run/nbdkit-raid5 ]; then
  systemctl stop "nbdkit-raid5@$NAME" || fail "systemctl stop"
else
  pid=$(cat "$RUN/$NAME.pid")
  kill -TERM "$pid"
  for (( i = 0; i < 300; i++ )); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && fail "nbdkit did not stop on SIGTERM within 30 s"
fi
clean_stop
