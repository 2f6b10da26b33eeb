#!/usr/bin/env bash
# Members over TLS, on another host made by the test: two network
# namespaces joined by a veth pair, the array's (10.214.0.1) and the
# member host's (10.214.0.2), where nbdkit's file plugin serves each
# member with --tls=require.  A test CA and its certificates are made
# here with certtool (gnutls-bin), PSK files with psktool.  Asserts:
#   - raid5ctl create over three nbds:// URIs with --tls-certificates and
#     --tls=require (the servers also ask for the client's certificate:
#     client-cert.pem is shown); without a CA or PSK it is refused;
#   - the plugin serves them (disk=nbds://... tls-certificates=DIR
#     tls=require): random-io over 4 connections reads back what it
#     wrote; member 1's server killed and started again, a rebuild by
#     hand over TLS makes it whole (its connections made again with the
#     member's TLS settings); failed by hand and rebuilt onto a new TLS
#     member (the array keeps its TLS settings for members opened later);
#     raid5ctl check over TLS finds mismatch_cnt 0 and member-check of the
#     files behind the servers data = model, parity = XOR;
#   - refused before anything is written, with one line naming the
#     member (slot and URI) and why, non-zero exit, no byte changed, each
#     server serving a copy of member 1 (so that only TLS tells them
#     from it): a server whose certificate another CA signed; a server
#     whose certificate has expired; a plain-text server given as nbd://
#     with tls=require, and as nbds:// (it offers no TLS); raid5ctl
#     examine with another CA;
#   - PSK: the servers with --tls-psk, the array over them (the user from
#     the URI, and from tls-username=) reads back the model and takes
#     writes; raid5ctl check with --tls-psk; a wrong key, and a user the
#     file does not hold, are refused with one line;
#   - the array's own export with nbdkit --tls=require
#     --tls-certificates=DIR: a TLS client on the other host reads it back
#     as the model (random-io, nbds:// with the CA), a plain-text client
#     and a client trusting another CA are refused.
# Without root, ip, certtool or psktool, says which and exits 77.
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
. "${0%/*}/job-functions.sh"
requires_jobs
requires_programs nbdkit
command -v ip >/dev/null || skip "needs ip (iproute2) for network namespaces"
command -v certtool >/dev/null || skip "needs certtool (gnutls-bin) to make the test's certificates"
command -v psktool >/dev/null || skip "needs psktool (gnutls-bin) to make the test's PSK files"
"$NBDKIT" --dump-config 2>/dev/null | grep -qx 'tls=yes' || skip "nbdkit has no TLS"
command -v nbdinfo >/dev/null || skip "needs nbdinfo (libnbd-bin)"

p=r5t$$                       # names: at most 15 characters with suffixes
NS_A=${p}a NS_M=${p}m
A=10.214.0.1 M=10.214.0.2
SIZE=24M
declare -A MPID

# in_ns NS CMD...: run CMD inside namespace NS.
in_ns () { local ns=$1; shift; ip netns exec "$ns" "$@"; }

make_hosts ()
{
  local ns
  for ns in "$NS_A" "$NS_M"; do
    ip netns add "$ns" || return 1
    cleanup_fn "ip netns del $ns 2>/dev/null"
    in_ns "$ns" ip link set lo up || return 1
  done
  ip link add "${p}h" type veth peer name "${p}n" || return 1
  ip link set "${p}h" netns "$NS_A" || return 1
  ip link set "${p}n" netns "$NS_M" || return 1
  in_ns "$NS_A" ip addr add "$A/30" dev "${p}h" || return 1
  in_ns "$NS_M" ip addr add "$M/30" dev "${p}n" || return 1
  in_ns "$NS_A" ip link set "${p}h" up || return 1
  in_ns "$NS_M" ip link set "${p}n" up || return 1
}
make_hosts 2>"$tmpdir/netns.err" ||
  skip "cannot make network namespaces here: $(head -n 1 "$tmpdir/netns.err")"

# --- certificates: a CA, another CA, and what each server and client holds
pki=$tmpdir/pki
mkdir -p "$pki"
# cert NAME TEMPLATE_LINES...: a key and a certificate signed by the CA in
# $pki/${CA:-ca}, in $pki/NAME-key.pem and NAME-cert.pem.
cert ()
{
  local name=$1 ca=${CA:-ca}
  shift
  printf '%s\n' "$@" >"$pki/$name.info"
  certtool --generate-privkey --key-type=ecdsa --outfile "$pki/$name-key.pem" \
    >/dev/null 2>&1 || fail "certtool: key $name"
  certtool --generate-certificate --load-ca-certificate "$pki/$ca-cert.pem" \
    --load-ca-privkey "$pki/$ca-key.pem" --load-privkey "$pki/$name-key.pem" \
    --template "$pki/$name.info" --outfile "$pki/$name-cert.pem" \
    >"$pki/$name.log" 2>&1 || { cat "$pki/$name.log" >&2; fail "certtool: $name"; }
}
# ca NAME: a self-signed CA in $pki/NAME-key.pem, NAME-cert.pem.
ca ()
{
  printf '%s\n' "cn = raid5 test $1" ca cert_signing_key "expiration_days = 30" \
    >"$pki/$1.info"
  certtool --generate-privkey --key-type=ecdsa --outfile "$pki/$1-key.pem" \
    >/dev/null 2>&1 &&
  certtool --generate-self-signed --load-privkey "$pki/$1-key.pem" \
    --template "$pki/$1.info" --outfile "$pki/$1-cert.pem" >"$pki/$1.log" 2>&1 ||
    { cat "$pki/$1.log" >&2; fail "certtool: CA $1"; }
}
# dir DIR CA CERT [client|server]: a directory as nbdkit and libnbd take
# it: ca-cert.pem, and CERT as server-*.pem or client-*.pem.
dir ()
{
  mkdir -p "$pki/$1"
  cp "$pki/$2-cert.pem" "$pki/$1/ca-cert.pem"
  [ -z "${3:-}" ] && return 0
  cp "$pki/$3-cert.pem" "$pki/$1/$4-cert.pem"
  cp "$pki/$3-key.pem" "$pki/$1/$4-key.pem"
}
ca ca
ca ca2
server_tmpl=(tls_www_server encryption_key signing_key "expiration_days = 30")
cert member "cn = member host" "ip_address = $M" "${server_tmpl[@]}"
cert array "cn = array host" "ip_address = $A" "${server_tmpl[@]}"
cert client "cn = raid5 array" tls_www_client encryption_key signing_key \
  "expiration_days = 30"
cert expired "cn = member host" "ip_address = $M" tls_www_server \
  encryption_key signing_key 'activation_date = "2020-01-01 00:00:00 UTC"' \
  'expiration_date = "2020-02-01 00:00:00 UTC"'
CA=ca2 cert other "cn = member host" "ip_address = $M" "${server_tmpl[@]}"
dir srv ca member server        # the member host's, asking for clients'
dir srv-expired ca expired server
dir srv-other ca2 other server
dir srv-array ca array server
dir cli ca client client        # the array's, as a client of the members
dir cli-other ca2               # a client trusting the other CA only
CLI=$pki/cli
psktool -u alice -p "$pki/keys.psk" >/dev/null 2>&1 || fail "psktool"
psktool -u alice -p "$pki/bad.psk" >/dev/null 2>&1 || fail "psktool"
cmp -s "$pki/keys.psk" "$pki/bad.psk" && fail "psktool made the same key twice"
echo "== a CA, another CA, certificates and PSK files made with certtool and psktool"

member_nbdkit=$NBDKIT          # the array's nbdkit is wrapped below

# member_host NAME PORT IMG NBDKIT_TLS_ARGS...: serve IMG (made of $SIZE
# if absent) on $M:PORT in the member host; sets MPID[NAME].
member_host ()
{
  local name=$1 port=$2 img=$3 k
  shift 3
  [ -f "$img" ] || truncate -s "$SIZE" "$img"
  rm -f "$tmpdir/$name.pid"
  # Not through in_ns: $! must be the server's (ip netns exec execs).
  ip netns exec "$NS_M" "$member_nbdkit" -f -i "$M" -p "$port" -P "$tmpdir/$name.pid" \
    "$@" file "$img" >"$tmpdir/$name.log" 2>&1 &
  MPID[$name]=$!
  cleanup_fn "kill_ours -9 ${MPID[$name]}"
  for (( k = 0; k < 100; k++ )); do
    [ -s "$tmpdir/$name.pid" ] && return 0
    sleep 0.05
  done
  cat "$tmpdir/$name.log" >&2
  fail "member host: server $name did not start"
}
# stop_host NAME: its server killed (kill -9) and reaped (its port free).
stop_host ()
{
  kill_ours -9 "${MPID[$1]}"
  wait "${MPID[$1]}" 2>/dev/null || :
}

CERT_ARGS=(--tls=require --tls-certificates="$pki/srv" --tls-verify-peer)
files=("$tmpdir/m0.img" "$tmpdir/m1.img" "$tmpdir/m2.img")
ports=(10809 10810 10811)
for i in 0 1 2; do member_host "m$i" "${ports[$i]}" "${files[$i]}" "${CERT_ARGS[@]}"; done
member_host other 10812 "$tmpdir/x1.img" --tls=require --tls-certificates="$pki/srv-other"
member_host expired 10813 "$tmpdir/x2.img" --tls=require --tls-certificates="$pki/srv-expired"
member_host plain 10814 "$tmpdir/x3.img"
uris=("nbds://$M:10809/" "nbds://$M:10810/" "nbds://$M:10811/")

# The array's side runs in its namespace: serve_bg runs $NBDKIT.
cat >"$tmpdir/nbdkit-in-a" <<EOF
#!/bin/sh
exec ip netns exec $NS_A $NBDKIT "\$@"
EOF
chmod +x "$tmpdir/nbdkit-in-a"
NBDKIT=$tmpdir/nbdkit-in-a

echo "== raid5ctl create over TLS members"
status=0
in_ns "$NS_A" "$RAID5CTL" create --chunk 64K "${uris[@]}" >/dev/null 2>"$tmpdir/noca.err" || status=$?
[ $status != 0 ] && [ "$(grep -c . "$tmpdir/noca.err")" = 1 ] &&
  grep -q "nbds://$M:10809/: a TLS member needs --tls-certificates DIR or --tls-psk FILE" "$tmpdir/noca.err" ||
  { cat "$tmpdir/noca.err" >&2; fail "create over nbds:// without a CA was not refused with one line"; }
echo "   without a CA: $(cat "$tmpdir/noca.err")"
in_ns "$NS_A" "$RAID5CTL" create --tls-certificates "$CLI" --tls=require --chunk 64K \
  --assume-clean --bitmap none "${uris[@]}" >"$tmpdir/create.log" 2>&1 ||
  { cat "$tmpdir/create.log" >&2; fail "create over TLS"; }
md_expect clean AAA "${files[@]}"
md_geometry "${files[0]}"
geom=(--chunk "$MD_CHUNK" --layout "$MD_LAYOUT" --data-offset "$MD_DOFF")

echo "== served over TLS members: random I/O, a member lost and rebuilt"
mapfile -t disks < <(printf 'disk=%s\n' "${uris[@]}")
serve_ctl "$tmpdir/serve.log" "${disks[@]}" tls-certificates="$CLI" tls=require \
  member-timeout=2 || fail "serve over TLS members"
[ "$(ctl_get '[m["transport"] for m in s["members"]]')" = "['nbd', 'nbd', 'nbd']" ] ||
  fail "transports: $(ctl_get '[m["transport"] for m in s["members"]]')"
next_seed
"$RANDOM_IO" "$URI" auto --seed "$RIO_SEED" --ops 400 --threads 4 --chunk 64K \
  --disks 3 --model-out "$tmpdir/model" >"$tmpdir/rio1.out" 2>&1 ||
  { cat "$tmpdir/rio1.out" >&2; fail "random-io over TLS members"; }
echo "   $(tail -n 1 "$tmpdir/rio1.out")"
stop_host m1
next_seed
"$RANDOM_IO" "$URI" auto --seed "$RIO_SEED" --ops 100 --threads 2 --chunk 64K \
  --disks 3 --no-final --model-in "$tmpdir/model" --model-out "$tmpdir/model" \
  >"$tmpdir/rio2.out" 2>&1 || { cat "$tmpdir/rio2.out" >&2; fail "writes with member 1 gone"; }
ctl_wait "s['members'][1]['state'] == 'faulty'" 6
member_host m1 "${ports[1]}" "${files[1]}" "${CERT_ARGS[@]}"
ctl_ok rebuild 1 "${uris[1]}"
ctl_wait "s['health'] == '[UUU]'" 60
echo "   member 1's server back, rebuilt over TLS: $(ctl_get 's["health"]')"
ctl_ok fail 1
stop_host m1
ports[1]=10815 uris[1]=nbds://$M:10815/ files[1]=$tmpdir/m3.img
member_host m1 "${ports[1]}" "${files[1]}" "${CERT_ARGS[@]}"
ctl_ok rebuild 1 "${uris[1]}"
ctl_wait "s['health'] == '[UUU]'" 60
echo "   failed, rebuilt onto a new TLS member: $(ctl_get 's["health"]')"
"$RANDOM_IO" "$URI" auto --verify-only --model-in "$tmpdir/model" \
  >"$tmpdir/verify.out" 2>&1 || { cat "$tmpdir/verify.out" >&2; fail "does not read back as the model"; }
stop_server
in_ns "$NS_A" "$RAID5CTL" check --tls-certificates "$CLI" "${uris[@]}" --tls=require \
  >"$tmpdir/check.out" 2>&1 || { cat "$tmpdir/check.out" >&2; fail "raid5ctl check over TLS"; }
grep -q "mismatch_cnt 0$" "$tmpdir/check.out" || { cat "$tmpdir/check.out" >&2; fail "check: not clean"; }
echo "   $(grep mismatch_cnt "$tmpdir/check.out")"
member_check "${geom[@]}" --model "$tmpdir/model" "${files[@]}"

# refused REGEX PLUGIN_ARGS...: the plugin exits non-zero before serving,
# with one line on stderr matching REGEX, and no member image changed.
refused ()
{
  local re=$1 status=0 sums
  shift
  sums=$(checksum_members "${all_images[@]}")
  "$NBDKIT" -U "$(captive_sock)" "$PLUGIN" "$@" --run 'echo SERVED' \
    >"$tmpdir/out" 2>"$tmpdir/err" || status=$?
  echo "   -> exit $status: $(cat "$tmpdir/err")"
  [ $status -ne 0 ] || fail "accepted: $*"
  ! grep -q SERVED "$tmpdir/out" || fail "served: $*"
  [ "$(grep -c . "$tmpdir/err")" = 1 ] || fail "not one line: $(cat "$tmpdir/err")"
  grep -Eq -- "$re" "$tmpdir/err" || fail "the line does not say '$re'"
  [ "$(checksum_members "${all_images[@]}")" = "$sums" ] || fail "a member changed: $*"
}
re_esc () { sed 's/[.[\*^$()+?{|/]/\\&/g' <<<"$1"; }

echo "== refused: another CA, an expired certificate, plain text"
# Each impostor serves member 1's very bytes: only TLS can tell it apart.
for x in x1 x2 x3; do cp "${files[1]}" "$tmpdir/$x.img"; done
all_images=("${files[@]}" "$tmpdir"/x[123].img)
echo " a server whose certificate another CA signed:"
refused "member 1 \($(re_esc "nbds://$M:10812/")\): .*certificate is not trusted" \
  "disk=${uris[0]}" "disk=nbds://$M:10812/" "disk=${uris[2]}" tls-certificates="$CLI"
echo " a server whose certificate has expired:"
refused "member 1 \($(re_esc "nbds://$M:10813/")\): .*certificate is not trusted" \
  "disk=${uris[0]}" "disk=nbds://$M:10813/" "disk=${uris[2]}" tls-certificates="$CLI"
echo " a plain-text member with tls=require:"
refused "member 1 \($(re_esc "nbd://$M:10814/")\): .*TLS is required" \
  "disk=${uris[0]}" "disk=nbd://$M:10814/" "disk=${uris[2]}" tls-certificates="$CLI" tls=require
echo " a plain-text server given as nbds://:"
refused "member 1 \($(re_esc "nbds://$M:10814/")\): .*does not offer TLS" \
  "disk=${uris[0]}" "disk=nbds://$M:10814/" "disk=${uris[2]}" tls-certificates="$CLI"
echo " raid5ctl examine trusting another CA:"
status=0
in_ns "$NS_A" "$RAID5CTL" examine --tls-certificates "$pki/cli-other" "${uris[0]}" \
  >/dev/null 2>"$tmpdir/err" || status=$?
echo "   -> exit $status: $(cat "$tmpdir/err")"
[ $status != 0 ] && [ "$(grep -c . "$tmpdir/err")" = 1 ] &&
  grep -q "$(re_esc "${uris[0]}"): cannot open: TLS: the server's certificate is not trusted" "$tmpdir/err" ||
  fail "raid5ctl examine with another CA was not refused with one line"

echo "== PSK"
for i in 0 1 2; do
  stop_host "m$i"
  member_host "m$i" "${ports[$i]}" "${files[$i]}" --tls=require --tls-psk="$pki/keys.psk"
done
psk_disks=("disk=nbds://alice@$M:10809/" "disk=${uris[1]}" "disk=${uris[2]}")
serve_bg "$tmpdir/psk.log" "${psk_disks[@]}" tls-psk="$pki/keys.psk" tls-username=alice \
  tls=require || fail "serve over PSK members"
"$RANDOM_IO" "$URI" auto --verify-only --model-in "$tmpdir/model" \
  >"$tmpdir/verify.out" 2>&1 || { cat "$tmpdir/verify.out" >&2; fail "PSK: does not read back as the model"; }
next_seed
"$RANDOM_IO" "$URI" auto --seed "$RIO_SEED" --ops 200 --threads 4 --chunk 64K \
  --disks 3 --model-in "$tmpdir/model" --model-out "$tmpdir/model" \
  >"$tmpdir/rio3.out" 2>&1 || { cat "$tmpdir/rio3.out" >&2; fail "random-io over PSK members"; }
echo "   $(tail -n 1 "$tmpdir/rio3.out")"
stop_server
in_ns "$NS_A" "$RAID5CTL" check --tls-psk "$pki/keys.psk" --tls-username alice "${uris[@]}" \
  >"$tmpdir/check.out" 2>&1 || { cat "$tmpdir/check.out" >&2; fail "raid5ctl check over PSK"; }
grep -q "mismatch_cnt 0$" "$tmpdir/check.out" || { cat "$tmpdir/check.out" >&2; fail "check over PSK: not clean"; }
echo "   $(grep mismatch_cnt "$tmpdir/check.out")"
echo " a wrong key:"
refused "member 0 \($(re_esc "nbds://alice@$M:10809/")\): .*TLS: the handshake failed" \
  "${psk_disks[@]}" tls-psk="$pki/bad.psk" tls-username=alice
echo " a user the file does not hold:"
refused "member 1 \($(re_esc "${uris[1]}")\): .*username bob was not found" \
  "${psk_disks[@]}" tls-psk="$pki/keys.psk" tls-username=bob

echo "== the array's own export over TLS"
rm -f "$tmpdir/apid"
"$NBDKIT" -f -i "$A" -p 10809 -P "$tmpdir/apid" --tls=require \
  --tls-certificates="$pki/srv-array" "$PLUGIN" "${psk_disks[@]}" \
  tls-psk="$pki/keys.psk" tls-username=alice >"$tmpdir/array.log" 2>&1 &
SERVER=$!
SERVER_LOG=$tmpdir/array.log
cleanup_fn "kill_ours -9 $SERVER"
for (( k = 0; k < 200; k++ )); do
  [ -s "$tmpdir/apid" ] && break
  kill -0 "$SERVER" 2>/dev/null || break
  sleep 0.05
done
[ -s "$tmpdir/apid" ] || { cat "$tmpdir/array.log" >&2; fail "nbdkit --tls=require raid5 did not start"; }
in_ns "$NS_M" "$RANDOM_IO" "nbds://$A/?tls-certificates=$CLI" auto --verify-only \
  --model-in "$tmpdir/model" >"$tmpdir/verify.out" 2>&1 ||
  { cat "$tmpdir/verify.out" >&2; fail "a TLS client does not read the array back as the model"; }
echo "   a TLS client on the member host reads it back as the model"
status=0
in_ns "$NS_M" nbdinfo --size "nbd://$A/" >/dev/null 2>"$tmpdir/plain.err" || status=$?
[ $status != 0 ] || fail "a plain-text client was served"
echo "   a plain-text client: $(head -n 1 "$tmpdir/plain.err")"
status=0
in_ns "$NS_M" "$RANDOM_IO" "nbds://$A/?tls-certificates=$pki/cli-other" auto \
  --verify-only --model-in "$tmpdir/model" >"$tmpdir/other.out" 2>&1 || status=$?
[ $status != 0 ] || fail "a client trusting another CA was served"
echo "   a client trusting another CA: $(head -n 1 "$tmpdir/other.out")"
stop_server
NBDKIT=$member_nbdkit
echo "test-nbd-tls: OK"
