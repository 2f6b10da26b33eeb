#!/usr/bin/python3
"""tests/integration/ctl.py -- talk to the raid5 plugin's control socket
(control=PATH) without raid5ctl: one command line per connection, reply
lines back, the last "OK" or "ERROR: why".

  ctl.py SOCK cmd WORD...        send the command; print the reply (without
                                 the final OK); exit 0 on OK, 1 on ERROR
                                 (the ERROR line on stderr), 2 on no reply
  ctl.py SOCK get EXPR           status --json as s; print EXPR's value
                                 (python, e.g. 's["job"]["done_stripes"]')
  ctl.py SOCK wait EXPR SECONDS  poll status --json every 50 ms until EXPR
                                 is true; print the status line of the
                                 first status where it is; exit 1 (with the
                                 last status) on timeout
  ctl.py SOCK progress KIND SECONDS MIN
                                 follow the running job KIND (or one that
                                 is about to start) to its end, polling
                                 every 100 ms and printing a sample every
                                 ~0.5 s; exit 0 if it ended with
                                 last_job.result 0 after at least MIN
                                 distinct partial done_stripes values
                                 (0 < done < total), each never below the
                                 one before; else 1 with the reason
  ctl.py SOCK rate KIND SECONDS WINDOW
                                 sample done_kib of the running job KIND
                                 every 50 ms for SECONDS; print the median
                                 of its speed (KiB/s per member) between
                                 steps at least WINDOW seconds apart
                                 (details on stderr); exit 1 if the job
                                 changed
  ctl.py SOCK trace SECONDS      print one line per 100 ms: time, kind,
                                 done_stripes, health (for debugging)

Also importable: command(sock, line) -> (ok, lines), status(sock) -> dict.
"""
import json
import socket
import sys
import time


def command(sock, line, timeout=10.0):
    """Send one command; return (ok, reply lines without the last)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(sock)
    s.sendall(line.encode() + b"\n")
    data = b""
    while True:
        k = s.recv(65536)
        if not k:
            break
        data += k
    s.close()
    lines = data.decode().splitlines()
    if not lines:
        raise RuntimeError("no reply to %r" % line)
    last = lines[-1]
    if last == "OK":
        return True, lines[:-1]
    if last.startswith("ERROR: "):
        return False, lines[:-1] + [last]
    raise RuntimeError("reply to %r does not end in OK/ERROR: %r"
                       % (line, lines))


def status(sock):
    ok, lines = command(sock, "status --json")
    if not ok or len(lines) != 1:
        raise RuntimeError("status --json: %r" % lines)
    return json.loads(lines[0])


def summary(s):
    j = s["job"]
    return ("t=%.2f health %s state %s job %s %d/%d stripes (%d KiB) "
            "speed %d K/s mismatch %d last %s/%d/%d" %
            (time.monotonic(), s["health"], s["state"], j["kind"],
             j["done_stripes"], j["total_stripes"], j["done_kib"],
             j["speed_kib"], j["mismatch_sectors"], s["last_job"]["kind"],
             s["last_job"]["result"], s["last_job"]["mismatch_sectors"]))


def progress(sock, kind, seconds, min_samples):
    start = time.monotonic()
    end = start + seconds
    seen = False
    partial = set()
    last_done = -1
    printed = 0.0
    s = None
    while time.monotonic() < end:
        s = status(sock)
        j = s["job"]
        if j["kind"] == kind:
            seen = True
            d = j["done_stripes"]
            if d < last_done:
                print("ctl.py: %s went backwards: %d after %d"
                      % (kind, d, last_done), file=sys.stderr)
                return 1
            last_done = d
            if 0 < d < j["total_stripes"]:
                partial.add(d)
            if time.monotonic() - printed >= 0.5:
                printed = time.monotonic()
                print("   %5.1f s: %s" % (printed - start, summary(s)),
                      flush=True)
        elif seen or (s["last_job"]["kind"] == kind and j["kind"] == "idle"
                      and last_done < 0 and time.monotonic() - start > 1):
            break
        time.sleep(0.1)
    else:
        print("ctl.py: %s not over within %s s: %s"
              % (kind, seconds, summary(s) if s else "no status"),
              file=sys.stderr)
        return 1
    print("   %5.1f s: %s" % (time.monotonic() - start, summary(s)))
    lj = s["last_job"]
    if lj["kind"] != kind or lj["result"] != 0:
        print("ctl.py: the last job is %s with result %d, not %s with 0"
              % (lj["kind"], lj["result"], kind), file=sys.stderr)
        return 1
    if len(partial) < min_samples:
        print("ctl.py: %s seen at only %d partial positions (%s), "
              "wanted %d" % (kind, len(partial), sorted(partial),
                             min_samples), file=sys.stderr)
        return 1
    return 0


def rate(sock, kind, seconds, window):
    """A job advances in steps (several MiB per member at a time), so
    done_kib is a staircase: time each step by the first sample (every
    50 ms) that shows it, and take speeds between steps at least window
    seconds apart.  Prints the median speed and the share of the time
    between the first and last step that the job spent waiting for its
    speed limit (percent)."""
    steps = []
    own = []
    last = None
    end = time.monotonic() + seconds
    while True:
        t0 = time.monotonic()
        s = status(sock)
        t1 = time.monotonic()
        j = s["job"]
        if j["kind"] != kind:
            print("ctl.py: the %s ended or changed while sampling: %s"
                  % (kind, summary(s)), file=sys.stderr)
            return 1
        own.append(j["speed_kib"])
        if last is not None and j["done_kib"] != last:
            steps.append(((t0 + t1) / 2, j["done_kib"], j["throttled_ms"]))
        last = j["done_kib"]
        if t1 >= end:
            break
        time.sleep(0.05)
    rates = []
    for i, (t, k, _) in enumerate(steps):
        for t2, k2, _ in steps[i + 1:]:
            if t2 - t >= window:
                rates.append((k2 - k) / (t2 - t))
                break
    if len(rates) < 3:
        print("ctl.py: too few windows (%d, %d steps) in %s s"
              % (len(rates), len(steps), seconds), file=sys.stderr)
        return 1
    rates.sort()
    own.sort()
    med = rates[len(rates) // 2]
    span = steps[-1][0] - steps[0][0]
    waited = (steps[-1][2] - steps[0][2]) / 10.0 / span
    print("   %s: %d steps, %d windows of >= %.1f s: median %.0f KiB/s "
          "(min %.0f, max %.0f); first to last step %.0f; the job's own "
          "speed_kib median %d; waiting for the limit %.0f%% of the time"
          % (kind, len(steps), len(rates), window, med, rates[0], rates[-1],
             (steps[-1][1] - steps[0][1]) / span, own[len(own) // 2],
             waited), file=sys.stderr)
    print("%.0f %.0f" % (med, waited))
    return 0


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    sock, op, args = argv[1], argv[2], argv[3:]
    if op == "cmd":
        try:
            ok, lines = command(sock, " ".join(args))
        except (OSError, RuntimeError) as e:
            print("ctl.py: %s: %s" % (" ".join(args), e), file=sys.stderr)
            return 2
        for l in lines[:-1] if not ok else lines:
            print(l)
        if not ok:
            print(lines[-1], file=sys.stderr)
            return 1
        return 0
    if op == "get":
        s = status(sock)
        print(eval(args[0], {"s": s}))
        return 0
    if op == "wait":
        end = time.monotonic() + float(args[1])
        s = None
        why = ""
        while True:
            try:
                s = status(sock)
                if eval(args[0], {"s": s}):
                    print(summary(s))
                    return 0
            except (OSError, RuntimeError) as e:
                why = " (%s)" % e
            if time.monotonic() > end:
                print("ctl.py: timeout (%s s) waiting for %s; last: %s%s"
                      % (args[1], args[0], summary(s) if s else "none", why),
                      file=sys.stderr)
                return 1
            time.sleep(0.05)
    if op == "progress":
        return progress(sock, args[0], float(args[1]), int(args[2]))
    if op == "rate":
        return rate(sock, args[0], float(args[1]), float(args[2]))
    if op == "trace":
        end = time.monotonic() + float(args[0])
        while time.monotonic() < end:
            try:
                print(summary(status(sock)), flush=True)
            except (OSError, RuntimeError) as e:
                print("ctl.py: %s" % e, flush=True)
            time.sleep(0.1)
        return 0
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
