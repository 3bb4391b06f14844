/* Ping-pong latency (ib_send_lat's measurement), as two roles of the pipeline: the
 * pinging role (a flow's rdma_tx stage) sends one message on each of its QPs and waits
 * for that QP's echo before it sends the next; the echoing role (its echo stage) sends
 * every message back as it arrives, from the very buffer it was received into. With N
 * QPs, N ping-pongs run side by side, one message in flight on each.
 *
 * Both roles run on their lcore's SharedIOContext like every other role: they poll
 * the lcore's send and receive CQs in bursts, hand completions of QPs they do not own
 * to the lcore's router, take receives from the lcore's SRQ and count what they
 * consumed in its one refill.
 *
 * What is timed is perftest's iteration, per QP: from one post to the next, halved (the
 * last one: post to echo), in a histogram in nanoseconds. Every echo is checked:
 * sequence (immediate), length and the payload pattern the pinging side wrote.
 *
 * Over UC with software reliability it is stop-and-wait: each echo acknowledges its
 * ping, the immediate carries the sequence, and a ping whose echo is late is sent
 * again (each QP's Rto, as a rate flow's: RFC 6298 from echoes of pings sent once,
 * doubled per retry, bounded). The echoing side
 * echoes a repeated ping again (its echo was lost) and the pinging side drops an echo
 * it already had; the echoing side stays after its last echo until the pinging side
 * ends (or, across hosts, until no repeat has come for twice the largest timeout).
 *
 * With RDMA writes (ib_write_lat's measurement) nothing completes at the receiving end:
 * each end has a slot per QP that the other writes into, and polls its last byte, which
 * carries the message's mark (write_mark: never 0, never its predecessor's) after the
 * pattern. The echoing side writes the slot back from where it landed. A byte of the
 * slot can show before the bytes ahead of it (a NIC, or rxe's memcpy, need not place a
 * message in order), so a message whose mark is in but whose pattern is not yet waits
 * (a burst at a time, up to settle_tsc) before it counts as corrupted. */
#pragma once

#include "engine/types.h"
#include "engine/counters.h"
#include "engine/histogram.h"
#include "engine/qp_table.h"
#include "engine/reliability.h"
#include "engine/run_control.h"
#include "engine/recv_refill.h"
#include "engine/verbs_ops.h"
#include "engine/wr_chain.h"
#include "verbs/memory.h"

#include <cstdint>
#include <memory>
#include <string>

struct rte_mempool;

namespace rp {

struct PingPongParams {
	Verb verb;                 // send, send_imm or write (verb_info(verb).ping_wait)
	uint32_t msg_bytes;
	uint64_t iterations;       // round trips over all QPs (split evenly, the first QPs one more)
	uint32_t sq_depth;         // sends in flight on a QP before their completions must be reaped
	uint32_t signal_every;     // one signalled send per this many
	bool inline_send;
	bool verify;
	uint64_t stall_tsc;
	uint64_t tsc_hz;
	uint64_t corrupt_msg = UINT64_MAX;   // test hook: flip a byte of this ping of QP 0
	bool reliable = false;               // UC made reliable: stop-and-wait (the verb is then send_imm)
	/* Until stopped: the pinging side ends when the run ends (ctl ending) with one more
	 * ping on each QP, flagged as its last; the echoing side ends each QP as that one
	 * comes (here or on another host). */
	bool until_stopped = false;
	uint64_t rto_min_tsc = 0, rto_max_tsc = 0, rto_initial_tsc = 0;
	uint64_t settle_tsc = 0;   // writes: how long a mark waits for its pattern (0: kSettleS, within stall_tsc)
};

struct PingPongQp {
	ibv_qp *qp = nullptr;
	uint64_t target = 0;       // round trips on this QP
	uint64_t sent = 0;         // messages sent (pings, or echoes of new pings)
	uint64_t posts = 0;        // sends posted, repeats included (wr_id, inflight)
	uint64_t arrived = 0;      // messages received (pinging side: echoes)
	uint64_t send_completed = 0;   // sends reaped, counted as posts
	uint64_t t_post = 0;       // pinging side: TSC of the last new ping
	uint64_t t_sent = 0;       // pinging side, reliable: TSC of its last (re)post
	Rto rto;                   // ... its timeout (backoff > 0: the ping went again)
	RemoteTarget peer{};       // writes: the far end's slot of this QP
	uint64_t settling = 0;     // writes: TSC the mark of the next message showed with its pattern not yet in (0: none)
	std::unique_ptr<void *[]> inflight;   // send buffer of post k at [k & inflight_mask]
};

struct PingPong {
	bool echo = false;                  // the echoing role (else the pinging one)
	const VerbsOps *ops = &kIbvOps;
	ibv_cq *send_cq = nullptr;
	ibv_cq *recv_cq = nullptr;
	ibv_srq *srq = nullptr;
	RecvRefill *refill = nullptr;       // the lcore's
	rte_mempool *rx_pool = nullptr;     // the SRQ's buffers (the echoing side sends from them)
	rte_mempool *tx_pool = nullptr;     // pinging side: its send buffers
	const MrTable *tx_mrs = nullptr;    // the send buffers' registrations
	RunControl *ctl = nullptr;
	/* Writes: this end's slots, QP qi's at slots + qi x slot_stride (the far end writes
	 * them; the echoing side writes back from them, registered in slot_mrs). */
	uint8_t *slots = nullptr;
	uint32_t slot_stride = 0;
	MrTable slot_mrs{};
	CqPeer send_peer, recv_peer;        // the lcore's router: other roles' completions
	PingPongParams p{};
	SendChain chain;                    // one pre-initialised WR
	std::unique_ptr<PingPongQp[]> qps;
	uint32_t nqps = 0;
	uint32_t inflight_mask = 0;
	bool polls_memory = false;          // writes: arrivals are found in the slots (set by init)
	QpTable table;
	uint64_t sent = 0;                  // over all QPs
	uint64_t post_calls = 0;
	uint64_t retx_timeout = 0;          // reliable, pinging side: pings sent again
	uint64_t duplicates = 0;            // reliable: repeated pings echoed again, or echoes dropped
	uint64_t last_progress = 0;
	bool finished = false;
	bool stopped = false;               // until stopped: its targets are what it had
	ResponderCounters c;                // what arrived: received, verified, errors
	Histogram *hist = nullptr;          // pinging side: half round trips, ns
	FlowLive live;                      // pings sent, echoes back, errors (echoing side: echoes sent, pings in)
};

/* Writes: message seq's last byte. */
inline uint8_t write_mark(uint64_t seq)
{
	return static_cast<uint8_t>(1 + seq % 255);
}
inline constexpr double kSettleS = 1.0;

/* Setup, once the fields above and nqps QPs (qps[i].qp) are filled in (writes: the slots,
 * their registration and each QP's peer): checks the sizes, prepares the WR and each
 * QP's share. Returns 0 or -EINVAL with *err. */
int pingpong_init(PingPong *s, std::string *err);

/* The role's work, one burst at a time (a Stage's): returns the completions handled.
 * finished is set once every round trip is done (or it failed, or the run was
 * aborted); then pingpong_finish() says whether it was clean (the pinging side also
 * tells the echoing one it ended, through ctl). */
void pingpong_start(PingPong *s);
uint32_t pingpong_burst(PingPong *s);
int pingpong_finish(PingPong *s);

/* Completions of its QPs that another role of the lcore polled (the router's OnWc). */
void pingpong_on_send_wc(void *s, const ibv_wc &wc, uint64_t now);
void pingpong_on_recv_wc(void *s, const ibv_wc &wc, uint64_t now);

} // namespace rp
