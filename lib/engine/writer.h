/* The sending role (runs on its own lcore): takes buffers from an rte_mempool, fills the
 * payload pattern, posts chains of RDMA_WRITE_WITH_IMM into the receiver's window,
 * and retires buffers on selectively signalled completions. Flow control: the receiver
 * RDMA-writes how many messages it has consumed into `credit_word`. */
#pragma once

#include "engine/counters.h"
#include "engine/run_control.h"
#include "engine/verbs_ops.h"
#include "engine/wr_chain.h"
#include "verbs/memory.h"

#include <cstdint>
#include <memory>

struct rte_mempool;

namespace rp {

inline constexpr uint32_t kTxPollBurst = 32;

struct WriterParams {
	uint32_t msg_bytes;
	uint32_t batch;
	uint32_t signal_every;
	uint32_t sq_depth;
	uint32_t window;            // receiver slots
	uint64_t messages;          // 0: run for duration_tsc
	uint64_t duration_tsc;
	uint64_t stall_tsc;
	uint64_t corrupt_msg;       // UINT64_MAX: none
};

struct Writer {
	const VerbsOps *ops = &kIbvOps;
	ibv_qp *qp = nullptr;
	ibv_cq *send_cq = nullptr;
	rte_mempool *pool = nullptr;
	const MrTable *mrs = nullptr;
	const volatile uint64_t *credit_word = nullptr;  // written by the receiver's RDMA_WRITE
	RunControl *ctl = nullptr;
	WriterParams p{};
	WriteImmChain chain;
	std::unique_ptr<void *[]> inflight;   // buffer of message seq at [seq & inflight_mask]
	uint32_t inflight_mask = 0;
	WriterCounters c;
};

/* Setup: checks the sizing invariants and preallocates. Returns 0 or -errno with *err. */
int writer_init(Writer *w, uint64_t remote_base, uint32_t rkey, std::string *err);

/* Lcore body. Returns 0 when every message was posted and completed. */
int writer_run(Writer *w);

} // namespace rp
