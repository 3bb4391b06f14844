#!/usr/bin/env python3
"""Writes tests/conf/bad/*.conf: the valid base.conf.in with one mistake each.
Line 1 of each is its expected error, "# expect: {file}:LINE: PATH: message" ({file}
stands for the path the test opens), written after a person reviewed that the
message names the right place and cause; this script keeps line 1 and (re)creates
the body. Run from tests/conf."""
import re, sys
base = open('base.conf.in').read()
cases = {
 'batch-zero': ('batch = 32;', 'batch = 0;'),
 'batch-too-big': ('batch = 32;', 'batch = 513;'),
 'unknown-key': ('batch = 32;', 'bach = 32;'),
 'unknown-top-key': ('version = 1;', 'version = 1;\nflow = ( );'),
 'missing-version': ('version = 1;\n', ''),
 'wrong-version': ('version = 1;', 'version = 2;'),
 'syntax-error': ('batch = 32;', 'batch = = 32;'),
 'verb-typo': ('verb = "write_imm";', 'verb = "write_imn";'),
 'missing-verb': ('verb = "write_imm"; ', ''),
 'bad-size-string': ('size = 64;', 'size = "64Q";'),
 'size-and-sizes': ('size = 64;', 'size = 64; sizes = [64, 128];'),
 'atomic-size': ('verb = "write_imm"; size = 64;', 'verb = "fetch_add"; size = 16;'),
 'sq-depth-small': ('batch = 32;', 'batch = 32; signal_every = 64; sq_depth = 100;'),
 'sq-depth-below-batch': ('batch = 32;', 'batch = 64; signal_every = 8; sq_depth = 32;'),
 'window-below-batch': ('batch = 32;', 'batch = 32; window = 16;'),
 'unknown-device': ('{ lcore = 1; device = "rxe0";', '{ lcore = 1; device = "rxe1";'),
 'duplicate-lcore-context': ('{ lcore = 2; device = "rxe0"; send_cq = 64;', '{ lcore = 1; device = "rxe0"; send_cq = 64;'),
 'lcore-not-in-eal': ('{ name = "tx"; kind = "rdma_tx"; lcore = 1;', '{ name = "tx"; kind = "rdma_tx"; lcore = 7;'),
 'ring-no-consumer': ('{ name = "vf"; kind = "verify"; lcore = 2; input = "r0"; }', '{ name = "vf"; kind = "verify"; lcore = 2; input = "r1"; }'),
 'ring-two-consumers': ('{ name = "vf"; kind = "verify"; lcore = 2; input = "r0"; }', '{ name = "vf"; kind = "verify"; lcore = 2; input = "r0"; },\n  { name = "sk"; kind = "sink"; lcore = 1; input = "r0"; }'),
 'ring-not-pow2': ('{ name = "r0"; size = 1024; }', '{ name = "r0"; size = 1000; }'),
 'unknown-ring': ('output = "r0";', 'output = "r9";'),
 'pool-too-small': ('count = 8192; cache = 64;', 'count = 100; cache = 64;'),
 'pool-elt-too-small': ('elt_size = 4096;', 'elt_size = 32;'),
 'unknown-pool': ('pool = "tx";', 'pool = "rx";'),
 'send-cq-overflow': ('send_cq = 4096; recv_cq = 64;', 'send_cq = 100; recv_cq = 64;'),
 'recv-cq-overflow': ('send_cq = 64; recv_cq = 2048;', 'send_cq = 64; recv_cq = 1000;'),
 'srq-too-small': ('srq = 1152; srq_refill = 128;', 'srq = 512; srq_refill = 128;'),
 'no-srq-for-receives': ('recv_cq = 2048; srq = 1152; srq_refill = 128;', 'recv_cq = 2048; srq = 0;'),
 'capture-without-file': ('{ name = "vf"; kind = "verify"; lcore = 2; input = "r0"; }', '{ name = "vf"; kind = "capture"; lcore = 2; input = "r0"; }'),
 'file-on-verify': ('{ name = "vf"; kind = "verify"; lcore = 2; input = "r0"; }', '{ name = "vf"; kind = "verify"; lcore = 2; input = "r0"; file = "x.pcap"; }'),
 'capture-snaplen-zero': ('{ name = "vf"; kind = "verify"; lcore = 2; input = "r0"; }', '{ name = "vf"; kind = "capture"; lcore = 2; input = "r0"; file = "x.pcap"; snaplen = 0; }'),
 'stage-kind-typo': ('kind = "rdma_rx";', 'kind = "rdma_recv";'),
 'stage-without-flow': ('{ name = "tx"; kind = "rdma_tx"; lcore = 1; flow = "bw"; }', '{ name = "tx"; kind = "rdma_tx"; lcore = 1; }'),
 'sink-with-flow': ('{ name = "vf"; kind = "verify"; lcore = 2; input = "r0"; }', '{ name = "vf"; kind = "verify"; lcore = 2; input = "r0"; flow = "bw"; }'),
 'share-one-lane': ('pool = "tx";', 'pool = "tx"; share_qps = true;'),
 'share-qps-typo': ('pool = "tx";', 'pool = "tx"; shared_qps = true;'),
 'two-tx-stages': ('{ name = "rx"; kind = "rdma_rx";', '{ name = "tx2"; kind = "rdma_tx"; lcore = 2; flow = "bw"; },\n  { name = "rx"; kind = "rdma_rx";'),
 'no-rx-stage': ('{ name = "rx"; kind = "rdma_rx"; lcore = 2; flow = "bw"; output = "r0"; },', '{ name = "gn"; kind = "gen"; lcore = 2; flow = "bw"; output = "r0"; },'),
 'duplicate-flow-name': ('messages = 100000; pool = "tx"; }\n);', 'messages = 100000; pool = "tx"; },\n  { name = "bw"; verb = "send"; pool = "tx"; }\n);'),
 'bad-name': ('{ name = "tx"; elt_size', '{ name = "t x"; elt_size'),
 'negative-qps': ('qps = 1;', 'qps = -4;'),
 'qps-type': ('qps = 1;', 'qps = "many";'),
 'messages-and-duration': ('messages = 100000;', 'messages = 100000; duration = 5.0;'),
 'bad-peer': ('name = "bw";', 'name = "bw"; peer = "10.0.0.1";'),
 'uc-read': ('verb = "write_imm";', 'verb = "read"; transport = "uc";'),
 'inline-read': ('verb = "write_imm";', 'verb = "read"; inline = true;'),
 'verify-not-bool': ('messages = 100000;', 'messages = 100000; verify = "yes";'),
 'rdma-stage-without-context': [('{ name = "vf"; kind = "verify"; lcore = 2; input = "r0"; }', '{ name = "vf"; kind = "verify"; lcore = 2; input = "r0"; },\n  { name = "e"; kind = "echo"; lcore = 0; flow = "bw"; }'),
                                ('devices = ( { name = "rxe0"; port = 1; } );', 'devices = ( { name = "rxe0"; port = 1; }, { name = "rxe1"; } );')],
 'warmup-too-long': ('run = { duration = 0;', 'run = { duration = 2; warmup = 3;'),
 'run-key-typo': ('stats_period = 1;', 'stats_periods = 1;'),
 'gen-two-outputs': ('{ name = "vf"; kind = "verify"; lcore = 2; input = "r0"; }', '{ name = "vf"; kind = "verify"; lcore = 2; input = "r0"; },\n  { name = "g"; kind = "gen"; lcore = 1; flow = "bw"; output = ["r0", "r0"]; }'),
 'pool-cache-too-big': ('cache = 64;', 'cache = 512;').__class__ and ('count = 8192; cache = 64;', 'count = 600; cache = 512;'),
 'flows-not-list': ('flows = (\n  { name = "bw"; verb = "write_imm"; size = 64; batch = 32; qps = 1; messages = 100000; pool = "tx"; }\n);', 'flows = { name = "bw"; };'),
 'listen-with-tx': ('name = "bw";', 'name = "bw"; listen = "18515";'),
 'peer-with-rx': ('name = "bw";', 'name = "bw"; peer = "10.2.0.2:18515";'),
 'listen-and-peer': ('name = "bw";', 'name = "bw"; listen = "18515"; peer = "10.2.0.2:18515";'),
 'peer-hostname': ('name = "bw";', 'name = "bw"; peer = "server.example:18515";'),
 'local-not-ipv4': ('name = "bw";', 'name = "bw"; peer = "10.2.0.2:18515"; local = "hostA";'),
 'window-too-big': ('size = 64; batch = 32; qps = 1;', 'size = "1M"; batch = 32; qps = 16; window = 4096;'),
 'both-ends-one-lcore': ('{ name = "rx"; kind = "rdma_rx"; lcore = 2;', '{ name = "rx"; kind = "rdma_rx"; lcore = 1;'),
 'too-many-qps': ('qps = 1;', 'qps = 1000; pool = "tx"; },\n  { name = "bw2"; verb = "write_imm"; qps = 100;'),
 'devices-empty': ('devices = ( { name = "rxe0"; port = 1; } );', 'devices = ( );'),
 'pattern-kind-typo': ('run = {', 'pattern = { kind = "rings"; };\nrun = {'),
 'pattern-pairs-not-list': ('run = {', 'pattern = { kind = "ring"; pairs = ( [0, 1] ); };\nrun = {'),
 'pattern-list-no-pairs': ('run = {', 'pattern = { kind = "list"; };\nrun = {'),
 'pattern-list-self': ('run = {', 'pattern = { kind = "list"; pairs = ( [0, 1], [2, 2] ); };\nrun = {'),
 'pattern-list-twice': ('run = {', 'pattern = { kind = "list"; pairs = ( [0, 1], [1, 0], [0, 1] ); };\nrun = {'),
 'pattern-root-not-incast': ('run = {', 'pattern = { kind = "all_to_all"; root = 1; };\nrun = {'),
 'pattern-unknown-flow': ('run = {', 'pattern = { kind = "ring"; flows = ["bx"]; };\nrun = {'),
 'pattern-bw-flag': ('run = {', 'pattern = { kind = "ring"; bw_flag = 1.5; };\nrun = {'),
 'pattern-confirm': ('run = {', 'pattern = { kind = "ring"; confirm = 2000; };\nrun = {'),
 'pattern-flow-with-rings': ('run = {', 'pattern = { kind = "pairs"; };\nrun = {'),
 'pattern-flow-with-peer': ('name = "bw";', 'name = "bw"; peer = "10.2.0.2:18515";').__class__ and ('{ name = "bw"; verb = "write_imm"; size = 64; batch = 32; qps = 1; messages = 100000; pool = "tx"; }\n);\nrings = ( { name = "r0"; size = 1024; } );\nstages = (\n  { name = "tx"; kind = "rdma_tx"; lcore = 1; flow = "bw"; },\n  { name = "rx"; kind = "rdma_rx"; lcore = 2; flow = "bw"; output = "r0"; },\n  { name = "vf"; kind = "verify"; lcore = 2; input = "r0"; }\n);', '{ name = "bw"; verb = "write_imm"; size = 64; batch = 32; qps = 1; messages = 100000; pool = "tx"; peer = "10.2.0.2:18515"; }\n);\nstages = (\n  { name = "tx"; kind = "rdma_tx"; lcore = 1; flow = "bw"; }\n);\npattern = { kind = "ring"; };'),
 'pool-cache-default': ('count = 8192; cache = 64;', 'count = 300;'),
 'traffic-class-too-big': ('batch = 32;', 'batch = 32; traffic_class = 256;'),
 'flow-label-too-big': ('batch = 32;', 'batch = 32; flow_label = 0x100000;'),
 'hop-limit-zero': ('batch = 32;', 'batch = 32; hop_limit = 0;'),
 'gid-index-through-cm': ('batch = 32;', 'batch = 32; gid_index = 1;'),
 # Two mistakes: the one reported is the first in the order of checks, whether the
 # reader or conf_validate finds it (lib/conf/check_order.h).
 'two-mistakes-ends-then-size': [('name = "bw";', 'name = "bw"; listen = "18515"; peer = "10.0.0.1:18515";'), ('size = 64;', 'size = "64Q";')],
 'two-mistakes-device-then-kind': [('{ lcore = 1; device = "rxe0";', '{ lcore = 1; device = "rxe1";'), ('kind = "rdma_rx";', 'kind = "rdma_recv";')],
}
for name, edits in cases.items():
    body = base
    for old, new in edits if isinstance(edits, list) else [edits]:   # one edit, or several
        assert old in body, name
        body = body.replace(old, new, 1)
    # Line 1 holds the expected error; keep what is there (written after review).
    try:
        first = open(f'bad/{name}.conf').readline()
    except FileNotFoundError:
        first = ''
    if not first.startswith('# expect: '):
        first = '# expect: (to be reviewed)\n'
    open(f'bad/{name}.conf', 'w').write(first + body)
print(len(cases), 'cases')
