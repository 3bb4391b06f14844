/* A faked NIC behind the engine's VerbsOps seam: records every posted chain, completes
 * signalled WRs into a scripted send CQ (optionally with an error status), and serves
 * scripted receive completions. Single-threaded, like the lcore that would own it. */
#pragma once

#include "engine/verbs_ops.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <vector>

struct rte_mempool;
namespace rp {
struct MrTable;
}

namespace fake {

struct PostedWr {
	uint64_t wr_id;           // the WR's sequence (seq_of)
	uint64_t raw_wr_id;       // its wr_id as posted
	ibv_wr_opcode opcode;
	unsigned send_flags;
	uint32_t imm_host;        // ntohl(imm_data)
	uint64_t remote_addr;
	uint32_t rkey;
	uint64_t sge_addr;
	uint32_t sge_len;
	uint32_t lkey;
	int num_sge;
	uint64_t first_word;   // the first 8 payload bytes at post time (0 if fewer)
	uint32_t qp_num;       // the QP it was posted on (0: none given)
};

/* A receive completion queued with this wr_id takes the oldest posted SRQ receive's
 * wr_id when it is polled, as a real SRQ would hand it out. */
inline constexpr uint64_t kFromSrq = UINT64_MAX;
/* The same from the completion's QP's own receive queue (post_recv). */
inline constexpr uint64_t kFromRq = UINT64_MAX - 1;

struct Nic {
	std::vector<std::vector<PostedWr>> chains;   // one entry per post_send call
	std::vector<uint32_t> srq_chains;            // receives per post_srq_recv call
	std::deque<uint64_t> srq_wr_ids;             // posted receives not yet consumed, in order
	uint64_t srq_posted = 0;
	int srq_fail_after = -1;                     // fail the post after this many WRs (-1: never)
	/* Per-QP receive queues: receives per post_recv call (qp_num, count), and what each
	 * QP has posted and not consumed, in order. */
	std::vector<std::pair<uint32_t, uint32_t>> rq_chains;
	std::map<uint32_t, std::deque<uint64_t>> rq_wr_ids;
	uint32_t rq_cap = UINT32_MAX;                // a QP's receive queue depth (full: ENOMEM)
	int send_fail_after = -1;

	/* Auto-completion of signalled WRs into the send CQ. */
	bool complete_signalled = true;
	uint64_t error_at_wr_id = UINT64_MAX;        // that WR completes with error_status...
	uint32_t error_qp_num = 0;                   // ...on this QP only (0: on any QP)
	ibv_wc_status error_status = IBV_WC_REM_ACCESS_ERR;
	/* WRs posted on this QP are held on the wire for ever, as a path that retries
	 * without end: carried out never, completed never (0: none held). */
	uint32_t hold_qp_num = 0;

	/* One-sided verbs are carried out at post time on the memory remote_addr points to
	 * (tests pass real pointers): writes copy, reads fetch, atomics add or swap. */
	bool execute_one_sided = true;

	/* Credit emulation: every posted message is consumed at once by a perfect receiver. */
	volatile uint64_t *credit_word = nullptr;

	/* Payload check at post time: each WR's buffer must hold the pattern of message
	 * msg_key(qp_num - kQpNumBase, wr_id). */
	uint32_t check_len = 0;
	uint64_t pattern_mismatches = 0;
	uint64_t first_mismatch = UINT64_MAX;

	/* Receive side: at most recv_burst completions per poll; deliver() runs as each
	 * one is handed out (a test writes the payload into the window there). */
	int recv_burst = 32;
	std::function<void(const ibv_wc &)> deliver;

	/* stop_qp, restart_qp: each QP stopped / restarted, by number; stop_error and
	 * restart_error (an errno) fail them. */
	std::vector<uint32_t> stopped, restarted;
	int stop_error = 0, restart_error = 0;

	/* Per QP (by number), the sequence its next WR carries (seq_of). */
	std::map<uint32_t, uint64_t> next_seq;

	std::deque<ibv_wc> send_cq;
	std::deque<ibv_wc> recv_cq;
	ibv_cq *send_cq_handle = reinterpret_cast<ibv_cq *>(0x1000);
	ibv_cq *recv_cq_handle = reinterpret_cast<ibv_cq *>(0x2000);

	uint64_t total_wrs() const
	{
		uint64_t n = 0;
		for (auto &c : chains)
			n += c.size();
		return n;
	}
};

/* Tests number their fake QPs from here, so qp_num - kQpNumBase is the QP's index. */
inline constexpr uint32_t kQpNumBase = 0x100;

/* Fills *mrs with pool's memory chunks as if each were registered: lkeys 0x40, 0x41,
 * ... in chunk order (what the tests' posted WRs carry). */
void map_pool(rte_mempool *pool, rp::MrTable *mrs);

/* The NIC behind kOps; reset() before each test. */
Nic &nic();
void reset();
extern const rp::VerbsOps kOps;

} // namespace fake
