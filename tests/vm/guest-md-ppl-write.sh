# tests/vm/guest-md-ppl-write.sh -- in the guest: kernel md makes an array
# with a partial parity log on /dev/vda vdb vdc (chunk $CHUNK bytes,
# --assume-clean on zeroed disks), $GOLD goes to its start, then writers
# rewrite the first data chunk of random stripes of that part (direct
# I/O, 4 threads) until the host kills the guest (test-md-ppl-crash.sh):
# $VM_WORK/writing says they started.

. "${BASH_SOURCE[0]%/*}/guest-lib.sh"

run mdadm --create /dev/md0 --run --level=5 --raid-devices=3 \
    --chunk=$((CHUNK / 1024)) --consistency-policy=ppl --assume-clean \
    /dev/vda /dev/vdb /dev/vdc || { not_ok "mdadm --create --consistency-policy=ppl"; exit 1; }
run dd if="$GOLD" of=/dev/md0 bs=1M oflag=direct conv=notrunc,fsync ||
    { not_ok "writing the pattern"; exit 1; }
ok "md0 made with consistency_policy $(cat /sys/block/md0/md/consistency_policy), pattern written"
exec /usr/bin/python3 - "$GOLD" "$CHUNK" "$VM_WORK/writing" <<'PY'
import mmap, os, random, sys, threading
size, chunk = os.path.getsize(sys.argv[1]), int(sys.argv[2])
stripes = size // (2 * chunk)
def writer(seed):
    rnd = random.Random(seed)
    fd = os.open("/dev/md0", os.O_WRONLY | os.O_DIRECT)
    buf = mmap.mmap(-1, chunk)
    while True:
        buf[:] = rnd.randbytes(chunk)
        os.pwrite(fd, buf, rnd.randrange(stripes) * 2 * chunk)
ts = [threading.Thread(target=writer, args=(i,), daemon=True) for i in range(4)]
for t in ts:
    t.start()
open(sys.argv[3], "w").write("writing\n")
print("ok writers started", flush=True)
for t in ts:
    t.join()
PY
