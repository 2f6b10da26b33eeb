#!/usr/bin/env bash
# readonly=true: the plugin writes nothing to the members, as md's
# read-only array (mdadm --assemble --readonly).  The server runs as
# nobody, the member files mode 0444.  Asserts:
#   - a dirty array (its last server killed after a write) is served:
#     every byte reads back as the model (clients' writes refused by
#     nbdkit, the array not written), no resync runs, status says
#     "active (read-only)" as /proc/mdstat does (its superblocks say
#     active: a resync is due); a check runs (--wait, mismatch_cnt 0);
#     repair, rebuild and fail are refused with one line saying the
#     array is read-only;
#   - after the server stops, every member is byte-identical to before
#     and the array is still dirty (State active);
#   - without readonly=true, nobody's server cannot start (it must write):
#     one line naming the member and the permission;
#   - a dirty PPL array is not served read-only degraded: its log would
#     have to make the torn stripes whole first (that writes).
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
. "${0%/*}/job-functions.sh"
requires_jobs
requires setpriv --version
requires_raid5ctl

# nobody runs a copy of the plugin in a directory of its own: the build
# tree may be under a directory only root may enter.
chmod 0755 "$tmpdir"
mkdir "$tmpdir/ro"
chown nobody "$tmpdir/ro"
cp "$PLUGIN" "$tmpdir/ro/plugin.so"
as_nobody () { setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; }
as_nobody "$NBDKIT" "$tmpdir/ro/plugin.so" --version >/dev/null 2>&1 ||
  skip "user nobody cannot load a copy of the plugin in $tmpdir/ro"

m=()
for i in 0 1 2; do
  m+=("$tmpdir/m$i.img")
  truncate -s 16M "${m[$i]}"
done
"$RAID5CTL" create --chunk 64K "${m[@]}" >"$tmpdir/create.log" 2>&1 ||
  { cat "$tmpdir/create.log" >&2; fail "create"; }
disks=("${m[@]/#/disk=}")

echo "== a dirty array"
serve_ctl "$tmpdir/rw.log" "${disks[@]}" || fail "serve"
size=$(ctl_get 's["size_bytes"]')
head -c "$size" /dev/urandom >"$tmpdir/model"
nbdcopy "$tmpdir/model" "$URI" || fail "filling the array"
/usr/bin/python3 - "$URI" <<'EOF' || fail "a write"
import nbd, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1])
h.pwrite(h.pread(4096, 0), 0); h.flush()
EOF
crash_server
"$RAID5CTL" examine "${m[0]}" | grep -q "State : active" || fail "not dirty"
sums=$(checksum_members "${m[@]}")
chmod 0444 "${m[@]}"

echo "== served read-only by nobody"
CTL_SOCK=$tmpdir/ro/ctl
# setpriv itself in the background (not the function, whose subshell
# would be $!): it becomes nbdkit, so $! is the server.
setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
  "$NBDKIT" -f -U "$tmpdir/ro/sock" "$tmpdir/ro/plugin.so" \
  "${disks[@]}" readonly=true control="$CTL_SOCK" 2>"$tmpdir/ro.log" &
ro=$!
cleanup_fn "kill_ours -9 $ro"
for _ in $(seq 100); do [ -S "$CTL_SOCK" ] && ctl_quiet status && break; sleep 0.05; done
ctl_quiet status || fail "the read-only server: $(cat "$tmpdir/ro.log")"
nbdcopy "nbd+unix:///?socket=$tmpdir/ro/sock" "$tmpdir/back" ||
  fail "reading the read-only array"
cmp "$tmpdir/model" "$tmpdir/back" || fail "wrong bytes read-only"
nbdinfo "nbd+unix:///?socket=$tmpdir/ro/sock" | grep -q "is_read_only: true" ||
  fail "the export does not say read-only"
if /usr/bin/python3 -c '
import nbd, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1]); h.pwrite(b"x" * 4096, 0)' \
     "nbd+unix:///?socket=$tmpdir/ro/sock" 2>/dev/null; then
  fail "a client write was taken"
fi
[ "$(ctl_get '(s["read_only"], s["metadata"], s["job"]["kind"])')" = "(True, 'active', 'idle')" ] ||
  fail "status read-only: $(ctl_get '(s["read_only"], s["metadata"], s["job"])')"
grep -q "^raid5 : healthy, active (read-only) \[3/3\] \[UUU\]" <<<"$(ctl status)" ||
  fail "status: $(ctl status)"
out=$("$RAID5CTL" --control "$CTL_SOCK" check --wait 2>&1) &&
  grep -q "mismatch_cnt 0" <<<"$out" || fail "check read-only: $out"
for cmd in "repair" "rebuild 1" "fail 1"; do
  out=$(ctl $cmd 2>&1) && fail "$cmd was taken read-only: $out"
  grep -q "${cmd%% *}: the array is read-only: nothing is written to its members" <<<"$out" ||
    fail "$cmd: $out"
done
kill "$ro"; wait "$ro" 2>/dev/null || :
[ "$(checksum_members "${m[@]}")" = "$sums" ] || fail "a member changed"
"$RAID5CTL" examine "${m[0]}" | grep -q "State : active" ||
  fail "the dirty array was marked clean"

echo "== without readonly=true: refused, one line"
if as_nobody "$NBDKIT" -f -U "$tmpdir/ro/sock2" "$tmpdir/ro/plugin.so" \
     "${disks[@]}" --run true 2>"$tmpdir/rw2.log"; then
  fail "nobody served the 0444 members writable"
fi
grep -q "member 0 (${m[0]}): cannot open: Permission denied" "$tmpdir/rw2.log" ||
  fail "without readonly: $(cat "$tmpdir/rw2.log")"
[ "$(checksum_members "${m[@]}")" = "$sums" ] || fail "a member changed"
echo "== a dirty PPL array read-only and degraded: refused"
chmod 0644 "${m[@]}"
for i in 0 1 2; do rm -f "${m[$i]}"; truncate -s 16M "${m[$i]}"; done
"$RAID5CTL" create --chunk 64K --consistency-policy ppl "${m[@]}" \
  >"$tmpdir/create.log" 2>&1 || { cat "$tmpdir/create.log" >&2; fail "create ppl"; }
serve_ctl "$tmpdir/ppl.log" "${disks[@]}" || fail "serve ppl"
head -c "$(ctl_get 's["size_bytes"]')" /dev/urandom >"$tmpdir/model2"
nbdcopy "$tmpdir/model2" "$URI" || fail "filling the ppl array"
crash_server
sums=$(checksum_members "${m[@]}")
if "$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "disk=${m[0]}" "disk=${m[1]}" disk=missing \
     readonly=true --run true 2>"$tmpdir/pplro.log"; then
  fail "a dirty degraded PPL array was served read-only"
fi
grep -q "slot 2 is out of service and the array was not stopped cleanly: its partial parity logs must make the torn stripes whole" \
  "$tmpdir/pplro.log" || fail "dirty degraded PPL read-only: $(cat "$tmpdir/pplro.log")"
[ "$(checksum_members "${m[@]}")" = "$sums" ] || fail "a member changed"
echo "test-readonly: OK"
