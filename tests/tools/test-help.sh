#!/usr/bin/env bash
# raid5ctl's --help texts and its manual page (docs/raid5ctl.pod) agree:
#  - every command that raid5ctl --help lists has a section "raid5ctl CMD"
#    in the page, and every such section names a listed command;
#  - every usage line of `raid5ctl CMD --help` is in the page (white space
#    aside);
#  - every --option that `raid5ctl CMD --help` mentions is in the page's
#    sections about CMD (those whose title names it), and every B<--option>
#    those "raid5ctl CMD" sections describe is in CMD's --help;
#  - podchecker finds no error or warning.

. "${0%/*}/functions.sh"
[ -x "$RAID5CTL" ] || skip "not built: $RAID5CTL"
requires /usr/bin/python3 --version
POD=$abs_top_srcdir/docs/raid5ctl.pod

if command -v podchecker >/dev/null; then
  podchecker "$POD" >"$tmpdir/podchecker" 2>&1 || :
  ! grep -Eq 'ERROR|WARNING' "$tmpdir/podchecker" ||
    fail "podchecker: $(cat "$tmpdir/podchecker")"
fi

/usr/bin/python3 - "$RAID5CTL" "$POD" <<'PY' || fail "the --help texts and $POD disagree"
import re, subprocess, sys

raid5ctl, pod = sys.argv[1:3]
text = open(pod).read()
parts = re.split(r'^(=head[12] .*)$', text, flags=re.M)
heads = [(parts[i][7:], parts[i + 1]) for i in range(1, len(parts), 2)]
flat = ' '.join(text.split())
OPT = r'(?<![\w-])--[a-z][a-z-]*'
bad = []

def run(*args):
    return subprocess.run([raid5ctl, *args], capture_output=True, text=True,
                          check=True).stdout

top = run('--help')
block = top.split('Commands:\n', 1)[1].split('\n\n', 1)[0]
cmds = re.findall(r'^  ([a-z][a-z0-9-]*)', block, re.M)
titled = set()
for title, _ in heads:
    titled.update(re.findall(r'\braid5ctl ([a-z][a-z0-9-]*)', title))
if set(cmds) != titled:
    bad.append('commands %s, sections %s' % (sorted(cmds), sorted(titled)))

def usage_lines(h):
    lines, cur = [], None
    for line in h.split('\n'):
        m = re.match(r'^(usage: |       )(raid5ctl .*)', line)
        if m:
            cur = m.group(2)
            lines.append(cur)
        elif cur is not None and line.startswith('                '):
            lines[-1] += ' ' + line.strip()
        else:
            cur = None
    return [' '.join(l.split()) for l in lines]

for c in cmds:
    h = run(c, '--help')
    word = r'(?<![\w-])%s(?![\w-])' % re.escape(c)
    about = [b for t, b in heads if re.search(word, t)]
    own = [b for t, b in heads if re.search(r'\braid5ctl ' + re.escape(c) +
                                            r'(?![\w-])', t)]
    for u in usage_lines(h):
        if u not in flat:
            bad.append('%s: usage line not in the page: %s' % (c, u))
    in_help = set(re.findall(OPT, h)) - {'--help'}
    in_page = set(re.findall(OPT, ' '.join(about)))
    for o in sorted(in_help - in_page):
        bad.append('%s --help mentions %s; the page does not' % (c, o))
    described = set(re.findall(r'B<(--[a-z][a-z-]*)', ' '.join(own)))
    for o in sorted(described - in_help):
        bad.append('the page describes %s %s; --help does not' % (c, o))
    print('%-10s %d usage lines, %d options: agree' %
          (c, len(usage_lines(h)), len(in_help)))
for b in bad:
    print('DISAGREE:', b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
echo "test-help: OK"
