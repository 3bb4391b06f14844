/* Results files: what a run did, as JSON (docs/results.md) and CSV, written by the
 * main lcore after the workers joined. Plain data in, files out. */
#pragma once

#include "engine/types.h"
#include "engine/counters.h"
#include "engine/histogram.h"
#include "control/report_writer.h"
#include "control/stats.h"

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace rp {

struct FlowResult {
	std::string name;
	uint32_t qps = 0;
	uint64_t sent = 0, completed = 0, verified = 0, bytes = 0;
	uint64_t failed_qps = 0;
	int pass = -1;                           // 1: it saw its work through, checked; 0: it did not; -1: not judged alone
	std::string failure;                     // why it failed, as its roles or connections said ("": not said)
	const WcErrorCounts *errors = nullptr;   // by status (may be nullptr: none counted)
	const Histogram *latency = nullptr;      // ns
	const char *latency_what = "";
	/* UC made reliable in software (written only when on). */
	struct Reliability {
		bool on = false;
		uint64_t retx_fast = 0, retx_timeout = 0, acks_sent = 0, acks_received = 0;
		uint64_t duplicates = 0, sack_holes = 0, retx_header_bad = 0, injected_losses = 0, lost = 0;
		uint64_t qp_restarts = 0;
	} rel;
};

struct LcoreResult {
	unsigned lcore = 0;
	std::string role;              // "requester", "responder", "ping", ... (its stages' roles)
	uint64_t polls_busy = 0, polls_idle = 0;
	double cpu_s = 0;
	double cpu_us_per_msg = 0;     // cpu_s over the run's messages (all flows)
	uint64_t sleeps = 0;           // times it slept with nothing to do (passive: LcoreLoop::bell)
};

struct StageResult {
	std::string name, kind;
	unsigned lcore = 0;
	uint64_t calls = 0, objects = 0;
	uint64_t cycles = 0;       // TSC cycles in the calls that handled objects (0: not counted)
};

struct Results {
	const char *mode = "rate";   // rate | pingpong
	const char *role = "loopback";   // loopback (both ends here) | client | server (two processes)
	std::string verb, device;
	uint32_t msg_bytes = 0;
	double elapsed_s = 0;
	bool pass = false;
	int stop_signal = 0;   // SIGINT or SIGTERM stopped the run: its result is INTERRUPTED
	std::vector<FlowResult> flows;
	std::vector<LcoreResult> lcores;
	std::vector<StageResult> stages;   // a pipeline's stages (none: a run kind without them)
	bool stage_cycles = false;
	double period_s = 1;
	std::vector<std::vector<uint64_t>> series;   // [second][flow]: messages completed so far
};

/* A DPDK control thread that reads every flow's running total once a period while
 * the lcores run (FlowLive: one writer, relaxed atomics), for the results' series,
 * and with `view` and print_period_s writes the live stats lines to `out` (--stats-period). */
struct Sampler {
	std::vector<const FlowLive *> live;   // one per flow, in the results' flow order
	double period_s = 1;
	std::vector<std::vector<uint64_t>> series;
	const RunView *view = nullptr;
	double print_period_s = 0;
	Report out;                           // sampler thread only while it runs
	std::atomic<bool> stop{false};
	pthread_t thread{};
	bool running = false;
};
int sampler_start(Sampler *s, std::string *err);
void sampler_stop(Sampler *s);   // joins; the series is then complete

/* A run's Results with its header filled in; flows and lcores are the caller's. */
Results results_of(const char *mode, Verb verb, uint32_t msg_bytes, const std::string &device, double elapsed_s,
		   bool pass);

/* The results file's schema version (docs/results.md, docs/results.schema.json): raised
 * when a field changes meaning or goes away, not when one is added. */
constexpr int kResultsSchema = 1;

/* The results as JSON text (nlohmann's writer): what write_results_json writes. */
std::string results_json_text(const Results &r);

/* Return 0, or -1 with *err naming the file and the cause. */
int write_results_json(const std::string &path, const Results &r, std::string *err);
int write_results_csv(const std::string &path, const Results &r, std::string *err);

/* The flow's name: from the pipeline file, else flow0, flow1, ... */
std::string flow_name(const std::vector<std::string> &names, size_t i);

} // namespace rp
