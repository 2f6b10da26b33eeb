#!/usr/bin/python3
# ppl-torn.py golden DIR POLICY SEED: make DIR/golden0..2, the members
# of a clean 3-member array (chunk CHUNK bytes, consistency policy POLICY,
# ppl or resync, kept in DIR/policy) whose every byte is known
# (DIR/golden.img is the array).  Needs RAID5CTL and PLUGIN.
# ppl-torn.py rounds DIR N SEED: N rounds of tearing stripes as a power
# cut does, then starting the array with another member missing, counting
# the chunks nobody wrote that come back wrong (the RAID-5 write hole).
# Each round:
#   1. the members are copied from golden; each is served by an nbdkit
#      file plugin process of its own (its "disk"), and the array by the
#      raid5 plugin over NBD on those;
#   2. writers (16 connections) rewrite the FIRST data chunk of random
#      stripes with new bytes, whole chunks, non-stop; the second data
#      chunk of a stripe is never written;
#   3. one member's server X is frozen (SIGSTOP): its disk takes no more
#      writes while the others go on, so a stripe's data and parity
#      writes land on some members and not on X -- what a power cut does
#      to writes in flight; then the array and every server are killed
#      (-9), X's unwritten requests with it;
#   4. the array is started on the member files with a member Y (not X)
#      missing: ppl without force (md starts a dirty degraded array with
#      a log and recovers it), resync with force=true (md --force);
#   5. every stripe's second data chunk is read and compared with
#      golden.img: the ones that differ were torn by the write hole.
# Prints one line per round and a total; exits 0 (the caller judges), 1
# on a failure of the harness itself.
# ppl-torn.py tear DIR SEED: steps 1-3 once; the torn members stay in
# DIR/m0..2 and X is printed (tests/vm/test-ppl-torn-md.sh).
import os
import random
import signal
import subprocess
import sys
import threading
import time

import nbd

NBDKIT = os.environ.get("NBDKIT", "nbdkit")
PLUGIN = os.environ["PLUGIN"]
CHUNK = int(os.environ.get("CHUNK", "16384"))
MEMBERS = 3


def log_tail(log, lines=8):
    """The last lines of the servers' log, for a failure's message."""
    try:
        log.flush()
        with open(log.name, "rb") as f:
            return b"".join(f.readlines()[-lines:]).decode(errors="replace")
    except (OSError, AttributeError):
        return ""


def wait_socket(path, proc, what, log):
    # nbdkit writes its pid file once it listens (the socket file exists
    # from bind(), a moment before: a connect then is refused).
    for _ in range(400):
        if os.path.exists(path + ".pid") and os.path.getsize(path + ".pid"):
            return
        if proc.poll() is not None:
            sys.exit("ppl-torn: %s exited: %s; the servers' log ends:\n%s"
                     % (what, proc.returncode, log_tail(log)))
        time.sleep(0.01)
    sys.exit("ppl-torn: %s did not start" % what)


def serve(args, sock, log, what):
    for f in (sock, sock + ".pid"):
        if os.path.exists(f):
            os.unlink(f)
    p = subprocess.Popen([NBDKIT, "-f", "-U", sock, "-P", sock + ".pid"] + args,
                         stdout=log, stderr=log)
    wait_socket(sock, p, what, log)
    return p


def writer(uri, stripes, stripe_data, stop, rnd_seed):
    rnd = random.Random(rnd_seed)
    try:
        h = nbd.NBD()
        h.connect_uri(uri)
        while not stop.is_set():
            s = rnd.randrange(stripes)
            h.pwrite(rnd.randbytes(CHUNK), s * stripe_data)
    except Exception:
        pass                        # the array was killed under us


def copy(src, dst):
    with open(src, "rb") as f, open(dst, "wb") as g:
        g.write(f.read())


def tear(d, stripes, rnd, log):
    """Steps 1-3: the members torn in DIR/m0..2; returns X."""
    stripe_data = CHUNK * (MEMBERS - 1)
    files = ["%s/m%d" % (d, i) for i in range(MEMBERS)]
    for i in range(MEMBERS):
        copy("%s/golden%d" % (d, i), files[i])
    servers = [serve(["file", "file=" + files[i]], "%s/s%d" % (d, i), log,
                     "member server %d" % i) for i in range(MEMBERS)]
    disks = ["disk=nbd+unix:///?socket=%s/s%d" % (d, i)
             for i in range(MEMBERS)]
    array = serve([PLUGIN] + disks + ["member-timeout=60"], d + "/arr",
                  log, "the array")
    uri = "nbd+unix:///?socket=%s/arr" % d
    stop = threading.Event()
    ts = [threading.Thread(target=writer, daemon=True,
                           args=(uri, stripes, stripe_data, stop,
                                 rnd.random()))
          for _ in range(16)]
    for t in ts:
        t.start()
    x = rnd.randrange(MEMBERS)
    time.sleep(0.2 + rnd.random() * 0.2)
    servers[x].send_signal(signal.SIGSTOP)
    time.sleep(0.3)
    array.kill()
    array.wait()
    for s in servers:
        s.kill()
        s.wait()
    stop.set()
    for t in ts:
        t.join(5)
    return x


def one_round(d, policy, golden, stripes, rnd, log):
    stripe_data = CHUNK * (MEMBERS - 1)
    files = ["%s/m%d" % (d, i) for i in range(MEMBERS)]
    uri = "nbd+unix:///?socket=%s/arr" % d
    x = tear(d, stripes, rnd, log)
    y = rnd.choice([i for i in range(MEMBERS) if i != x])
    args = [PLUGIN] + ["disk=" + ("missing" if i == y else files[i])
                       for i in range(MEMBERS)]
    if policy != "ppl":
        args.append("force=true")
    array = serve(args, d + "/arr", log, "the degraded array")
    torn = 0
    try:
        h = nbd.NBD()
        h.connect_uri(uri)
        for s in range(stripes):
            off = s * stripe_data + CHUNK
            if h.pread(CHUNK, off) != golden[off:off + CHUNK]:
                torn += 1
        h.shutdown()
    finally:
        array.terminate()
        array.wait()
    return x, y, torn


def make_golden(d, policy, seed):
    """A clean array of 3 x 8 MiB members, chunk CHUNK, every byte written
    through the plugin (DIR/golden.img), members in DIR/golden0..2."""
    os.makedirs(d, exist_ok=True)
    m = ["%s/golden%d" % (d, i) for i in range(MEMBERS)]
    for f in m:
        with open(f, "wb") as g:
            g.truncate(8 << 20)
    c = subprocess.run([os.environ["RAID5CTL"], "create",
                        "--consistency-policy", policy,
                        "--chunk", "%dK" % (CHUNK // 1024)] + m,
                       capture_output=True, text=True)
    if c.returncode != 0:
        sys.exit("ppl-torn: raid5ctl create: " + c.stdout + c.stderr)
    with open(d + "/policy", "w") as f:
        print(policy, file=f)
    with open(d + "/servers.log", "ab") as log:
        array = serve([PLUGIN] + ["disk=" + f for f in m], d + "/arr", log,
                      "the array")
    h = nbd.NBD()
    h.connect_uri("nbd+unix:///?socket=%s/arr" % d)
    img = random.Random(seed).randbytes(h.get_size())
    for o in range(0, len(img), 1 << 20):
        h.pwrite(img[o:o + (1 << 20)], o)
    h.flush()
    h.shutdown()
    array.terminate()
    if array.wait() != 0:
        sys.exit("ppl-torn: the array did not stop cleanly")
    with open(d + "/golden.img", "wb") as f:
        f.write(img)


def main():
    what, d = sys.argv[1], sys.argv[2]
    if what == "golden":
        make_golden(d, sys.argv[3], int(sys.argv[4]))
        return
    seed = int(sys.argv[-1])
    policy = open(d + "/policy").read().strip()
    golden = open(d + "/golden.img", "rb").read()
    stripes = len(golden) // (CHUNK * (MEMBERS - 1))
    rnd = random.Random(seed)
    if what == "tear":              # the torn members only, for kernel md
        with open(d + "/servers.log", "ab") as log:
            print(tear(d, stripes, rnd, log))
        return
    rounds = int(sys.argv[3])
    total = hit = 0
    with open(d + "/servers.log", "ab") as log:
        for r in range(rounds):
            x, y, torn = one_round(d, policy, golden, stripes, rnd, log)
            total += torn
            hit += torn > 0
            print("  round %2d: froze member %d, started without %d: "
                  "%d untouched chunks wrong" % (r + 1, x, y, torn),
                  flush=True)
    print("%s: %d rounds, %d with wrong untouched chunks, %d chunks in all"
          % (policy, rounds, hit, total))
    print("TOTAL %d" % total)


main()
