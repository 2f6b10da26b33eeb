#!/usr/bin/python3
# ppl-hole.py CHUNK DATA_OFFSET GOLDEN M0 M1 M2: for members of a 3-member
# left-symmetric array torn by tests/integration/ppl-torn.py (its second
# data chunks never written), print "Y COUNT": the member whose absence
# would bring back the most second data chunks wrong if the parity were
# used as it is (D1 = D0 ^ P, no log recovery), and how many.
import sys

chunk, doff = int(sys.argv[1]), int(sys.argv[2])
golden = open(sys.argv[3], "rb").read()
mem = [open(p, "rb").read() for p in sys.argv[4:7]]
stripes = len(golden) // (2 * chunk)
wrong = [0, 0, 0]
for s in range(stripes):
    pd = 2 - s % 3
    d0, d1 = (pd + 1) % 3, (pd + 2) % 3
    at = doff + s * chunk
    a = mem[d0][at:at + chunk]
    p = mem[pd][at:at + chunk]
    rebuilt = bytes(x ^ y for x, y in zip(a, p))
    want = golden[s * 2 * chunk + chunk:(s + 1) * 2 * chunk]
    if rebuilt != want:
        wrong[d1] += 1
y = max(range(3), key=lambda i: wrong[i])
print(y, wrong[y])
