#!/usr/bin/env python3
"""The results files against docs/results.schema.json (python3-jsonschema): the sample
files test_results writes (every optional part, and none) validate, and documents
broken the ways a writer could break them do not, so the schema is not vacuous.
usage: results_schema.py TEST_RESULTS SCHEMA [RESULTS.json ...]"""
import copy, json, subprocess, sys, tempfile

import jsonschema

exe, schema_path, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
schema = json.load(open(schema_path))
jsonschema.Draft202012Validator.check_schema(schema)
v = jsonschema.Draft202012Validator(schema)
fails = 0


def check(name, doc, want_valid):
    global fails
    errors = sorted(v.iter_errors(doc), key=lambda e: list(e.path))
    if bool(errors) == want_valid:
        fails += 1
        why = "; ".join(f"{'/'.join(map(str, e.path))}: {e.message}" for e in errors[:3])
        print(f"FAIL: {name}: {'invalid: ' + why if want_valid else 'valid, but it is broken'}")
    else:
        print(f"ok: {name}")


with tempfile.TemporaryDirectory() as d:
    subprocess.run([exe, "--write", d], check=True)
    full = json.load(open(d + "/full.json"))
    check("full.json", full, True)
    check("empty.json", json.load(open(d + "/empty.json")), True)

broken = {
    "a required field gone": lambda j: j["flows"][0].pop("messages_verified"),
    "an unknown field": lambda j: j["run"].__setitem__("surprise", 1),
    "a count as text": lambda j: j["flows"][0].__setitem__("bytes", "3936256"),
    "a negative count": lambda j: j["lcores"][0].__setitem__("polls_idle", -1),
    "another schema version": lambda j: j["rdmapipe"].__setitem__("results_schema", 2),
    "an unknown verb": lambda j: j["run"].__setitem__("verb", "RDMA_WRIT"),
    "latency without its CDF": lambda j: j["flows"][0].pop("latency_cdf"),
    "a CDF point of three": lambda j: j["flows"][0]["latency_cdf"][0].append(3),
    "a histogram without its percentiles": lambda j: [j["flows"][0].pop(k) for k in ("latency_us", "latency_cdf")],
    "a histogram bucket of two": lambda j: j["flows"][0]["latency_hist"]["buckets"][0].pop(),
    "an empty histogram bucket": lambda j: j["flows"][0]["latency_hist"]["buckets"][0].__setitem__(2, 0),
    "a histogram in us": lambda j: j["flows"][0]["latency_hist"].__setitem__("unit", "us"),
    "stage cycles half there": lambda j: j["stages"][0].pop("cycles_per_object"),
}
for name, breaker in broken.items():
    doc = copy.deepcopy(full)
    breaker(doc)
    check("refused: " + name, doc, False)

older = copy.deepcopy(full)
older["flows"][0].pop("latency_hist")
check("a file from before latency_hist", older, True)

for path in extra:
    check(path, json.load(open(path)), True)
sys.exit(1 if fails else 0)
