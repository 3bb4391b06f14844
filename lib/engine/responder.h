/* The responding role of a flow (runs on its lcore, owns its state): N RC QPs sharing
 * one receive CQ, one send CQ and one SRQ. For verbs that consume receives it checks
 * each message as its completion arrives (sequence, immediate, length, payload),
 * replenishes the SRQ in batches and returns credit per QP by RDMA-writing the
 * consumed count into the requester's credit word. For one-sided verbs it waits for
 * the requester and then checks the final state of its memory: every window slot's
 * last write, every atomic word's final value. */
#pragma once

#include "engine/types.h"
#include "engine/counters.h"
#include "engine/idle.h"
#include "engine/pattern_match.h"
#include "engine/requester.h"
#include "engine/qp_table.h"
#include "engine/reliability.h"
#include "engine/run_control.h"
#include "engine/recv_refill.h"
#include "engine/verbs_ops.h"
#include "verbs/ctrl_qp.h"

#include <cstdint>
#include <memory>
#include <string>

struct rte_mempool;
struct rte_ring;

namespace rp {

inline constexpr uint32_t kRxPollBurst = 32;
/* Credit writes in flight per QP; each is signalled so its source word is not reused early. */
inline constexpr uint32_t kCreditRing = 4;
/* In a flow credit write's wr_id: its count is then known when it completes (landed). */
inline constexpr uint64_t kFlowCreditTag = 1ull << 63;
static_assert(kRxPollBurst <= kMaxBatch, "SRQ refill chains are sized threshold + one poll burst");

struct ResponderParams {
	Verb verb;
	uint32_t msg_bytes;
	uint32_t slots;             // per QP
	uint32_t credit_step;       // send credit after this many messages of a QP
	bool verify;
	uint64_t stall_tsc;
	uint64_t drain_tsc;         // after the requester is done: wait this long for stragglers
	/* UC made reliable in software: messages placed by the sequence in their immediate,
	 * duplicates dropped, ACKs (no credit writes) on the lcore's control QP. */
	bool reliable = false;
	uint32_t ack_every = kDefaultAckEvery;
	uint64_t ack_tsc = 0;
	/* A server's: with every message in, done once nothing arrived for this long, if
	 * the client's disconnect did not say so first (a DREQ lost on the wire is not
	 * resent once the client has gone). Longer than the sender's largest RTO, so a
	 * lost last ACK still draws a retransmission that is answered. 0: wait for the
	 * requester to be done. */
	uint64_t linger_tsc = 0;
	/* A QP stopped after a broken message is restarted this long after (see
	 * VerbsOps::stop_qp). */
	uint64_t restart_settle_tsc = 0;
	/* Reliable write_imm: the sender cuts messages into chunks of this many bytes
	 * (Chunking in wr_chain.h; 0: whole). */
	uint32_t chunk_bytes = 0;
	/* The QPs share the flow's window (RequesterParams::flow_window): the flow's consumed
	 * count goes into the sender's flow credit word every flow_step messages, through
	 * one QP at a time (Responder::credit_qp), so the writes land in order. 0: none. */
	uint32_t flow_window = 0;
	uint32_t flow_step = 0;
	/* Credit per QP too (each QP's window smaller than the flow's: write_imm's slots). */
	bool qp_credit = true;
	/* A flow credit write not landed after this long goes again through the next QP:
	 * the sender's end of its QP may have failed, which this end cannot see (0: never). */
	uint64_t credit_retry_tsc = 0;
	/* Lanes sharing the QPs (one-sided verbs): each QP's memory is this many slices, lane
	 * t's of QP qi being slice qi x slices + t, with its own window (or word) and count
	 * (RunControl::qp_sent, by slice), so the final check sees every lane's last writes. */
	uint32_t slices = 1;
};

struct CtrlQp;
struct CtrlPort;

struct ResponderQp {
	ibv_qp *qp = nullptr;
	uint64_t received = 0;
	uint32_t slot = 0;          // received % slots: a write_imm's next slot
	uint64_t credit_posted = 0;
	uint64_t credit_completed = 0;
	uint64_t credit_last = 0;   // consumed count last written
	uint64_t handed = 0;        // with an output ring: messages the ring took (credit counts these)
	uint64_t credit_remote_addr = 0;
	uint32_t credit_rkey = 0;
	bool saw_last = false;
	bool failed = false;
	/* Credit writes flushed by a peer that announced its counts and left: judged at the
	 * end, once every receive it sent has been polled (they may still be in the receive
	 * CQ when the flush is seen); no more credit goes through the QP meanwhile. */
	uint32_t flushed_credit = 0;
	/* Reliable: */
	RxWindow win;
	CtrlDest ack_to;            // the sender's control QP
	uint32_t peer_qpn = 0;      // the sender's data QP, named in each ACK
	uint32_t unacked = 0;       // messages since the last ACK
	uint64_t first_unacked_tsc = 0;
	uint64_t acked_credit = 0;  // credit the last ACK gave
	uint64_t highest = 0;       // one past the highest sequence that arrived
	uint64_t last_seq = UINT64_MAX;   // the QP's last message (its immediate said so)
	bool ack_now = false;       // a duplicate, a new hole or the last message: ACK at once
	bool complete = false;      // everything up to the last message arrived
	uint64_t restart_at = 0;    // stopped (ERR): restart it then (0: running)
	bool restarted = false;     // the next ACK says so (kAckRestarted)
	uint64_t epoch = 0;         // the sender's pause this QP last restarted for (AckMsg.epoch)
	bool broken = false;        // a receive completed in error: ACKs say so (kAckBroken) until asked to restart
	uint32_t *chunks_in = nullptr;   // cut messages: per slot, chunks of its message in so far
};

struct Responder {
	const VerbsOps *ops = &kIbvOps;
	ibv_cq *recv_cq = nullptr;
	ibv_cq *send_cq = nullptr;
	ibv_srq *srq = nullptr;
	rte_mempool *rx_pool = nullptr;          // SEND receive buffers (two-sided verbs)
	unsigned char *memory = nullptr;         // window (writes, reads) or words (atomics), per QP
	uint64_t *credit_src = nullptr;          // nqps x kCreditRing words, registered
	uint32_t credit_lkey = 0;
	RunControl *ctl = nullptr;
	ResponderParams p{};
	uint32_t nqps = 0;
	std::unique_ptr<ResponderQp[]> qps;
	QpTable table;
	RecvRefill refill;
	Idler idler;                             // adaptive polling; inert when busy polling
	ResponderCounters c;
	RoleLive live;                           // polls and receives, for the control plane
	FlowLive arrived;                        // its flow as this end sees it (completed: received),
						 // the view of a server whose requester is on another host
	ReceiveLive rx_live;                     // what arrived and its checks, for the control plane
	/* Optional: received SEND buffers go on here instead of back to the pool; the next
	 * stage checks their payload and frees them (payload checks here are then off). */
	rte_ring *out = nullptr;
	/* The sender's payload is self-describing (word 0 its key, the rest that key's
	 * pattern: a gen stage made it, or a verify stage will read it). */
	bool self_describing = false;
	/* A verify stage after the output ring checks the payload: here only the header. */
	bool payload_downstream = false;
	/* What the payload is checked against, from the three above (responder_start). */
	enum class PayloadCheck : uint8_t { none, pattern, self_describing } payload_check = PayloadCheck::none;
	/* The bytes the pattern check reads of each message (a self-describing payload's
	 * key word is not): what its matcher and the busy burst's tail variant are for. */
	uint32_t checked_bytes = 0;
	/* The receive burst's variant, chosen at responder_start: a flow not made reliable
	 * whose verb consumes receives has its completions checked in one pass (plain_*: where
	 * the payload is, whether an immediate carries the sequence); any other, one at a
	 * time (per_message). And the pattern check's variant for its message size. */
	enum class RecvBurst : uint8_t { per_message, plain_window_imm, plain_buffer, plain_buffer_imm } recv_burst =
		RecvBurst::per_message;
	PatternMatcher matcher = PatternMatcher::baseline;
	/* The work after a poll that returned completions, for the variant above (set at
	 * responder_start; responder_burst calls it, as rte_eth_rx_burst calls its PMD's). */
	uint32_t (*busy)(Responder *r, const ibv_wc *wc, int n) = nullptr;
	/* Received buffers the ring has not taken yet, and their QPs. Credit counts only what
	 * the ring took, so a QP's window bounds what is held: room for every window and a
	 * poll burst (responder_init). */
	std::unique_ptr<void *[]> held;
	std::unique_ptr<uint32_t[]> held_qp;
	uint32_t nheld = 0;
	uint32_t held_cap = 0;
	/* Received buffers checked here, to go back to the pool in one put per burst. */
	void *freed[kRxPollBurst];
	uint32_t nfreed = 0;
	uint64_t out_full = 0;                   // bursts the ring could not take whole
	/* Completions of QPs not ours on the send and receive CQs go to the role (or the
	 * lcore's router) sharing them. */
	CqPeer send_peer;
	CqPeer recv_peer;
	/* With p.flow_window: the sender's flow credit word, the QP its writes go through
	 * (the next once that one fails, or its write has not landed in credit_retry_tsc:
	 * the count is then written again), the count last written and what the output
	 * ring took over all QPs. */
	uint64_t flow_credit_addr = 0;
	uint32_t flow_credit_rkey = 0;
	uint32_t credit_qp = 0;
	uint64_t flow_credit_last = 0;
	uint64_t flow_credit_landed = 0;         // the count of the last flow credit write that completed
	uint64_t flow_write_tsc = 0;             // when the last one was posted
	bool flow_credit_again = false;
	uint64_t handed_total = 0;
	/* Responders of several flows on one lcore share its SRQ: one refill for all of them
	 * (nullptr: this responder's own). */
	RecvRefill *shared_refill = nullptr;
	RecvRefill &recv_refill() { return shared_refill ? *shared_refill : refill; }
	uint32_t credit_freed = 0;               // credit writes completed since the last scan
	/* Credit writes posted and not completed: with none, and nobody else's completions on
	 * the send CQ (send_peer), a burst does not poll it. */
	uint32_t credit_inflight = 0;
	ibv_wc first_flush{};                    // the first deferred flush (its status and opcode, if counted)
	bool credit_due = false;                 // messages arrived since the last scan
	/* Credit work after every busy burst, not only when some fell due (responder_start):
	 * a role sharing the send CQ, ACKs (reliable), a flow window's credit. */
	bool credit_every_burst = false;
	uint64_t published = 0;                  // c.received as the control plane last saw it
	/* Loop state, so that the loop can also run one burst at a time (as a stage). */
	uint64_t last_progress = 0;
	uint32_t lasts = 0;                      // QPs whose last message arrived
	uint32_t arrived_qps = 0;                // QPs 0..this-1 failed or have all their sender sent
	bool two_sided = false;                  // p.verb consumes receives (set at init and start)
	bool has_imm = false;                    // ... and carries an immediate (its last says so)
	bool finished = false;
	/* Reliable: the lcore's control QP (ACKs go out on it; restart requests come in
	 * through port, polled here too), and the QPs' receive bitmaps. */
	CtrlQp *ctrl = nullptr;
	CtrlPort *port = nullptr;
	std::unique_ptr<uint64_t[]> win_bits;
	Chunking ck;                             // how the sender cuts messages (reliable write_imm)
	std::unique_ptr<uint32_t[]> chunks_in_mem;
	uint32_t acks_waiting = 0;               // QPs with something to acknowledge after the last scan
	uint32_t restarting = 0;                 // QPs stopped, to restart (restart_at)
};

/* Bytes of responder memory per QP for the verb (0: none). */
uint64_t responder_memory_per_qp(Verb v, uint32_t msg_bytes, uint32_t slots);

/* Setup (p filled in): preallocates nqps QP states. Then fill in qps[i].qp and the
 * credit targets and call responder_add_qps(), which also pre-fills read windows. */
int responder_init(Responder *r, uint32_t nqps, std::string *err);
int responder_add_qps(Responder *r, std::string *err);

/* Reliable: restarts the QPs stopped at least restart_settle_tsc ago (the burst calls
 * it; unit tests too). A QP whose restart fails fails. */
void responder_finish_restarts(Responder *r, uint64_t now);

/* Reliable: the sender of QP qi asks for a restart in its pause epoch (reliability.h):
 * a new epoch restarts the QP, the current one is answered again, an older ignored. */
void responder_on_restart_request(Responder *r, uint32_t qi, uint64_t epoch, uint64_t now);

/* Lcore body. Returns 0 when everything the requester sent arrived and checked out. */
int responder_run(Responder *r);

/* The same, a burst at a time (the rdma_rx stage): start, then burst until finished
 * (returns the completions handled), then finish (returns what responder_run would). */
void responder_start(Responder *r);
uint32_t responder_burst(Responder *r);
int responder_finish(Responder *r);

/* Nothing to do per message until the requester is done (the requester's writes, reads
 * or atomics complete on its side only): a one-sided verb, not made reliable, handing
 * nothing on. Set up before launch. Its lcore may sleep meanwhile (LcoreLoop::bell). */
bool responder_passive(const Responder *r);

/* One send completion (a credit write) of this responder's QPs (CqPeer::on_wc). */
void responder_on_send_wc(void *responder, const ibv_wc &wc, uint64_t now);

/* One receive completion of this responder's QPs, polled by another role of its lcore
 * (CqPeer::on_wc). The SRQ receive it consumed is counted by the role that polled it. */
void responder_on_recv_wc(void *responder, const ibv_wc &wc, uint64_t now);

} // namespace rp
