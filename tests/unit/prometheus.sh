#!/usr/bin/env bash
# What Prometheus and Grafana are given (docs/metrics.md), checked by Debian's promtool
# (package prometheus) with no server: docs/prometheus/rules.yml parses and its alerts
# fire on made-up series where they should and not elsewhere
# (prometheus_rules_test.yml); every query of docs/grafana/rdmapipe.json parses and
# evaluates (its $instance as Grafana's "All" makes it); the service unit shipped in
# the package passes systemd-analyze verify.
#   tests/unit/prometheus.sh BUILD/app/rdmapipe/rdmapipe
set -u
rdmapipe=$(realpath "${1:?usage: prometheus.sh RDMAPIPE}")
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
fails=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fails=$((fails + 1)); }
if ! command -v promtool >/dev/null; then
	[ -n "${CI:-}" ] && { echo "FAIL: promtool missing (tools/install-deps installs prometheus)"; exit 1; }
	echo "SKIP: promtool missing (Debian package prometheus)"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

promtool check rules "$top/docs/prometheus/rules.yml" >"$tmp/out" 2>&1 && ok "promtool check rules: $(grep -o 'SUCCESS.*' "$tmp/out")" ||
	{ bad "promtool check rules docs/prometheus/rules.yml"; cat "$tmp/out"; }
(cd "$here" && promtool test rules prometheus_rules_test.yml) >"$tmp/out" 2>&1 && ok "the alerts fire where they should (promtool test rules)" ||
	{ bad "promtool test rules prometheus_rules_test.yml"; cat "$tmp/out"; }

# The dashboard: valid JSON, every panel's query a promql_expr_test on no series (a
# query that does not parse or evaluate fails it).
python3 - "$top/docs/grafana/rdmapipe.json" "$tmp/dash_test.yml" "$top/docs/prometheus/rules.yml" <<'PY' || bad "the dashboard's JSON"
import json, sys
d = json.load(open(sys.argv[1]))
exprs = [t['expr'].replace('$instance', '.+') for p in d['panels'] for t in p['targets']]
assert len(exprs) >= 10, exprs
with open(sys.argv[2], 'w') as f:
    f.write(f"rule_files: [{sys.argv[3]}]\ntests:\n  - interval: 15s\n    input_series: []\n    promql_expr_test:\n")
    for e in exprs:
        f.write(f"      - expr: {json.dumps(e)}\n        eval_time: 1m\n        exp_samples: []\n")
print(f"{len(d['panels'])} panels, {len(exprs)} queries")
PY
promtool test rules "$tmp/dash_test.yml" >"$tmp/out" 2>&1 && ok "every query of the dashboard evaluates" ||
	{ bad "the dashboard's queries"; cat "$tmp/out"; }

# The unit, its ExecStart pointed at this build (systemd-analyze wants the command to
# exist; the man page is the package's): nothing to say, not even a warning (an
# unknown key or value is only a warning to it).
unit=$top/app/rdmapipe/rdmapipe@.service
sed "s|^ExecStart=/usr/bin/rdmapipe |ExecStart=$rdmapipe |" "$unit" >"$tmp/rdmapipe@.service"
grep -q "^ExecStart=$rdmapipe " "$tmp/rdmapipe@.service" || bad "no ExecStart=/usr/bin/rdmapipe in $unit"
if command -v systemd-analyze >/dev/null; then
	if systemd-analyze verify --man=no "$tmp/rdmapipe@.service" >"$tmp/out" 2>&1 && [ ! -s "$tmp/out" ]; then
		ok "systemd-analyze verify rdmapipe@.service: nothing to say"
	else
		bad "systemd-analyze verify rdmapipe@.service:"; cat "$tmp/out"
	fi
else
	bad "systemd-analyze missing (Debian package systemd)"
fi

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
