/* Collie's minimal feature set: each dimension moved to its simplest value while the
 * anomaly persists (one already there, one step away), then the needed ones scanned
 * for the values where it holds.
 * Bounded: at most repeats (x2 for performance) runs per candidate, one candidate per
 * dimension and per value of a needed dimension, and a final check. */
#include "explore/search.h"

#include <algorithm>

namespace rp::explore {

/* One run of candidate c: does it show v's kind of anomaly? For performance, c is
 * compared with itself at the reference's value of the pinned dimension (run too), or,
 * for a bare-flagged finding, with the bare reference of c's own grid point. */
Explorer::Shown Explorer::shows(const Point &c, const Verdict &v, Outcome *shown)
{
	const Outcome o = run(c);
	if (!res_.fatal.empty())
		return Shown::no;
	Verdict got;
	bool invalid = o.status == RunStatus::invalid;
	if (v.kind != AnomalyKind::performance) {
		got = judge_alone(s_.search, o);
	} else if (v.bare) {
		/* Against the bare reference of c's own verb, transport and size: none (paced,
		 * or its grid point did not run) tells nothing. */
		got = judge_alone(s_.search, o);
		const Outcome *bare = bare_of(c);
		if (!got.anomaly() && o.status == RunStatus::ran)
			got = bare ? judge_bare(s_, c, o, *bare) : got;
		invalid |= !got.anomaly() && o.status == RunStatus::ran && bare == nullptr;
	} else if (o.status != RunStatus::invalid) {
		const auto r = static_cast<size_t>(v.ref_dim);
		Point cref = c;
		cref[r] = v.ref_point[r];
		const Outcome ref = run(cref);
		if (!res_.fatal.empty())
			return Shown::no;
		record(cref, ref, judge_alone(s_.search, ref), "minimise");
		invalid |= ref.status == RunStatus::invalid;
		got = judge_alone(s_.search, o);
		if (!got.anomaly() && o.status == RunStatus::ran && usable_reference(ref))
			got = judge_performance(s_.search, o, ref, cref, v.ref_dim);
	}
	record(c, o, got, "minimise");
	const bool same = got.kind == v.kind && (v.kind != AnomalyKind::counters || got.counter == v.counter) &&
			  (v.kind != AnomalyKind::performance || got.bare == v.bare);
	if (same && shown)
		*shown = o;
	return same ? Shown::yes : invalid ? Shown::invalid : Shown::no;
}

/* Shown in search.need of search.repeats runs; stops as soon as that is decided. An
 * invalid candidate is so at once (the validator's verdict does not change). */
Explorer::Shown Explorer::persists(const Point &c, const Verdict &v, Outcome *shown)
{
	const uint32_t repeats = std::max<uint32_t>(s_.search.repeats, 1);
	const uint32_t need = std::clamp<uint32_t>(s_.search.need, 1, repeats);
	uint32_t yes = 0;
	for (uint32_t k = 0; k < repeats && res_.fatal.empty(); k++) {
		const Shown got = shows(c, v, shown);
		if (got == Shown::invalid && k == 0)
			return Shown::invalid;
		yes += got == Shown::yes ? 1 : 0;
		if (yes >= need)
			return Shown::yes;
		if (yes + (repeats - k - 1) < need)
			return Shown::no;
	}
	return Shown::no;
}

/* Is dimension d needed? Tried at the values nearest its simplest first (the simplest
 * itself, or one step away when cur is there already), past invalid ones: the first
 * valid candidate decides. A dimension no other value of which makes a valid point
 * with the rest is implied by them, not needed. Moves *cur nearer the simplest where
 * the anomaly stays. */
bool Explorer::needed(Point *cur, size_t d, const Verdict &v)
{
	const Dim &dim = s_.dims[d];
	const auto dist = [&](uint32_t j) { return j > dim.simplest ? j - dim.simplest : dim.simplest - j; };
	std::vector<uint32_t> order;
	for (uint32_t j = 0; j < dim.values.size(); j++)
		if (j != (*cur)[d])
			order.push_back(j);
	std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return dist(a) < dist(b); });
	for (uint32_t j : order) {
		Point c = *cur;
		c[d] = j;
		const Shown got = persists(c, v, nullptr);
		if (got == Shown::invalid)
			continue;
		if (got == Shown::yes && dist(j) < dist((*cur)[d]))
			*cur = std::move(c);
		return got == Shown::no;
	}
	return false;
}

/* The values of dimension d where the anomaly holds, the others as in cur (which
 * shows it): numbers scanned outwards from cur's value while it holds (past values
 * that make no valid point), other values each tried. The reference's own value never
 * holds (a point is not slower than itself). */
Explorer::Holding Explorer::holding(const Point &cur, size_t d, const Verdict &v)
{
	const Dim &dim = s_.dims[d];
	const auto n = static_cast<int64_t>(dim.values.size());
	const bool pinned = v.kind == AnomalyKind::performance && static_cast<int>(d) == v.ref_dim;
	auto holds = [&](int64_t j) {
		if (j == cur[d])
			return Shown::yes;
		if (pinned && j == v.ref_point[d])
			return Shown::no;
		Point c = cur;
		c[d] = static_cast<uint32_t>(j);
		return persists(c, v, nullptr);
	};
	Holding h;
	if (!dim.numeric()) {
		for (int64_t j = 0; j < n; j++)
			if (holds(j) == Shown::yes)
				h.values.push_back(static_cast<uint32_t>(j));
		return h;
	}
	h.to_first = h.to_last = true;
	for (int step : {-1, 1})
		for (int64_t j = static_cast<int64_t>(cur[d]) + step; j >= 0 && j < n; j += step) {
			const Shown got = holds(j);
			if (got == Shown::no) {
				(step < 0 ? h.to_first : h.to_last) = false;
				break;
			}
			if (got == Shown::yes)
				h.values.push_back(static_cast<uint32_t>(j));
		}
	h.values.push_back(cur[d]);
	std::sort(h.values.begin(), h.values.end());
	return h;
}

/* "size >= 8192", "batch <= 2", "qps in 4..64", "size = 1024", "verb in {send, write_imm}". */
Condition Explorer::condition(size_t d, const Holding &h) const
{
	const Dim &dim = s_.dims[d];
	const std::vector<uint32_t> &vals = h.values;
	Condition c{static_cast<int>(d), "", vals};
	if (dim.numeric()) {
		/* Up to an end of the dimension (its last value, or only invalid ones past):
		 * a bound, even where one value holds ("size >= 8192" at the top). */
		const uint32_t lo = vals.front(), hi = vals.back();
		if (h.to_first && !h.to_last)
			c.text = dim.name + " <= " + dim.values[hi];
		else if (h.to_last && !h.to_first)
			c.text = dim.name + " >= " + dim.values[lo];
		else if (lo == hi)
			c.text = dim.name + " = " + dim.values[lo];
		else
			c.text = dim.name + " in " + dim.values[lo] + ".." + dim.values[hi];
	} else if (vals.size() == 1) {
		c.text = dim.name + " = " + dim.values[vals[0]];
	} else {
		c.text = dim.name + " in {";
		for (size_t k = 0; k < vals.size(); k++)
			c.text += (k ? ", " : "") + dim.values[vals[k]];
		c.text += "}";
	}
	return c;
}

/* Every repeat on the minimal point, so that runs/shown says how reliable it is. */
void Explorer::final_check(Finding *f, const Verdict &v)
{
	const uint32_t repeats = std::max<uint32_t>(s_.search.repeats, 1);
	f->runs = f->shown = 0;
	for (uint32_t k = 0; k < repeats && res_.fatal.empty(); k++) {
		Outcome o;
		f->runs++;
		if (shows(f->minimal, v, &o) == Shown::yes && f->shown++ == 0)
			f->minimal_outcome = o;
	}
}

/* The reduced point does not show it (an anomaly that comes and goes misled the
 * steps): the finding stays the point where it was found, every setting a condition
 * (so that only that point is skipped), and says so. */
void Explorer::keep_found_point(Finding *f, const Verdict &v, const Outcome &seen)
{
	const std::string reduced = point_text(s_, f->minimal) + " showed it in " + std::to_string(f->shown) + " of " +
				    std::to_string(f->runs) + " runs";
	f->minimal = f->point;
	f->minimal_outcome = seen;
	f->mfs.clear();
	for (size_t d = 0; d < s_.dims.size(); d++)
		f->mfs.push_back({static_cast<int>(d), s_.dims[d].name + " = " + s_.dims[d].values[f->point[d]], {f->point[d]}});
	final_check(f, v);
	f->mfs_text = "not minimised: only the point found shows it (" + reduced + ")";
}

std::optional<Finding> Explorer::minimise(const Point &p, const Verdict &v)
{
	const bool perf = v.kind == AnomalyKind::performance;
	if (!v.anomaly() || (perf && ((v.ref_dim < 0 && !v.bare) || v.ref_point.size() != p.size())))
		return std::nullopt;
	Outcome seen;
	if (persists(p, v, &seen) != Shown::yes)
		return std::nullopt;   // noise: not shown again
	Point cur = p;
	std::vector<bool> need_dim(s_.dims.size(), false);
	for (size_t d = 0; d < s_.dims.size() && res_.fatal.empty(); d++) {
		if (perf && static_cast<int>(d) == v.ref_dim) {
			need_dim[d] = true;   // pinned: the comparison is along it
			continue;
		}
		/* At its simplest already: needed if the anomaly goes with one step away
		 * (else an MFS could not say "inline = false"). */
		need_dim[d] = needed(&cur, d, v);
	}
	Finding f;
	f.point = p;
	f.verdict = v;
	f.minimal = cur;
	for (size_t d = 0; d < s_.dims.size() && res_.fatal.empty(); d++) {
		if (!need_dim[d])
			continue;
		const Holding h = holding(cur, d, v);
		/* Every value shows it after all (an anomaly that comes and goes was missed
		 * once): no condition on d. */
		const bool all = s_.dims[d].numeric() ? h.to_first && h.to_last : h.values.size() == s_.dims[d].values.size();
		if (!all)
			f.mfs.push_back(condition(d, h));
	}
	for (const Condition &c : f.mfs)
		f.mfs_text += (f.mfs_text.empty() ? "" : ", ") + c.text;
	f.minimal_outcome = seen;
	final_check(&f, v);
	if (f.shown < std::clamp<uint32_t>(s_.search.need, 1, f.runs) && res_.fatal.empty())
		keep_found_point(&f, v, seen);
	if (!res_.fatal.empty())
		return std::nullopt;
	if (v.bare) {   // repro.c's reference: the grid point of the minimal point's own verb, transport and size
		f.verdict.ref_point = bare_point(s_, f.minimal);
		if (const Outcome *bare = bare_of(f.minimal))
			f.verdict.reference = bare->rate;
	}
	f.id = static_cast<uint32_t>(res_.findings.size() + 1);
	res_.findings.push_back(f);
	rec_.finding(f);
	return f;
}

} // namespace rp::explore
