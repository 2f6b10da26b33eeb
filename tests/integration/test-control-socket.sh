#!/usr/bin/env bash
# The control socket as a server, against clients that misbehave.
# Asserts:
#   - a line longer than the limit ("fail 1", 4089 spaces, " 2": 4097
#     bytes) gets the reply "ERROR: line too long ...", not a connection
#     reset, and nothing is done: slot 1 is still in service ([UUU]);
#   - while 12 connections sit idle (each accepted within 5 s), raid5ctl
#     status --control answers within 5 s (it answers at once), and each
#     idle connection is closed by the server within 8 s (the idle
#     timeout is 2 s);
#   - with 64 idle connections open a 65th is refused with one ERROR line,
#     and once they are dropped status answers again;
#   - the server stops cleanly (SIGTERM, exit 0) with connections idle.
# Every client has a timeout: a server that serves one connection at a
# time makes them run out instead of hanging the test.

. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
. "${0%/*}/job-functions.sh"
requires_plugin
[ -x "$RAID5CTL" ] || skip "raid5ctl not built: $RAID5CTL"
[ -x /usr/bin/python3 ] || skip "needs /usr/bin/python3 (control socket client)"

make_members m 3 4M
mapfile -t disks < <(disk_args "${MEMBERS[@]}")
serve_ctl "$tmpdir/nbdkit.log" "${disks[@]}" chunk=64K

# sock_py SCRIPT ARGS...: run python with the socket path as argv[1] and
# two helpers: connect(i) -> a socket (a blocking connect, as a client's:
# the server must accept it within 5 s; else exit, or with a list FAILED
# add why to it and return None) and reply(s) -> the bytes the server
# sends until it closes (within 10 s, not reset).
py_helpers='
import signal, socket, sys, time
def _late(sig, frame):
    raise TimeoutError("not accepted within 5 s")
signal.signal(signal.SIGALRM, _late)
def connect(i, failed=None):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    signal.alarm(5)
    try:
        s.connect(sys.argv[1])
    except OSError as e:
        if failed is None:
            sys.exit("connection %d: %s" % (i, e))
        failed.append("connection %d: %s" % (i, e))
        return None
    finally:
        signal.alarm(0)
    return s
def reply(s, what):
    data = b""
    s.settimeout(10)
    try:
        while True:
            k = s.recv(4096)
            if not k:
                return data
            data += k
    except OSError as e:
        sys.exit("%s: no proper reply: %s after %r" % (what, e, data))
'
sock_py ()
{
  local s=$1
  shift
  /usr/bin/python3 -c "$py_helpers$s" "$CTL_SOCK" "$@"
}

echo "== a line longer than the limit"
out=$(sock_py '
s = connect(0)
s.sendall(b"fail 1" + b" " * 4089 + b" 2\n")
print(reply(s, "the long line").decode(errors="replace"), end="")
') || fail "the long line: $out"
echo "   reply: $out"
grep -q '^ERROR: line too long' <<<"$out" || fail "no 'line too long' error: $out"
health=$(ctl_get 's["health"]') || fail "status after the long line"
[ "$health" = "[UUU]" ] || fail "the long line was carried out: health $health"

echo "== status while 12 connections are idle"
sock_py '
import subprocess
failed = []
idle = [c for c in (connect(i, failed) for i in range(12)) if c]
t = time.monotonic()
r = subprocess.run(["timeout", "5", sys.argv[2], "status", "--control",
                    sys.argv[1]], stdout=subprocess.PIPE,
                   stderr=subprocess.STDOUT)
out = r.stdout.decode(errors="replace")
print("   raid5ctl status: exit %d after %.1f s: %s"
      % (r.returncode, time.monotonic() - t, out.splitlines()[:1]))
if r.returncode != 0 or "[UUU]" not in out:
    failed.append("status did not answer within 5 s")
if failed:
    sys.exit("while 12 connections were idle: " + "; ".join(failed))
end = time.monotonic() + 8
for i, s in enumerate(idle):
    try:
        s.settimeout(max(0.1, end - time.monotonic()))
        while s.recv(4096):
            pass
    except OSError as e:
        sys.exit("idle connection %d not closed within 8 s: %s" % (i, e))
print("   the idle connections were closed after %.1f s"
      % (time.monotonic() - t))
' "$RAID5CTL" || fail "idle connections"

echo "== 64 idle connections: a 65th is refused"
sock_py '
idle = [connect(i) for i in range(65)]
s = idle[-1]
s.sendall(b"status\n")
data = reply(s, "the 65th connection")
print("   the 65th: %s" % data.decode(errors="replace").strip())
if not data.startswith(b"ERROR: ") or data.count(b"\n") != 1:
    sys.exit("the 65th connection was not refused with one ERROR line")
' || fail "65 connections"
ctl_wait 's["health"] == "[UUU]"' 15 >/dev/null ||
  fail "status does not answer after the idle connections"

echo "== a clean stop with idle connections"
sock_py '
idle = [connect(i) for i in range(5)]
time.sleep(30)
' &
idlers=$!
cleanup_fn "kill_ours $idlers"
sleep 0.5
stop_server
kill "$idlers" 2>/dev/null || :
wait "$idlers" 2>/dev/null || :
! grep -q 'error:' "$tmpdir/nbdkit.log" ||
  { cat "$tmpdir/nbdkit.log" >&2; fail "nbdkit logged an error"; }
echo "PASS: $test_name"
