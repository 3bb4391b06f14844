/* rdmapipe-explore: a search of the workload space for anomalies (docs/explore.md).
 * A space file names dimensions (any setting of the pipeline: verb, size, qps, batch,
 * ...) with their values and the simplest of each; a point is one value per dimension,
 * made into a PipelineConf, validated by conf_validate and run by a child rdmapipe
 * (every byte verified). A point is an anomaly when it fails (correctness), is slower
 * than perf_flag x its best neighbour or bare_flag x plain verbs doing its verb, transport
 * and size (performance) or moves hw_counters over a
 * threshold per message (counters); each anomaly is minimised to the settings it
 * needs (Collie's minimal feature set, NSDI'22). Plain data here: no DPDK, no verbs. */
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace rp::explore {

enum class Strategy : uint8_t { anneal, random, grid };
const char *strategy_name(Strategy s);

/* One dimension: a setting (a row of settings.cpp's table) and its values in order,
 * numbers ascending, with the simplest (what minimisation moves it to). */
struct Dim {
	std::string name;                  // the setting: "size", "qps", "verb", ...
	std::vector<std::string> values;   // canonical text of each value ("4096", "send", "true")
	std::vector<double> numbers;       // numeric settings: each value as a number; empty otherwise
	uint32_t simplest = 0;             // index into values
	/* A neighbour across this dimension is a fair performance reference (false for
	 * settings that slow a run on purpose: rate). */
	bool reference = true;
	int line = 0;
	bool numeric() const { return !numbers.empty(); }
};

struct SearchConf {
	Strategy strategy = Strategy::anneal;
	uint64_t seed = 1;
	double budget_s = 600;          // wall time of the search (0: by points alone)
	uint64_t budget_points = 0;     // points measured (0: by time alone)
	double perf_flag = 0.5;         // slower than this x the reference: a performance anomaly
	/* The bare-verbs reference (docs/explore.md): the grid of the space's (verb, transport,
	 * size, device) measured at start by repro_template.c's loop on plain libibverbs; a
	 * passing, unpaced point slower than bare_flag x its bare rate is a performance anomaly. */
	bool bare_reference = true;
	double bare_flag = 0.03;   // docs/explore.md: the engine/bare ratios measured on rxe
	uint32_t repeats = 3;           // runs of each candidate while minimising ...
	uint32_t need = 2;              // ... of which this many must show the anomaly
	uint32_t restart_every = 20;    // anneal: a random point every this many steps (and after an anomaly)
	double temperature = 0.3;       // anneal: the initial temperature ...
	double cooling = 0.95;          // ... multiplied by this each step
	double point_seconds = 1.0;     // traffic per point (the pipeline's run.duration)
	double point_timeout_s = 60;    // a point that takes longer: killed, a hang
	double stall_timeout_s = 5;     // the children's --stall-timeout: no progress this long, the run fails
	uint32_t stop_after = 0;        // stop once this many findings are minimised (0: spend the budget)
	/* hw_counters: a counter that moves more than this per message is an anomaly. */
	std::vector<std::pair<std::string, double>> counter_flags;
	int line = 0;
};

struct Space {
	std::string file;
	std::string pipeline;   // the base pipeline file ("": the command line's default pipeline)
	std::vector<std::pair<std::string, std::string>> fixed;   // setting -> value, on every point
	std::vector<int> fixed_lines;
	std::vector<Dim> dims;
	SearchConf search;
};

/* Per dimension, an index into its values. */
using Point = std::vector<uint32_t>;
std::string point_key(const Point &p);                      // "3,0,1": the cache's key
std::string point_text(const Space &s, const Point &p);     // "size=4096 qps=4 verb=send"
Point simplest_point(const Space &s);

enum class RunStatus : uint8_t {
	ran,            // the child ran it (passed or not: see pass)
	invalid,        // conf_validate refused it: counted, never run
	crashed,        // the child died running it (re-run alone in a fresh child, and died again)
	hung,           // no answer within point_timeout_s: killed
	host_hung,      // ... and nothing from its host either ("alive" stopped): the runner restarted
};
const char *run_status_name(RunStatus s);

/* What one run of a point gave. */
struct Outcome {
	RunStatus status = RunStatus::ran;
	int exit_code = 0;              // the run's exit status (signal: 128 + N)
	bool pass = true;               // every message sent, arrived and checked
	double rate = 0;                // msg/s over the flows
	double gbps = 0;
	double p50_us = -1, p99_us = -1;   // latency percentiles (-1: none)
	uint64_t messages = 0;          // completed over the flows
	std::string failure;            // why it failed, as the run said it ("" when it passed)
	std::vector<std::pair<std::string, uint64_t>> counters;   // hw_counters that moved
	std::string conf, log, results; // its files, relative to the output folder
	double elapsed_s = 0;           // wall time of the point, start-up included
};

enum class AnomalyKind : uint8_t { none, correctness, performance, counters };
const char *anomaly_kind_name(AnomalyKind k);

struct Verdict {
	AnomalyKind kind = AnomalyKind::none;
	std::string why;                // "payload mismatch ...", "0.21x its neighbour batch=4", ...
	double figure = 0, reference = 0;   // performance: the rate and the reference rate; counters: per message and threshold
	Point ref_point;                // performance: the neighbour measured as the reference
	int ref_dim = -1;               // ... the dimension it differs in
	bool bare = false;              // performance: against the bare-verbs reference (ref_point: its grid point), not a neighbour
	std::string counter;            // counters: which
	bool anomaly() const { return kind != AnomalyKind::none; }
};

/* One condition of a minimal feature set: "size >= 8192", "inline = true",
 * "verb in {send, write_imm}", "batch <= 2". */
struct Condition {
	int dim = -1;
	std::string text;
	std::vector<uint32_t> values;   // the dimension's value indices where it holds
};

/* An anomaly minimised. */
struct Finding {
	uint32_t id = 0;                // 1, 2, ... (anomalies/ID/)
	Point point;                    // where the search found it
	Verdict verdict;
	Point minimal;                  // the point minimisation ended on (the reproducer)
	Outcome minimal_outcome;        // one run of it that showed the anomaly
	std::vector<Condition> mfs;     // the settings the anomaly needs
	std::string mfs_text;           // joined: "size >= 8192, qps >= 4"
	uint32_t runs = 0, shown = 0;   // the final check of `minimal`: runs and how many showed it
};

/* Runs a point: makes its pipeline, validates it and runs it (a child rdmapipe; a fake
 * in the unit tests). */
class Runner {
public:
	virtual ~Runner() = default;
	virtual Outcome run(const Point &p) = 0;
	/* The search cannot go on (the child cannot start: no device, EAL failure): why. */
	virtual std::string fatal() const { return ""; }
};

/* What the search reports as it goes (the output folder; nothing in the unit tests). */
class Recorder {
public:
	virtual ~Recorder() = default;
	/* phase: "search", "minimise", "reference". */
	virtual void point(const Point &, const Outcome &, const Verdict &, const char * /*phase*/) {}
	virtual void finding(const Finding &) {}
	virtual void progress(uint64_t /*points*/, uint64_t /*anomalies*/, double /*elapsed_s*/, double /*budget_left_s*/) {}
};

} // namespace rp::explore
