#!/usr/bin/env bash
# tools/plot-explore on a synthetic rdmapipe-explore output folder (space.json,
# points.jsonl, findings.json): a PNG of the rate over each dimension (one of them with
# a single value) and an overview, with every kind of anomaly, a hung, a crashed and an
# invalid point; the same PNGs twice (the jitter is deterministic); a folder of no point
# or of invalid points only; folders that are not explore output refused (exit 2, the
# file and line named); --help.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
tool=$top/tools/plot-explore
fails=0
if ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
	if [ -n "${CI:-}" ]; then echo "FAIL: python3-matplotlib missing (tools/install-deps installs it)"; exit 1; fi
	echo "SKIP: python3-matplotlib missing"; exit 77
fi
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# PIL (python3-pil: tools/install-deps) decodes the PNGs and finds the marks' colours.
# Without it those checks cannot run: a failure in CI, where every check must, else
# said once (each PNG then checked by its signature and size only).
pil=1 marks=", every kind of anomaly marked"
if ! /usr/bin/python3 -c 'import PIL' 2>/dev/null; then
	pil=0 marks=" (not decoded, colours not checked: no PIL)"
	if [ -n "${CI:-}" ]; then
		fail "python3-pil missing (tools/install-deps installs it): the PNGs cannot be decoded nor their colours checked"
	else
		echo "SKIP: python3-pil missing: the PNGs are checked by their signature and size only, not decoded nor their colours"
	fi
fi

# The folder: 5 dimensions (transport has one value), 2 reference points, 36 of the
# search (one invalid, one hung, one crashed; correctness where size >= 8192 and
# qps >= 4, performance where verb = read and inline = true, counters where verb = send
# and qps = 16), 7 of minimisation; findings 1..3 in the order first met.
/usr/bin/python3 - "$d/good" <<'PY'
import json, os, random, sys
d = sys.argv[1]
os.makedirs(d)
dims = [
    {"name": "size", "values": ["64", "1024", "4096", "8192", "65536"], "numeric": True, "simplest": "64"},
    {"name": "qps", "values": ["1", "4", "16"], "numeric": True, "simplest": "1"},
    {"name": "verb", "values": ["write_imm", "send", "read"], "numeric": False, "simplest": "write_imm"},
    {"name": "inline", "values": ["false", "true"], "numeric": False, "simplest": "false"},
    {"name": "transport", "values": ["rc"], "numeric": False, "simplest": "rc"},
]
json.dump({"file": "conf/explore-test.conf", "dims": dims}, open(f"{d}/space.json", "w"))
rnd = random.Random(7)
points, found = [], []
def add(phase, point, **kw):
    n = len(points) + 1
    p = {"n": n, "phase": phase, "point": point, "status": "ran", "exit": 0, "pass": True, "rate": 0.0,
         "gbps": 0.0, "p50_us": 600.0, "p99_us": 1400.0, "messages": 0, "failure": "", "counters": {},
         "conf": f"points/{n}.conf", "log": f"points/{n}.log", "results": f"points/{n}.json",
         "elapsed_s": 1.5, "verdict": "none", "why": ""}
    p.update(kw)
    points.append(p)
add("reference", {"size": "64"}, rate=900000.0)
add("reference", {"size": "4096"}, rate=300000.0)
for i in range(36):
    pt = {dm["name"]: rnd.choice(dm["values"]) for dm in dims}
    size, qps = int(pt["size"]), int(pt["qps"])
    rate = 400000.0 / (1 + size / 4096) * (0.8 + 0.4 * rnd.random())
    kw = {"rate": rate, "messages": int(rate)}
    if i == 5:
        kw = {"status": "invalid", "rate": 0, "pass": False, "why": "refused by the validator"}
    elif i == 9:
        kw = {"status": "hung", "rate": 0, "pass": False, "exit": 137, "verdict": "correctness", "why": "hung"}
    elif i == 14:
        kw = {"status": "crashed", "rate": 0, "pass": False, "exit": 139, "verdict": "correctness", "why": "SIGSEGV"}
    elif size >= 8192 and qps >= 4:
        kw.update({"pass": False, "verdict": "correctness", "failure": "payload mismatch", "why": "payload mismatch"})
    elif pt["verb"] == "read" and pt["inline"] == "true":
        kw.update(rate=rate * 0.1, verdict="performance", why="0.10x its neighbour inline=false")
    elif pt["verb"] == "send" and qps == 16:
        kw.update(verdict="counters", counters={"out_of_sequence": 900}, why="out_of_sequence 0.2/msg")
    if kw.get("verdict", "none") != "none" and kw.get("status", "ran") == "ran" and kw["verdict"] not in found:
        found.append(kw["verdict"])
        kw["finding"] = len(found)
    add("search", pt, **kw)
minimal = {"size": "8192", "qps": "4", "verb": "write_imm", "inline": "false", "transport": "rc"}
for k in range(6):
    add("minimise", minimal, rate=50000.0 + k, verdict="correctness", why="payload mismatch", **{"pass": False})
add("minimise", dict(minimal, size="4096"), rate=120000.0)
with open(f"{d}/points.jsonl", "w") as f:
    for p in points:
        f.write(json.dumps(p) + "\n")
mfs = {"correctness": "size >= 8192, qps >= 4", "performance": "verb = read, inline = true",
       "counters": "verb = send, qps >= 16"}
json.dump([{"id": i + 1, "kind": k, "why": k, "mfs": mfs[k], "point": {}, "minimal": minimal}
           for i, k in enumerate(found)], open(f"{d}/findings.json", "w"), indent=1)
assert sorted(found) == ["correctness", "counters", "performance"], found
PY
[ -f "$d/good/points.jsonl" ] || { echo "FAIL: the synthetic folder was not made"; exit 1; }

# A PNG of a plot: the signature, a plausible size, and (with PIL) an image that
# decodes, with pixels of the colours given.
png() {   # file [colour...]   colours: red orange purple (the anomaly kinds')
	local f=$1
	shift
	if [ "$(head -c 8 "$f" 2>/dev/null | od -An -tx1 | tr -d ' \n')" != 89504e470d0a1a0a ] || [ "$(stat -c %s "$f")" -lt 5000 ]; then
		echo "not a PNG of a plot"; return 1
	fi
	[ "$pil" = 1 ] || return 0   # said above: a SKIP, or a failure in CI
	/usr/bin/python3 - "$f" "$@" <<'PY'
import sys
from PIL import Image
want = {"red": (255, 0, 0), "orange": (255, 140, 0), "purple": (128, 0, 128)}
im = Image.open(sys.argv[1])
im.verify()
im = Image.open(sys.argv[1]).convert("RGB")
w, h = im.size
if w < 400 or h < 300:
    sys.exit(f"{w}x{h}: too small")
px = im.getdata()
for c in sys.argv[2:]:
    r, g, b = want[c]
    n = sum(1 for p in px if abs(p[0] - r) < 8 and abs(p[1] - g) < 8 and abs(p[2] - b) < 8)
    if n < 20:
        sys.exit(f"no {c} marks ({n} pixels)")
PY
}

plots="rate-by-size.png rate-by-qps.png rate-by-verb.png rate-by-inline.png rate-by-transport.png overview.png"
if "$tool" "$d/good" >"$d/out" 2>"$d/err"; then
	ok "a folder of 45 points plotted"
	want=$(for f in $plots; do echo "$d/good/plots/$f"; done)
	[ "$(cat "$d/out")" = "$want" ] && ok "the files written are printed, one a line" ||
		{ fail "printed:"; cat "$d/out"; }
	[ -s "$d/err" ] && { fail "stderr not empty:"; cat "$d/err"; }
	for f in $plots; do
		why=$(png "$d/good/plots/$f" red orange purple) && ok "$f: a PNG$marks" ||
			fail "$f: $why"
	done
	mkdir "$d/first" && cp "$d/good/plots/"*.png "$d/first/"
	"$tool" "$d/good" >/dev/null 2>&1 && cmp -s "$d/first/rate-by-size.png" "$d/good/plots/rate-by-size.png" &&
		cmp -s "$d/first/overview.png" "$d/good/plots/overview.png" && ok "the same folder plots the same PNGs" ||
		fail "a second run drew other PNGs (jitter not deterministic?)"
else
	fail "plot-explore failed on a good folder (exit $?):"; cat "$d/err"
fi

# No point at all; every point invalid: plots that say so, exit 0.
mkdir "$d/empty" "$d/invalid"
cp "$d/good/space.json" "$d/empty/" && echo '[]' >"$d/empty/findings.json" && : >"$d/empty/points.jsonl"
cp "$d/empty/space.json" "$d/empty/findings.json" "$d/invalid/"
grep '"status": "invalid"' "$d/good/points.jsonl" >"$d/invalid/points.jsonl"
sed 's/"n": [0-9]*/"n": 99/' "$d/invalid/points.jsonl" >>"$d/invalid/points.jsonl"
for c in empty invalid; do
	if "$tool" "$d/$c" >"$d/out" 2>"$d/err" && [ "$(wc -l <"$d/out")" -eq 6 ] &&
		why=$(png "$d/$c/plots/overview.png") && why=$(png "$d/$c/plots/rate-by-size.png"); then
		ok "$c: 6 PNGs"
	else
		fail "$c: ${why:-exit or output}:"; cat "$d/out" "$d/err"
	fi
done

# Folders that are not explore output: exit 2, the file (and line) named.
bad() {   # name expected-message-regex (the folder $d/bad-NAME is made by the caller)
	local rc
	"$tool" "$d/bad-$1" >"$d/out" 2>"$d/err"
	rc=$?
	if [ "$rc" -eq 2 ] && grep -qE "^plot-explore: $d/bad-$1$2" "$d/err" && [ ! -s "$d/out" ]; then
		ok "refused: $1: $(cat "$d/err")"
	else
		fail "$1: exit $rc:"; cat "$d/err" "$d/out"
	fi
}
mk() { mkdir "$d/bad-$1" && cp "$d/good/space.json" "$d/good/points.jsonl" "$d/good/findings.json" "$d/bad-$1/"; }
bad none ": not a folder"
mk nospace && rm "$d/bad-nospace/space.json"
bad nospace "/space.json: missing: not an rdmapipe-explore output folder"
mk nopoints && rm "$d/bad-nopoints/points.jsonl"
bad nopoints "/points.jsonl: missing"
mk nofindings && rm "$d/bad-nofindings/findings.json"
bad nofindings "/findings.json: missing"
mk json && sed -i '3s/}$/,/' "$d/bad-json/points.jsonl"
bad json "/points.jsonl:3: malformed JSON"
mk norate && sed -i '7s/"rate": [0-9.]*, //' "$d/bad-norate/points.jsonl"
bad norate '/points.jsonl:7: not an explore point: no "rate"'
mk phase && sed -i '4s/"phase": "search"/"phase": "later"/' "$d/bad-phase/points.jsonl"
bad phase "/points.jsonl:4: \"phase\" is 'later', not one of search, minimise, reference"
mk value && sed -i '10s/"qps": "[0-9]*"/"qps": "3"/' "$d/bad-value/points.jsonl"
bad value "/points.jsonl:10: qps='3' is not a value of the space's dimension \"qps\""
mk spacejson && printf '{"file": "x",\n "dims": [\n}\n' >"$d/bad-spacejson/space.json"
bad spacejson "/space.json:3: malformed JSON"
mk dims && echo '{"file": "x"}' >"$d/bad-dims/space.json"
bad dims '/space.json: not an explore space: no "dims" list'
mk simplest && sed -i 's/"simplest": "1"/"simplest": "2"/' "$d/bad-simplest/space.json"
bad simplest '/space.json: dimension 2 \("qps"\): simplest "2" is not one of its values'
mk findings && echo '{"id": 1}' >"$d/bad-findings/findings.json"
bad findings "/findings.json: not a list of findings"

# --help, and no folder.
"$tool" --help >"$d/out" 2>&1 && grep -q "^usage: tools/plot-explore DIR" "$d/out" && ok "--help" ||
	{ fail "--help:"; cat "$d/out"; }
"$tool" -h >/dev/null 2>&1 && ok "-h" || fail "-h"
"$tool" >"$d/out" 2>&1
[ $? -eq 2 ] && grep -q "^usage:" "$d/out" && ok "no folder: usage, exit 2" || { fail "no folder:"; cat "$d/out"; }

[ "$fails" -eq 0 ] && echo "plot_explore: all checks passed" && exit 0
echo "plot_explore: $fails check(s) failed"
exit 1
