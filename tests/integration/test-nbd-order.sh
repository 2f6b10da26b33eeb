#!/usr/bin/env bash
# Flush and FUA order on NBD members (io/nbd-run.c), through io/'s NBD
# backend directly (nbd-order.c).  The member is a file served by nbdkit
# with writes held back 1 s (its delay filter) and every request logged
# as it arrives and as it returns (its log filter, nearer the client), so
# that a flush sent too early is seen in the log, and found out through
# the file.  Asserts:
#   - a flush after four writes in one batch reaches the server only once
#     all four have returned, with one connection and with four (the
#     writes spread over them: multi-conn's flush covers the writes the
#     server has answered on every connection, not those in flight);
#   - a flush issued from another thread while four writes of another
#     batch are in flight (the server has logged them) returns only once
#     they are on the member's file, read through the file (the second
#     path) as soon as the flush returned -- and the log agrees;
#   - writes asked durable (IO_FUA) on a server that has no FUA (its fua
#     filter, whose default mode hides FUA) are followed by a flush only
#     once they have all returned;
#   - the bytes written are on the file after every round.
# Fails when a flush does not wait for the writes before it (the log
# shows a Flush arriving while a Write is out, and the file lacks the
# bytes when the flush returns), or FUA's flush is sent with the writes.
. "${0%/*}/functions.sh"
requires "$NBDKIT" --filter=log --filter=delay --filter=fua null --version
ORDER="$abs_top_builddir/tests/integration/nbd-order"
[ -x "$ORDER" ] || skip "not built: $ORDER"

SIZE=16M
declare -A URI_OF PID_OF

# flushes_in_order LOG: every Flush in LOG arrived with no Write out (one
# logged as arriving and not yet as returned).
flushes_in_order ()
{
  awk '
    {
      if (match ($0, /[. ]Write id=[0-9]+/)) {
        id = substr ($0, RSTART + 10, RLENGTH - 10)
        if ($0 ~ /\.\.\.Write id=/) { delete out[id]; n-- } else { out[id] = 1; n++ }
      }
      if ($0 ~ / Flush id=/ && n > 0) {
        printf "a flush arrived with %d write(s) out: %s\n", n, $0
        bad = 1
      }
      if ($0 ~ / Flush id=/) flushes++
      if ($0 ~ / Write id=/) writes++
    }
    END {
      if (!flushes) { print "no flush in the log"; exit 1 }
      if (!bad)
        printf "   %d writes, %d flushes, every flush after the writes before it\n", writes, flushes
      exit bad
    }' "$1"
}

# order_case NAME CONNECTIONS ROUNDS MODE [MEMBER OPTIONS...]
order_case ()
{
  local name=$1 conns=$2 rounds=$3 mode=$4 log=$tmpdir/$1.log
  shift 4
  member_server "$name" --filter=log --filter=delay "$@" "logfile=$log" \
    delay-write=1
  "$ORDER" "${URI_OF[$name]}" "$tmpdir/$name.img" "$log" "$conns" \
    "$rounds" "$mode" || fail "$name: nbd-order $mode"
  flushes_in_order "$log" || { cat "$log" >&2; fail "$name: a flush too early"; }
  kill_ours "${PID_OF[$name]}"
}

[ -n "${ORDER_CASES:-}" ] || ORDER_CASES="one four apart fua"  # to try one
for c in $ORDER_CASES; do
  case $c in
    one) echo "== a flush after four writes in its batch, one connection"
         order_case one 1 3 flush ;;
    four) echo "== the same, four connections"
          order_case four 4 3 flush ;;
    apart) echo "== a flush from another thread while four writes are in flight"
           order_case apart 4 2 apart ;;
    fua) echo "== FUA on a server without it: a flush after the writes"
         order_case fua 4 2 fua --filter=fua ;;
  esac
done
