/* rdmapipe-explore's search against a faked runner whose outcome is a function of the
 * point, with anomalies planted in known corners: draws, annealing, verdicts, the cache,
 * minimisation to exactly the planted settings, noise, budgets and the fatal stop. */
#include "explore/search.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cmocka_cpp.h"   // last: it defines fail()

namespace {

using namespace rp::explore;

enum : size_t { kSize, kQps, kBatch, kInline, kVerb };

Dim numeric_dim(const char *name, std::vector<double> nums, uint32_t simplest)
{
	Dim d;
	d.name = name;
	for (double x : nums)
		d.values.push_back(std::to_string(static_cast<int>(x)));
	d.numbers = std::move(nums);
	d.simplest = simplest;
	return d;
}

Dim text_dim(const char *name, std::vector<std::string> values, uint32_t simplest)
{
	Dim d;
	d.name = name;
	d.values = std::move(values);
	d.simplest = simplest;
	return d;
}

Space make_space(Strategy strategy = Strategy::anneal, uint64_t budget_points = 600)
{
	Space s;
	s.dims = {
		numeric_dim("size", {64, 1024, 4096, 8192, 16384}, 0),
		numeric_dim("qps", {1, 2, 4, 8}, 0),
		numeric_dim("batch", {1, 2, 4, 8, 32}, 4),
		text_dim("inline", {"false", "true"}, 0),
		text_dim("verb", {"write_imm", "send"}, 0),
	};
	s.search.strategy = strategy;
	s.search.seed = 1;
	s.search.budget_s = 0;
	s.search.budget_points = budget_points;
	s.search.counter_flags = {{"out_of_sequence", 0.1}};
	return s;
}

Point pt(uint32_t size, uint32_t qps, uint32_t batch, uint32_t inl, uint32_t verb)
{
	return {size, qps, batch, inl, verb};
}

struct Plant {
	bool correctness = true;   // "payload mismatch" when size >= 8192 and qps >= 4
	bool perf = true;          // 1000 instead of 20000 msg/s when batch <= 2 and inline
	bool counters = true;      // out_of_sequence per message when send and size >= 4096
	bool invalid = true;       // qps = 8 with batch = 1
	bool noisy = false;        // the correctness anomaly shown in 2 runs of every 3
	bool flaky = false;        // a failure when send and qps = 2, in 1 run of every 3
	bool inline_limit = false; // no valid point inlines 1024 bytes or more (as a device's limit)
	bool late_send = false;    // the correctness anomaly hides in a send point's first 3 runs
	bool fading = false;       // a failure at qps 8, in each point's first 2 runs only
};

class FakeRunner : public Runner {
public:
	FakeRunner(const Space &s, Plant plant, double *clock = nullptr)
		: s_(s), plant_(plant), clock_(clock) {}

	Outcome run(const Point &p) override
	{
		const int n = calls[point_key(p)]++;
		total++;
		if (clock_)
			*clock_ += 1;
		if (fatal_at > 0 && total >= fatal_at)
			fatal_ = "no device rxe0";
		return outcome(p, n);
	}
	std::string fatal() const override { return fatal_; }

	/* The point's n-th run (from 0). */
	Outcome outcome(const Point &p, int n) const
	{
		const double size = s_.dims[kSize].numbers[p[kSize]];
		const double qps = s_.dims[kQps].numbers[p[kQps]];
		const double batch = s_.dims[kBatch].numbers[p[kBatch]];
		const bool inl = s_.dims[kInline].values[p[kInline]] == "true";
		const bool send = s_.dims[kVerb].values[p[kVerb]] == "send";
		Outcome o;
		if ((plant_.invalid && qps == 8 && batch == 1) || (plant_.inline_limit && inl && size >= 1024)) {
			o.status = RunStatus::invalid;
			return o;
		}
		o.rate = plant_.perf && batch <= 2 && inl ? 1000 : 20000;
		o.gbps = o.rate * size * 8 / 1e9;
		o.messages = static_cast<uint64_t>(o.rate);
		const bool corrupt = plant_.correctness && size >= 8192 && qps >= 4 && (!plant_.noisy || n % 3 != 2) &&
				     !(plant_.late_send && send && n < 3);
		const bool flaky = (plant_.flaky && send && qps == 2 && n % 3 == 0) ||
				   (plant_.fading && qps == 8 && n < 2);
		if (corrupt || flaky) {
			o.pass = false;
			o.exit_code = 1;
			o.failure = corrupt ? "payload mismatch at message 7" : "flaky completion error";
		}
		if (plant_.counters && send && size >= 4096)
			o.counters = {{"out_of_sequence", o.messages}};
		return o;
	}

	std::map<std::string, int> calls;
	int total = 0;
	int fatal_at = 0;   // > 0: the runner cannot go on from this call

private:
	const Space &s_;
	Plant plant_;
	double *clock_;
	std::string fatal_;
};

struct Log : Recorder {
	struct Rec {
		Point p;
		Outcome o;
		Verdict v;
		std::string phase;
		size_t findings_before;
	};
	void point(const Point &p, const Outcome &o, const Verdict &v, const char *phase) override
	{
		points.push_back({p, o, v, phase, findings.size()});
	}
	void finding(const Finding &f) override { findings.push_back(f); }
	void progress(uint64_t, uint64_t, double, double) override { progress_calls++; }

	std::vector<Rec> points;
	std::vector<Finding> findings;
	int progress_calls = 0;
};

/* A search with the fake, on a fake clock (one second per run). */
struct Rig {
	explicit Rig(Space space, Plant plant = {})
		: s(std::move(space)), runner(s, plant, &clock), ex(s, runner, log, [this] { return clock; }) {}
	Space s;
	double clock = 0;
	FakeRunner runner;
	Log log;
	Explorer ex;
};

const Finding *find_mfs(const std::vector<Finding> &fs, const std::string &text)
{
	for (const Finding &f : fs)
		if (f.mfs_text == text)
			return &f;
	return nullptr;
}

void rng_is_portable(void **)
{
	Rng r(5489);   // the standard's check: mt19937_64's 10000th output from its default seed
	for (int k = 0; k < 9999; k++)
		r.next();
	assert_true(r.next() == 9981545732273789042ULL);
	Rng a(3);
	int counts[6] = {};
	for (int k = 0; k < 60000; k++) {
		const uint64_t x = a.below(6);
		assert_true(x < 6);
		counts[x]++;
		const double u = a.unit();
		assert_true(u >= 0 && u < 1);
	}
	for (int c : counts)
		assert_true(c > 9500 && c < 10500);
	assert_int_equal(a.below(1), 0);
	assert_int_equal(a.below(0), 0);
}

void mutation_changes_one_dimension(void **)
{
	const Space s = make_space();
	Rng rng(9);
	std::set<size_t> moved;
	for (int k = 0; k < 5000; k++) {
		const Point p = random_point(s, rng);
		const Point q = mutate(s, p, rng);
		assert_int_equal(q.size(), p.size());
		int changed = 0;
		for (size_t d = 0; d < p.size(); d++) {
			assert_true(q[d] < s.dims[d].values.size());
			if (q[d] == p[d])
				continue;
			changed++;
			moved.insert(d);
			if (s.dims[d].numeric())   // to an adjacent value
				assert_int_equal(std::abs(static_cast<int>(q[d]) - static_cast<int>(p[d])), 1);
		}
		assert_int_equal(changed, 1);
	}
	assert_int_equal(moved.size(), s.dims.size());
}

void anneal_acceptance(void **)
{
	assert_true(anneal_accept(0.5, 0.4, 0.3, 0.999999));   // better: always
	assert_true(anneal_accept(0.5, 0.5, 0.0, 0.999999));   // equal: always
	const double p = std::exp(-(0.8 - 0.5) / 0.3);          // worse: e^-1, 0.368
	assert_true(anneal_accept(0.5, 0.8, 0.3, p - 0.001));
	assert_false(anneal_accept(0.5, 0.8, 0.3, p + 0.001));
	assert_false(anneal_accept(0.5, 0.8, 0.0, 0.0));        // frozen: never worse
	Rng rng(4);
	int yes = 0;
	for (int k = 0; k < 100000; k++)
		yes += anneal_accept(0.5, 0.8, 0.3, rng.unit()) ? 1 : 0;
	assert_true(std::fabs(yes / 100000.0 - p) < 0.01);
}

std::vector<std::string> sequence(uint64_t seed)
{
	Space s = make_space(Strategy::anneal, 200);
	s.search.seed = seed;
	Rig rig(s);
	rig.ex.search();
	std::vector<std::string> seq;
	for (const auto &r : rig.log.points)
		seq.push_back(r.phase + ":" + point_key(r.p));
	return seq;
}

void seed_makes_the_sequence(void **)
{
	const std::vector<std::string> a = sequence(7), b = sequence(7), c = sequence(8);
	assert_true(a.size() > 100);
	assert_true(a == b);
	assert_true(a != c);
}

void grid_visits_every_point_once(void **)
{
	Plant clean{false, false, false, true};
	Rig rig(make_space(Strategy::grid, 0), clean);
	const SearchResult r = rig.ex.search();
	assert_int_equal(rig.runner.calls.size(), space_size(rig.s));
	for (const auto &[key, n] : rig.runner.calls)
		assert_int_equal(n, 1);
	assert_int_equal(r.invalid, 20);   // qps 8 x batch 1: 5 sizes x 2 inline x 2 verbs
	assert_int_equal(r.points + r.invalid, 400);
	assert_true(r.findings.empty());
	assert_true(r.fatal.empty());
	assert_true(rig.log.progress_calls > 0);
}

void cache_answers_revisits(void **)
{
	Plant clean{false, false, false, true};
	Rig rig(make_space(Strategy::anneal, 150), clean);
	const SearchResult r = rig.ex.search();
	assert_true(r.cached > 0);
	assert_true(r.points >= 150);
	for (const auto &[key, n] : rig.runner.calls)
		assert_int_equal(n, 1);   // never re-run in the search phase
	for (const auto &rec : rig.log.points)
		assert_true(rec.phase == "search" || rec.phase == "reference");
}

void verdict_correctness(void **)
{
	Outcome o;
	assert_false(judge_correctness(o).anomaly());
	o.pass = false;
	o.failure = "payload mismatch at message 7";
	Verdict v = judge_correctness(o);
	assert_int_equal(v.kind, AnomalyKind::correctness);
	assert_string_equal(v.why.c_str(), "payload mismatch at message 7");
	o.failure.clear();
	o.exit_code = 3;
	assert_string_equal(judge_correctness(o).why.c_str(), "exit status 3");
	o = {};
	o.status = RunStatus::crashed;
	o.failure = "killed by Segmentation fault";
	assert_string_equal(judge_correctness(o).why.c_str(), "crashed: killed by Segmentation fault");
	o.status = RunStatus::hung;
	assert_int_equal(judge_correctness(o).kind, AnomalyKind::correctness);
	o = {};
	o.status = RunStatus::invalid;
	o.pass = false;
	assert_false(judge_correctness(o).anomaly());   // never run: never judged
}

void verdict_counters(void **)
{
	SearchConf c;
	c.counter_flags = {{"rnr", 0.1}, {"out_of_sequence", 0.01}};
	Outcome o;
	o.messages = 1000;
	o.counters = {{"rnr", 100}, {"out_of_sequence", 5}};   // 0.1 and 0.005: at or under
	assert_false(judge_counters(c, o).anomaly());
	o.counters = {{"rnr", 101}};
	Verdict v = judge_counters(c, o);
	assert_int_equal(v.kind, AnomalyKind::counters);
	assert_string_equal(v.counter.c_str(), "rnr");
	assert_true(std::fabs(v.figure - 0.101) < 1e-12 && v.reference == 0.1);
	o.messages = 0;   // per max(messages, 1)
	o.counters = {{"out_of_sequence", 1}};
	assert_string_equal(judge_counters(c, o).counter.c_str(), "out_of_sequence");
}

Outcome perf_outcome(double rate, double gbps)
{
	Outcome o;
	o.rate = rate;
	o.gbps = gbps;
	o.messages = static_cast<uint64_t>(rate);
	return o;
}

void verdict_performance(void **)
{
	SearchConf c;   // perf_flag 0.5
	const Point rp = pt(1, 0, 2, 0, 0);
	Verdict v = judge_performance(c, perf_outcome(1000, 0.1), perf_outcome(20000, 2), rp, kBatch);
	assert_int_equal(v.kind, AnomalyKind::performance);
	assert_true(v.figure == 1000 && v.reference == 20000 && v.ref_dim == static_cast<int>(kBatch));
	assert_true(v.ref_point == rp);
	/* A larger message: half the rate but four times the Gbit/s is fair. */
	assert_false(judge_performance(c, perf_outcome(5000, 8), perf_outcome(20000, 4), rp, kSize).anomaly());
	/* Both under the flag, or it is not slow. */
	assert_false(judge_performance(c, perf_outcome(5000, 3), perf_outcome(20000, 4), rp, kSize).anomaly());
	assert_true(judge_performance(c, perf_outcome(9000, 1.9), perf_outcome(20000, 4), rp, kSize).anomaly());
}

void verdict_picks_the_reference(void **)
{
	Space s = make_space();
	s.dims[kVerb].reference = false;   // a deliberate slowdown: no fair reference
	const Point p = pt(1, 1, 1, 1, 0);
	std::map<std::string, Outcome> measured;
	auto put = [&](Point q, Outcome o) { measured[point_key(q)] = o; };
	const Lookup look = [&](const Point &q) -> const Outcome * {
		auto it = measured.find(point_key(q));
		return it == measured.end() ? nullptr : &it->second;
	};
	const Outcome o = perf_outcome(1000, 0.008);
	assert_int_equal(judge(s, p, o, look).ref_dim, -1);   // no neighbour measured: not judged
	put(pt(1, 1, 2, 1, 0), perf_outcome(1500, 0.012));    // batch: not slow against it
	Verdict v = judge(s, p, o, look);
	assert_false(v.anomaly());
	assert_int_equal(v.ref_dim, kBatch);
	put(pt(1, 1, 1, 0, 0), perf_outcome(20000, 0.16));    // inline: the one it compares worst with
	put(pt(1, 1, 1, 1, 1), perf_outcome(90000, 0.7));     // verb: not a reference dimension
	put(pt(2, 1, 1, 1, 0), perf_outcome(1000, 0.03));     // size: worse rate, better Gbit/s
	Outcome failed = perf_outcome(90000, 0.7);
	failed.pass = false;
	put(pt(1, 2, 1, 1, 0), failed);                       // qps: failed, no reference
	put(pt(1, 2, 2, 1, 0), perf_outcome(90000, 0.7));     // two dimensions away
	v = judge(s, p, o, look);
	assert_int_equal(v.kind, AnomalyKind::performance);
	assert_int_equal(v.ref_dim, kInline);
	assert_true(v.ref_point == pt(1, 1, 1, 0, 0));
	assert_true(v.reference == 20000);
	assert_non_null(strstr(v.why.c_str(), "neighbour inline=false"));
}

/* A rate per flow makes one flow half of two: a paced point is judged for its
 * correctness and counters only, and measures no reference. */
void paced_points_have_no_reference(void **)
{
	Space s = make_space();
	s.dims.push_back(numeric_dim("rate", {0, 2000}, 0));
	s.dims.back().reference = false;
	Point p = pt(1, 1, 4, 0, 0);
	p.push_back(1);
	assert_true(paced(s, p));
	assert_true(reference_neighbours(s, p).empty());
	p.back() = 0;
	assert_false(paced(s, p));
	assert_false(reference_neighbours(s, p).empty());
	Space f = make_space();
	f.fixed = {{"rate", "500"}};
	assert_true(paced(f, pt(1, 1, 4, 0, 0)));
}

void energy_is_lower_when_more_anomalous(void **)
{
	SearchConf c;
	c.counter_flags = {{"rnr", 0.1}};
	const Outcome ref = perf_outcome(20000, 2);
	Outcome o = perf_outcome(14000, 1.4);
	assert_true(anneal_energy(c, o, {}, nullptr, nullptr) == 1.0);            // no reference
	assert_true(std::fabs(anneal_energy(c, o, {}, &ref, nullptr) - 0.7) < 1e-9);
	assert_true(anneal_energy(c, perf_outcome(40000, 4), {}, &ref, nullptr) == 1.0);   // at most 1
	o.counters = {{"rnr", 700}};                                     // half its flag
	assert_true(std::fabs(anneal_energy(c, o, {}, &ref, nullptr) - 0.45) < 1e-9);
	Verdict v;
	v.kind = AnomalyKind::counters;
	assert_true(anneal_energy(c, o, v, &ref, nullptr) == 0.0);
}

/* Against plain verbs too, each ratio in its flag's terms (perf_flag 0.5, bare_flag
 * 0.03): 0.035x bare scores as 0.58x a neighbour; 0.07x bare is far from its flag. */
void energy_counts_the_bare_rate(void **)
{
	SearchConf c;
	c.perf_flag = 0.5;
	c.bare_flag = 0.03;
	const Outcome o = perf_outcome(14000, 1.4), ref = perf_outcome(20000, 2);
	const Outcome near = perf_outcome(400000, 40), far = perf_outcome(200000, 20);
	assert_true(std::fabs(anneal_energy(c, o, {}, nullptr, &near) - 0.035 * 0.5 / 0.03) < 1e-9);
	assert_true(std::fabs(anneal_energy(c, o, {}, &ref, &near) - 0.035 * 0.5 / 0.03) < 1e-9);
	assert_true(std::fabs(anneal_energy(c, o, {}, &ref, &far) - 0.7) < 1e-9);   // the neighbour's lower
	assert_true(anneal_energy(c, o, {}, nullptr, &far) == 1.0);                  // at most 1
}

/* The reference measured for a point with none: one step along a reference dimension. */
void references_are_one_step_away(void **)
{
	Space s = make_space(Strategy::random, 80);
	s.dims[kVerb].reference = false;
	Rig rig(s, Plant{false, false, false, true});
	rig.ex.search();
	int refs = 0;
	for (size_t i = 0; i < rig.log.points.size(); i++) {
		if (rig.log.points[i].phase != "reference")
			continue;
		refs++;
		size_t k = i + 1;   // the point it was measured for: recorded once judged
		while (k < rig.log.points.size() && rig.log.points[k].phase != "search")
			k++;
		assert_true(k < rig.log.points.size());
		const Point &a = rig.log.points[i].p, &b = rig.log.points[k].p;
		int differ = 0;
		for (size_t d = 0; d < a.size(); d++) {
			if (a[d] == b[d])
				continue;
			differ++;
			assert_int_not_equal(d, kVerb);
			if (s.dims[d].numeric())
				assert_int_equal(std::abs(static_cast<int>(a[d]) - static_cast<int>(b[d])), 1);
		}
		assert_int_equal(differ, 1);
	}
	assert_true(refs > 5);
}

/* The verdict the search would give p against its neighbour along ref_dim. */
Verdict perf_verdict(const Rig &rig, const Point &p, size_t ref_dim, uint32_t ref_value)
{
	Point r = p;
	r[ref_dim] = ref_value;
	return judge_performance(rig.s.search, rig.runner.outcome(p, 0), rig.runner.outcome(r, 0), r,
		static_cast<int>(ref_dim));
}

void minimise_correctness(void **)
{
	Rig rig(make_space());
	for (const Point &p : {pt(4, 2, 0, 1, 1), pt(3, 3, 2, 0, 0)}) {
		const Verdict v = judge_alone(rig.s.search, rig.runner.outcome(p, 0));
		assert_int_equal(v.kind, AnomalyKind::correctness);
		const auto f = rig.ex.minimise(p, v);
		assert_true(f.has_value());
		assert_string_equal(f->mfs_text.c_str(), "size >= 8192, qps >= 4");
		assert_true(f->minimal == pt(p[kSize], p[kQps], 4, 0, 0));
		assert_int_equal(f->runs, 3);
		assert_int_equal(f->shown, 3);
		assert_false(f->minimal_outcome.pass);
		assert_int_equal(f->mfs.size(), 2);
		assert_int_equal(f->mfs[0].dim, kSize);
		assert_true(f->mfs[0].values == std::vector<uint32_t>({3, 4}));
	}
	assert_int_equal(rig.log.findings.size(), 2);
	assert_int_equal(rig.log.findings[0].id, 1);
	assert_int_equal(rig.log.findings[1].id, 2);
	for (const auto &rec : rig.log.points)
		assert_string_equal(rec.phase.c_str(), "minimise");
}

void minimise_performance_either_reference(void **)
{
	const Point p = pt(1, 2, 1, 1, 1);   // size 1024, qps 4, batch 2, inline, send
	/* Along batch (its neighbour batch = 4) and along inline (inline = false). */
	const std::pair<size_t, uint32_t> refs[] = {{kBatch, 2}, {kInline, 0}};
	for (const auto &[dim, value] : refs) {
		Rig rig(make_space());
		const Verdict v = perf_verdict(rig, p, dim, value);
		assert_int_equal(v.kind, AnomalyKind::performance);
		const auto f = rig.ex.minimise(p, v);
		assert_true(f.has_value());
		assert_string_equal(f->mfs_text.c_str(), "batch <= 2, inline = true");
		assert_true(f->minimal == pt(0, 0, 1, 1, 0));
		assert_int_equal(f->shown, 3);
		assert_true(f->minimal_outcome.rate == 1000);
	}
}

/* Collie moves each dimension towards its simplest value only: an anomaly that needs a
 * setting at its simplest would lose it from its MFS (and the search would then skip
 * points that do not show it). */
void minimise_names_a_setting_needed_at_its_simplest(void **)
{
	Space s = make_space();
	s.dims[kInline].simplest = 1;   // inline = true, which the slowdown needs
	Rig rig(s);
	const Point p = pt(1, 2, 1, 1, 1);
	const auto f = rig.ex.minimise(p, perf_verdict(rig, p, kBatch, 2));
	assert_true(f.has_value());
	assert_string_equal(f->mfs_text.c_str(), "batch <= 2, inline = true");
	assert_true(f->minimal == pt(0, 0, 1, 1, 0));
}

/* Candidates that make no valid point tell nothing: inline cannot be tried at 8192 B,
 * nor size above 64 B with inline, yet neither is part of an MFS; and one value at the
 * top of a dimension is a bound there ("size >= 8192" where 8192 is the largest). */
void minimise_past_invalid_candidates(void **)
{
	Space s = make_space();
	s.dims[kSize] = numeric_dim("size", {64, 1024, 4096, 8192}, 0);
	Plant plant;
	plant.inline_limit = true;
	Rig rig(s, plant);
	const Point slow = pt(0, 0, 1, 1, 0);   // size 64, batch 2, inline
	const auto f = rig.ex.minimise(slow, perf_verdict(rig, slow, kBatch, 2));
	assert_true(f.has_value());
	assert_string_equal(f->mfs_text.c_str(), "batch <= 2, inline = true");
	const Point bad = pt(3, 2, 4, 0, 0);   // size 8192, qps 4
	const auto g = rig.ex.minimise(bad, judge_alone(rig.s.search, rig.runner.outcome(bad, 0)));
	assert_true(g.has_value());
	assert_string_equal(g->mfs_text.c_str(), "size >= 8192, qps >= 4");
}

/* A dimension the anomaly seemed to need once (its runs missed it) but that shows it
 * at every value when scanned is no condition of the MFS. */
void minimise_drops_a_dimension_that_holds_everywhere(void **)
{
	Plant plant;
	plant.late_send = true;
	Rig rig(make_space(), plant);
	const Point p = pt(3, 2, 4, 0, 0);   // 8192, qps 4, write_imm: verb tried at send first
	const auto f = rig.ex.minimise(p, judge_alone(rig.s.search, rig.runner.outcome(p, 0)));
	assert_true(f.has_value());
	assert_string_equal(f->mfs_text.c_str(), "size >= 8192, qps >= 4");
}

/* An anomaly that comes and goes can mislead the steps into a reduced point that does
 * not show it: the finding is then the point found, every setting a condition (so that
 * only it is skipped), and says so, rather than a reproducer that does not reproduce. */
void minimise_keeps_the_found_point_when_the_reduced_one_fails(void **)
{
	Plant plant;
	plant.correctness = plant.perf = plant.counters = plant.invalid = false;
	plant.fading = true;
	Rig rig(make_space(), plant);
	const Point p = pt(1, 3, 3, 1, 1);   // size 1024, qps 8, batch 8, inline, send
	const Verdict v = judge_alone(rig.s.search, rig.runner.outcome(p, 0));
	assert_int_equal(v.kind, AnomalyKind::correctness);
	const auto f = rig.ex.minimise(p, v);
	assert_true(f.has_value());
	assert_true(f->minimal == p);
	assert_int_equal(f->mfs.size(), 5);
	assert_true(f->mfs_text.rfind("not minimised: only the point found shows it (", 0) == 0);
	assert_true(contains_mfs(p, f->mfs));
	assert_false(contains_mfs(pt(1, 3, 2, 1, 1), f->mfs));
}

void minimise_counters(void **)
{
	Rig rig(make_space());
	const Point p = pt(4, 1, 3, 0, 1);   // 16384, qps 2, batch 8, send
	const Verdict v = judge_alone(rig.s.search, rig.runner.outcome(p, 0));
	assert_int_equal(v.kind, AnomalyKind::counters);
	const auto f = rig.ex.minimise(p, v);
	assert_true(f.has_value());
	assert_string_equal(f->mfs_text.c_str(), "size >= 4096, verb = send");
}

void full_search_finds_the_planted(void **)
{
	for (Strategy strategy : {Strategy::anneal, Strategy::random}) {
		Rig rig(make_space(strategy, 200));
		const SearchResult r = rig.ex.search();
		assert_true(r.fatal.empty());
		assert_true(r.points >= 200);   // every planted corner within 200 points (20 of 20 seeds)
		const Finding *corrupt = find_mfs(r.findings, "size >= 8192, qps >= 4");
		const Finding *slow = find_mfs(r.findings, "batch <= 2, inline = true");
		assert_non_null(corrupt);
		assert_non_null(slow);
		assert_int_equal(corrupt->verdict.kind, AnomalyKind::correctness);
		assert_int_equal(slow->verdict.kind, AnomalyKind::performance);
		assert_non_null(find_mfs(r.findings, "size >= 4096, verb = send"));
		assert_int_equal(r.findings.size(), 3);   // each once
		assert_int_equal(rig.log.findings.size(), 3);
		assert_true(r.skipped > 0);
		assert_true(r.invalid > 0);
		for (const auto &rec : rig.log.points) {
			if (rec.o.status == RunStatus::invalid)
				assert_false(rec.v.anomaly());   // counted, never judged
			if (rec.phase != "search")
				continue;
			for (size_t k = 0; k < rec.findings_before; k++)   // a known MFS is never run
				assert_false(contains_mfs(rec.p, rig.log.findings[k].mfs));
		}
	}
}

/* The budget ends the search, not a minimisation: one that started gives its MFS. */
void minimisation_outlives_the_budget(void **)
{
	Space s = make_space(Strategy::random, 1);
	for (s.search.seed = 1;; s.search.seed++) {   // a seed whose first point fails
		Rng rng(s.search.seed);
		Rig probe(s);
		if (judge_correctness(probe.runner.outcome(random_point(s, rng), 0)).anomaly())
			break;
	}
	Rig rig(s);
	const SearchResult r = rig.ex.search();
	assert_int_equal(r.findings.size(), 1);
	assert_string_equal(r.findings[0].mfs_text.c_str(), "size >= 8192, qps >= 4");
	assert_true(r.points > 10);
}

/* search.stop_after (--stop-after N): the search ends once its N-th finding is minimised
 * and recorded, nothing run after it; up to there it is the same search (the same
 * points, the same findings). More findings wanted than the space holds: the budget
 * ends it, as without. */
void stop_after_ends_the_search(void **)
{
	for (Strategy strategy : {Strategy::anneal, Strategy::random}) {
		Rig full(make_space(strategy, 600));
		const SearchResult all = full.ex.search();
		assert_int_equal(all.findings.size(), 3);
		assert_false(all.stopped_after);
		for (uint32_t n : {1u, 2u, 3u, 4u}) {
			Space s = make_space(strategy, 600);
			s.search.stop_after = n;
			Rig rig(s);
			const SearchResult r = rig.ex.search();
			const size_t want = std::min<size_t>(n, 3);
			assert_int_equal(r.findings.size(), want);
			assert_int_equal(rig.log.findings.size(), want);
			assert_true(r.stopped_after == (n <= 3));
			assert_int_equal(rig.runner.total, rig.log.points.size());   // every run recorded ...
			for (const auto &rec : rig.log.points)
				if (n <= 3)
					assert_true(rec.findings_before < n);   // ... and none after the N-th finding
			if (n <= 3)
				assert_true(r.points < all.points);
			else
				assert_int_equal(r.points, all.points);
			assert_true(rig.log.points.size() <= full.log.points.size());
			for (size_t i = 0; i < rig.log.points.size(); i++) {
				assert_true(rig.log.points[i].p == full.log.points[i].p);
				assert_string_equal(rig.log.points[i].phase.c_str(), full.log.points[i].phase.c_str());
			}
			for (size_t k = 0; k < want; k++) {
				assert_string_equal(r.findings[k].mfs_text.c_str(), all.findings[k].mfs_text.c_str());
				assert_int_equal(r.findings[k].runs, all.findings[k].runs);
			}
		}
	}
}

void fatal_stops_at_once(void **)
{
	for (int at : {1, 40, 200}) {
		Rig rig(make_space(Strategy::anneal, 600));
		rig.runner.fatal_at = at;
		const SearchResult r = rig.ex.search();
		assert_string_equal(r.fatal.c_str(), "no device rxe0");
		assert_int_equal(rig.runner.total, at);   // not one run more
		assert_true(r.findings.size() <= 3);
	}
}

void noise_is_told_from_anomalies(void **)
{
	Plant plant{true, false, false, true, true, true};   // correctness in 2 of 3, flaky in 1 of 3
	Rig rig(make_space(Strategy::anneal, 200), plant);
	const SearchResult r = rig.ex.search();
	assert_int_equal(r.findings.size(), 1);
	assert_string_equal(r.findings[0].mfs_text.c_str(), "size >= 8192, qps >= 4");
	assert_int_equal(r.findings[0].shown, 2);
	bool flaky_seen = false;
	for (const auto &rec : rig.log.points)
		flaky_seen |= rec.o.failure == "flaky completion error" && rec.phase == "search";
	assert_true(flaky_seen);   // the search met it and let it go

	Rig direct(make_space(), plant);
	const Point p = pt(0, 1, 4, 0, 1);
	const Verdict v = judge_alone(direct.s.search, direct.runner.outcome(p, 0));
	assert_int_equal(v.kind, AnomalyKind::correctness);
	assert_false(direct.ex.minimise(p, v).has_value());
}

void time_budget_stops_the_search(void **)
{
	Space s = make_space(Strategy::random, 0);
	s.search.budget_s = 50;
	Rig rig(s, Plant{false, false, false, true});
	const SearchResult r = rig.ex.search();
	assert_true(rig.clock >= 50);
	assert_true(r.points <= 52);   // at most a point and its references past the budget
}


/* The bare-verbs reference (issue 49 item 5): the grid is every verb, transport, size
 * and device value with the rest at their simplest; a point slower than bare_flag x its
 * grid point's bare rate is a performance anomaly, named after it. */
BareTable bare_table(const Space &s, double small, double large, bool hole = false)
{
	BareTable t;
	for (const Point &g : bare_grid(s)) {
		const double size = s.dims[kSize].numbers[g[kSize]];
		if (hole && size == 16384)
			continue;   // its grid point did not run
		Outcome o;
		o.rate = size >= 8192 ? large : small;
		o.gbps = o.rate * size * 8 / 1e9;
		t[g] = o;
	}
	return t;
}

void bare_grid_and_points(void **)
{
	const Space s = make_space();   // size (5 values) and verb (2) are the grid's keys
	const std::vector<Point> g = bare_grid(s);
	assert_int_equal(g.size(), 10);
	assert_true(g.front() == pt(0, 0, 4, 0, 0));   // the others at their simplest
	assert_true(g[1] == pt(0, 0, 4, 0, 1));        // the last key fastest
	assert_true(g.back() == pt(4, 0, 4, 0, 1));
	assert_true(std::set<Point>(g.begin(), g.end()).size() == 10);
	assert_true(bare_point(s, pt(3, 2, 1, 1, 1)) == pt(3, 0, 4, 0, 1));
	assert_string_equal(bare_text(s, pt(3, 0, 4, 0, 1)).c_str(), "8192 B send");
	assert_string_equal(rate_text(41000.4).c_str(), "41,000");
	assert_string_equal(rate_text(1234567).c_str(), "1,234,567");
	assert_string_equal(rate_text(999).c_str(), "999");
	Space none = make_space();
	none.dims.erase(none.dims.begin() + kVerb);
	none.dims.erase(none.dims.begin() + kSize);
	assert_int_equal(bare_grid(none).size(), 1);   // no key dimension: the simplest point alone
	assert_string_equal(bare_text(none, simplest_point(none)).c_str(), "the simplest point");
}

void verdict_bare(void **)
{
	Space s = make_space();
	s.search.bare_flag = 0.1;
	const Point p = pt(0, 2, 1, 1, 0);
	Verdict v = judge_bare(s, p, perf_outcome(1000, 0.0005), perf_outcome(41000, 0.021));
	assert_int_equal(v.kind, AnomalyKind::performance);
	assert_true(v.bare && v.ref_dim == -1 && v.ref_point == pt(0, 0, 4, 0, 0));
	assert_true(v.figure == 1000 && v.reference == 41000);
	assert_string_equal(v.why.c_str(), "0.024x bare verbs (64 B write_imm: 41,000/s)");
	assert_false(judge_bare(s, p, perf_outcome(4200, 0.0021), perf_outcome(41000, 0.021)).anomaly());
	s.search.bare_flag = 0.2;
	assert_true(judge_bare(s, p, perf_outcome(4200, 0.0021), perf_outcome(41000, 0.021)).anomaly());
}

/* Minimised against the bare rate of each candidate's own grid point: the slow corner
 * of the whole space (every size >= 8192 under 0.1x plain verbs, its neighbours as slow)
 * is named by its size; a candidate whose grid point has no rate tells nothing. */
void minimise_bare(void **)
{
	for (bool hole : {false, true}) {
		Rig rig(make_space(), Plant{false, false, false, true});
		rig.s.search.bare_flag = 0.1;
		rig.ex.bare_reference(bare_table(rig.s, 30000, 400000, hole));
		const Point p = pt(4, 2, 1, 1, 1);   // 16384 B (20000 msg/s, its bare 400000)
		const Point q = hole ? pt(3, 2, 1, 1, 1) : p;
		const Verdict v = judge_bare(rig.s, q, rig.runner.outcome(q, 0), bare_table(rig.s, 30000, 400000)[bare_point(rig.s, q)]);
		assert_true(v.anomaly() && v.bare);
		const auto f = rig.ex.minimise(q, v);
		assert_true(f.has_value());
		assert_string_equal(f->mfs_text.c_str(), "size >= 8192");
		assert_true(f->minimal == pt(q[kSize], 0, 4, 0, 0));   // size needed: kept where found
		assert_true(f->verdict.bare && f->verdict.ref_point == bare_point(rig.s, f->minimal));   // repro.c's reference
		assert_true(f->verdict.reference == 400000);
		assert_int_equal(f->shown, 3);
		for (const auto &rec : rig.log.points)   // no neighbour run as a reference
			assert_true(rec.phase == "minimise");
	}
}

/* A search with the bare reference: the planted slow corner (batch <= 2, inline) is
 * still found once (by its neighbours, or against plain verbs when the neighbour
 * measured is as slow), the slow region of the whole
 * space (size >= 8192, no neighbour slower than another) is the bare reference's, and a
 * paced point is never judged against plain verbs. */
void search_with_bare_reference(void **)
{
	Space s = make_space(Strategy::anneal, 300);
	s.dims.push_back(numeric_dim("rate", {0, 2000}, 0));
	s.dims.back().reference = false;
	s.search.bare_flag = 0.1;
	Rig rig(s, Plant{false, true, false, true});
	rig.ex.bare_reference(bare_table(rig.s, 30000, 400000));
	const SearchResult r = rig.ex.search();
	const Finding *slow = find_mfs(r.findings, "batch <= 2, inline = true");
	const Finding *region = find_mfs(r.findings, "size >= 8192");
	assert_non_null(slow);
	assert_non_null(region);
	assert_int_equal(slow->verdict.kind, AnomalyKind::performance);
	assert_true(region->verdict.bare);
	assert_non_null(strstr(region->verdict.why.c_str(), "x bare verbs ("));
	assert_int_equal(r.findings.size(), 2);
	int paced_slow = 0;   // paced points in the slow region: judged, never against plain verbs
	for (const auto &rec : rig.log.points)
		if (rec.p[5] == 1) {
			assert_false(rec.v.bare);
			paced_slow += rec.p[kSize] >= 3 ? 1 : 0;
		}
	assert_true(paced_slow > 0);
}

} // namespace

int main()
{
	const CMUnitTest tests[] = {
		cmocka_unit_test(rng_is_portable),
		cmocka_unit_test(mutation_changes_one_dimension),
		cmocka_unit_test(anneal_acceptance),
		cmocka_unit_test(seed_makes_the_sequence),
		cmocka_unit_test(grid_visits_every_point_once),
		cmocka_unit_test(cache_answers_revisits),
		cmocka_unit_test(verdict_correctness),
		cmocka_unit_test(verdict_counters),
		cmocka_unit_test(verdict_performance),
		cmocka_unit_test(verdict_picks_the_reference),
		cmocka_unit_test(paced_points_have_no_reference),
		cmocka_unit_test(energy_is_lower_when_more_anomalous),
		cmocka_unit_test(energy_counts_the_bare_rate),
		cmocka_unit_test(references_are_one_step_away),
		cmocka_unit_test(minimise_correctness),
		cmocka_unit_test(minimise_performance_either_reference),
		cmocka_unit_test(minimise_names_a_setting_needed_at_its_simplest),
		cmocka_unit_test(minimise_past_invalid_candidates),
		cmocka_unit_test(minimise_drops_a_dimension_that_holds_everywhere),
		cmocka_unit_test(minimise_keeps_the_found_point_when_the_reduced_one_fails),
		cmocka_unit_test(minimise_counters),
		cmocka_unit_test(full_search_finds_the_planted),
		cmocka_unit_test(minimisation_outlives_the_budget),
		cmocka_unit_test(stop_after_ends_the_search),
		cmocka_unit_test(fatal_stops_at_once),
		cmocka_unit_test(noise_is_told_from_anomalies),
		cmocka_unit_test(time_budget_stops_the_search),
		cmocka_unit_test(bare_grid_and_points),
		cmocka_unit_test(verdict_bare),
		cmocka_unit_test(minimise_bare),
		cmocka_unit_test(search_with_bare_reference),
	};
	return cmocka_run_group_tests_name("explore", tests, nullptr, nullptr);
}
