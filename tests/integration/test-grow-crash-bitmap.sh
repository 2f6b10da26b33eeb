#!/usr/bin/env bash
# test-grow-crash.sh on an array with an internal write-intent bitmap (md
# reshapes such arrays; mdadm gives one to every member over 100 GiB):
# the grow killed -9 again and again under writes, resumed each time,
# then the resync the bitmap leads; every acknowledged byte reads back,
# check finds no wrong parity, mdadm sees 4 members with the bitmap.
GROW_BITMAP=internal KILLS=${KILLS:-6} GROW_SPEED=1000 exec "${0%/*}/test-grow-crash.sh"
