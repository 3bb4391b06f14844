/* A faked NIC behind the engine's VerbsOps seam: records every posted chain, completes
 * signalled WRs into a scripted send CQ (optionally with an error status), and serves
 * scripted receive completions. Single-threaded, like the lcore that would own it. */
#pragma once

#include "engine/verbs_ops.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

namespace fake {

struct PostedWr {
	uint64_t wr_id;
	ibv_wr_opcode opcode;
	unsigned send_flags;
	uint32_t imm_host;        // ntohl(imm_data)
	uint64_t remote_addr;
	uint32_t rkey;
	uint64_t sge_addr;
	uint32_t sge_len;
	uint32_t lkey;
	int num_sge;
};

struct Nic {
	std::vector<std::vector<PostedWr>> chains;   // one entry per post_send call
	std::vector<uint32_t> srq_chains;            // receives per post_srq_recv call
	uint64_t srq_posted = 0;
	int srq_fail_after = -1;                     // fail the post after this many WRs (-1: never)
	int send_fail_after = -1;

	/* Auto-completion of signalled WRs into the send CQ. */
	bool complete_signalled = true;
	uint64_t error_at_wr_id = UINT64_MAX;        // that WR completes with error_status
	ibv_wc_status error_status = IBV_WC_REM_ACCESS_ERR;

	/* Credit emulation: every posted message is consumed at once by a perfect receiver. */
	volatile uint64_t *credit_word = nullptr;

	/* Payload check at post time: each WR's buffer must hold message wr_id's pattern. */
	uint32_t check_len = 0;
	uint64_t pattern_mismatches = 0;
	uint64_t first_mismatch = UINT64_MAX;

	/* Receive side: at most recv_burst completions per poll; deliver() runs as each
	 * one is handed out (a test writes the payload into the window there). */
	int recv_burst = 32;
	std::function<void(const ibv_wc &)> deliver;

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

/* The NIC behind kOps; reset() before each test. */
Nic &nic();
void reset();
extern const rp::VerbsOps kOps;

} // namespace fake
