#!/usr/bin/python3
# tests/vm/write-pieces.py URI PATTERN SIZE CHUNK SEED -- writes PATTERN's first
# SIZE bytes to the NBD export URI in pieces that tile [0, SIZE) exactly once,
# in random order, up to 64 in flight: half are odd (1-700 bytes, or up to a
# chunk plus change; so at odd offsets), half 4 KiB-aligned runs, so the server must do
# read-modify-write / reconstruct-write on partial stripes, often several on one
# stripe at a time.  Afterwards the export holds PATTERN whatever the order.
import random
import sys

import nbd

uri, pattern, size, chunk, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
rng = random.Random(seed)
with open(pattern, "rb") as f:
    data = f.read(size)
assert len(data) == size, "pattern too short"

pieces = []
off = 0
while off < size:
    r = rng.random()
    if r < 0.25:
        n = rng.randint(1, 700)
    elif r < 0.5:
        n = rng.randint(1, chunk + 777)
    else:
        n = (4096 - off % 4096) + 4096 * rng.randint(0, 2 * chunk // 4096)
    n = min(n, size - off)
    pieces.append((off, n))
    off += n
rng.shuffle(pieces)

h = nbd.NBD()
h.connect_uri(uri)
pending = {}  # cookie -> buffer (kept alive until the write completes)


def reap(limit):
    """Waits until at most LIMIT writes are pending; a failed one raises."""
    while len(pending) > limit:
        h.poll(-1)
        for cookie in [c for c in pending if h.aio_command_completed(c)]:
            del pending[cookie]


for off, n in pieces:
    reap(63)
    buf = nbd.Buffer.from_bytearray(bytearray(data[off:off + n]))
    pending[h.aio_pwrite(buf, off)] = buf
reap(0)
h.flush()
h.shutdown()
print(f"{len(pieces)} writes")
