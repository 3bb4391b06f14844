/* The requesting role of a flow (runs on its lcore, owns its state): N RC QPs sharing
 * one send CQ. Per QP it takes buffers from an rte_mempool, prepares them (payload
 * pattern for sends and writes, a poison value for reads and atomics), posts chains of
 * one verb, and retires them on selectively signalled completions, checking read
 * results and atomic return values. Flow control for verbs that consume receives: the
 * responder RDMA-writes each QP's consumed count into that QP's credit word. */
#pragma once

#include "engine/types.h"
#include "engine/counters.h"
#include "engine/histogram.h"
#include "engine/idle.h"
#include "engine/qp_table.h"
#include "engine/reliability.h"
#include "engine/run_control.h"
#include "engine/verbs_ops.h"
#include "engine/wr_chain.h"
#include "verbs/memory.h"

#include <cstdint>
#include <memory>
#include <string>

struct rte_mempool;
struct rte_ring;

namespace rp {

inline constexpr uint32_t kTxPollBurst = 32;

/* Busy bursts between the requester's looks at the control plane (abort, the console's
 * end, pause, rates and batches): a burst that did nothing looks every time, and the
 * deadline and the warm-up's end are checked every burst, so a stop is seen at most
 * this many busy bursts late (microseconds), and a rate in force is paced every burst. */
inline constexpr uint32_t kLookEvery = 16;

/* Prebuilt chains (PrebuiltChains): a QP's period at most, and all QPs' WRs at most
 * (an entry is a WR and its SGE, 144 B): beyond, chains are built per post. The default
 * one-QP run's period is its 1024-slot window. */
inline constexpr uint32_t kMaxPrebuiltPeriod = 1024;
inline constexpr uint32_t kMaxPrebuiltEntries = 8192;

/* QPs shared by the requesters of several lcores (lanes; seed 002's experiment): each
 * lane numbers its own messages per QP, and its wr_ids carry the lane above this bit.
 * Every lane polls the one send CQ; a completion of another lane's WR goes to that
 * lane through its ring, packed as status | QP index | sequence. */
inline constexpr unsigned kLaneShift = 48;
inline constexpr uint64_t kSeqMask = (1ull << 40) - 1;
inline constexpr uint32_t kMaxLanes = 64;

struct RequesterParams {
	Verb verb;
	uint32_t msg_bytes;
	uint32_t batch;
	uint32_t signal_every;
	uint32_t sq_depth;
	uint32_t window;            // responder slots per QP (credit window for consuming verbs)
	uint64_t messages;          // over all QPs; 0: run for duration_tsc
	uint64_t duration_tsc;
	uint64_t stall_tsc;
	uint64_t corrupt_msg;       // test hook: flip a byte of this message of QP 0 (UINT64_MAX: none)
	PostApi post_api = PostApi::classic;
	bool inline_send = false;
	bool fence = false;
	double ns_per_tsc = 0;      // for the completion-latency histograms
	/* Payload for a receiver that hands messages on to a verify stage: the first 8
	 * bytes are the message's key, the rest that key's pattern (the stage format). */
	bool self_describing = false;
	uint64_t warmup_tsc = 0;    // rates leave out what completed before this much of the run
	uint64_t tsc_per_msg = 0;   // a rate limit per flow (0: as fast as it goes)
	/* Fed by a ring from flows that run for a duration: no count and no deadline of
	 * its own; it sends what comes until its input ends (messages is 0). */
	bool count_from_input = false;
	/* UC made reliable in software: messages stay tracked until acknowledged
	 * (CtrlPort), retransmitted fast or on timeout. */
	bool reliable = false;
	uint64_t rto_min_tsc = 0, rto_max_tsc = 0, rto_initial_tsc = 0;
	uint32_t inject_loss = 0;        // of 2^32: data WRs tracked as sent but never posted
	/* A message (or its retransmission) spans packets, so a loss can leave the
	 * receiving QP broken without a word: two timeouts in a row ask for a restart. */
	bool restart_on_timeouts = false;
	bool bad_retx_header = false;    // test hook: the first retransmission targets outside the window
	/* Reliable write_imm: messages go as chunks of this many bytes, each tracked on its
	 * own (Chunking in wr_chain.h; 0: whole messages). */
	uint32_t chunk_bytes = 0;
	/* WRs outstanding over all of its QPs at most (0: each QP's send queue is the only
	 * bound): a failed QP flushes every WR it holds into the shared send CQ, so the
	 * builder sizes that CQ by this when qps x sq_depth would not fit the device. */
	uint32_t wr_budget = 0;
	/* Messages in flight over each flow's QPs at most, credited once for the flow: its
	 * responder writes the flow's consumed count into the flow's credit word
	 * (Requester::flow_credit), so that its SRQ holds this many whatever the QP count.
	 * 0: none (each QP's window, with its own credit word, is the only bound). */
	uint32_t flow_window = 0;
	/* Buffers bound to the QPs (Requester::bound) where nothing feeds them and nothing
	 * is retransmitted, the QPs are not shared by lanes (whose pool is shared too) and
	 * the pool holds them all when the run starts (a test may have squeezed it). */
	bool bind_buffers = true;
	/* A window (a QP's, the flow's) that credit reopens by whole chains: the responder
	 * credits every step messages, so a window of at least batch + step - 1 always
	 * reopens by a whole chain, and a chain it would cut short is held instead (one
	 * ibv_post_send per batch, as perftest keeps its post lists whole). */
	bool whole_chains_window = false, whole_chains_flow = false;
};

struct CtrlDest;

struct RequesterQp {
	ibv_qp *qp = nullptr;
	ibv_qp_ex *qpx = nullptr;   // set with PostApi::wr (the QP was created with send ops)
	uint64_t target = 0;        // messages for this QP (UINT64_MAX until the duration ends)
	uint64_t sent = 0;
	uint64_t completed = 0;     // retired, successfully or not
	uint64_t verified = 0;      // read results and atomic return values that checked out
	uint64_t credit = 0;        // consumed count last read from credit_word
	const volatile uint64_t *credit_word = nullptr;   // nullptr: the verb needs no credit
	RemoteTarget remote{};
	void **inflight = nullptr;  // buffer of message seq at [seq & inflight_mask]
	uint32_t *lkeys = nullptr;  // bound buffers: their lkeys, same index
	uint32_t bound = 0;         // bound buffers: inflight[0..bound) are this QP's
	uint64_t *post_tsc = nullptr;  // when message seq's chain was posted, same index
	uint32_t flow = 0;          // the flow it belongs to (index into flow_errors)
	bool failed = false;        // a completion error moved it to the error state
	bool settled = false;       // its first error completion was weighed (flow window: Requester::FlowCredit::lost)
	/* Reliable: the send queue counts WRs (data and retransmissions, wr_id their index),
	 * completed counts what the receiver acknowledged, and credit_word points at
	 * ack_credit, which ACKs move. */
	uint64_t wr_posted = 0, wr_done = 0;
	uint64_t ack_credit = 0;
	uint64_t acked = 0;         // sequences (messages, or chunks) acknowledged: the ACKs' cum
	uint8_t *marks = nullptr;   // per message, same index as inflight: kMarkLast | times retransmitted
	Rto rto;
	/* Where a restart request goes: the receiver's data QP and its lcore's control QP
	 * (nullptr: nowhere, the request is only counted). */
	uint32_t peer_qpn = 0;
	const CtrlDest *peer_ctrl = nullptr;
	bool paused = false;        // a restart is due: nothing new goes until it is done
	bool asked = false;         // ... and was asked for (once the send queue was empty)
	uint64_t epoch = 0;         // pauses so far: the current one's number (AckMsg.epoch)
};

/* Timeouts in a row (no ACK moving the QP on) that make a sender whose messages span
 * packets ask for a restart. Not two: with 64 KiB messages on rxe a queue alone times
 * two out in a row now and then (without loss, restarts so cost 0.74x the goodput). */
inline constexpr uint32_t kTimeoutsBeforeRestart = 3;

/* A sequence's marks (reliable): whether it was its QP's last, and its retransmissions. */
inline constexpr uint8_t kMarkLast = 0x80;
inline constexpr uint8_t kMarkRetxMask = 0x7f;

struct CtrlPort;

struct Requester;
/* How a chain ends: an ordinary chain, the QP's last (flagged and signalled), or
 * signalled (a requester fed until its input ends: any chain may be a QP's last). */
enum ChainEnd : uint32_t { kChainMore = 0, kChainLast = 1, kChainSignalled = 2 };
using PostChainFn = int (*)(Requester *r, uint32_t qi, uint32_t n, ChainEnd end);
using RetireFn = void (*)(Requester *r, uint32_t qi, uint64_t upto);

struct Requester {
	const VerbsOps *ops = &kIbvOps;
	ibv_cq *send_cq = nullptr;
	rte_mempool *pool = nullptr;
	const MrTable *mrs = nullptr;
	RunControl *ctl = nullptr;
	RequesterParams p{};
	uint32_t nqps = 0;
	std::unique_ptr<RequesterQp[]> qps;
	uint64_t wr_out = 0;   // WRs posted and not yet known done, over all QPs (a failed QP's stay)
	std::unique_ptr<uint64_t[]> qp_sent;    // published to the responder at the end
	std::unique_ptr<uint64_t[]> qp_completed;
	std::unique_ptr<bool[]> qp_failed;
	uint32_t nflows = 1;
	std::unique_ptr<WcErrorCounts[]> flow_errors;   // completion errors per flow and status
	std::unique_ptr<Histogram[]> flow_latency;      // post to signalled completion, ns, per flow
							// (reliable: post to acknowledgement of messages sent once: the RTT)
	std::unique_ptr<FlowLive[]> flow_live;          // per flow, readable while running
	std::unique_ptr<uint64_t[]> flow_sent;          // per flow, for the rate limit and the flow window
	struct FlowCredit {
		const volatile uint64_t *word = nullptr;   // the flow's consumed count, written by its responder
		uint64_t credit = 0;                       // the largest count read from it
		uint64_t lost = 0;                         // sent on QPs that failed, never to be consumed
	};
	std::unique_ptr<FlowCredit[]> flow_credit;      // per flow, with p.flow_window
	uint32_t cursor = 0;                            // the QP a burst's posting starts at
	std::unique_ptr<FlowControl[]> flow_ctl;        // per flow: rate and batch, set while running
	struct Pace {
		uint64_t tsc_per_msg = 0, t0 = 0, sent0 = 0;   // the rate in force since t0, when sent0 were sent
	};
	std::unique_ptr<Pace[]> pace;
	RoleLive live;                                  // polls, for the control plane
	std::unique_ptr<uint64_t[]> post_tsc_mem;
	QpTable table;
	SendChain chain;
	/* Bound buffers' rate run: each QP's prebuilt chain (period 0: none, the chain above
	 * is built per post instead). */
	PrebuiltChains pre;
	bool prebuilt = false;                  // post_chain posts from pre
	uint32_t (*burst)(Requester *) = nullptr;   // requester_burst's shape, chosen at start
	PostChainFn post_chain = nullptr;       // chosen at setup for p.verb
	RetireFn retire = nullptr;
	std::unique_ptr<void *[]> inflight_mem;
	std::unique_ptr<uint32_t[]> lkey_mem;
	/* Each QP keeps the buffers of its first inflight_mask + 1 messages and reuses them
	 * (message seq in inflight[seq & inflight_mask]): no pool traffic per message. Only
	 * where the pool is this requester's own and nothing feeds or retransmits, and
	 * the pool holds inflight_mask + 1 buffers per QP when the run starts (role_shape
	 * sizes it so): else buffers come from the pool per chain. */
	bool bound = false;
	uint32_t inflight_mask = 0;
	void *bufs[kMaxBatch];
	Idler idler;                            // adaptive polling; inert when busy polling
	RequesterCounters c;
	/* Optional (requester_set_input): messages come made from this ring, buffers of
	 * `pool`, instead of from the pool with a payload filled here. */
	rte_ring *in = nullptr;
	/* Completions of QPs not ours on the send CQ go to the role sharing it (else they
	 * count as errors of an unknown QP). */
	CqPeer send_peer;
	/* A lane of shared QPs: rings[l] takes completions for lane l (multi-producer);
	 * nullptr: the QPs are this requester's alone. */
	uint32_t lane = 0;
	rte_ring *const *lane_rings = nullptr;
	uint32_t nlanes = 0;
	uint64_t wr_tag = 0;                    // lane << kLaneShift, in every wr_id
	/* A lane of a flow whose far end checks its memory (requester_join_lanes): QP qi is
	 * the far end's slice qi x key_stride + key_lane (its payload keys and counts); the
	 * flow's counts by slice, and the lanes yet to finish (the last one publishes them). */
	uint32_t key_stride = 1, key_lane = 0;
	uint64_t *lanes_sent = nullptr;
	uint64_t *lanes_completed = nullptr;
	bool *lanes_failed = nullptr;
	std::atomic<uint32_t> *lanes_left = nullptr;
	/* Loop state, so that the loop can also run one burst at a time (as a stage). */
	uint64_t deadline = 0;
	uint64_t last_progress = 0;
	/* What the last look at the control plane found (kLookEvery): each flow's rate
	 * target (due, UINT64_MAX: none) and batch (cap); paced: a rate or a pause is in
	 * force, so due moves with the clock and is worked out every burst. */
	uint32_t until_look = 0;                // busy bursts until the next look (0: this one)
	bool paced = false;
	uint64_t due[kMaxFlows] = {};
	uint32_t cap[kMaxFlows] = {};
	uint64_t warm_end = 0;                  // start + p.warmup_tsc
	uint64_t warm_tsc = 0;                  // when the warm-up ended (0: not yet, or none)
	uint64_t warm_completed = 0;            // c.completed then
	bool timed_out = false;
	bool finished = false;
	/* Reliable: the lcore's control QP ACKs arrive on, the retransmission headers
	 * (registered by the builder: hdr_lkey) and a chain of two-SGE WRs to send them. */
	struct Retx {
		ibv_send_wr wr;
		ibv_sge sge[2];
	};
	CtrlPort *port = nullptr;
	std::unique_ptr<uint8_t[]> marks_mem;
	std::unique_ptr<RetxHeader[]> hdrs;
	size_t hdrs_bytes = 0;
	uint32_t hdr_lkey = 0;
	std::unique_ptr<Retx[]> retx;
	/* Reliable: how messages are cut, and the mask of what is tracked per sequence
	 * (post_tsc, marks, hdrs: a window of messages in chunks). */
	Chunking ck;
	uint32_t seq_mask = 0;
	uint64_t rng = 0x9e3779b97f4a7c15ull;   // inject_loss's draws
	char stall_why[320] = {};               // a stall's fail_reason, naming what held which QP back
};

/* Setup: checks the sizing invariants, preallocates nqps QP states and picks the
 * verb's functions. Then fill in qps[i].qp/.remote/.credit_word (and, with a flow
 * window, each flow's flow_credit[f].word) and call requester_add_qps(). Returns 0 or
 * -errno with *err. */
int requester_init(Requester *r, uint32_t nqps, std::string *err);
int requester_add_qps(Requester *r, std::string *err);

/* Optional, after requester_init: the QPs form flows of sizes[f] QPs each, in order
 * (all share this lcore's context). Each flow sends p.messages, spread round-robin
 * over its QPs; completion errors are counted per flow. Without it: one flow. */
int requester_set_flows(Requester *r, const uint32_t *sizes, uint32_t nflows, std::string *err);

/* QP k's share of a flow's m messages spread round-robin over its n QPs (what the
 * requester sends on it, and what a two-host server expects there). */
inline uint64_t qp_share(uint64_t m, uint32_t n, uint32_t k)
{
	return m / n + (k < m % n);
}

/* Optional, after requester_init: messages come made from `in` (a gen stage, or a relay's
 * verify stage), buffers of `pool` registered in `mrs`, which completions return them
 * to; they are posted as they are. Returns 0 or -EINVAL with *err. */
int requester_set_input(Requester *r, rte_ring *in, rte_mempool *pool, const MrTable *mrs, std::string *err);

/* Optional, after requester_set_flows (message counts known): this requester is lane
 * `lane` of `nlanes` posting to the same QPs (same qp_nums) and polling the same send
 * CQ; rings[l] (multi-producer, single-consumer, room for every WR of every lane) takes
 * lane l's completions that another lane polled. Each lane's send queue budget
 * (p.sq_depth) must be its share of the QPs' depth. Returns 0 or -EINVAL with *err. */
int requester_set_lane(Requester *r, uint32_t lane, rte_ring *const *rings, uint32_t nlanes, std::string *err);

/* Optional, after requester_init: this requester is lane `lane` of `nlanes` of one
 * flow, its QP qi the far end's slice qi x nlanes + lane (shared QPs: lane's slice of QP
 * qi; else the flow's QP of that index). Its payload keys follow the slice's, and at its
 * end it writes its counts into sent[slice], completed[slice] and failed[slice]; the
 * last of the lanes to finish (*left counts them down) publishes them to its RunControl. */
int requester_join_lanes(Requester *r, uint32_t lane, uint32_t nlanes, uint64_t *sent, uint64_t *completed,
			 bool *failed, std::atomic<uint32_t> *left, std::string *err);

/* The pattern key's QP index of this requester's QP qi (its far end's slice). */
inline uint32_t key_qp(const Requester *r, uint32_t qi)
{
	return qi * r->key_stride + r->key_lane;
}

/* Lcore body. Returns 0 when every message was posted, completed and checked. */
int requester_run(Requester *r);

/* The same, a burst at a time (the rdma_tx stage): start, then burst until finished
 * (returns messages posted plus completions seen), then finish. */
void requester_start(Requester *r);
uint32_t requester_burst(Requester *r);
/* Whether the run can take the lean burst (chosen at start: Requester::burst). */
bool requester_lean(const Requester *r);
int requester_finish(Requester *r);

/* Fed by a ring: nothing more will come (the stages before it are done and the ring is
 * drained). Each QP ends with what it sent; fewer than its count is a failure. */
void requester_input_ended(Requester *r);

/* Reliable: one ACK for QP qi (the lcore's CtrlPort; unit tests call it directly). */
void requester_on_ack(Requester *r, uint32_t qi, const AckMsg &a, uint64_t now);

/* One send completion of this requester's QPs (CqPeer::on_wc of a role sharing the CQ). */
void requester_on_send_wc(void *requester, const ibv_wc &wc, uint64_t now);

} // namespace rp
