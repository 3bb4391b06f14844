/* Per-role counters: one cache-aligned block each, written only by the lcore that owns
 * it; the main lcore reads them after the lcores have joined. */
#pragma once

#include <infiniband/verbs.h>

#include <time.h>

#include <atomic>
#include <cstdint>

namespace rp {

/* Work-completion statuses run 0..IBV_WC_TM_RNDV_INCOMPLETE; the array covers them all. */
inline constexpr unsigned kWcStatusCount = IBV_WC_TM_RNDV_INCOMPLETE + 1;

/* A live counter's one writer adds to it: a relaxed load and store, no locked op. */
inline void bump(std::atomic<uint64_t> &a, uint64_t by = 1)
{
	a.store(a.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}

struct alignas(64) WcErrorCounts {
	uint64_t by_status[kWcStatusCount] = {};
	uint64_t total = 0;
	int first_status = -1;
	uint32_t first_opcode = 0;
	uint64_t first_wr_id = 0;

	void count(const ibv_wc &wc)
	{
		unsigned s = wc.status < kWcStatusCount ? wc.status : IBV_WC_GENERAL_ERR;
		by_status[s]++;
		if (total++ == 0) {
			first_status = static_cast<int>(s);
			first_opcode = wc.opcode;
			first_wr_id = wc.wr_id;
		}
	}
};

struct alignas(64) RequesterCounters {
	uint64_t sent = 0;           // messages posted
	uint64_t completed = 0;      // messages retired by a successful signalled completion
	uint64_t verified = 0;       // read results and atomic return values that checked out
	uint64_t result_errors = 0;  // ... that did not
	uint64_t first_bad_seq = UINT64_MAX;
	uint32_t first_bad_qp = 0;
	int64_t first_bad_offset = -1;
	uint64_t post_calls = 0;     // ibv_post_send calls (one per chain)
	uint64_t post_errors = 0;
	uint64_t failed_qps = 0;     // QPs moved to the error state by a completion error
	uint64_t credit_anomalies = 0;  // credit word read beyond what was sent (torn or corrupt write)
	uint64_t polls_busy = 0;     // loop iterations that found or posted work
	uint64_t polls_idle = 0;     // ... and those that did not
	uint64_t handed_over = 0;    // shared QPs: completions polled here for another lane
	uint64_t handed_in = 0;      // ... and polled by another lane for this one
	/* Software reliability (UC): */
	uint64_t retx_fast = 0;      // holes retransmitted once a later message was acknowledged
	uint64_t retx_timeout = 0;   // ... and when the retransmission timeout expired
	uint64_t retx_deferred = 0;  // retransmissions put off: the send queue was full
	uint64_t restart_requests = 0;   // timeouts in a row that asked the receiver to restart the QP
	uint64_t acks_received = 0;
	uint64_t acks_invalid = 0;   // control messages that were no ACK, or named no QP of ours
	uint64_t sack_holes = 0;     // holes ACKs showed below a later acknowledged message
	uint64_t injected_losses = 0;   // inject_loss: data WRs tracked as sent, never posted
	uint64_t start_tsc = 0;
	uint64_t end_tsc = 0;
	const char *fail_reason = nullptr;  // static string; nullptr: no failure
	WcErrorCounts wc_errors;
};

struct alignas(64) ResponderCounters {
	uint64_t received = 0;       // receive completions that succeeded
	uint64_t verified = 0;       // of those, payload and sequence correct
	uint64_t bytes = 0;
	uint64_t payload_errors = 0;
	uint64_t sequence_errors = 0;
	uint64_t length_errors = 0;
	uint64_t unexpected_opcodes = 0;
	uint64_t unknown_qps = 0;    // completions whose qp_num is not in the table
	uint64_t window_slots_checked = 0;  // RDMA_WRITE: final window state checked at the end
	uint64_t counters_checked = 0;      // atomics: final word per QP checked at the end
	uint64_t credit_writes = 0;
	uint64_t held_overflow = 0;  // received beyond the window while the next stage was full: freed
	uint64_t credit_flushed_late = 0;  // credit writes flushed by a peer that left after all arrived
	uint64_t flow_credit_moves = 0;    // flow credit written again through another QP (the last had not landed)
	/* Software reliability (UC): */
	uint64_t acks_sent = 0;
	uint64_t ack_no_room = 0;    // ACKs put off: every control send slot busy
	uint64_t duplicates = 0;     // messages that had arrived already: dropped
	uint64_t out_of_order = 0;   // arrived beyond a hole
	uint64_t retx_received = 0;  // retransmitted writes (header + chunk) taken
	uint64_t retx_header_bad = 0;   // retransmission headers outside the window or the slot: dropped, nothing written
	uint64_t outside_window = 0; // immediates outside the window: dropped
	uint64_t qp_restarts = 0;    // UC QPs reset after a message broken by a loss (see VerbsOps::restart_qp)
	uint64_t restart_errors = 0; // restarts that failed (the QP then fails)
	uint64_t restart_requests = 0;   // restarts the sender asked for (qp_restarts counts those done)
	uint64_t broken = 0;         // receives completed in error that broke the QP (reported to the sender)
	uint64_t srq_post_calls = 0;
	uint64_t polls_busy = 0;     // loop iterations that found work
	uint64_t polls_idle = 0;
	uint64_t first_bad_seq = UINT64_MAX;
	uint32_t first_bad_qp = 0;
	int64_t first_bad_offset = -1;
	uint64_t start_tsc = 0;      // first message
	uint64_t end_tsc = 0;        // last message
	const char *fail_reason = nullptr;
	WcErrorCounts wc_errors;

	void bad(uint32_t qp, uint64_t seq, int64_t offset)
	{
		if (first_bad_seq == UINT64_MAX) {
			first_bad_qp = qp;
			first_bad_seq = seq;
			first_bad_offset = offset;
		}
	}
};

/* What the control plane may read while an lcore runs: one writer (the lcore, relaxed
 * stores of running totals), any reader, no torn values. Per flow, from its requester: */
struct alignas(64) FlowLive {
	std::atomic<uint64_t> sent{0};
	std::atomic<uint64_t> completed{0};
	std::atomic<uint64_t> errors{0};      // completion errors
	std::atomic<uint64_t> by_status[kWcStatusCount] = {};   // ... by ibv_wc_status
	/* UC made reliable in software: retransmissions so far (fast, timeout), ACKs taken,
	 * restarts asked of the receiver. */
	std::atomic<uint64_t> retx_fast{0};
	std::atomic<uint64_t> retx_timeout{0};
	std::atomic<uint64_t> acks{0};
	std::atomic<uint64_t> restart_requests{0};
	bool reliable = false;                // set at setup: the stats lines show the retransmissions, the metrics all four
};

/* ... and per flow, from its responder (where it is here), stored after every burst that
 * found work: what arrived and how its checks went. */
struct alignas(64) ReceiveLive {
	std::atomic<uint64_t> received{0};
	std::atomic<uint64_t> verified{0};         // payload and sequence correct
	std::atomic<uint64_t> payload_errors{0};
	std::atomic<uint64_t> sequence_errors{0};
	std::atomic<uint64_t> length_errors{0};
	/* UC made reliable in software (reliable, set at setup): ACKs sent, arrivals dropped
	 * as duplicates, arrivals beyond a hole, QPs restarted after a broken message. */
	std::atomic<uint64_t> acks_sent{0};
	std::atomic<uint64_t> duplicates{0};
	std::atomic<uint64_t> out_of_order{0};
	std::atomic<uint64_t> qp_restarts{0};
	bool reliable = false;
};

/* ... and per role (its lcore's loop), stored after every burst. */
struct alignas(64) RoleLive {
	std::atomic<uint64_t> polls_busy{0};
	std::atomic<uint64_t> polls_idle{0};
	std::atomic<uint64_t> received{0};    // responder: messages in
	std::atomic<uint32_t> srq_posted{0};  // responder: receives in the SRQ
};

/* ... and per lcore: its thread's CPU clock (pthread_getcpuclockid), published as its
 * loop starts (release, after start_s): the control plane reads the CPU time the thread
 * has used since, while it runs. */
struct alignas(64) LcoreCpu {
	std::atomic<bool> set{false};   // clock and start_s are set (release)
	clockid_t clock = 0;            // (a CPU clock's id is negative: no sentinel in it)
	double start_s = 0;             // the clock's reading then
};

/* ... and per stage (rte_graph's node stats), stored by its lcore's loop at every control
 * check: calls, objects handled, and (when the loop counts them) TSC cycles spent in
 * the calls that handled any. */
struct alignas(64) StageLive {
	std::atomic<uint64_t> calls{0};
	std::atomic<uint64_t> msgs{0};
	std::atomic<uint64_t> cycles{0};
};

/* What the control plane changes in a running flow (the console's set commands): one
 * writer (the control plane), read by the flow's requester once a burst. */
struct alignas(64) FlowControl {
	std::atomic<uint64_t> tsc_per_msg{0};  // a rate limit (0: none)
	std::atomic<uint32_t> batch{0};        // WRs per chain, at most the set-up batch
};

} // namespace rp
