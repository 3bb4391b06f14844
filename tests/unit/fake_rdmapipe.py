#!/usr/bin/python3
"""A stand-in for `rdmapipe --points` in rdmapipe-explore's tests (no RDMA): answers each
point from its pipeline file with planted corners: a payload failure when size >= 8192
and qps >= 4, 1000 msg/s instead of 20000 when batch <= 2 and inline, and (FAKE_HANG=1)
no answer at the one point size 1024, qps 2, batch 4, no inline (each ask of it costs the
search a point_timeout), (FAKE_CRASH=1) death by SIGSEGV when size is 4096 and batch 8.
FAKE_EXIT=N: exits N before reading any point (a child that cannot start). FAKE_DELAY=S:
each point takes S seconds."""
import json
import os
import re
import signal
import sys
import time

if "--points" not in sys.argv:
    sys.exit("fake_rdmapipe: expects --points")
if os.environ.get("FAKE_EXIT"):
    print("EAL: cannot init (fake)", file=sys.stderr)
    sys.exit(int(os.environ["FAKE_EXIT"]))
for line in sys.stdin:
    conf, log = line.rstrip("\n").split("\t")
    text = open(conf).read()

    def get(key, default):
        m = re.search(r"\b%s\s*=\s*\"?([^\";]+)\"?\s*;" % key, text)
        return m.group(1) if m else default

    size, qps, batch = int(get("size", 64)), int(get("qps", 1)), int(get("batch", 32))
    inline = get("inline", "false") == "true"
    if os.environ.get("FAKE_HANG") and (size, qps, batch, inline) == (1024, 2, 4, False):
        time.sleep(3600)
    if os.environ.get("FAKE_CRASH") and size == 4096 and batch == 8:
        os.kill(os.getpid(), signal.SIGSEGV)
    time.sleep(float(os.environ.get("FAKE_DELAY", "0")))
    ok = not (size >= 8192 and qps >= 4)
    rate = 1000.0 if batch <= 2 and inline else 20000.0
    flow = {"name": "flow0", "message_rate": rate, "gbit_per_s": rate * size * 8 / 1e9,
            "messages_completed": int(rate), "latency_us": {"p50": 10.0, "p99": 20.0}}
    if not ok:
        flow["failure"] = "payload mismatch (planted)"
    with open(get("json", "/dev/null"), "w") as f:
        json.dump({"run": {"result": "PASS" if ok else "FAIL"}, "flows": [flow]}, f)
    with open(log, "w") as f:
        f.write("fake run of %s\n" % conf)
    sys.stdout.write("done\t%d\n" % (0 if ok else 1))
    sys.stdout.flush()
