#!/usr/bin/python3
# tests/integration/poke.py -- 64 KiB of one byte through NBD, for the
# tests of member state (test-md-return.sh, tests/vm/test-md-state.sh).
#
#   poke.py URI write OFF BYTE [PID]   write, flush; then kill -9 PID (the
#                                      server) at once, if given
#   poke.py URI read OFF BYTE          exit 0 if the 64 KiB at OFF are BYTE
import os
import sys

import nbd

uri, what, off, byte = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4], 0)
h = nbd.NBD()
h.connect_uri(uri)
if what == "read":
    sys.exit(0 if h.pread(65536, off) == bytes([byte]) * 65536 else 1)
h.pwrite(bytes([byte]) * 65536, off)
h.flush()
if len(sys.argv) > 5:
    os.kill(int(sys.argv[5]), 9)
else:
    h.shutdown()
