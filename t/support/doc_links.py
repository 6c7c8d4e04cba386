#!/usr/bin/env python3
"""t/support/doc_links.py - checks the relative links of the user docs.

Usage: doc_links.py TOP. Reads TOP/README.md, TOP/doc/*.md and
TOP/bench/README.md; every link [text](target) that is not a URL must name
a file that exists (relative to the linking file), and its #anchor, in a
Markdown file, must be one of that file's headings (GitHub's slug: lower
case, punctuation dropped, spaces as '-', '-1', '-2' for repeats) or an
<a id="..."> in it. Prints one line per broken link and exits 1 if there
is any, 0 otherwise."""
import glob
import os
import re
import sys

# Files another branch writes; a link to them is accepted while missing.
PENDING = {'doc/layout.md'}


def slug(heading):
    h = re.sub(r'<[^>]+>', '', heading).strip().lower()
    return re.sub(r'[^\w\- ]', '', h).replace(' ', '-')


def anchors(path):
    found, seen, fence = set(), {}, False
    with open(path, encoding='utf-8') as f:
        for line in f:
            if line.startswith('```'):
                fence = not fence
            if fence:
                continue
            m = re.match(r'^#+ (.*)', line)
            if m:
                s = slug(m.group(1))
                n = seen.get(s, 0)
                seen[s] = n + 1
                found.add(s if n == 0 else '%s-%d' % (s, n))
            found.update(re.findall(r'<a id="([^"]+)"', line))
    return found


def main(top):
    os.chdir(top)
    files = ['README.md'] + sorted(glob.glob('doc/*.md')) + ['bench/README.md']
    cache, bad = {}, 0
    for f in files:
        with open(f, encoding='utf-8') as fh:
            text = fh.read()
        text = re.sub(r'(?ms)^```.*?^```', '', text)   # code blocks hold no links
        for target in re.findall(r'\]\(([^)\s]+)\)', text):
            if re.match(r'^[a-z]+:', target):
                continue
            path, _, frag = target.partition('#')
            dest = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
            if dest in PENDING:
                continue
            if not os.path.exists(dest):
                print('%s: no such file: %s' % (f, target))
                bad += 1
                continue
            if frag and dest.endswith('.md'):
                if dest not in cache:
                    cache[dest] = anchors(dest)
                if frag not in cache[dest]:
                    print('%s: no such anchor: %s' % (f, target))
                    bad += 1
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else '.'))
