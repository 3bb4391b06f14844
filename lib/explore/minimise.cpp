/* Collie's minimal feature set: each dimension moved to its simplest value while the
 * anomaly persists (one already there, one step away), then the needed ones scanned
 * for the values where it holds.
 * Bounded: at most repeats (x2 for performance) runs per candidate, one candidate per
 * dimension and per value of a needed dimension, and a final check. */
#include "explore/search.h"

#include <algorithm>

namespace rp::explore {

/* One run of candidate c: does it show v's kind of anomaly? For performance, c is
 * compared with itself at the reference's value of the pinned dimension (run too). */
bool Explorer::shows(const Point &c, const Verdict &v, Outcome *shown)
{
	const Outcome o = run(c);
	if (!res_.fatal.empty())
		return false;
	Verdict got;
	if (v.kind != AnomalyKind::performance) {
		got = judge_alone(s_.search, o);
	} else if (o.status != RunStatus::invalid) {
		const auto r = static_cast<size_t>(v.ref_dim);
		Point cref = c;
		cref[r] = v.ref_point[r];
		const Outcome ref = run(cref);
		if (!res_.fatal.empty())
			return false;
		record(cref, ref, judge_alone(s_.search, ref), "minimise");
		got = judge_alone(s_.search, o);
		if (!got.anomaly() && o.status == RunStatus::ran && usable_reference(ref))
			got = judge_performance(s_.search, o, ref, cref, v.ref_dim);
	}
	record(c, o, got, "minimise");
	const bool same = got.kind == v.kind && (v.kind != AnomalyKind::counters || got.counter == v.counter);
	if (same && shown)
		*shown = o;
	return same;
}

/* Shown in search.need of search.repeats runs; stops as soon as that is decided. */
bool Explorer::persists(const Point &c, const Verdict &v, Outcome *shown)
{
	const uint32_t repeats = std::max<uint32_t>(s_.search.repeats, 1);
	const uint32_t need = std::clamp<uint32_t>(s_.search.need, 1, repeats);
	uint32_t yes = 0;
	for (uint32_t k = 0; k < repeats && res_.fatal.empty(); k++) {
		yes += shows(c, v, shown) ? 1 : 0;
		if (yes >= need)
			return true;
		if (yes + (repeats - k - 1) < need)
			return false;
	}
	return false;
}

/* The values of dimension d where the anomaly holds, the others as in cur (which
 * shows it): numbers scanned outwards from cur's value while it holds, other values
 * each tried. The reference's own value never holds (a point is not slower than
 * itself). */
std::vector<uint32_t> Explorer::holding(const Point &cur, size_t d, const Verdict &v)
{
	const Dim &dim = s_.dims[d];
	const auto n = static_cast<uint32_t>(dim.values.size());
	const bool pinned = v.kind == AnomalyKind::performance && static_cast<int>(d) == v.ref_dim;
	auto holds = [&](uint32_t j) {
		if (j == cur[d])
			return true;
		if (pinned && j == v.ref_point[d])
			return false;
		Point c = cur;
		c[d] = j;
		return persists(c, v, nullptr);
	};
	std::vector<uint32_t> vals;
	if (dim.numeric()) {
		uint32_t lo = cur[d], hi = cur[d];
		while (lo > 0 && holds(lo - 1))
			lo--;
		while (hi + 1 < n && holds(hi + 1))
			hi++;
		for (uint32_t j = lo; j <= hi; j++)
			vals.push_back(j);
	} else {
		for (uint32_t j = 0; j < n; j++)
			if (holds(j))
				vals.push_back(j);
	}
	return vals;
}

/* "size >= 8192", "batch <= 2", "qps in 4..64", "size = 1024", "verb in {send, write_imm}". */
Condition Explorer::condition(size_t d, const std::vector<uint32_t> &vals) const
{
	const Dim &dim = s_.dims[d];
	Condition c{static_cast<int>(d), "", vals};
	const size_t n = dim.values.size();
	if (vals.size() == 1) {
		c.text = dim.name + " = " + dim.values[vals[0]];
	} else if (dim.numeric()) {
		const uint32_t lo = vals.front(), hi = vals.back();
		if (lo == 0 && hi + 1 < n)
			c.text = dim.name + " <= " + dim.values[hi];
		else if (lo > 0 && hi + 1 == n)
			c.text = dim.name + " >= " + dim.values[lo];
		else
			c.text = dim.name + " in " + dim.values[lo] + ".." + dim.values[hi];
	} else {
		c.text = dim.name + " in {";
		for (size_t k = 0; k < vals.size(); k++)
			c.text += (k ? ", " : "") + dim.values[vals[k]];
		c.text += "}";
	}
	return c;
}

std::optional<Finding> Explorer::minimise(const Point &p, const Verdict &v)
{
	const bool perf = v.kind == AnomalyKind::performance;
	if (!v.anomaly() || (perf && (v.ref_dim < 0 || v.ref_point.size() != p.size())))
		return std::nullopt;
	Outcome seen;
	if (!persists(p, v, &seen))
		return std::nullopt;   // noise: not shown again
	Point cur = p;
	std::vector<bool> needed(s_.dims.size(), false);
	for (size_t d = 0; d < s_.dims.size() && res_.fatal.empty(); d++) {
		if (perf && static_cast<int>(d) == v.ref_dim) {
			needed[d] = true;   // pinned: the comparison is along it
			continue;
		}
		/* At its simplest already: needed if the anomaly goes with one step away
		 * (else an MFS could not say "inline = false"). */
		const Dim &dim = s_.dims[d];
		if (dim.values.size() < 2)
			continue;
		const bool simple = cur[d] == dim.simplest;
		const uint32_t away = dim.simplest + 1 < dim.values.size() ? dim.simplest + 1 : dim.simplest - 1;
		Point c = cur;
		c[d] = simple ? away : dim.simplest;
		needed[d] = !persists(c, v, nullptr);
		if (!simple && !needed[d])
			cur = std::move(c);
	}
	Finding f;
	f.point = p;
	f.verdict = v;
	f.minimal = cur;
	for (size_t d = 0; d < s_.dims.size() && res_.fatal.empty(); d++)
		if (needed[d])
			f.mfs.push_back(condition(d, holding(cur, d, v)));
	for (const Condition &c : f.mfs)
		f.mfs_text += (f.mfs_text.empty() ? "" : ", ") + c.text;
	/* The final check: every repeat, so that runs/shown says how reliable it is. */
	f.minimal_outcome = seen;
	const uint32_t repeats = std::max<uint32_t>(s_.search.repeats, 1);
	for (uint32_t k = 0; k < repeats && res_.fatal.empty(); k++) {
		Outcome o;
		f.runs++;
		if (shows(cur, v, &o) && f.shown++ == 0)
			f.minimal_outcome = o;
	}
	if (!res_.fatal.empty())
		return std::nullopt;
	f.id = static_cast<uint32_t>(res_.findings.size() + 1);
	res_.findings.push_back(f);
	rec_.finding(f);
	return f;
}

} // namespace rp::explore
