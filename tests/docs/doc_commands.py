#!/usr/bin/env python3
"""Runs the commands of a document's ```sh blocks and checks what they print, so that
the document cannot rot (docs/getting-started.md states the convention):

  ```sh                 runs anywhere, no RDMA device (the unit suite)
  ```sh rxe             needs a loopback device (rxe0), in the soft-RoCE VM
  ```sh two-hosts       needs rxeA and rxeB (10.2.0.1, 10.2.0.2), in the VM
  ```sh mpirun          a job under mpirun on rxeA and rxeB, in the VM
  ```sh setup           the build itself: each line must be one of tools/run-default's
  ... bg                (after the kind) started in the background: the next block runs
                        once this one printed its first #> line; it must then end well

Each block is one bash script (-e -o pipefail) run in a scratch folder where conf,
docs, tools and build are the source tree's (build: the build tree), with the build's
rdmapipe first on PATH. A '#> TEXT' line is output the block must print: TEXT on one
line of its stdout or stderr, '...' standing for anything.

usage: doc_commands.py DOC KINDS --source DIR --build DIR [--map FROM=TO ...]
KINDS: a comma-separated list of the kinds above ('host' for plain sh blocks).
--map rewrites whole words in the commands (rxe0=rxe1): the VM's names."""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

TIMEOUT_S = 300


def blocks(doc):
    """(line number, kind, bg, text) of each ```sh block."""
    out, cur = [], None
    for n, line in enumerate(open(doc), 1):
        if cur is None:
            m = re.match(r'^```sh\b(.*)$', line.rstrip())
            if m:
                words = m.group(1).split()
                kind = words[0] if words and words[0] != 'bg' else 'host'
                cur = (n, kind, 'bg' in words, [])
        elif line.startswith('```'):
            out.append((cur[0], cur[1], cur[2], ''.join(cur[3])))
            cur = None
        else:
            cur[3].append(line)
    return out


def expected(text):
    """The block's #> lines as regular expressions."""
    return [(t, re.compile('.*'.join(re.escape(p) for p in t.split('...'))))
            for t in (l[3:].strip() for l in text.splitlines() if l.startswith('#> '))]


def missing(text, output):
    lines = output.splitlines()
    return [t for t, rx in expected(text) if not any(rx.search(l) for l in lines)]


def first_line(text):
    return next((l for l in text.splitlines() if l.strip() and not l.startswith('#')), '')


class Runner:
    def __init__(self, args):
        self.maps = [m.split('=', 1) for m in args.map]
        self.dir = tempfile.mkdtemp(prefix='doc-commands.')
        for name in ('conf', 'docs', 'tools'):
            os.symlink(os.path.join(args.source, name), os.path.join(self.dir, name))
        os.symlink(args.build, os.path.join(self.dir, 'build'))
        self.env = dict(os.environ, PATH=os.path.join(self.dir, 'build/app/rdmapipe') + ':' + os.environ['PATH'])
        self.source = args.source
        self.passed = self.failed = 0
        self.bg = None

    def script(self, text):
        for a, b in self.maps:
            text = re.sub(r'(?<![\w.-])' + re.escape(a) + r'(?![\w-])', lambda _: b, text)
        return text

    def verdict(self, n, text, ok, why, output, t0=None):
        # Each command's seconds: where a slow test's time goes (issue 44).
        what = f'line {n}: {first_line(text)}'
        secs = f' ({time.time() - t0:.1f} s)' if t0 else ''
        if ok:
            self.passed += 1
            print(f'ok: {what}{secs}')
        else:
            self.failed += 1
            print(f'FAIL: {what}: {why}{secs}\n--- it printed:\n{output}---')

    def start_bg(self, n, text):
        log = open(os.path.join(self.dir, f'bg.{n}.log'), 'w+')
        p = subprocess.Popen(['bash', '-e', '-o', 'pipefail', '-c', self.script(text)], cwd=self.dir,
                             env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.bg = (n, text, p, log, time.time())
        want = expected(text)[:1]
        if not want:
            return
        end = time.time() + 120
        while True:
            ended = p.poll() is not None   # before the read: what it printed before it ended counts
            log.seek(0)
            output = log.read()
            if any(want[0][1].search(l) for l in output.splitlines()):
                return
            if ended or time.time() >= end:
                break
            time.sleep(0.2)
        self.verdict(n, text, False, f'no "{want[0][0]}" before it ended or within 120 s', output)
        self.end_bg(check=False)

    def end_bg(self, check=True):
        n, text, p, log, t0 = self.bg
        self.bg = None
        try:
            rc = p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, 9)
            rc = p.wait()
        log.seek(0)
        output = log.read()
        if check:
            lost = missing(text, output)
            self.verdict(n, text, rc == 0 and not lost,
                         f'exit {rc}' if rc else f'no line "{lost[0] if lost else ""}"', output, t0)

    def run(self, n, kind, text):
        if kind == 'setup':
            steps = open(os.path.join(self.source, 'tools/run-default')).read()
            absent = [l for l in text.splitlines() if l.strip() and not l.startswith('#') and l.strip() not in steps]
            self.verdict(n, text, not absent, f'not a step of tools/run-default: {absent[:1]}', text)
            return
        t0 = time.time()
        try:
            r = subprocess.run(['bash', '-e', '-o', 'pipefail', '-c', self.script(text)], cwd=self.dir, env=self.env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                               timeout=TIMEOUT_S)
            rc, output = r.returncode, r.stdout.decode(errors='replace')
        except subprocess.TimeoutExpired as e:
            rc, output = 'timeout', (e.stdout or b'').decode(errors='replace')
        lost = missing(text, output)
        self.verdict(n, text, rc == 0 and not lost, f'exit {rc}' if rc != 0 else f'no line "{lost[0] if lost else ""}"',
                     output, t0)
        if self.bg:
            self.end_bg()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('doc')
    ap.add_argument('kinds')
    ap.add_argument('--source', required=True)
    ap.add_argument('--build', required=True)
    ap.add_argument('--map', action='append', default=[])
    args = ap.parse_args()
    kinds = args.kinds.split(',')
    todo = [b for b in blocks(args.doc) if b[1] in kinds]
    for k in kinds:
        if not any(b[1] == k for b in todo):
            print(f'FAIL: {args.doc} has no ```sh {k} block')
            return 1
    r = Runner(args)
    for n, kind, bg, text in todo:
        if bg:
            r.start_bg(n, text)
        else:
            r.run(n, kind, text)
    if r.bg:
        r.end_bg()
    print(f'doc commands: {r.passed} passed, {r.failed} failed')
    return 1 if r.failed else 0


if __name__ == '__main__':
    sys.exit(main())
