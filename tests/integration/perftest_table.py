#!/usr/bin/env python3
"""perftest's output as a user's script reads it (tests/integration/perftest.sh).

  perftest_table.py compare PERFTEST_OUT RDMAPIPE_OUT WHAT
      both tables: the same column titles and rows (sizes, iterations), rdmapipe's
      figures above 0; prints the ratio of the headline figure.
  perftest_table.py figures OUT
      the headline figures of a client's first row (tools/bench-perftest): a latency
      table's t_typical and 99% percentile, a bandwidth table's BW average.
  perftest_table.py json PERFTEST_JSON RDMAPIPE_SERVER_JSON RDMAPIPE_CLIENT_JSON
      rdmapipe's files are valid JSON (strict) with perftest's result fields; perftest
      4.5's own file is read too, though it is not JSON (unquoted keys and values,
      trailing commas: perftest#216).
"""
import json
import re
import sys


def table(path):
    """The table after perftest's ' #bytes' title line: its column titles and rows."""
    cols, rows = None, []
    for line in open(path, encoding='utf-8', errors='replace'):
        if line.startswith(' #bytes'):
            cols = [w for c in re.split(r'\s{2,}|\t+', line.strip()) if c
                    for w in (c.split() if c.startswith('#') else [c])]   # '#bytes #iterations': two
            continue
        if cols is None:
            continue
        fields = line.split()
        if fields and re.fullmatch(r'\d+', fields[0]):
            rows.append([float(x) for x in fields])
        elif line.startswith('---') and rows:
            break
    assert cols, f'{path}: no table (no " #bytes" line)'
    return cols, rows


def samples(path):
    """-H's lines after '#, usec': 'i, value', in order."""
    got, on = [], False
    for line in open(path, encoding='utf-8', errors='replace'):
        if line.startswith('#, usec'):
            on = True
        elif on and re.fullmatch(r'\d+, [0-9.e+-]+\n?', line):
            got.append(float(line.split(', ')[1]))
        elif on:
            break
    return got


def compare(perftest, rdmapipe, what):
    pc, pr = table(perftest)
    rc, rr = table(rdmapipe)
    assert pc == rc, f'{what}: columns differ:\n  perftest {pc}\n  rdmapipe {rc}'
    assert len(pr) == len(rr) and pr, f'{what}: perftest has {len(pr)} rows, rdmapipe {len(rr)}'
    ps, rs = samples(perftest), samples(rdmapipe)
    if ps or rs:   # -H: rdmapipe prints every round trip; perftest leaves out its first and its two slowest
        n = int(rr[0][1]) if rr else 0
        assert len(rs) == n and len(ps) == n - 3, f'{what}: -H samples: perftest {len(ps)}, rdmapipe {len(rs)}, of {n}'
        assert rs == sorted(rs) and all(x > 0 for x in rs), f'{what}: rdmapipe samples not sorted or not positive'
    head = 3 if 'BW average' in ' '.join(pc) else 4   # BW average, or t_typical
    for p, r in zip(pr, rr):
        assert len(p) == len(r) == len(pc), f'{what}: a row of {len(p)} and {len(r)} fields for {len(pc)} columns'
        assert p[:2] == r[:2], f'{what}: rows differ in size or iterations: perftest {p[:2]}, rdmapipe {r[:2]}'
        assert all(x > 0 for x in r[2:head + 1]), f'{what}: rdmapipe row {r}'
        print(f'{what}: {int(r[0])} B x {int(r[1])}: {pc[head]} perftest {p[head]:g}, rdmapipe {r[head]:g} '
              f'({r[head] / p[head]:.2f}x)' if p[head] else f'{what}: perftest {p[head]:g}')


def figures(path):
    cols, rows = table(path)
    assert rows, f'{path}: no row'
    names = ['t_typical[usec]', '99% percentile[usec]'] if 't_typical[usec]' in cols else ['BW average[MB/sec]', 'BW average[Gb/sec]']
    print(' '.join(f'{rows[0][cols.index(n)]:g}' for n in names if n in cols))


def lenient(path):
    """perftest 4.5's --out_json file: `key: value,` lines, objects opened by `key: {`."""
    root, stack = {}, []
    cur = root
    for raw in open(path, encoding='utf-8'):
        line = raw.strip().rstrip(',')
        if not line or line == '{':
            continue
        if line.startswith('}'):
            cur = stack.pop() if stack else root
            continue
        key, _, value = line.partition(':')
        key, value = key.strip().strip('"'), value.strip()
        if value == '{':
            stack.append(cur)
            cur[key] = {}
            cur = cur[key]
            continue
        try:
            cur[key] = json.loads(value)
        except ValueError:
            cur[key] = value
    return root


def check_json(perftest, server, client):
    p = lenient(perftest)
    want = set(p['results']) if 'results' in p else set()
    assert {'MsgSize', 'n_iterations', 'BW_peak', 'BW_average', 'MsgRate'} <= want, f'perftest wrote {p}'
    for path in (server, client):
        with open(path, encoding='utf-8') as f:
            r = json.load(f)   # strict: the file is JSON
        got = set(r['results']) - {'rdmapipe'}
        assert got == want, f'{path}: results fields {sorted(got)}, perftest writes {sorted(want)}'
        missing = set(p.get('test_info', {})) - set(r['test_info'])
        print(f'{path}: results as perftest; test_info without {sorted(missing)}')
        assert missing <= {'RX_depth', 'TX_depth'}, f'{path}: test_info lacks {sorted(missing)}'   # (docs/perftest.md)
        assert r['results']['rdmapipe']['result'] == 'PASS', r['results']
    s = json.load(open(server, encoding='utf-8'))['results']
    assert s['rdmapipe']['messages_verified'] == s['n_iterations'] == 3000, s   # the server checks every message


if __name__ == '__main__':
    if sys.argv[1] == 'compare':
        compare(*sys.argv[2:5])
    elif sys.argv[1] == 'figures':
        figures(sys.argv[2])
    elif sys.argv[1] == 'json':
        check_json(*sys.argv[2:5])
    else:
        sys.exit(f'usage: {sys.argv[0]} compare|figures|json ...')
