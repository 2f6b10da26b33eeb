#!/usr/bin/python3
"""svg-boxes.py PICTURE.svg SCREENSHOT.png: what a screenshot of one of
raid5ctl's pictures shows, as JSON on standard output.

The palette is read from the picture's own style sheet (".data { fill:
#9fc5e8; }", ...) and the box size from its first chunk box, so nothing
here repeats svg.c.  In the screenshot, a chunk box is a connected
region of non-white pixels whose bounding box is a box's size (boxes
never touch: svg.h); text, legend swatches and lines are smaller.

  {"size": [w, h], "nonwhite": fraction of non-white pixels,
   "boxes": how many chunk boxes,
   "dominant": {fill: boxes mostly of that fill's colour},
   "with": {fill: boxes holding at least MIN_BAND pixels of it}}
"""
import json
import re
import sys
from collections import deque

from PIL import Image

MIN_BAND = 20           # pixels: a 2-pixel band of a 40-pixel box is 76


def palette(svg_text):
    fills = {}
    for name, colour in re.findall(r'\.([a-z]+) \{ fill: #([0-9a-f]{6}); \}',
                                   svg_text):
        fills[name] = tuple(int(colour[i:i + 2], 16) for i in (0, 2, 4))
    return fills


def box_size(svg_text):
    m = re.search(r'<rect class="chunk [a-z]+" x="[0-9.]+" y="[0-9.]+" '
                  r'width="([0-9]+)" height="([0-9]+)"', svg_text)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def regions(img):
    """Connected regions (4-neighbours) of non-white pixels: each as its
    bounding box and its pixels' colours counted."""
    w, h = img.size
    px = img.load()
    seen = bytearray(w * h)
    for y in range(h):
        for x in range(w):
            if seen[y * w + x] or px[x, y] == (255, 255, 255):
                continue
            seen[y * w + x] = 1
            todo = deque([(x, y)])
            x0, y0, x1, y1 = x, y, x, y
            colours = {}
            while todo:
                cx, cy = todo.popleft()
                c = px[cx, cy]
                colours[c] = colours.get(c, 0) + 1
                x0, x1 = min(x0, cx), max(x1, cx)
                y0, y1 = min(y0, cy), max(y1, cy)
                for nx, ny in ((cx + 1, cy), (cx - 1, cy), (cx, cy + 1),
                               (cx, cy - 1)):
                    if (0 <= nx < w and 0 <= ny < h
                            and not seen[ny * w + nx]
                            and px[nx, ny] != (255, 255, 255)):
                        seen[ny * w + nx] = 1
                        todo.append((nx, ny))
            yield (x1 - x0 + 1, y1 - y0 + 1), colours


def main():
    svg_text = open(sys.argv[1]).read()
    img = Image.open(sys.argv[2]).convert('RGB')
    fills = palette(svg_text)
    bw, bh = box_size(svg_text)
    w, h = img.size
    nonwhite = sum(1 for c in img.getdata() if c != (255, 255, 255))
    out = {'size': [w, h], 'nonwhite': nonwhite / (w * h), 'boxes': 0,
           'dominant': {f: 0 for f in fills}, 'with': {f: 0 for f in fills}}
    for (rw, rh), colours in regions(img):
        # the stroke adds a pixel or two around the fill, antialiasing one
        if not (bw > 0 and abs(rw - bw) <= 3 and abs(rh - bh) <= 3):
            continue
        out['boxes'] += 1
        by_fill = {f: colours.get(rgb, 0) for f, rgb in fills.items()}
        out['dominant'][max(by_fill, key=by_fill.get)] += 1
        for f, n in by_fill.items():
            if n >= MIN_BAND:
                out['with'][f] += 1
    json.dump(out, sys.stdout)
    print()


main()
