#!/usr/bin/python3
"""scripts/soak-helper.py -- the parts of scripts/soak.sh that are easier
in Python: the array's state from its control socket, the model's growth
after a grow, and the report.

  soak-helper.py state SOCK       status --json as shell assignments (S_*)
                                  for eval; exit 2 if the socket does not
                                  answer within 10 s
  soak-helper.py serve            the same for each line "state SOCK" read
                                  on stdin, each answer ended by a line
                                  "END" (a co-process: Python starts once)
  soak-helper.py grow-model MODEL SIZE
                                  make the model SIZE bytes, the new bytes
                                  unknown (a grown array's new space is
                                  learned as it is read)
  soak-helper.py report EVENTS OUT
                                  the tables of the run from the events
                                  file (one tab-separated line per fault:
                                  number, kind, state, slot, t_fault,
                                  t_recovered or -, note) into OUT

The state's classes, in the order they are decided (the first that holds):
  growing     a reshape is under way (s["grow"])
  replacing   a hot replace is copying
  re-adding   a member is coming back by a bitmap-guided resync
  rebuilding  a member is being rebuilt
  resyncing   parity is being resynced after an unclean stop
  degraded    a member is out (faulty or missing) and nothing rebuilds it
  checking    a check or a repair is running on the whole array
  healthy     none of these
  failed      more than one member out (never made on purpose)
"""
import json
import os
import shlex
import sys
import time

# The control socket's client is the tests' (one command, OK or ERROR).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests", "integration"))
from ctl import command  # noqa: E402

STATES = ["healthy", "degraded", "resyncing", "rebuilding", "re-adding",
          "growing", "replacing", "checking"]


def classify(s):
    job = s["job"]["kind"]
    states = [m["state"] for m in s["members"]]
    if s["state"] == "failed":
        return "failed"
    if s["grow"] is not None or job == "reshape":
        return "growing"
    if job == "replace":
        return "replacing"
    if "re-adding" in states:
        return "re-adding"
    if "rebuilding" in states:
        return "rebuilding"
    if job == "resync":
        return "resyncing"
    if any(st in ("faulty", "missing") for st in states):
        return "degraded"
    if job in ("check", "repair"):
        return "checking"
    return "healthy"


def state(sock):
    try:
        ok, lines = command(sock, "status --json")
        if not ok:
            raise ValueError(lines[-1])
        s = json.loads(lines[0])
    except (OSError, RuntimeError, ValueError, IndexError) as e:
        print("S_ERROR=%s" % shlex.quote("status: %s" % e))
        return 2
    ms = s["members"]
    out = [m["slot"] for m in ms if m["state"] != "active"]
    o = ms[out[0]] if out else None
    repl = [m for m in ms if m["replacement"]]
    listing = [m for m in ms if (m["bad_blocks"] or {}).get("sectors")]
    v = {
        "S_ERROR": "",
        "S_CLASS": classify(s),
        "S_HEALTH": s["health"],
        "S_META": s["metadata"],
        "S_RESYNC_DUE": 1 if s.get("resync_due") else 0,
        "S_JOB": s["job"]["kind"],
        "S_JOB_DONE": s["job"]["done_stripes"],
        "S_JOB_TOTAL": s["job"]["total_stripes"],
        "S_JOB_SLOT": s["job"]["slot"],
        "S_NDISKS": s["raid_disks"],
        "S_SIZE": s["size_bytes"],
        "S_DOFF": s["data_offset_bytes"],
        "S_GROW": 0 if s["grow"] is None else 1,
        "S_GROW_FROM": s["grow"]["from_members"] if s["grow"] else 0,
        "S_GROW_TO": s["grow"]["to_members"] if s["grow"] else 0,
        "S_NOUT": len(out),
        # Slots whose md bad-block log lists something: for those rows
        # the member is out already (and, write_error_seen, the entries
        # stay until the array starts again: see heal).
        "S_BB_SLOTS": " ".join(str(m["slot"]) for m in listing),
        "S_BB_STUCK": " ".join(str(m["slot"]) for m in listing
                               if m["bad_blocks"]["write_error_seen"]),
        "S_OUT": out[0] if out else -1,
        "S_OUT_STATE": o["state"] if o else "",
        "S_OUT_FAULT": (o["fault"] or {}).get("kind", "") if o else "",
        "S_OUT_COMEBACK": (o["comeback"] or {}).get("state", "") if o else "",
        "S_REPL_SLOT": repl[0]["slot"] if repl else -1,
        "S_REPL_PATH": repl[0]["replacement"] if repl else "",
        "S_LAST_KIND": s["last_job"]["kind"],
        "S_LAST_RESULT": s["last_job"]["result"],
        "S_LAST_MISMATCH": s["last_job"]["mismatch_sectors"],
        "S_LAST_NUMBER": s["last_job"]["number"],
        "S_LEFT_OUT": " ".join(str(m["slot"]) for m in s["left_out"]),
        "S_FAILURES": s["counters"]["member_failures"],
        # This server's: units that failed their checksum, healed or not,
        # and of those the stale ones of a member taken one event behind
        # (lost writes of a crash: found at the start, rightly).
        "S_INT_FAILED": (s.get("integrity") or {}).get("failed_units", 0),
        "S_INT_STALE": (s.get("integrity") or {}).get("stale_units_at_start", 0),
    }
    for k, val in v.items():
        print("%s=%s" % (k, shlex.quote(str(val))))
    print("S_PATH=(%s)" % " ".join(shlex.quote(m["path"] or "missing")
                                   for m in ms))
    print("S_MSTATE=(%s)" % " ".join(shlex.quote(m["state"]) for m in ms))
    return 0


def grow_model(path, size):
    old = os.path.getsize(path)
    if size < old:
        print("soak-helper: the model (%d bytes) is bigger than %d"
              % (old, size), file=sys.stderr)
        return 1
    if size == old:
        return 0
    if old % 8 or size % 8:
        print("soak-helper: sizes not multiples of 8", file=sys.stderr)
        return 1
    with open(path, "r+b") as f:
        f.truncate(size)
    with open(path + ".known", "r+b") as f:
        f.truncate(size // 8)           # the new bits are 0: unknown
    return 0


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else None


def fmt_s(x):
    return "-" if x is None else "%.1f" % x


def report(events, out):
    rows = []
    with open(events) as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if len(p) < 7 or not p[0].isdigit():
                continue
            rows.append(p)
    kinds = []
    for r in rows:
        if r[1] not in kinds:
            kinds.append(r[1])
    states = [s for s in STATES if any(r[2] == s for r in rows)]
    states += sorted(set(r[2] for r in rows) - set(states))
    w = max([len(k) for k in kinds] + [12])
    lines = []
    head = "%-*s" % (w, "fault") + "".join("%11s" % s[:10] for s in states)
    head += "%7s  %s" % ("total", "recovery s (median / max)")
    lines.append(head)
    tot = {s: 0 for s in states}
    for k in kinds:
        ks = [r for r in rows if r[1] == k]
        line = "%-*s" % (w, k)
        for s in states:
            n = sum(1 for r in ks if r[2] == s)
            tot[s] += n
            line += "%11s" % (n if n else ".")
        rec = [float(r[5]) - float(r[4]) for r in ks if r[5] != "-"]
        line += "%7d  %s / %s" % (len(ks), fmt_s(median(rec)),
                                  fmt_s(max(rec) if rec else None))
        if len(rec) < len(ks):
            line += " (%d not recovered before the next epoch)" % (
                len(ks) - len(rec))
        lines.append(line)
    line = "%-*s" % (w, "total")
    for s in states:
        line += "%11d" % tot[s]
    rec = [float(r[5]) - float(r[4]) for r in rows if r[5] != "-"]
    line += "%7d  %s / %s" % (len(rows), fmt_s(median(rec)),
                              fmt_s(max(rec) if rec else None))
    lines.append(line)
    missing = [s for s in STATES if s not in states]
    if missing:
        lines.append("states no fault landed in: %s" % ", ".join(missing))
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0


def serve():
    for line in sys.stdin:
        w = line.split()
        if len(w) == 2 and w[0] == "state":
            state(w[1])
        else:
            print("S_ERROR=%s" % shlex.quote("bad request: %s" % line))
        print("END", flush=True)
    return 0


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    if argv[1] == "state" and len(argv) == 3:
        return state(argv[2])
    if argv[1] == "serve" and len(argv) == 2:
        return serve()
    if argv[1] == "grow-model" and len(argv) == 4:
        return grow_model(argv[2], int(argv[3]))
    if argv[1] == "report" and len(argv) == 4:
        return report(argv[2], argv[3])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
