/* Run options: what the user asked for, parsed once from the arguments after "--".
 * Plain data, no DPDK or verbs: parsing and validation work anywhere. */
#pragma once

#include "conf/perftest.h"
#include "conf/plant.h"
#include "engine/types.h"   // verbs, post and CQ APIs, bounds
#include "verbs/traffic.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rp {

/* How a loopback run connects its QP pairs: through rdma_cm to the device's own IPv4
 * address, the path two hosts use (default), or directly, each QP given the other's
 * number and GID (devices without an IPv4 address). */
enum class ConnectPath : uint8_t {
	cm,
	direct,
};
/* Whether a loopback flow's two ends connect through rdma_cm (and so wait for it):
 * rdma_cm's port space for connected QPs (RDMA_PS_TCP) makes RC QPs only. */
inline bool loopback_through_cm(ConnectPath p, bool uc) { return p == ConnectPath::cm && !uc; }

/* What the run measures: message rate (chains of messages in flight) or ping-pong
 * latency (one message in flight, echoed back by the responder). */
enum class Mode : uint8_t {
	rate,
	pingpong,
};

struct RunOptions {
	Mode mode = Mode::rate;
	Verb verb = Verb::write_imm;
	uint32_t qps = 1;               // QPs in all flows, messages spread round-robin within a flow
	std::vector<uint32_t> flows{1}; // QPs per flow (-Q 1,64: two flows), summing to qps
	std::string device;             // empty: first device found
	uint8_t port = 1;
	int gid_index = -1;             // -1: pick the RoCE v2 IPv4 GID (else the first valid one)
	uint32_t msg_bytes = 64;
	std::vector<uint32_t> sizes;   // -s A,B,...: a size sweep (msg_bytes is A); empty: one size
	uint64_t messages = 0;          // 0 with duration 0 means kDefaultMessages
	double duration_s = 0;          // 0: stop by message count
	uint32_t batch = 32;            // WRs per chain
	uint32_t signal_every = 0;      // 0: one signalled WR per chain (= batch)
	uint32_t sq_depth = 0;          // 0: 4 * max(batch, signal_every)
	uint32_t slots = 0;             // per QP: messages the responder holds before giving credit back
	uint32_t srq_refill = 0;        // 0: slots / 8, at least batch
	/* Messages in flight over the flow's QPs, credited once for the flow (0: none, each
	 * QP's window alone); derived by the pipeline builder unless given (--flow-window). */
	uint32_t flow_window = 0;
	bool flow_window_given = false;
	bool verify = true;
	uint64_t corrupt_msg = UINT64_MAX; // test hook: flip one byte of this message (0-based)
	int bad_rkey_qp = -1;           // test hook: this QP posts with a wrong rkey
	int inject_rnr_lcore = -1;      // test hook: this lcore's SRQ is left empty (RNR NAKs)
	uint32_t inject_pool_left = 0;  // test hook: the first flow's send pool keeps only this many
	PostApi post_api = PostApi::classic;
	CqApi cq_api = CqApi::classic;
	bool rq_per_qp = false;         // --recv-queue qp: per-QP receive queues instead of the SRQ
	ConnectPath connect = ConnectPath::cm;
	bool uc = false;                // --transport uc: unreliable connected QPs
	Reliability reliability = Reliability::software;   // --reliability (uc only; rc: none, the NIC's)
	uint32_t ack_every = kDefaultAckEvery;   // --ack-every N
	uint32_t ack_us = kDefaultAckUs;         // --ack-us N
	uint32_t chunk = kChunkAuto;             // --chunk N: software write_imm's chunk bytes (0: whole)
	bool slots_given = false;                // the window was set (--slots, a conf's window)
	bool batch_given = false, signal_given = false;   // -b, -S (a conf's batch, signal_every)
	bool srq_refill_given = false;                    // --srq-refill
	/* Set by the pipeline builder where qps x sq_depth would overflow the device's
	 * largest CQ: WRs outstanding over the flow's QPs at most (0: no bound but each
	 * send queue's). */
	uint32_t wr_budget = 0;
	/* Set by the pipeline builder where the receiving lcore gives each QP its own receive
	 * queue (recv_queue = "qp"): the receives each keeps, reposted once rq_refill are
	 * consumed (0: the lcore's SRQ). */
	uint32_t rq_depth = 0, rq_refill = 0;
	/* Set by the pipeline builder once the path MTU is known: the chunk bytes in force
	 * (0: whole messages) for this flow's requester, responder and handshake. */
	uint32_t chunk_bytes = 0;
	double inject_loss = 0;         // --inject-loss F: test hook, this fraction of data WRs never posted
	bool inject_bad_retx_header = false;     // test hook: the first retransmission's header targets outside the window
	std::vector<PlantSpec> plants;  // --plant: test hooks on the flows in one corner of the space
	bool interactive = false;       // -i: the console on the main lcore while the run goes on
	double stats_period_s = 0;      // --stats-period: a stats line per flow every N s (0: none)
	bool inline_send = false;       // IBV_SEND_INLINE (sends and writes up to the device's max)
	bool fence = false;             // IBV_SEND_FENCE on the first WR of every chain
	bool adaptive_poll = false;     // sleep on a completion channel after a run of empty polls
	uint8_t rnr_retry = 7;          // 0..7, 7 = forever
	uint8_t retry_cnt = 7;          // RC transport retries, 0..7 (rxe: 7 = forever)
	uint8_t min_rnr_timer = 12;     // 0..31, IB encoding (12 = 0.64 ms)
	Traffic traffic;                // --tclass, --sl, --flow-label, --flow-label-spread, --hop-limit
	double stall_timeout_s = 10;    // a running flow with no progress for this long gives up with an error
	double connect_timeout_s = 0;   // --connect-timeout: connecting waits this long for the other host (0: not given)
	bool quiet = false;
	std::string listen;             // --listen [ADDR:]PORT: the server (responder) of a two-process run
	std::string peer;               // --peer ADDR:PORT: the client (requester)
	bool reversed = false;          // --reversed: the server sends, the client receives
	bool bidirectional = false;     // --bidirectional: each flow also the other way, at once
	std::string local;              // --local ADDR: the client's address (picks its device)
	std::string config_file;        // -f: a pipeline file describes the run
	bool dump_conf = false;         // --dump-conf: print the pipeline the command line means
	bool points = false;            // --points: run the pipeline files stdin names, one EAL for all
	bool stage_cycles = false;      // --stage-cycles: count TSC cycles per stage call
	std::vector<std::string> argv_app;   // the arguments after "--" (for --dump-conf's header)
	/* The pipeline keys the options given set (OptionSpec::key): its objects record them
	 * as given (KeyLines, line 0), so the validator checks and names them. */
	std::vector<std::string> keys_given;
	std::string output_json;        // results files written at the end ("": none)
	std::string metrics;            // --metrics: the Prometheus endpoint's [IPV4:]PORT ("": none)
	bool metrics_qp = false;        // --metrics-qp: per-QP kernel counters in the metrics
	std::string push;               // --push: a Pushgateway's http://HOST[:PORT] ("": none)
	std::string output_csv;
	std::vector<std::string> flow_names;   // from a pipeline file; else flow0, flow1, ...
	bool tx_gen_stage = false;      // gen stages feeding the requester keep the flow's rate
	bool tx_count_from_input = false;   // fed from duration flows: it sends what comes until its input ends
	double rate_pps = 0;            // --rate, per flow: kept by the gen stage, else the requester (0: none)
	/* From a pipeline file: its pool's size, used where it is more than the engine's
	 * own sizing needs (0: the engine's sizing). */
	uint32_t pool_count = 0, pool_cache = 0;   // the flow's pool (pool_cache: with a count)
	double warmup_s = 0;            // run.warmup: rates leave out what completes before it
	PerftestReportConf perftest;    // the perftest front end's (perftest.on): its table, not the summary
};

/* duration = 0 (-t 0): the run goes on until it is stopped (SIGINT, SIGTERM, the
 * console's quit), then ends as a duration run ends; a duration no clock reaches
 * (31 years; times the TSC's rate it still fits 64 bits), above any given one (1e6 s). */
inline constexpr double kUntilStoppedS = 1e9;
inline bool until_stopped(double duration_s) { return duration_s >= kUntilStoppedS; }
/* A ping-pong's, likewise, per QP: the most a two-host handshake announces (2^40 - 1;
 * twelve days at a million round trips a second). */
inline constexpr uint64_t kUntilStoppedRoundTripsPerQp = (1ull << 40) - 1;

inline constexpr uint64_t kDefaultMessages = 1000000;
inline constexpr uint64_t kDefaultPingPongIterations = 100000;
inline constexpr uint32_t kDefaultPingPongBytes = 2;   // ib_send_lat's default
inline constexpr uint32_t kDefaultWindow = 1024;   // messages in flight over a flow

/* How long connecting waits for the other host (run.connect_timeout, --connect-timeout):
 * a client for a server that is not listening (yet) or not there, a server for its
 * clients. rdma_cm's waits take int milliseconds: a day is well within them. */
inline constexpr double kDefaultConnectTimeoutS = 10;
inline constexpr double kMaxConnectTimeoutS = 86400;
/* The one check of a connect timeout's value, for the command line and files alike:
 * "" when s seconds is one, else what is wrong with it ("is not ..."), for the caller
 * to put after the setting's name. */
std::string connect_timeout_problem(double s);
/* Why a connect timeout is refused where nothing waits for a connection, after the
 * setting's name. */
inline constexpr const char *kConnectTimeoutNoWait =
	"nothing waits for a connection: no flow connects to another host (--listen or --peer; in a file, a flow's "
	"listen or peer = \"HOST:PORT\", or a pattern), and the loopback flows connect their QPs directly "
	"(run.connect = \"direct\", or UC), not through rdma_cm";

/* The flow window of a flow that leaves it out: kDefaultWindow where it can share one
 * (`shareable`: its verb consumes receives, through an SRQ, and nothing else returns
 * its credit) and its QPs' default windows would add up to more; else 0, none. */
inline uint32_t default_flow_window(bool shareable, bool window_given, uint32_t qps, uint32_t window)
{
	return shareable && !window_given && static_cast<uint64_t>(qps) * window > kDefaultWindow ? kDefaultWindow : 0;
}

enum class ParseResult {
	ok,
	help,     // --help: usage printed, exit 0
	version,  // --version
	error,    // message in *err, exit 2
};

/* Parses the application arguments (argv[0] is the program name, as getopt expects).
 * Fills in derived defaults and checks every bound; on error *err names the option,
 * the value and what was expected. */
ParseResult parse_options(int argc, char **argv, RunOptions *opts, std::string *err);

/* An integer in lo..hi with an optional binary suffix (K, M, G): "64K" = 65536. */
bool parse_size(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);

/* The application part of --help. */
const char *options_usage();

} // namespace rp
