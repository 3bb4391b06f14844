/* The receiving role (runs on its own lcore): catches RDMA_WRITE_WITH_IMM immediates on
 * an SRQ of zero-SGE receives, checks sequence and payload of each message in its
 * window slot, replenishes the SRQ in batches, and returns credit to the writer by
 * RDMA-writing its consumed count into the writer's credit word. */
#pragma once

#include "engine/counters.h"
#include "engine/run_control.h"
#include "engine/srq_refill.h"
#include "engine/verbs_ops.h"

#include <cstdint>

namespace rp {

inline constexpr uint32_t kRxPollBurst = 32;
/* Credit writes in flight; each is signalled so its source word is not reused early. */
inline constexpr uint32_t kCreditRing = 16;

struct ReceiverParams {
	uint32_t msg_bytes;
	uint32_t slots;
	uint32_t credit_step;       // send credit after this many messages
	bool verify;
	uint64_t stall_tsc;
	uint64_t drain_tsc;         // after the writer is done: wait this long for stragglers
};

struct Receiver {
	const VerbsOps *ops = &kIbvOps;
	ibv_qp *qp = nullptr;       // for credit writes
	ibv_cq *recv_cq = nullptr;
	ibv_cq *send_cq = nullptr;
	ibv_srq *srq = nullptr;
	const unsigned char *window = nullptr;   // slots * msg_bytes, written by the writer
	uint64_t *credit_src = nullptr;          // kCreditRing words, registered
	uint32_t credit_lkey = 0;
	uint64_t credit_remote_addr = 0;
	uint32_t credit_rkey = 0;
	RunControl *ctl = nullptr;
	ReceiverParams p{};
	SrqRefill refill;
	ReceiverCounters c;
};

/* Lcore body. Returns 0 when the run's last message arrived and everything verified. */
int receiver_run(Receiver *r);

} // namespace rp
