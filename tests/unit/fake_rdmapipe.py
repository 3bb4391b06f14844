#!/usr/bin/python3
"""A stand-in for `rdmapipe --points` in rdmapipe-explore's tests (no RDMA): answers each
point from its pipeline file with planted corners: a payload failure when size >= 8192
and qps >= 4, 1000 msg/s instead of 20000 when batch <= 2 and inline, and (FAKE_HANG=1)
no answer at the one point size 1024, qps 2, batch 4, no inline (each ask of it costs the
search a point_timeout), (FAKE_CRASH=1) death by SIGSEGV when size is 4096 and batch 8.
FAKE_EXIT=N: exits N before reading any point (a child that cannot start). FAKE_DELAY=S:
each point takes S seconds. As rdmapipe --points does, it says "alive" while a point runs
(every 0.2 s here) and answers with the hw_counters that moved: out_of_sequence, one a
message, when qps is 8. FAKE_WEDGE=1: at size 1024, qps 2 its host stops answering (no
"alive", no answer) until it is killed."""
import json
import os
import re
import signal
import sys
import threading
import time

if "--points" not in sys.argv:
    sys.exit("fake_rdmapipe: expects --points")
if os.environ.get("FAKE_EXIT"):
    print("EAL: cannot init (fake)", file=sys.stderr)
    sys.exit(int(os.environ["FAKE_EXIT"]))
out = threading.Lock()
running = threading.Event()
wedged = threading.Event()


def say(text):
    with out:
        sys.stdout.write(text)
        sys.stdout.flush()


def beat():
    while True:
        time.sleep(0.2)
        if running.is_set() and not wedged.is_set():
            say("alive\n")


threading.Thread(target=beat, daemon=True).start()
say("alive\n")   # ready
for line in sys.stdin:
    conf, log = line.rstrip("\n").split("\t")
    running.set()
    text = open(conf).read()

    def get(key, default):
        m = re.search(r"\b%s\s*=\s*\"?([^\";]+)\"?\s*;" % key, text)
        return m.group(1) if m else default

    size, qps, batch = int(get("size", 64)), int(get("qps", 1)), int(get("batch", 32))
    inline = get("inline", "false") == "true"
    if os.environ.get("FAKE_HANG") and (size, qps, batch, inline) == (1024, 2, 4, False):
        time.sleep(3600)
    if os.environ.get("FAKE_WEDGE") and (size, qps) == (1024, 2):
        wedged.set()
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
    running.clear()
    say("done\t%d%s\n" % (0 if ok else 1, "\tout_of_sequence=%d" % int(rate) if qps == 8 else ""))
