/* The search: draws, verdicts, the cache and the three strategies (search.h). */
#include "explore/search.h"
#include "explore/space.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace rp::explore {

namespace {

constexpr int kStartTries = 100;           // random draws for a valid, unremarkable start
constexpr uint64_t kMaxIdleVisits = 2000;  // visits with nothing new: the space is exhausted
constexpr uint64_t kProgressEvery = 10;    // runs between progress reports
constexpr int kReferenceTries = 2;         // neighbours measured for a point that has none
constexpr double kCounterBonus = 0.5;      // energy taken off for a counter at its threshold

[[gnu::format(printf, 1, 2)]] std::string fmt(const char *f, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, f);
	vsnprintf(buf, sizeof(buf), f, ap);
	va_end(ap);
	return buf;
}

/* A value one step from i: adjacent for numbers, any other otherwise (n > 1). */
uint32_t step_value(const Dim &dim, uint32_t i, Rng &rng)
{
	const auto n = static_cast<uint32_t>(dim.values.size());
	if (dim.numeric()) {
		const bool up = i == 0 || (i + 1 < n && rng.below(2) == 1);
		return up ? i + 1 : i - 1;
	}
	const auto j = static_cast<uint32_t>(rng.below(n - 1));
	return j >= i ? j + 1 : j;
}

std::vector<size_t> movable_dims(const Space &s, bool reference_only)
{
	std::vector<size_t> dims;
	for (size_t d = 0; d < s.dims.size(); d++)
		if (s.dims[d].values.size() > 1 && (!reference_only || s.dims[d].reference))
			dims.push_back(d);
	return dims;
}

} // namespace

uint64_t Rng::below(uint64_t n)
{
	if (n == 0)
		return 0;
	const uint64_t threshold = (0 - n) % n;   // 2^64 mod n: draws under it would bias
	for (;;) {
		const uint64_t x = g_();
		if (x >= threshold)
			return x % n;
	}
}

double Rng::unit()
{
	return static_cast<double>(g_() >> 11) * 0x1.0p-53;
}

Point random_point(const Space &s, Rng &rng)
{
	Point p;
	for (const Dim &d : s.dims)
		p.push_back(static_cast<uint32_t>(rng.below(d.values.size())));
	return p;
}

Point mutate(const Space &s, const Point &p, Rng &rng)
{
	Point q = p;
	const std::vector<size_t> dims = movable_dims(s, false);
	if (dims.empty())
		return q;
	const size_t d = dims[rng.below(dims.size())];
	q[d] = step_value(s.dims[d], p[d], rng);
	return q;
}

bool anneal_accept(double e_cur, double e_new, double temperature, double u)
{
	if (e_new <= e_cur)
		return true;
	if (temperature <= 0)
		return false;
	return u < std::exp(-(e_new - e_cur) / temperature);
}

bool next_grid_point(const Space &s, const std::vector<size_t> &dims, Point &p)
{
	for (size_t k = dims.size(); k-- > 0;) {
		const size_t d = dims[k];
		if (++p[d] < s.dims[d].values.size())
			return true;
		p[d] = 0;
	}
	return false;
}

uint64_t space_size(const Space &s)
{
	uint64_t n = 1;
	for (const Dim &d : s.dims) {
		if (d.values.empty())
			return 0;
		if (n > UINT64_MAX / d.values.size())
			return UINT64_MAX;
		n *= d.values.size();
	}
	return n;
}

Verdict judge_correctness(const Outcome &o)
{
	Verdict v;
	if (o.status == RunStatus::crashed || o.status == RunStatus::hung || o.status == RunStatus::host_hung) {
		v.kind = AnomalyKind::correctness;
		v.why = run_status_name(o.status);   // the runner's failure says how (a signal, the timeout)
		if (!o.failure.empty())
			v.why += ": " + o.failure;
	} else if (o.status == RunStatus::ran && !o.pass) {
		v.kind = AnomalyKind::correctness;
		v.why = o.failure.empty() ? fmt("exit status %d", o.exit_code) : o.failure;
	}
	return v;
}

double per_message(const Outcome &o, const std::string &counter)
{
	for (const auto &[name, delta] : o.counters)
		if (name == counter)
			return static_cast<double>(delta) / static_cast<double>(std::max<uint64_t>(o.messages, 1));
	return 0;
}

Verdict judge_counters(const SearchConf &c, const Outcome &o)
{
	Verdict v;
	if (o.status != RunStatus::ran)
		return v;
	for (const auto &[name, threshold] : c.counter_flags) {
		const double x = per_message(o, name);
		if (x > threshold) {
			v.kind = AnomalyKind::counters;
			v.counter = name;
			v.figure = x;
			v.reference = threshold;
			v.why = fmt("%s %.3g per message > %.3g", name.c_str(), x, threshold);
			return v;
		}
	}
	return v;
}

Verdict judge_alone(const SearchConf &c, const Outcome &o)
{
	Verdict v = judge_correctness(o);
	return v.anomaly() ? v : judge_counters(c, o);
}

double relative_figure(const Outcome &o, const Outcome &ref)
{
	double rel = ref.rate > 0 ? o.rate / ref.rate : HUGE_VAL;
	if (ref.gbps > 0)
		rel = std::max(rel, o.gbps / ref.gbps);
	return rel;
}

bool usable_reference(const Outcome &o)
{
	return o.status == RunStatus::ran && o.pass && o.rate > 0;
}

Verdict judge_performance(const SearchConf &c, const Outcome &o, const Outcome &ref,
	const Point &ref_point, int ref_dim)
{
	Verdict v;
	v.figure = o.rate;
	v.reference = ref.rate;
	v.ref_point = ref_point;
	v.ref_dim = ref_dim;
	const double rel = relative_figure(o, ref);
	if (rel < c.perf_flag) {
		v.kind = AnomalyKind::performance;
		v.why = fmt("%.3gx its reference (%.4g vs %.4g msg/s, %.3g vs %.3g Gbit/s)",
			rel, o.rate, ref.rate, o.gbps, ref.gbps);
	}
	return v;
}

bool paced(const Space &s, const Point &p)
{
	for (size_t d = 0; d < s.dims.size() && d < p.size(); d++)
		if (setting_paces(s.dims[d].name) && atof(s.dims[d].values[p[d]].c_str()) > 0)
			return true;
	for (const auto &[setting, value] : s.fixed)
		if (setting_paces(setting) && atof(value.c_str()) > 0)
			return true;
	return false;
}

std::vector<std::pair<Point, int>> reference_neighbours(const Space &s, const Point &p)
{
	std::vector<std::pair<Point, int>> out;
	if (paced(s, p))
		return out;
	for (size_t d : movable_dims(s, true))
		for (uint32_t j = 0; j < s.dims[d].values.size(); j++) {
			if (j == p[d])
				continue;
			Point q = p;
			q[d] = j;
			out.emplace_back(q, static_cast<int>(d));
		}
	return out;
}

Verdict judge(const Space &s, const Point &p, const Outcome &o, const Lookup &lookup)
{
	Verdict v = judge_alone(s.search, o);
	if (v.anomaly() || o.status != RunStatus::ran)
		return v;
	const Outcome *best = nullptr;
	std::pair<Point, int> best_n;
	double best_rel = HUGE_VAL;
	for (auto &n : reference_neighbours(s, p)) {
		const Outcome *r = lookup(n.first);
		if (!r || !usable_reference(*r))
			continue;
		const double rel = relative_figure(o, *r);
		if (rel < best_rel) {
			best_rel = rel;
			best = r;
			best_n = std::move(n);
		}
	}
	if (!best)
		return v;
	v = judge_performance(s.search, o, *best, best_n.first, best_n.second);
	if (v.anomaly()) {
		const auto d = static_cast<size_t>(best_n.second);
		v.why += ", neighbour " + s.dims[d].name + "=" + s.dims[d].values[best_n.first[d]];
	}
	return v;
}

Point bare_point(const Space &s, const Point &p)
{
	Point q = simplest_point(s);
	for (size_t d = 0; d < s.dims.size() && d < p.size(); d++)
		if (setting_bare_key(s.dims[d].name))
			q[d] = p[d];
	return q;
}

std::vector<Point> bare_grid(const Space &s)
{
	std::vector<size_t> keys;
	for (size_t d = 0; d < s.dims.size(); d++)
		if (setting_bare_key(s.dims[d].name))
			keys.push_back(d);
	std::vector<Point> out;
	Point p = simplest_point(s);
	for (size_t d : keys)
		p[d] = 0;
	do
		out.push_back(p);
	while (next_grid_point(s, keys, p));
	return out;
}

std::string bare_text(const Space &s, const Point &p)
{
	std::string t;
	for (size_t d = 0; d < s.dims.size() && d < p.size(); d++)
		if (setting_bare_key(s.dims[d].name))
			t += (t.empty() ? "" : " ") + s.dims[d].values[p[d]] + (s.dims[d].name == "size" ? " B" : "");
	return t.empty() ? "the simplest point" : t;
}

std::string rate_text(double r)
{
	std::string digits = std::to_string(static_cast<unsigned long long>(std::llround(std::max(r, 0.0))));
	for (size_t at = digits.size(); at > 3; at -= 3)
		digits.insert(at - 3, ",");
	return digits;
}

Verdict judge_bare(const Space &s, const Point &p, const Outcome &o, const Outcome &bare)
{
	Verdict v;
	v.figure = o.rate;
	v.reference = bare.rate;
	v.ref_point = bare_point(s, p);
	v.bare = true;
	const double rel = relative_figure(o, bare);
	if (rel < s.search.bare_flag) {
		v.kind = AnomalyKind::performance;
		v.why = fmt("%.2gx bare verbs (%s: %s/s)", rel, bare_text(s, v.ref_point).c_str(), rate_text(bare.rate).c_str());
	}
	return v;
}

double anneal_energy(const SearchConf &c, const Outcome &o, const Verdict &v, const Outcome *ref,
	const Outcome *bare)
{
	if (v.anomaly())
		return 0;
	double e = ref ? std::min(1.0, relative_figure(o, *ref)) : 1.0;
	if (bare)   // scaled so that bare_flag weighs as perf_flag: each ratio against its own flag
		e = std::min(e, relative_figure(o, *bare) * c.perf_flag / c.bare_flag);
	double near = 0;
	for (const auto &[name, threshold] : c.counter_flags)
		if (threshold > 0)
			near = std::max(near, std::min(1.0, per_message(o, name) / threshold));
	return std::max(0.0, e - kCounterBonus * near);
}

bool contains_mfs(const Point &p, const std::vector<Condition> &mfs)
{
	for (const Condition &c : mfs) {
		const auto d = static_cast<size_t>(c.dim);
		if (c.dim < 0 || d >= p.size() ||
		    std::find(c.values.begin(), c.values.end(), p[d]) == c.values.end())
			return false;
	}
	return true;
}

Explorer::Explorer(const Space &s, Runner &r, Recorder &rec, std::function<double()> now_s)
	: s_(s), runner_(r), rec_(rec), now_(std::move(now_s)), rng_(s.search.seed)
{
	start_s_ = now_();
}

SearchResult Explorer::search()
{
	start_s_ = now_();
	idle_ = 0;
	switch (s_.search.strategy) {
	case Strategy::anneal: anneal(); break;
	case Strategy::random: random(); break;
	case Strategy::grid: grid(); break;
	}
	res_.stopped_after = enough_found();
	rec_.progress(res_.points, res_.findings.size(), now_() - start_s_, budget_left_s());
	return res_;
}

bool Explorer::enough_found() const
{
	return s_.search.stop_after > 0 && res_.findings.size() >= s_.search.stop_after;
}

/* Checked between points only: a minimisation that started finishes (and is recorded)
 * before the search stops, whatever stopped it. */
bool Explorer::out_of_budget() const
{
	const SearchConf &c = s_.search;
	if (!res_.fatal.empty() || idle_ >= kMaxIdleVisits || enough_found())
		return true;
	if (c.budget_s > 0 && now_() - start_s_ >= c.budget_s)
		return true;
	return c.budget_points > 0 && res_.points >= c.budget_points;
}

double Explorer::budget_left_s() const
{
	const SearchConf &c = s_.search;
	const double elapsed = now_() - start_s_;
	if (c.budget_s > 0)
		return std::max(0.0, c.budget_s - elapsed);
	if (c.budget_points > 0 && res_.points > 0) {
		const double left = static_cast<double>(c.budget_points) - static_cast<double>(res_.points);
		return std::max(0.0, left * elapsed / static_cast<double>(res_.points));
	}
	return -1;   // unknown
}

/* Every run goes through here: counted, and the runner's fatal reason stops all. */
Outcome Explorer::run(const Point &p)
{
	Outcome o = runner_.run(p);
	if (std::string why = runner_.fatal(); !why.empty()) {
		res_.fatal = why;
		return o;
	}
	idle_ = 0;
	switch (o.status) {
	case RunStatus::invalid: res_.invalid++; return o;
	case RunStatus::crashed: res_.crashed++; break;
	case RunStatus::hung: res_.hung++; break;
	case RunStatus::host_hung: res_.hung++; res_.host_hung++; break;
	case RunStatus::ran: break;
	}
	if (++res_.points % kProgressEvery == 0)
		rec_.progress(res_.points, res_.findings.size(), now_() - start_s_, budget_left_s());
	return o;
}

void Explorer::record(const Point &p, const Outcome &o, const Verdict &v, const char *phase)
{
	rec_.point(p, o, v, phase);
}

const Outcome *Explorer::lookup(const Point &p) const
{
	auto it = cache_.find(point_key(p));
	return it == cache_.end() ? nullptr : &it->second.outcome;
}

bool Explorer::known(const Point &p) const
{
	return std::any_of(res_.findings.begin(), res_.findings.end(),
		[&](const Finding &f) { return contains_mfs(p, f.mfs); });
}

/* A point of the search: skipped when a known MFS covers it, measured once, judged
 * once, and minimised when it is an anomaly. */
Explorer::Visit Explorer::visit(const Point &p)
{
	if (known(p)) {
		res_.skipped++;
		idle_++;
		return {};
	}
	const std::string key = point_key(p);
	auto it = cache_.find(key);
	const bool fresh = it == cache_.end();
	if (fresh) {
		Outcome o = run(p);
		if (!res_.fatal.empty())
			return {};
		it = cache_.emplace(key, Entry{std::move(o), {}, false, false, 1}).first;
	} else {
		res_.cached++;
		idle_++;
	}
	Entry &e = it->second;   // unordered_map: stays valid as references join the cache
	if (e.outcome.status == RunStatus::invalid) {
		if (fresh)
			record(p, e.outcome, {}, "search");
		return {};
	}
	if (!e.judged) {
		e.verdict = judge_measuring(p, e.outcome);
		if (!res_.fatal.empty())
			return {};
		e.judged = true;
		e.energy = anneal_energy(s_.search, e.outcome, e.verdict,
			e.verdict.ref_dim >= 0 ? lookup(e.verdict.ref_point) : nullptr, bare_of(p));
		if (fresh)
			record(p, e.outcome, e.verdict, "search");
		e.anomaly = e.verdict.anomaly() && minimise(p, e.verdict).has_value();
	}
	return {true, e.anomaly, e.energy};
}

const Outcome *Explorer::bare_of(const Point &p) const
{
	if (paced(s_, p))
		return nullptr;
	auto it = bare_.find(bare_point(s_, p));
	return it != bare_.end() && usable_reference(it->second) ? &it->second : nullptr;
}

/* Performance needs a measured neighbour: with none yet, measure one or two. A point
 * its neighbours do not flag is then judged against plain verbs (the neighbours'
 * verdict first: it names the setting that costs). */
Verdict Explorer::judge_measuring(const Point &p, const Outcome &o)
{
	const Lookup look = [this](const Point &q) { return lookup(q); };
	Verdict v = judge(s_, p, o, look);
	if (v.anomaly() || o.status != RunStatus::ran)
		return v;
	if (v.ref_dim < 0) {
		for (int k = 0; k < kReferenceTries; k++)
			if (measure_reference(p) || !res_.fatal.empty())
				break;
		if (!res_.fatal.empty())
			return v;
		v = judge(s_, p, o, look);
		if (v.anomaly())
			return v;
	}
	const Outcome *bare = bare_of(p);
	if (bare == nullptr)
		return v;
	Verdict b = judge_bare(s_, p, o, *bare);
	return b.anomaly() ? b : v;
}

/* The policy: one step along a random reference dimension (adjacent value for
 * numbers), as a mutation would go; true when it gave a usable reference. */
bool Explorer::measure_reference(const Point &p)
{
	if (paced(s_, p))
		return false;
	const std::vector<size_t> dims = movable_dims(s_, true);
	if (dims.empty())
		return false;
	const size_t d = dims[rng_.below(dims.size())];
	Point q = p;
	q[d] = step_value(s_.dims[d], p[d], rng_);
	const std::string key = point_key(q);
	if (known(q) || cache_.count(key))   // measured already: judge found it unusable
		return false;
	Outcome o = run(q);
	if (!res_.fatal.empty())
		return false;
	record(q, o, judge_alone(s_.search, o), "reference");
	const bool usable = usable_reference(o);
	cache_.emplace(key, Entry{std::move(o), {}, false, false, 1});
	return usable;
}

std::optional<Explorer::Current> Explorer::start_point()
{
	for (int k = 0; k < kStartTries && !out_of_budget(); k++) {
		Point p = random_point(s_, rng_);
		const Visit v = visit(p);
		if (v.usable && !v.anomaly)
			return Current{std::move(p), v.energy};
	}
	return std::nullopt;
}

/* Collie's simulated annealing. The temperature decays from each (re)start, so that
 * every restart explores before it settles. */
void Explorer::anneal()
{
	const SearchConf &c = s_.search;
	std::optional<Current> cur;
	uint64_t step = 0;
	while (!out_of_budget()) {
		if (!cur || (c.restart_every > 0 && step >= c.restart_every)) {
			cur = start_point();
			step = 0;
			continue;
		}
		Point cand = mutate(s_, cur->p, rng_);
		const Visit v = visit(cand);
		const double t = c.temperature * std::pow(c.cooling, static_cast<double>(step));
		const double u = rng_.unit();
		step++;
		if (v.anomaly)
			cur.reset();   // restart after an anomaly
		else if (v.usable && anneal_accept(cur->energy, v.energy, t, u))
			cur = Current{std::move(cand), v.energy};
	}
}

void Explorer::random()
{
	while (!out_of_budget())
		visit(random_point(s_, rng_));
}

void Explorer::grid()
{
	const std::vector<size_t> dims = movable_dims(s_, false);   // a one-value one has nothing to step
	Point p(s_.dims.size(), 0);
	do {
		if (out_of_budget())
			return;
		visit(p);
	} while (next_grid_point(s_, dims, p));
}

} // namespace rp::explore
