/* Pipeline configuration files (libconfig, schema version 1): what a run is made of —
 * devices, buffer pools, one io context per worker lcore, flows, rings and the stages
 * on lcores that rings join — read and validated completely before anything starts.
 * Every error names file:line, the setting's path and what was expected, for example
 *   conf/x.conf:14: flows.[0].batch: 0 is outside 1..512
 * The schema is documented in docs/configuration.md and conf/default.conf. Plain data,
 * no DPDK or verbs: `rdmapipe --check FILE` runs this without a device. */
#pragma once

#include "conf/options.h"
#include "conf/stage_kinds.h"
#include "verbs/traffic.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rp {

inline constexpr int kConfigVersion = 1;

/* The line of each key an object's group set in the file (line 0: an option of the
 * command line set it): conf_validate knows which keys were given and names the one it
 * refuses. */
struct KeyLines {
	std::vector<std::pair<std::string, int>> lines;
	void set(const std::string &key, int line) { lines.emplace_back(key, line); }
	int line(const std::string &key) const
	{
		for (const auto &kl : lines)
			if (kl.first == key)
				return kl.second;
		return 0;
	}
	bool has(const std::string &key) const
	{
		return std::any_of(lines.begin(), lines.end(), [&](const auto &kl) { return kl.first == key; });
	}
};

enum class Transport : uint8_t { rc, uc };

struct DeviceConf {
	std::string name;
	uint8_t port = 1;
	int gid_index = -1;     // -1: chosen from the GID table (RoCE v2 IPv4 first)
	int line = 0;
	KeyLines keys;
};

/* A pool's buffers at most (pools.count). */
inline constexpr uint32_t kMaxPool = 1u << 24;

struct PoolConf {
	std::string name;
	uint32_t elt_size = 0;  // bytes per buffer
	uint32_t count = 0;
	uint32_t cache = 0;     // per-lcore cache
	int line = 0;
	KeyLines keys;
};

struct IoContextConf {
	uint32_t lcore = 0;
	std::string device;
	uint32_t send_cq = 0;       // 0: sized by the builder from the lcore's flows
	uint32_t recv_cq = 0;
	uint32_t srq = 0;           // 0: sized by the builder (none when nothing consumes receives)
	uint32_t srq_refill = 0;    // repost once this many receives are consumed
	bool adaptive_poll = false;
	CqApi cq_api = CqApi::classic;
	bool srq_given = false;     // srq set in the file (0 then means: no SRQ)
	bool rq_per_qp = false;     // recv_queue = "qp": each QP its own receive queue, no SRQ
	bool derived = false;       // not in the file: made for an lcore with RDMA stages
	int line = 0;
	KeyLines keys;
};

struct FlowConf {
	std::string name;
	std::string peer;           // "loopback" or HOST:PORT (this host is the client); "" with listen
	std::string listen;         // [ADDR:]PORT: this host is the server of a two-host flow
	std::string local;          // the client's own address (picks its device)
	Transport transport = Transport::rc;
	Reliability reliability = Reliability::none;   // uc: software unless the file says none; rc: the NIC's
	uint32_t ack_every = kDefaultAckEvery;         // software: an ACK every N messages of a QP ...
	uint32_t ack_us = kDefaultAckUs;               // ... or this long after the first unacknowledged
	uint32_t chunk = kChunkAuto;                   // software write_imm: chunk bytes (0: whole messages)
	bool window_given = false;                     // window set by the file (else derived, in chunks if cut)
	bool batch_given = false, signal_given = false;   // set by the file (else the builder may fit them to the device)
	double inject_loss = 0;                        // test hook: this fraction of data WRs is never posted
	uint32_t qps = 1;
	Verb verb = Verb::write_imm;
	std::vector<uint32_t> sizes{64};   // one size, or a list used in turn
	uint32_t batch = 32;
	uint32_t signal_every = 0;  // 0: batch
	uint32_t sq_depth = 0;      // 0: 4 x max(batch, signal_every), per lane where lanes share the QPs
	bool sq_depth_given = false;
	uint32_t window = 0;        // per QP; 0: 1024 / qps, at least batch
	/* Messages in flight over all of the flow's QPs, their credit returned once for the
	 * flow: its receiver's SRQ holds this many, whatever the QP count. Set by the file
	 * (0: none, per-QP windows alone), else derived by the builder (graph_plan). */
	uint32_t flow_window = 0;
	bool flow_window_given = false;
	bool inline_send = false;
	double rate_pps = 0;        // 0: as fast as it goes
	uint64_t messages = 0;      // 0 with duration 0: the run's duration
	double duration_s = 0;
	bool verify = true;
	/* With several rdma_tx stages: every one posts to every QP of the flow (seed 002's
	 * QP sharing) instead of each owning every n-th QP. */
	bool share_qps = false;
	/* A client's flow to another host whose server echoes it (its file has the echo
	 * stage): a ping-pong. Implied on a loopback flow with an echo stage. */
	bool echoed = false;
	int src_rank = -1, dst_rank = -1;   // a job's pair (sender, receiver) this flow is one end of; no key
	PostApi post_api = PostApi::classic;   // chained ibv_post_send, or ibv_qp_ex's ibv_wr_*
	bool fence = false;         // IBV_SEND_FENCE on the first WR of every chain
	uint8_t rnr_retry = 7;      // 0..7, 7 = forever
	uint8_t retry_cnt = 7;      // 0..7 (rxe: 7 = forever)
	uint8_t min_rnr_timer = 12; // 0..31, IB encoding (12 = 0.64 ms)
	Traffic traffic;            // traffic_class, sl, flow_label(_spread), hop_limit, gid_index
	std::string pool;
	int line = 0;
	KeyLines keys;

	uint32_t max_size() const;
};

/* The window flow f's QPs share where its receiver takes its receives from an SRQ
 * (srq): given, or lib/conf's default (default_flow_window); 0 where it cannot share
 * one (a verb that consumes no receive, UC's software reliability) or has none. */
uint32_t flow_window_of(const FlowConf &f, bool srq);
/* The receives flow f takes in its receiver's SRQ (srq): its QPs' windows, or the flow
 * window they share (a send's QPs each up to all of it). */
uint64_t flow_srq_receives(const FlowConf &f, bool srq);

struct RingConf {
	std::string name;
	uint32_t size = 1024;
	bool multi_producer = false;
	bool multi_consumer = false;
	int line = 0;
	KeyLines keys;
};

struct StageConf {
	std::string name;
	const StageKindInfo *kind = nullptr;   // registered by its file of lib/stages/
	uint32_t lcore = 0;
	std::string flow;                    // gen, rdma_tx, rdma_rx, echo
	std::vector<std::string> inputs;     // ring names
	std::vector<std::string> outputs;
	std::string file;                    // capture: the pcap file it writes
	uint32_t snaplen = 0;                // capture: payload bytes kept per record (0: the default)
	int line = 0;
	KeyLines keys;
};

struct RunConf {
	double duration_s = 0;      // 0: until every flow's messages are done
	double warmup_s = 0;
	double stats_period_s = 0;  // 0: no periodic stats
	std::string json;           // results files ("" : none)
	std::string csv;
	ConnectPath connect = ConnectPath::cm;   // loopback QP pairs: rdma_cm, or directly
	bool stage_cycles = false;  // the lcore loops count TSC cycles per stage call
	std::string metrics;        // the Prometheus endpoint's [IPV4:]PORT ("": none; --metrics)
	std::string push;           // a Pushgateway's http://HOST[:PORT] ("": none; --push)
	bool metrics_qp = false;    // per-QP kernel counters in the metrics (--metrics-qp)
	double stall_timeout_s = 10;   // a running flow with no progress for this long gives up (--stall-timeout)
	double connect_timeout_s = kDefaultConnectTimeoutS;   // connecting waits this long: another host, a loopback through rdma_cm (connect_timeout)
	bool quiet = false;            // no progress lines (-q)
	int line = 0;
	KeyLines keys;
};

/* Test hooks (the command line's --inject-*), acting on the pipeline's first flow (or
 * the lcore named), and --plant's on the flows they match: faults the tests cause on
 * purpose. No key in a file. */
struct HooksConf {
	uint64_t corrupt_msg = UINT64_MAX;   // flip one byte of this message (0-based)
	int bad_rkey_qp = -1;                // this QP posts with a wrong rkey
	int inject_rnr_lcore = -1;           // this lcore's SRQ is left empty (RNR NAKs)
	uint32_t inject_pool_left = 0;       // the first flow's send pool keeps only this many
	double inject_loss = 0;              // this fraction of UC data WRs never posted
	bool inject_bad_retx_header = false; // the first retransmission's header targets outside the window
	std::vector<PlantSpec> plants;       // --plant: on every flow whose settings match (any flow)
};

/* Traffic patterns over the ranks of an MPI job (docs/cluster.md): each flow of the
 * pattern runs once per pair of ranks the pattern names, from the pair's sender (its
 * rdma_tx stage) to its receiver (its rdma_rx or echo stage). */
enum class PatternKind : uint8_t { none, pairs, ring, all_to_all, incast, list };
const char *pattern_kind_name(PatternKind k);

struct RankPair {
	uint32_t from = 0, to = 0;   // sender, receiver
	bool operator==(const RankPair &o) const { return from == o.from && to == o.to; }
};

struct PatternConf {
	PatternKind kind = PatternKind::none;
	std::vector<std::string> flows;    // the flows it runs per pair (the file's: all of them)
	uint32_t root = 0;                 // incast: the receiver
	std::vector<RankPair> pairs;       // list: sender, receiver
	std::vector<std::string> devices;  // each rank's device, by its rank on its host (none: the io contexts')
	uint32_t port = 18515;             // first listen port
	double bw_flag = 0.8;              // flag a pair whose rate is under this fraction of the best pair's
	double lat_flag = 2.0;             // ... or whose median latency is over this factor of the best
	uint32_t confirm = 8;              // flagged pairs re-run alone afterwards, at most (0: none)
	double timeout_s = 60;             // bounds each wait of one rank for the others
	int line = 0;
	KeyLines keys;
	bool on() const { return kind != PatternKind::none; }
	bool has(const std::string &flow) const;
};

struct PipelineConf {
	std::string file;
	int version = 0;
	std::vector<DeviceConf> devices;
	std::vector<PoolConf> pools;
	std::vector<IoContextConf> io_contexts;
	std::vector<FlowConf> flows;
	std::vector<RingConf> rings;
	std::vector<StageConf> stages;
	RunConf run;
	PatternConf pattern;
	HooksConf hooks;
	KeyLines keys;   // the file's top-level keys (the flows list's line)
};

/* The lcores EAL will have, when known before EAL starts (from -l / -c / --lcores):
 * the lcore cross-check uses it. */
struct LcoreSet {
	bool known = false;
	std::vector<bool> has;   // has[i]: lcore i enabled
	bool contains(uint32_t lc) const { return !known || (lc < has.size() && has[lc]); }
};

/* Parses an EAL core list ("0-2,4") or mask ("0x7") into *set. Returns false on bad syntax. */
bool lcore_set_from_list(const char *list, LcoreSet *set);
bool lcore_set_from_mask(const char *mask, LcoreSet *set);
/* Looks for -l, -c or --lcores among EAL arguments (argv[1..argc-1]). */
LcoreSet lcore_set_from_eal_args(int argc, char *const *argv);

/* Addresses, one rule for a file's keys and the command line's options (rdma_cm here
 * speaks IPv4): IPV4 (local), IPV4:PORT (peer), [IPV4:]PORT (listen; no address is
 * 0.0.0.0), PORT 1..65535. */
bool addr_ipv4(const std::string &a);
/* The PORT of IPV4:PORT or [IPV4:]PORT, 0 when it is not one. */
uint32_t addr_port(const std::string &a);
bool addr_ipv4_port(const std::string &a);
bool addr_listen(const std::string &a);
/* A Pushgateway's URL, http://HOST[:PORT] (or https://): *host gets "http://HOST",
 * *port the port (9091 when none). */
bool push_url(const std::string &u, std::string *host = nullptr, std::string *port = nullptr);

/* Reads and validates `path`. Returns 0, or -1 with *err = "FILE:LINE: PATH: what". */
int config_load(const std::string &path, const LcoreSet &lcores, PipelineConf *out, std::string *err);

/* What c leaves to be derived (a pool's count 0: its flows' messages in flight and a
 * burst's slack, and its cache), derived: the one sizing step (conf_size.cpp). The
 * command line's pipeline is sized as it is made; conf_validate sizes what it checks. */
void conf_size(PipelineConf *c);

/* The checks across keys and objects of a conf whose keys each were read and range-
 * checked (validate.cpp); completes what they derive (conf_size first): io contexts for lcores with RDMA
 * stages, shared lanes' send queue depth, a pattern's flows. Call once per conf.
 * Returns 0, or -1 with *err = "FILE:LINE: PATH: what" (the first refusal). */
int conf_validate(PipelineConf *c, std::string *err);

/* Whether a flow of c connects to another host (its listen or peer = "HOST:PORT", or
 * the pattern's ranks run it): what run.connect_timeout bounds. */
bool conf_connects_hosts(const PipelineConf &c);
/* Whether anything of c waits for a connection: a flow to another host, or a loopback
 * flow whose two ends connect through rdma_cm. What run.connect_timeout bounds. */
bool conf_waits_to_connect(const PipelineConf &c);
/* run.connect_timeout in the whole milliseconds rdma_cm's waits take, at least 1. */
int connect_timeout_ms(const RunConf &r);

/* The keys a file's flow, io context and run groups may set (the schema's). */
const std::vector<std::string> &conf_flow_keys();
const std::vector<std::string> &conf_io_keys();
const std::vector<std::string> &conf_run_keys();

/* "name", or "a" for a close misspelling among `known`: the did-you-mean hint. */
std::string closest_name(const std::string &name, const std::vector<std::string> &known);

} // namespace rp
