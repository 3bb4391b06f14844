/* The pipeline builder: one engine for every pipeline. From a validated
 * PipelineConf it makes, like grout's worker graphs or ip_pipeline's objects:
 *   - per lcore that has an RDMA stage, one SharedIOContext (one send CQ, one receive
 *     CQ, the SRQ) sized by the sum of its stages' needs (a file's larger value wins),
 *     a completion router so that every role of the lcore shares those CQs, and one
 *     SRQ refill (with one receive pool) for all the flows received there;
 *   - per flow, its QP pairs (rdma_cm or direct), pools, responder memory and its two
 *     roles, a requester on its rdma_tx stage's lcore and a responder on its rdma_rx
 *     stage's lcore; a two-host flow, the one of them whose stage is here, connected
 *     over rdma_cm to the other host's (remote_flow.h);
 *   - the rings, with the producer/consumer flags the file declares;
 *   - the stages, from the table of kinds (kKinds in graph.cpp), placed on their lcores in
 *     file order, each lcore's loop idling only when all of its stages are idle.
 * Then graph_launch runs every lcore's loop. Nothing here prints or exits: errors come
 * back as -1 with *err naming the object and the cause. */
#pragma once

#include "conf/config.h"
#include "engine/cq_router.h"
#include "engine/ctrl_port.h"
#include "engine/histogram.h"
#include "engine/pingpong.h"
#include "engine/requester.h"
#include "engine/responder.h"
#include "engine/run_control.h"
#include "pipeline/flow.h"
#include "pipeline/flow_params.h"
#include "pipeline/flow_shape.h"
#include "pipeline/lcore_loop.h"
#include "pipeline/remote_flow.h"
#include "pipeline/stage.h"
#include "verbs/caps.h"
#include "verbs/ctrl_qp.h"
#include "verbs/device.h"
#include "verbs/io_context.h"

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

struct rte_mempool;
struct rte_ring;

namespace rp {

struct Graph;
struct GraphLcore;
struct GraphStage;

/* One lane of a flow with several rdma_tx stages (seed 002's QP sharing): a requester
 * on its stage's lcore, posting one-sided verbs to a passive far end. Shared: every
 * lane posts to all of the flow's QPs, into its own slice of each QP's memory, with its
 * share of each send queue, and polls their one send CQ, handing the other lanes'
 * completions over through rings. Else the lane owns its QPs (every T-th) and a send CQ
 * of its own. The far end's memory is the flow's, checked by its responder. */
struct GraphLane {
	GraphStage *stage = nullptr;
	GraphLcore *lcore = nullptr;
	FlowParams params;                           // its share: QPs, messages, send queue
	Requester requester;
	std::unique_ptr<FlowObjects> objs;           // its own QPs and pool (not shared)
	Responder passive;                           // its far ends' QPs: set up, never run (no memory)
	SharedIOContext io, passive_io;              // its send CQ and its far ends' context (not shared)
	bool has_io = false, has_passive_io = false;
	~GraphLane();
};

/* One flow: its objects and its two roles (a two-host flow: the one whose end is here). */
struct GraphFlow {
	const FlowConf *conf = nullptr;
	FlowParams params;                 // the flow as its roles run it (sizes, counts, hooks)
	RoleShape shape;                   // its sizes (graph_plan): pools, CQ entries, memory
	const FlowShapeOps *form = nullptr;   // its shape's row (graph_plan, before its stages are placed)
	std::unique_ptr<RemoteEnd> remote; // two hosts: this end (client: tx only; server: rx only)
	std::unique_ptr<FlowObjects> objs = std::make_unique<FlowObjects>();
	Requester requester;
	Responder responder;
	RunControl ctl;                    // requester and responder of this flow; ctl.run: the run's
	GraphLcore *tx = nullptr, *rx = nullptr;
	Stage *tx_stage = nullptr, *rx_stage = nullptr;
	bool fed = false;                  // rdma_tx takes its messages from a ring
	bool handed_on = false;            // rdma_rx hands received buffers to a ring
	bool has_gen = false;              // gen stages make its messages (in its send pool)
	rte_mempool *fed_pool = nullptr;   // fed: where its buffers come from (and go back to)
	MrTable fed_mrs;                   // fed from a pool of another device: registered on this one too
	/* Lanes (several rdma_tx stages): the requesters are theirs; shared, requester is the
	 * template their QPs come from and lane_io the send CQ all of them poll. */
	std::vector<std::unique_ptr<GraphLane>> lanes;
	bool share_qps = false;
	SharedIOContext lane_io, passive_io;   // shared: the lanes' send CQ; the far ends' context
	bool has_lane_io = false, has_passive_io = false;
	std::vector<rte_ring *> lane_rings;    // shared: each lane's completions handed over
	/* The lanes' final counts by slice of the far end (QP, or a lane's of a shared QP),
	 * which the last lane to finish publishes to the responder (requester_join_lanes). */
	std::vector<uint64_t> lanes_sent, lanes_completed;
	std::unique_ptr<bool[]> lanes_failed;
	std::atomic<uint32_t> lanes_left{0};
	/* Ping-pong: an echo stage answers its rdma_tx; ping and pong are its roles then
	 * (requester and responder stay unused). */
	PingPong ping, pong;
	std::unique_ptr<Histogram> hist;   // ping-pong: half round trips, ns
	/* UC with software reliability: the responder's address of the requester's control
	 * QP (ACKs), the requester's of the responder's (restart requests), and the
	 * requester's retransmission headers registered. */
	CtrlDest ack_dest, request_dest;
	ibv_mr *hdr_mr = nullptr;
	/* --plant: what each spec that matched it did (graph_plan); the run logs them. */
	std::vector<std::string> planted;
	bool reliable() const { return params.reliability == Reliability::software && params.uc; }
	bool serves() const { return remote && remote->server; }   // the receiving end of a two-host flow
	bool listens() const { return remote && remote->listens; } // a two-host flow's end that listens (the other dials)
	GraphLcore *end_here() const { return tx ? tx : rx; }      // an end's lcore (two hosts: the one here)
	~GraphFlow();
};

/* One stage of the file, made from its kind. */
struct GraphStage {
	const StageConf *conf = nullptr;
	Stage st;
	GraphLcore *lcore = nullptr;
	GraphFlow *flow = nullptr;         // gen, rdma_tx, rdma_rx
	std::vector<GraphFlow *> origins;  // the flows whose messages reach its input
	double duration_s = 0;             // a gen of a flow that runs for a duration: that (0: a count)
	std::unique_ptr<StageState> state; // what its kind keeps beyond the Stage (st.ctx points in)
};

/* A device the pipeline uses, opened and probed by the caller. */
struct GraphDevice {
	Device *dev = nullptr;
	const DeviceCaps *caps = nullptr;
};

/* One lcore: its io context (when it has RDMA stages), the routers of its shared CQs,
 * the SRQ's one refill and receive pool, and its loop. */
struct GraphLcore {
	unsigned lcore = 0;
	Graph *g = nullptr;
	const IoContextConf *conf = nullptr;   // nullptr: no RDMA stage here
	Device *dev = nullptr;                 // its io context's (graph_build)
	const DeviceCaps *caps = nullptr;
	SharedIOContext io;
	bool has_io = false;
	const VerbsOps *ops = nullptr;         // its CQ polling variant (cq_api)
	CqRouter send_router, recv_router;
	RecvRefill refill;
	std::mutex rq_mu;                      // setup: flows' accept threads filling per-QP queues
	bool starved = false;                  // --inject-rnr: nothing is ever posted to receive
	rte_mempool *rx_pool = nullptr;        // SEND receives (nullptr: zero-SGE receives only)
	MrTable rx_mrs;
	uint32_t rx_pool_n = 0, rx_bytes = 0;
	/* Derived sizes (graph_plan). srq: the receives the lcore keeps posted, in its SRQ or,
	 * with recv_queue = "qp", over its QPs' own receive queues (then it has no SRQ). */
	uint64_t send_cq = 0, recv_cq = 0, srq = 0, srq_threshold = 0;
	LcoreLoop loop;
	CtrlQp ctrl;                           // reliable UC flows' ACKs, both ways (has_ctrl)
	bool has_ctrl = false;
	CtrlPort port;                         // ctrl's receive side: ACKs and restart requests
	std::vector<GraphFlow *> requesters, responders;
	std::vector<GraphFlow *> pingers, echoers;   // ping-pong flows' two sides
	std::vector<GraphLane *> lanes;              // lanes of flows with several rdma_tx stages
	uint32_t nplaced = 0;                  // stages placed here (graph_plan)
	double cpu_s = 0;
	LcoreCpu cpu;                          // its thread's CPU clock, for the metrics while it runs
	int rc = 0;
	std::atomic<bool> done{false};         // this lcore: wo, main: ro
	bool has_roles() const
	{
		return !requesters.empty() || !responders.empty() || !pingers.empty() || !echoers.empty() || !lanes.empty();
	}
};

struct GraphRing {
	const RingConf *conf = nullptr;
	rte_ring *ring = nullptr;
	std::vector<GraphStage *> producers, consumers;
};

struct Graph {
	const PipelineConf *conf = nullptr;
	std::vector<GraphDevice> devs;         // the caller's, in graph_device_names' order
	RunControl run;                        // abort, pause, end for every flow
	std::vector<std::unique_ptr<GraphFlow>> flows;
	std::vector<std::unique_ptr<GraphStage>> stages;     // file order
	std::vector<std::unique_ptr<GraphRing>> rings;
	std::vector<std::unique_ptr<GraphLcore>> lcores;
	bool use_wr = false;                   // some flow posts through ibv_qp_ex (asked for and present)
	bool planned = false;
	RemoteWatch watch;                     // two-host flows' connections (graph_build fills it)
	std::vector<void *> squeezed;          // --inject-pool-squeeze: buffers held out of squeezed_from
	rte_mempool *squeezed_from = nullptr;
	/* Progress worth a line while building (a server waiting for its clients); the
	 * caller prints it, or not. */
	std::function<void(const std::string &)> note;
	/* Called once every server of the pipeline listens, before any client connects
	 * (a job's ranks wait there for each other, so no client asks a server that is not
	 * listening yet); non-zero fails the build with *err. */
	std::function<int(std::string *)> listening;
	~Graph();
};

/* Flow f of pipeline c as its roles run it: its settings, the run's count or duration,
 * results and warm-up, the pipeline's test hooks where they act on it. */
FlowParams flow_params(const PipelineConf &c, const FlowConf &f);

/* A flow's `sizes` list is a size sweep, like perftest's -a: the pipeline runs once per
 * size, in turn, every flow with a list taking its k-th size in step k (the lists have
 * one length). *steps gets the pipelines, one size per flow (one step: c as it is).
 * Returns 0, or -1 with *err when the lists differ in length. */
int graph_sweep(const PipelineConf &c, std::vector<PipelineConf> *steps, std::string *err);

/* A step's name, its sweeping flows' sizes in c's order: "64B", "4096B+64B". */
std::string graph_step_name(const PipelineConf &c, const PipelineConf &step);

/* The plan of c (one size per flow: a step of graph_sweep), before EAL or any device: flows, stages, rings and what flows through
 * them (counts, sizes, the pool each buffer returns to), checked. Creates nothing.
 * Returns 0, or -1 with *err = "FILE:LINE: PATH: why". */
int graph_plan(const PipelineConf &c, Graph *g, std::string *err);

/* The devices a planned graph's io contexts use, in the file's order (each once). */
std::vector<const DeviceConf *> graph_devices(const Graph &g);

/* Builds c on devs (graph_devices(g)'s, opened and probed by the caller, in that
 * order), planning it first unless g was: everything above, created and connected,
 * nothing launched. A flow whose two ends are on two devices crosses between them
 * (rxeA -> rxeB over their wire); a two-host flow's end connects to (or waits for) the
 * other host's (g->watch then holds its connections, for the caller to watch while
 * the lcores run). Returns 0, or -1 with *err. */
int graph_build(const PipelineConf &c, const std::vector<GraphDevice> &devs, Graph *g,
		std::string *err);

/* An lcore's job (rte_eal_remote_launch): starts its roles, runs its loop. */
int graph_lcore_run(void *lcore);

/* Stops every flow with an end (or a lane) on dev's port (port 0: on dev at all),
 * naming why (a static string); the other flows go on. Safe from another thread while
 * the lcores run: it reads the built graph and stores atomics only. Returns how many
 * flows it stopped. */
unsigned graph_stop_flows_on(const Graph &g, const Device *dev, uint8_t port, const char *why);

/* Where a pool's buffers are after the run, for the "buffers not returned" check:
 * its size less what is in it and what is posted in an SRQ. */
uint64_t graph_buffers_out(const Graph &g);

} // namespace rp
