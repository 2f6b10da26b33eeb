#!/bin/bash
# tests/vm/test-md-state.sh -- md's state rules, kernel md as the oracle.
#
# On the host, scripted event sequences are played through the plugin and
# raid5ctl on 32 MiB member images: a whole array killed during writes;
# written degraded, then killed (without and with a bitmap) or stopped
# cleanly (without and with a bitmap) before the member returns; a member
# failed at run time (raid5ctl fail) and the array written and stopped; a
# rebuild killed half way; an old copy of a member put back; members given
# in another order with two images swapped; started degraded but never
# written.  For each, the same images go to the plugin and, in the guest,
# to mdadm --assemble (no --run, no --force).  Both must agree on:
#   start   whether the array starts at all
#   health  which slots are in service ([UU_] as md shows it)
#   job     what is due: resync, rebuild (md's recover) or nothing
#   readd   whether the member that missed writes can be re-added
#           (our re-add; mdadm --re-add), where the story has one
# and md's own superblocks after a degraded write hold the same dev_roles
# value for the absent slot as ours.  A resync cut short by a member
# failing, played by md in the guest and by the plugin here, without and
# with a spare: the same due resync, last job and health once idle (md
# calls a degraded array in sync; with a spare it recovers, then resyncs).
# Then the plugin resolves each story (force=true, re-add or rebuild, the
# resync finished, clean stop) and md must assemble the result whole and
# clean, with mismatch_cnt 0 after a check.  Two members out one after
# the other (the second failing the array), forced both ways: mdadm
# --assemble --force against force=true (whether it starts, its health);
# md's forced superblocks served by the plugin without force, and the
# plugin's assembled by md without --force, as each left them; and the
# member left of the failed array records it as md's does (the second
# member faulty, clean once stopped).
#
# One guest boot: each image is a logical partition of four disk images
# (md-lib.sh), the stories' "before" images first, then their "after".
. "${0%/*}/lib.sh"
. "${0%/*}/md-lib.sh"
need_plugin
need_cmds mdadm nbdkit /usr/bin/python3
need_raid5ctl
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "needs python3-libnbd"

NDISKS=4
MIB=32
STORIES="crash-whole crash-return crash-return-bitmap stop-return
 stop-return-bitmap fail-return-bitmap rebuild-cut old-copy swapped
 degraded-idle two-out"
fails=0
bad () { echo "not ok $*"; fails=$((fails + 1)); }

# poke URI OFF BYTE [PID]: 64K of BYTE at OFF, flush; kill -9 PID if given.
poke () { /usr/bin/python3 "$TOP/tests/integration/poke.py" "$1" write "${@:2}"; }

# serve DIR ARGS...: the plugin in the background on DIR/sock (SERVER,
# URI); returns 1 if it did not start (its log in DIR/nbdkit.log).
serve () {
    local d=$1 i; shift
    rm -f "$d/sock" "$d/pid"
    nbdkit -f -U "$d/sock" -P "$d/pid" "$PLUGIN" "$@" >"$d/nbdkit.log" 2>&1 &
    SERVER=$!
    URI="nbd+unix:///?socket=$d/sock"
    for ((i = 0; i < 200; i++)); do
        [[ -s $d/pid && -S $d/sock ]] && return 0
        kill -0 $SERVER 2>/dev/null || { wait $SERVER; return 1; }
        sleep 0.05
    done
    return 1
}
stop () { kill -TERM $SERVER; wait $SERVER; }
crash () { kill -9 $SERVER 2>/dev/null; wait $SERVER 2>/dev/null || :; }

# new_array DIR [create options]: three members of MIB MiB, clean.
new_array () {
    local d=$1; shift
    mkdir -p "$d"
    truncate -s ${MIB}M "$d"/m{0,1,2}
    "$RAID5CTL" create --chunk 64K --assume-clean "$@" "$d"/m{0,1,2} >/dev/null ||
        return 1
    echo "m0 m1 m2" >"$d/given"
    echo - >"$d/readd"
    # A first session, so that the bitmap's bits are cleared as md's would
    # be after its initial sync.
    serve "$d" "disk=$d/m0" "disk=$d/m1" "disk=$d/m2" && poke "$URI" 0 0x01 && stop
}

# The stories: each leaves its members in sc/NAME and the files to give
# (in that order) in sc/NAME/given; readd names the slot to re-add.
story_crash-whole () {
    new_array "$1" && serve "$1" disk="$1"/m{0,1,2} &&
        poke "$URI" 65536 0x22 $SERVER; crash
}
degraded_write () {   # DIR then: crash or stop
    serve "$1" disk="$1/m0" disk=missing disk="$1/m2" || return 1
    if [[ $2 == crash ]]; then poke "$URI" 65536 0x22 $SERVER; crash
    else poke "$URI" 65536 0x22 && stop; fi
}
story_crash-return () { new_array "$1" --bitmap none && degraded_write "$1" crash; }
story_crash-return-bitmap () {
    new_array "$1" --bitmap internal && degraded_write "$1" crash && echo 1 >"$1/readd"
}
story_stop-return () {
    new_array "$1" --bitmap none && degraded_write "$1" stop && echo 1 >"$1/readd"
}
story_stop-return-bitmap () {
    new_array "$1" --bitmap internal && degraded_write "$1" stop && echo 1 >"$1/readd"
}
story_fail-return-bitmap () {
    new_array "$1" --bitmap internal &&
        serve "$1" disk="$1"/m{0,1,2} control="$1/ctl" &&
        "$RAID5CTL" --control "$1/ctl" fail 1 >/dev/null &&
        poke "$URI" 65536 0x22 && stop && echo 1 >"$1/readd"
}
story_rebuild-cut () {
    local i
    new_array "$1" --bitmap none || return 1
    truncate -s ${MIB}M "$1/m3"
    serve "$1" disk="$1/m0" disk=missing disk="$1/m2" control="$1/ctl" \
        sync-speed-max=1000 &&
        "$RAID5CTL" --control "$1/ctl" rebuild 1 "$1/m3" >/dev/null || return 1
    for ((i = 0; i < 100; i++)); do
        mdadm --examine "$1/m3" 2>/dev/null | grep -q 'Recovery Offset : [1-9]' && break
        sleep 0.1
    done
    crash
    mdadm --examine "$1/m3" | grep -q 'Recovery Offset : [1-9]' || return 1
    echo "m0 m3 m2" >"$1/given"
}
story_old-copy () {
    new_array "$1" && cp --sparse=always "$1/m1" "$1/old" || return 1
    for i in 1 2; do
        serve "$1" disk="$1"/m{0,1,2} && poke "$URI" $((i * 65536)) 0x3$i && stop || return 1
    done
    cp --sparse=always "$1/old" "$1/m1"
}
story_swapped () {
    new_array "$1" || return 1
    mv "$1/m0" "$1/x"; mv "$1/m1" "$1/m0"; mv "$1/x" "$1/m1"
    echo "m2 m0 m1" >"$1/given"
}
story_degraded-idle () {
    new_array "$1" && serve "$1" disk="$1/m0" disk=missing disk="$1/m2" && stop
}
# Two out, one after the other: member 2 misses writes, then member 1
# fails under a write (the plugin's fault injection) and the array fails.
# Its force marker asks for the force comparisons below.
story_two-out () {
    new_array "$1" --bitmap none &&
        serve "$1" disk="$1/m0" disk="$1/m1" disk=missing &&
        poke "$URI" 65536 0x22 && stop &&
        serve "$1" disk="$1/m0" disk="$1/m1" disk=missing \
            -D raid5.fail_member=1 -D raid5.fail_after=0 || return 1
    if poke "$URI" 131072 0x33; then echo "the array did not fail"; return 1; fi
    stop; touch "$1/force"
}

# disk_args DIR [COPY]: disk= for the files DIR/given names (in COPY).
disk_args () { local f; for f in $(cat "$1/given"); do echo "disk=${2:-$1}/$f"; done; }

# json_get FILE EXPR: a Python expression over s, the status JSON.
json_get () { /usr/bin/python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# verdict DIR: what the plugin makes of the members (on copies in DIR/v).
verdict () {
    local d=$1 v=$1/v f s st job
    mkdir -p "$v"; cp --sparse=always "$d"/m* "$v"/
    if ! serve "$v" $(disk_args "$d" "$v") control="$v/ctl" sync-speed-max=1000; then
        echo "start=no"; return
    fi
    "$RAID5CTL" --control "$v/ctl" status --json >"$v/st.json"
    st=$(json_get "$v/st.json" 's["health"]'); job=$(json_get "$v/st.json" 's["job"]["kind"]')
    echo "start=yes"; echo "health=$st"; echo "job=$job"
    s=$(cat "$d/readd")
    if [[ $s != - ]]; then
        if "$RAID5CTL" --control "$v/ctl" re-add "$s" >"$v/readd.out" 2>&1; then echo readd=ok
        else echo readd=refused; fi
    fi
    stop
}

# resolve DIR: the plugin brings the story to a whole, clean array in
# DIR/f: force=true, the resync finished, the member out re-added or
# rebuilt from the file that held its slot.
resolve () {
    local d=$1 f=$1/f i st out
    mkdir -p "$f"; cp --sparse=always "$d"/m* "$f"/
    serve "$f" $(disk_args "$d" "$f") force=true control="$f/ctl" \
        sync-speed-max=2000000 || return 1
    for ((i = 0; i < 300; i++)); do
        "$RAID5CTL" --control "$f/ctl" status --json >"$f/st.json" || return 1
        st=$(json_get "$f/st.json" 's["health"]')
        if [[ $(json_get "$f/st.json" 's["job"]["kind"]') == idle ]]; then
            [[ $st == '[UUU]' ]] && break
            out=$(expr index "$st" _); out=$((out - 2))
            "$RAID5CTL" --control "$f/ctl" re-add --wait "$out" >/dev/null 2>&1 ||
                "$RAID5CTL" --control "$f/ctl" rebuild --wait "$out" "$f/m$out" >/dev/null 2>&1 ||
                return 1
        fi
        sleep 0.1
    done
    stop
    [[ $st == '[UUU]' ]]
}

# look DIR ARGS...: whether the plugin starts the members (ARGS) and the
# health it serves, as one line, as the guest writes md's.
look () {
    local d=$1; shift
    if ! serve "$d" "$@" control="$d/ctl" sync-speed-max=1000; then echo start=no; return; fi
    "$RAID5CTL" --control "$d/ctl" status --json >"$d/st.json"
    echo "start=yes health=$(json_get "$d/st.json" 's["health"]')"
    stop
}

# forced_ours DIR: the plugin's force=true on copies in DIR/o; the
# superblocks it leaves there, copied to DIR/of as it left them, go to
# md; then what the plugin makes of them without force.
forced_ours () {
    local d=$1 o=$1/o
    mkdir -p "$o" "$d/of"; cp --sparse=always "$d"/m* "$o"/
    look "$o" $(disk_args "$d" "$o") force=true >"$d/ours-force.txt"
    cp --sparse=always "$o"/m* "$d/of"/
    look "$o" $(disk_args "$d" "$o") >"$d/ours-forced.txt"
}

# ---- the stories, our verdicts and resolutions ----
mkdir -p "$W/sc"
: >"$W/geoms"
g=0 e=2048 p=$((MIB * 2048))
for name in $STORIES; do
    d=$W/sc/$name
    if ! "story_$name" "$d" >"$W/sc/$name.log" 2>&1; then
        bad "$name: the story could not be played on the host: $(tail -n 3 "$W/sc/$name.log" | tr '\n' ' ')"
        continue
    fi
    verdict "$d" >"$d/ours.txt"
    phases="before after"
    if [[ -e $d/force ]]; then forced_ours "$d"; phases+=" forced"; fi
    resolve "$d" || bad "$name: the plugin could not bring it back whole: $(tail -n 3 "$d/f/nbdkit.log")"
    n=$(ls "$d" | grep -c '^m[0-9]$')
    for phase in $phases; do
        g=$((g + 1))
        echo "$g $n left-symmetric 64K $((e + 2048)) $p $name-$phase" >>"$W/geoms"
        e=$((e + 2048 + p))
    done
done
DISK_SECTORS=$((e + 2048))
make_disks
while read -r g n l c s p name; do
    d=$W/sc/${name%-*}; mkdir -p "$W/g$g"
    src=$d; [[ $name == *-after ]] && src=$d/f; [[ $name == *-forced ]] && src=$d/of
    for ((i = 0; i < n; i++)); do cp --sparse=always "$src/m$i" "$W/g$g/m$i"; done
    implant "$g" "$n" "$s"
done <"$W/geoms"

t0=$SECONDS
vm_run "$VM_TESTS/guest-md-state.sh" "$W"/disk{0,1,2,3}.img || fails=$((fails + 1))
say "guest: $((SECONDS - t0))s"

# ---- what md writes for an absent slot, against ours ----
ours_fill=$(od -An -tx2 -j $((4096 + 256 + 2)) -N 2 "$W/sc/stop-return/m0" | tr -d ' ')
if grep -qx "role_fill=$ours_fill" "$W/md-role-fill.txt" 2>/dev/null; then
    echo "ok role fill: md and the plugin record a slot written without its member as $ours_fill"
else
    bad "role fill: ours $ours_fill, md's: $(cat "$W/md-role-fill.txt" 2>/dev/null)"
fi

# ---- a resync cut short by a member failing: md's rule against ours ----
# resync_cut DIR none|spare: the plugin's state once idle, as the guest
# writes md's.
resync_cut () {
    local d=$1 i st spare=() want=
    story_crash-whole "$d"
    if [[ $2 == spare ]]; then truncate -s ${MIB}M "$d/m3"; spare=("spare=$d/m3"); want='[UUU]'; fi
    serve "$d" disk="$d"/m{0,1,2} "${spare[@]}" control="$d/ctl" sync-speed-max=300 ||
        { echo "error=serve"; return; }
    for ((i = 0; i < 100; i++)); do
        "$RAID5CTL" --control "$d/ctl" status --json >"$d/st.json"
        [[ $(json_get "$d/st.json" 's["job"]["kind"]') == resync &&
           $(json_get "$d/st.json" 's["job"]["done_stripes"]') != 0 ]] && break
        sleep 0.1
    done
    "$RAID5CTL" --control "$d/ctl" fail 1 >/dev/null
    "$RAID5CTL" --control "$d/ctl" speed --min 200M --max 2G >/dev/null
    for ((i = 0; i < 300; i++)); do
        "$RAID5CTL" --control "$d/ctl" status --json >"$d/st.json"
        st=$(json_get "$d/st.json" 's["health"]')
        [[ $(json_get "$d/st.json" 's["job"]["kind"]') == idle && ( -z $want || $st == "$want" ) ]] && break
        sleep 0.1
    done
    echo "resync_due=$(json_get "$d/st.json" '"yes" if s["resync_due"] else "no"')" \
         "last=$(json_get "$d/st.json" 's["last_job"]["kind"]') health=$st"
    stop
}
for k in none spare; do
    ours=$(resync_cut "$W/rc-$k" $k 2>"$W/rc-$k.err")
    theirs=$(cat "$W/md-resync-cut-$k.txt" 2>/dev/null)
    if [[ $ours == "$theirs" ]]; then
        echo "ok resync cut by a member failing ($k spare): md and the plugin agree: $ours"
    else
        bad "resync cut by a member failing ($k spare): ours: $ours; md's: $theirs $(tail -n 2 "$W/rc-$k.err")"
    fi
done

# ---- what the member left of a failed array records: md's against ours ----
ours=$(echo "state=$(mdadm --examine "$W/sc/two-out/m0" | sed -n 's/^ *State : //p')" \
            "array=$(mdadm --examine "$W/sc/two-out/m0" | sed -n 's/^ *Array State : \([^ ]*\).*/\1/p')")
if [[ $ours =~ ^state=[a-z]+\ array=[A.]+$ &&
      $ours == "$(cat "$W/md-two-out-survivor.txt" 2>/dev/null)" ]]; then
    echo "ok two-out: the member left of a failed array records it as md's does: $ours"
else
    bad "two-out: the member left of a failed array: ours $ours; md's $(cat "$W/md-two-out-survivor.txt" 2>/dev/null)"
fi

# ---- force, md's against ours, both ways ----
# md's mdadm --assemble --force on a story's members against the plugin's
# force=true; md's forced superblocks (left on the partitions) served by
# the plugin without force, and the plugin's given to md without force:
# each must start as the one that forced them left them.
while read -r g n l c s p name; do
    d=$W/sc/${name%-*}
    [[ -e $d/force && $name == *-before ]] || continue
    name=${name%-before}
    theirs=$(cat "$W/md-$name-force.txt" 2>/dev/null)
    ours=$(cat "$d/ours-force.txt")
    if [[ $ours == "$theirs" && $ours == start=yes* ]]; then echo "ok $name, forced: md and the plugin agree: $ours"
    else bad "$name, forced: ours: $ours; md's: $theirs"; fi
    extract "$g" "$n" "$s" "$p"
    ours=$(look "$W/g$g" $(disk_args "$d" "$W/g$g"))
    if [[ $ours == "$theirs" ]]; then echo "ok $name: md's forced superblocks, served without force: $ours"
    else bad "$name: md's forced superblocks (md: $theirs), served without force: $ours $(tail -n 2 "$W/g$g/nbdkit.log")"; fi
    theirs=$(cat "$W/md-$name-forced.txt" 2>/dev/null)
    ours=$(cat "$d/ours-forced.txt")
    if [[ $ours == "$theirs" && $ours == start=yes* ]]; then
        echo "ok $name: the plugin's forced superblocks assemble under md without --force: $theirs"
    else bad "$name: the plugin's forced superblocks, without force: ours: $ours; md's: $theirs"; fi
done <"$W/geoms"

# ---- md's verdicts against ours ----
for name in $STORIES; do
    d=$W/sc/$name
    [[ -s $d/ours.txt ]] || continue
    if [[ ! -s $W/md-$name-before.txt ]]; then bad "$name: no result from the guest"; continue; fi
    if diff "$d/ours.txt" "$W/md-$name-before.txt" >"$d/diff"; then
        echo "ok $name: md and the plugin agree: $(tr '\n' ' ' <"$d/ours.txt")"
    else
        bad "$name: md and the plugin disagree (< ours, > md): $(grep '^[<>]' "$d/diff" | tr '\n' ' ')"
    fi
    if grep -qx 'start=yes health=\[UUU\] mismatch_cnt=0' "$W/md-$name-after.txt" 2>/dev/null; then
        echo "ok $name: what the plugin left assembles whole under md, mismatch_cnt 0"
    else
        bad "$name: what the plugin left, under md: $(cat "$W/md-$name-after.txt" 2>/dev/null)"
    fi
done
[[ $fails == 0 ]]
