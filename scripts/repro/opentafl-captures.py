#!/usr/bin/env python3
"""Checks OpenTafl's reading of captures against tafl-lab's, from `match --engine-log DIR` transcripts.

For every move OpenTafl's AI plays, its own status line names the captures it expects
("status Best move: c3-g3xg2 ..."); tafl-lab acknowledges the move with the board after it
("move <position>"). The squares emptied between the position sent before `play` and that board
are tafl-lab's captures. A captured king stays on tafl-lab's board (the game ends there).
usage: scripts/repro/opentafl-captures.py DIR [DIR ...]    (exit 1 when any move differs)
"""
import re, sys, glob
def parse(pos):
    rows = pos.strip('/').split('/')
    board = {}
    for r, row in enumerate(rows):          # first row = rank 1
        c = 0
        for m in re.finditer(r'(\d+)|([a-zA-Z])', row):
            if m.group(1): c += int(m.group(1))
            else:
                board[(c, r)] = m.group(2); c += 1
    return board
def sq(s):
    return (ord(s[0]) - 97, int(s[1:]) - 1)
tot = agree = 0; bad = []; kings = []
for f in sorted(x for d in sys.argv[1:] for x in glob.glob(d + '/*.log')):
    before = None; pending = None
    for line in open(f):
        parts = line.split(None, 2)
        if len(parts) < 3: continue
        d, rest = parts[1], parts[2].rstrip('\n')
        if d == '>' and rest.startswith('position '): before = rest.split()[1]
        elif d == '<' and rest.startswith('move '): pending = [rest.split()[1], before, None]
        elif d == '>' and rest.startswith('move ') and pending: pending[2] = rest.split()[1]
        elif d == '<' and rest.startswith('status Best move:') and pending:
            pending.append(rest.split('Best move:')[1].split()[0])
        if pending and len(pending) == 4 and pending[2]:
            txt = pending[3]
            mv, pend = pending[0], pending
            if not txt.startswith(mv):
                pending = None; continue
            theirs = sorted(set(x for part in txt[len(mv):].split('x')[1:] for x in re.findall(r'[a-z]\d+', part)))
            b, a = parse(pend[1]), parse(pend[2])
            frm = sq(mv.split('-')[0])
            ours = sorted('%s%d' % (chr(97 + c), r + 1) for (c, r) in b if (c, r) != frm and (c, r) not in a)
            tot += 1
            # A captured king stays on tafl-lab's board: the game ends there instead.
            king = [x for x in theirs if b.get(sq(x)) == 'K' and a.get(sq(x)) == 'K']
            if king: kings.append((f, mv, king))
            if ours == sorted(set(theirs) - set(king)): agree += 1
            else: bad.append((f, mv, ours, theirs))
            pending = None
print(f"{agree} of {tot} OpenTafl moves: the same captures in both readings; king captures (game ends): {len(kings)}")
for x in bad[:20]: print('differs:', x)
sys.exit(1 if bad else 0)
