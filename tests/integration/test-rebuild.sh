#!/usr/bin/env bash
# Online rebuild under a client load (control socket, no raid5ctl client).
# An array made by raid5ctl create is served with control=PATH while
# random-io writes over 4 connections, run after run, the model kept.
# During the load a member fails (case 1: the test-only fault injection
# -D raid5.fail_member; case 2: `fail SLOT` by hand), a blank file is
# swapped in with `rebuild SLOT NEWPATH`, and the rebuild runs at a low
# sync speed while the load goes on.  Asserts:
#   - status: the member faulty and [U_U] after the failure, then the new
#     member 'rebuilding' in its slot, the rebuild's done_stripes seen at
#     several places between 0 and the end, never going back, then [UUU]
#     with last_job rebuild result 0; the load still ran when it ended;
#   - no client error, every read = the model (random-io), and the whole
#     export reads back as the model after the rebuild;
#   - after a clean stop: every superblock (mdadm --examine) clean, checksum
#     correct, Array State all A, the same events; the new member is
#     'Active device SLOT' with no recovery offset left; member-check with
#     all members: the data where md's layout puts it (= model), parity =
#     XOR, so the rebuilt member is byte for byte what the layout requires;
#     raid5ctl check reports mismatch_cnt 0;
#   - refusals: rebuild of a slot in service, onto a file too small, onto
#     a member of the array, of a slot out of range; check while it runs;
#   - case 3: the member being rebuilt is failed by hand halfway: the
#     rebuild stops (last_job rebuild -ECANCELED, the slot faulty, [U_U],
#     clients unaffected), the log says why in plain text (KNOWN BUG,
#     reported: the reason printed is uninitialised bytes), and `rebuild
#     SLOT` without a path re-adds that member and rebuilds it whole;
#   - case 4, members in memory (/dev/shm): the rebuild reads the others
#     and writes the new member through mappings (io/view.c), holes and
#     punches minded, while clients write, zero and trim; the same checks.
. "${0%/*}/functions.sh"
. "${0%/*}/md-functions.sh"
. "${0%/*}/job-functions.sh"
requires_jobs
start=$SECONDS

# rebuild_case NAME N LAYOUT SLOT HOW: HOW = inject, fail, or refail (fail,
# and fail the new member again halfway through its rebuild).
rebuild_case ()
{
  local name=$1 n=$2 layout=$3 slot=$4 how=$5 i new inj=() m disks geom
  local astate
  echo "== $n members ($layout), slot $slot lost by $how under load, rebuilt onto a blank file"
  md_create "$name" "$n" 24M --chunk 64K --layout "$layout" --assume-clean --bitmap none
  m=("${MEMBERS[@]}")
  mapfile -t disks < <(disk_args "${m[@]}")
  geom=(--chunk "$MD_CHUNK" --layout "$MD_LAYOUT" --data-offset "$MD_DOFF")
  [ "$how" = inject ] && inj=(-D raid5.fail_member="$slot" -D raid5.fail_after=1500)
  serve_ctl "$tmpdir/$name.log" -v -D nbdkit.backend.datapath=0 "${disks[@]}" \
    "${inj[@]}" sync-speed-min=2500 sync-speed-max=5000 ||
    fail "the server did not start"
  ctl_refused "in service" rebuild "$slot" "$tmpdir/none"
  load_start "$tmpdir/model.$name" "$n"
  sleep 0.5
  if [ "$how" != inject ]; then
    ctl_ok fail "$slot"
  fi
  ctl_wait "s['members'][$slot]['state'] == 'faulty' and s['state'] == 'degraded'" 20
  [ "$(grep -c "member $slot (.*marked faulty" "$tmpdir/$name.log")" = 1 ] ||
    fail "the failure of member $slot was not logged exactly once"
  sleep 0.5                         # degraded writes for a while
  load_alive || fail "the load stopped while degraded"

  new=${MEMBERS_DIR:-$tmpdir}/$name.new
  truncate -s 8M "$new.small"
  ctl_refused "too small" rebuild "$slot" "$new.small"
  ctl_refused "member .* already" rebuild "$slot" "${m[$(( (slot + 1) % n ))]}"
  ctl_refused "slots 0 to" rebuild "$n" "$new"
  truncate -s 24M "$new"
  ctl_ok rebuild "$slot" "$new"
  ctl_wait "s['members'][$slot]['state'] == 'rebuilding' and s['members'][$slot]['path'] == '$new' and s['job']['kind'] == 'rebuild' and s['job']['slot'] == $slot" 5
  ctl_refused "busy" check
  if [ "$how" = refail ]; then
    ctl_wait "s['job']['done_stripes'] > 0" 20
    ctl_ok pause                # a loaded machine: not done before the fail
    ctl_ok fail "$slot"
    ctl_ok resume
    ctl_wait "s['job']['kind'] == 'idle' and s['last_job']['kind'] == 'rebuild'" 20
    [ "$(ctl_get '(s["last_job"]["result"], s["members"]['"$slot"']["state"], s["state"])')" = "(-125, 'faulty', 'degraded')" ] ||
      fail "after failing the member being rebuilt: $(ctl_get '(s["last_job"], s["members"]['"$slot"'], s["state"])')"
    load_alive || fail "the load failed when the rebuild stopped"
    # The reason must be text with a word in it (e.g. "Operation canceled").
    LC_ALL=C grep -aEq 'rebuild stopped at stripe [0-9]+: [ -~]*[A-Za-z]{4}[ -~]*$' "$tmpdir/$name.log" ||
      refail_bug="the reason logged for the stopped rebuild is not text: '$(grep -a 'rebuild stopped at stripe' "$tmpdir/$name.log" | cat -v)'"
    ctl_ok rebuild "$slot"
    ctl_wait "s['members'][$slot]['state'] == 'rebuilding' and s['members'][$slot]['path'] == '$new'" 5
  fi
  ctl_progress rebuild 40 3
  load_alive || fail "the load was over before the rebuild ended: it did not run under load"
  ctl_wait "s['health'] == '[$(printf 'U%.0s' $(seq 1 "$n"))]' and s['state'] == 'healthy' and s['members'][$slot]['state'] == 'active'" 5
  sleep 0.3                         # writes to the whole array again
  load_stop
  grep -q "slot $slot .* rebuilt" "$tmpdir/$name.log" ||
    fail "no 'slot $slot ... rebuilt' in the log"
  stop_server

  m[$slot]=$new
  md_expect clean "$(all_a "$n")" "${m[@]}"
  [ "$(md_field "$new" 'Device Role')" = "Active device $slot" ] ||
    fail "the new member's role: '$(md_field "$new" 'Device Role')'"
  ! mdadm --examine "$new" | grep -q 'Recovery Offset' ||
    fail "the new member still has a recovery offset: $(md_field "$new" 'Recovery Offset')"
  member_check "${geom[@]}" --model "$tmpdir/model.$name" "${m[@]}"
  raid5ctl_clean "${m[@]}"
  rm -f "${MEMBERS[@]}" "$new" "$new.small" "$tmpdir/model.$name"*
}

rebuild_case r3 3 left-symmetric 1 inject
rebuild_case r4 4 right-asymmetric 3 fail
refail_bug=
rebuild_case rf 3 left-asymmetric 0 refail
[ -z "$refail_bug" ] || fail "BUG: $refail_bug"
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
  MEMBERS_DIR=$(mktemp -d /dev/shm/raid5-rebuild.XXXXXX)
  cleanup_fn rm -rf "$MEMBERS_DIR"
  rebuild_case rm 3 left-symmetric 2 fail
else
  echo "note: /dev/shm is not a tmpfs: no case with members in memory"
fi
echo "$test_name: OK ($(( SECONDS - start )) s)"
