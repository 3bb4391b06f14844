/* Ping-pong latency (ib_send_lat's measurement): the pinging lcore sends one message
 * and waits for its echo before it sends the next; the echoing lcore sends every
 * message back as it arrives, from the very buffer it was received into. Each side
 * owns one RC QP on its own SharedIOContext (send CQ, receive CQ, SRQ of pool buffers).
 *
 * What is timed is perftest's iteration: from one post to the next, halved (the loop
 * also checks the echo, returns its buffer and replenishes the SRQ), recorded in a
 * histogram in nanoseconds. Every echo is checked: sequence (immediate), length and
 * the payload pattern the pinging side wrote. */
#pragma once

#include "conf/options.h"
#include "engine/counters.h"
#include "engine/histogram.h"
#include "engine/idle.h"
#include "engine/run_control.h"
#include "engine/srq_refill.h"
#include "engine/verbs_ops.h"
#include "engine/wr_chain.h"
#include "verbs/memory.h"

#include <cstdint>
#include <memory>
#include <string>

struct rte_mempool;

namespace rp {

struct PingPongParams {
	Verb verb;                 // send or send_imm
	uint32_t msg_bytes;
	uint64_t iterations;
	uint32_t sq_depth;         // sends in flight before their completions must be reaped
	uint32_t signal_every;     // one signalled send per this many
	bool inline_send;
	bool verify;
	uint64_t stall_tsc;
	uint64_t tsc_hz;
	uint64_t corrupt_msg = UINT64_MAX;   // test hook: flip a byte of this ping
};

struct PingPongSide {
	const VerbsOps *ops = &kIbvOps;
	ibv_qp *qp = nullptr;
	ibv_cq *send_cq = nullptr;
	ibv_cq *recv_cq = nullptr;
	ibv_srq *srq = nullptr;
	rte_mempool *pool = nullptr;        // receive buffers; the pinging side's send buffers too
	const MrTable *mrs = nullptr;
	RunControl *ctl = nullptr;
	PingPongParams p{};
	SrqRefill refill;
	SendChain chain;                    // one pre-initialised WR
	std::unique_ptr<void *[]> inflight; // send buffer of seq at [seq & inflight_mask]
	uint32_t inflight_mask = 0;
	uint64_t sent = 0;
	uint64_t send_completed = 0;
	Idler idler;
	ResponderCounters c;                // what arrived: received, verified, errors
	uint64_t post_calls = 0;
	Histogram *hist = nullptr;          // pinging side: half round trips, ns
};

/* Setup, after the fields above are filled in (and refill filled): checks the sizes,
 * prepares the WR. Returns 0 or -EINVAL with *err. */
int pingpong_init(PingPongSide *s, std::string *err);

/* Lcore bodies. Return 0 when every iteration completed and every echo checked out. */
int pingpong_ping(PingPongSide *s);
int pingpong_echo(PingPongSide *s);

} // namespace rp
