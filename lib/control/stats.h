/* The control plane's view of a running run: what the console, the live stats lines
 * and the telemetry endpoints read and change. The lcores publish running totals
 * (FlowLive, RoleLive: one writer each, relaxed atomics, never torn) and read what
 * the control plane sets (FlowControl, RunControl); nothing here locks or waits on
 * them. Samples of the totals, rates between two samples and the lines printed from
 * them are plain functions of plain data (test_stats). */
#pragma once

#include "conf/options.h"
#include "engine/counters.h"
#include "engine/histogram.h"
#include "engine/run_control.h"
#include "control/hw_counters.h"
#include "control/qp_counters.h"

#include <cstdint>
#include <string>
#include <vector>

struct rte_mempool;
struct rte_ring;

namespace rp {

struct FlowView {
	std::string name;
	uint32_t qps = 0;
	Verb verb = Verb::write_imm;
	uint32_t msg_bytes = 0;
	uint32_t batch = 0;           // the set-up batch: set batch goes up to it
	uint32_t signal_every = 0;
	uint64_t target = 0;          // messages to send (0: a duration)
	const FlowLive *live = nullptr;
	FlowControl *ctl = nullptr;   // nullptr: nothing to set (the far end of a two-process run)
	/* For the metrics' labels and latency (graph_view's flow_labels). */
	std::string transport;        // "rc", "uc"
	std::string role;             // this end's: "requester", "server", "ping", "echo", "lane"
	std::string peer;             // the other host ("": both ends here)
	int src = -1, dst = -1;       // a job's pair: sender and receiver ranks (-1: none)
	const ReceiveLive *rx = nullptr;      // its responder here: what arrived, verified
	const Histogram *latency = nullptr;   // ns: post to completion, or half round trips
	bool half_rtt = false;        // latency is a ping-pong's half round trips
};

struct LcoreView {
	unsigned lcore = 0;
	std::string role;             // "requester", "responder", ...
	const RoleLive *live = nullptr;
	const LcoreCpu *cpu = nullptr;   // its thread's CPU clock (nullptr: none to read)
};

struct PoolView {
	std::string name;
	rte_mempool *pool = nullptr;
};

struct RingView {
	std::string name;
	rte_ring *ring = nullptr;
};

struct StageView {
	std::string name;
	std::string kind;
	unsigned lcore = 0;
	const StageLive *live = nullptr;
};

struct QpView {
	std::string flow;
	uint32_t index = 0;           // within the flow
	uint32_t qp_num = 0;
	std::string role;
	ibv_qp *qp = nullptr;         // for per-QP counters (metrics_bind_qps)
};

/* A QP's kernel counter the metrics read (run.metrics_qp). */
struct QpCounterView {
	QpCounter counter;
	std::string device, flow, role;
	uint32_t index = 0;           // within the flow
};

struct RunView {
	std::string device;
	std::string what;             // "loopback RDMA_WRITE_WITH_IMM, 64 B", for show config
	std::vector<std::string> config;   // "key: value" lines for show config
	double tsc_hz = 0;
	double duration_s = 0;        // a duration run's length (0: message counts)
	bool until_stopped = false;   // a flow goes on until stopped (duration 0): a signal ends the run
	uint64_t start_tsc = 0;
	double start_unix = 0;        // the run's start, seconds since the epoch
	std::vector<FlowView> flows;
	std::vector<LcoreView> lcores;
	std::vector<PoolView> pools;
	std::vector<RingView> rings;
	std::vector<QpView> qps;
	std::vector<QpCounterView> qp_counters;   // bound by metrics_bind_qps (run.metrics_qp)
	std::vector<StageView> stages;
	bool stage_cycles = false;    // the lcores count TSC cycles per stage call
	RunControl *ctl = nullptr;    // start, stop, quit
	/* The ports' hardware counters (retransmissions, protocol errors) at the start:
	 * one per device the run uses. */
	struct Port {
		std::string device;
		unsigned port = 1;
		HwCounters base;
		ibv_context *ctx = nullptr;   // to query the port's MTU (nullptr: not queried)
	};
	std::vector<Port> ports;
};

/* The counters of v's ports that moved since the start, named "NAME" (one port) or
 * "DEVICE:NAME" (several). */
HwCounters ports_moved(const RunView &v);

/* Totals at one moment. */
struct FlowSample {
	uint64_t sent = 0, completed = 0, errors = 0;
	uint64_t retx_fast = 0, retx_timeout = 0;   // UC made reliable in software
};
struct LcoreSample {
	uint64_t busy = 0, idle = 0, received = 0;
	uint32_t srq_posted = 0;
};
struct Sample {
	uint64_t tsc = 0;
	std::vector<FlowSample> flows;
	std::vector<LcoreSample> lcores;
};

Sample sample_take(const RunView &v, uint64_t tsc);

/* A flow between two samples (`since` earlier, `now` later) and its totals since a
 * baseline (clear stats). */
struct FlowRates {
	double msg_per_s = 0, gbit_per_s = 0;
	uint64_t completed = 0, errors = 0;    // since the baseline
	uint64_t outstanding = 0;              // posted, not yet completed
	uint64_t retx_fast = 0, retx_timeout = 0;   // reliable UC: retransmissions since the baseline
	double progress = -1;                  // 0..1 of its messages, or of the duration (-1: neither)
};
FlowRates flow_rates(const RunView &v, size_t flow, const Sample &base, const Sample &since, const Sample &now);

/* "  bw          0.0612 Mmsg/s  0.0313 Gbit/s  outstanding 96  errors 0  61234 of 200000 (30.6%)" */
std::string stats_line(const RunView &v, size_t flow, const FlowRates &r);

/* The stats lines of all flows, headed by the elapsed time ("stats at 3.0 s:"). */
std::string stats_block(const RunView &v, const Sample &base, const Sample &since, const Sample &now);

/* A rate as the console takes it: "20000", "20000pps", "1.5Mpps", "2Gbps" (for
 * msg_bytes-byte messages), "0" (no limit). Returns messages per second, or -1 with
 * *err saying what is wrong and giving examples. */
double parse_rate(const std::string &text, uint32_t msg_bytes, std::string *err);

/* A flow's completion errors so far by status, "3 x remote access error, 31 x Work
 * Request Flushed Error" ("" when none). */
std::string errors_by_status(const FlowLive &live);

/* Index of the flow named `name`, or -1 (with the names in *known). */
int flow_index(const RunView &v, const std::string &name, std::string *known);

} // namespace rp
