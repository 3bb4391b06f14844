/* The search of rdmapipe-explore (issue 33): strategies over the space, verdicts, the
 * cache of measured points and the minimisation of each anomaly to its minimal feature
 * set (Collie, NSDI'22). Pure logic over the Runner and Recorder interfaces.
 *
 * Policies, in short:
 * - a point is run once in the search (cached by point_key); minimisation re-runs;
 * - a passing point is judged for performance against its measured neighbours along
 *   reference dimensions; with none yet, one step along a random reference dimension
 *   is measured (phase "reference"), and a second if that one is unusable; one they
 *   do not flag is judged against the bare-verbs rate of its verb, transport and size
 *   (bare_reference: measured once before the search), a candidate of its
 *   minimisation against its own;
 * - anneal's energy: 0 for an anomaly, else the point's figure against its reference
 *   (max of the rate and Gbit/s ratios, at most 1; 1 without one), or against its bare
 *   rate x perf_flag / bare_flag when lower, less up to 0.5 for a counter near its
 *   threshold; the temperature decays from each (re)start;
 * - the budget (time or points, every phase's runs counted) is checked between
 *   points: a minimisation that started finishes, bounded by its candidates
 *   (minimise.cpp); 2000 visits in a row with nothing new end the search (exhausted),
 *   and so does the stop_after-th finding, once minimised and recorded;
 * - a dimension already at its simplest is tried one step away, so that an MFS can
 *   name a setting the anomaly needs at its simplest value ("inline = false"). */
#pragma once

#include "explore/explore.h"

#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace rp::explore {

/* mt19937_64 (its outputs are fixed by the standard) with our own draws: the
 * standard distributions differ between libraries, and a seed must give the same
 * points everywhere. */
class Rng {
public:
	explicit Rng(uint64_t seed) : g_(seed) {}
	uint64_t next() { return g_(); }
	uint64_t below(uint64_t n);   // uniform in [0, n) by rejection; 0 when n is 0
	double unit();                // uniform in [0, 1), 53 bits
private:
	std::mt19937_64 g_;
};

Point random_point(const Space &s, Rng &rng);
/* One dimension changed: to an adjacent value (numeric) or any other value. */
Point mutate(const Space &s, const Point &p, Rng &rng);
/* Simulated annealing's acceptance: better always, worse with exp(-(e_new - e_cur) / T). */
bool anneal_accept(double e_cur, double e_new, double temperature, double u);
/* The grid's odometer over dims (the last fastest), the others left as they are: false
 * once every combination was given. The grid strategy's (every dimension) and bare_grid's. */
bool next_grid_point(const Space &s, const std::vector<size_t> &dims, Point &p);
uint64_t space_size(const Space &s);   // saturates at UINT64_MAX

/* The measured outcome of a point, or nullptr. */
using Lookup = std::function<const Outcome *(const Point &)>;

Verdict judge_correctness(const Outcome &o);
Verdict judge_counters(const SearchConf &c, const Outcome &o);
/* What one run shows without a neighbour: correctness, then counters. */
Verdict judge_alone(const SearchConf &c, const Outcome &o);
double per_message(const Outcome &o, const std::string &counter);
/* The point against a reference, both figures: slow when rate AND gbps are under
 * perf_flag x the reference's (a larger message is fairly fewer per second). */
double relative_figure(const Outcome &o, const Outcome &ref);   // max of the two ratios
bool usable_reference(const Outcome &o);                         // ran, passed, a rate
Verdict judge_performance(const SearchConf &c, const Outcome &o, const Outcome &ref,
	const Point &ref_point, int ref_dim);
/* A point whose flows run at a set rate: slow on purpose, so neither judged for its
 * performance nor anyone's reference (a rate per flow makes two flows twice one). */
bool paced(const Space &s, const Point &p);
/* Every point differing from p in exactly one reference dimension, with that dimension
 * (none for a paced point). */
std::vector<std::pair<Point, int>> reference_neighbours(const Space &s, const Point &p);
/* All three kinds: correctness, then counters, then performance against the measured
 * neighbour p compares worst with (none measured: not a performance anomaly). The
 * verdict carries the reference even when p is not slow. */
Verdict judge(const Space &s, const Point &p, const Outcome &o, const Lookup &lookup);

/* The bare-verbs reference (search.bare_reference): its grid is every combination of
 * the space's verb, transport, size and device values (setting_bare_key) with the other
 * dimensions at their simplest, measured once at start by repro_template.c's K_BENCH
 * loop on plain libibverbs; a table of its outcomes by grid point. */
using BareTable = std::map<Point, Outcome>;
Point bare_point(const Space &s, const Point &p);   // p's grid point: its key values, the rest simplest
std::vector<Point> bare_grid(const Space &s);       // every grid point, in grid order (last key fastest)
std::string bare_text(const Space &s, const Point &p);   // "write_imm rc 64 B" (its key values), or "the simplest point"
std::string rate_text(double msg_per_s);                 // "41,000"
/* A passing, unpaced point against the bare rate of its grid point: slow when its rate
 * (and Gbit/s: the same size) is under bare_flag x the bare loop's. */
Verdict judge_bare(const Space &s, const Point &p, const Outcome &o, const Outcome &bare);

/* Anneal's energy, lower for more anomalous: 0 for an anomaly, else the figure against
 * the reference (1 without one, at most 1) or against the bare rate x perf_flag /
 * bare_flag (nullptr: none), the lower, less up to 0.5 for a counter near its flag. */
double anneal_energy(const SearchConf &c, const Outcome &o, const Verdict &v, const Outcome *ref,
	const Outcome *bare);

/* Every condition of the set holds for the point. */
bool contains_mfs(const Point &p, const std::vector<Condition> &mfs);

struct SearchResult {
	uint64_t points = 0;    // runs of the runner, every phase (invalid ones not counted)
	uint64_t invalid = 0;   // refused by the validator
	uint64_t cached = 0;    // visits answered from the cache
	uint64_t skipped = 0;   // visits to points containing a known MFS
	uint64_t crashed = 0, hung = 0;
	uint64_t host_hung = 0; // of the hung, those whose host stopped answering too
	std::vector<Finding> findings;
	std::string fatal;      // why the search stopped early ("" when it did not)
	bool stopped_after = false;   // ended by search.stop_after findings, not the budget
};

class Explorer {
public:
	Explorer(const Space &s, Runner &r, Recorder &rec, std::function<double()> now_s);
	SearchResult search();

	/* minimise.cpp: the anomaly at p reduced to its MFS, recorded and numbered; nothing
	 * when p does not show it again in search.need of search.repeats runs (noise). */
	std::optional<Finding> minimise(const Point &p, const Verdict &v);
	/* The bare-verbs reference measured at start (bare_grid's points that ran): points
	 * the neighbours do not flag are judged against it too. */
	void bare_reference(BareTable t) { bare_ = std::move(t); }
	Rng &rng() { return rng_; }
	const SearchResult &result() const { return res_; }

private:
	struct Entry {
		Outcome outcome;
		Verdict verdict;
		bool judged = false;   // false: measured only as someone's reference
		bool anomaly = false;  // judged an anomaly and confirmed by minimise
		double energy = 1;
	};
	struct Visit {
		bool usable = false;   // measured, valid and judged
		bool anomaly = false;
		double energy = 1;
	};

	bool out_of_budget() const;
	bool enough_found() const;   // search.stop_after findings recorded
	Outcome run(const Point &p);
	void record(const Point &p, const Outcome &o, const Verdict &v, const char *phase);
	const Outcome *lookup(const Point &p) const;
	bool known(const Point &p) const;
	Visit visit(const Point &p);
	Verdict judge_measuring(const Point &p, const Outcome &o);
	const Outcome *bare_of(const Point &p) const;   // p's usable bare reference, or nullptr
	bool measure_reference(const Point &p);
	double budget_left_s() const;
	struct Current {
		Point p;
		double energy;
	};
	std::optional<Current> start_point();
	void anneal();
	void random();
	void grid();

	/* minimise.cpp */
	/* A candidate shows the anomaly, does not, or is no pipeline at all (the validator
	 * or the child refused it): then it tells nothing about the anomaly. */
	enum class Shown : uint8_t { yes, no, invalid };
	struct Holding {
		std::vector<uint32_t> values;   // where it holds
		bool to_first = false, to_last = false;   // ... up to the dimension's ends (past invalid values)
	};
	Shown shows(const Point &c, const Verdict &v, Outcome *shown);
	Shown persists(const Point &c, const Verdict &v, Outcome *shown);
	bool needed(Point *cur, size_t d, const Verdict &v);
	Holding holding(const Point &cur, size_t d, const Verdict &v);
	Condition condition(size_t d, const Holding &h) const;
	void final_check(Finding *f, const Verdict &v);
	void keep_found_point(Finding *f, const Verdict &v, const Outcome &seen);

	const Space &s_;
	Runner &runner_;
	Recorder &rec_;
	std::function<double()> now_;
	Rng rng_;
	std::unordered_map<std::string, Entry> cache_;   // point_key -> its measurement
	BareTable bare_;
	SearchResult res_;
	double start_s_ = 0;
	uint64_t idle_ = 0;   // visits since the last new measurement
};

} // namespace rp::explore
