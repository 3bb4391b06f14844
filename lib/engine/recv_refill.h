/* Batched receive replenishment for an lcore, into its SRQ or into its QPs' own
 * receive queues (the choice is made at setup). Everything is posted at setup; the
 * pollers report what they consumed, and once `threshold` receives of a queue are
 * missing they all go back in one pre-linked chain. Two kinds of receive, also chosen
 * at setup: zero-SGE (RDMA WRITE_WITH_IMM carries no payload into them) or buffer
 * receives for SENDs, each buffer taken from an rte_mempool and found again through
 * wr_id.
 *
 * Per-QP queues complete in order, one QP each: a completion is counted against its QP
 * (by wc.qp_num), and a QP whose missing receives reach its threshold waits on a due
 * list, so a refill touches only the QPs that need it, not all of them. */
#pragma once

#include "engine/qp_table.h"
#include "engine/verbs_ops.h"
#include "verbs/memory.h"

#include <cstdint>
#include <memory>

struct rte_mempool;

namespace rp {

class RecvRefill {
public:
	/* Setup, SRQ: depth receives in srq; repost once threshold (1..depth) are missing.
	 * max_burst bounds how many can be consumed between two refill() calls. With a
	 * pool, every receive carries one pool buffer of buf_bytes (registered in mrs). */
	int init(ibv_srq *srq, uint32_t depth, uint32_t threshold, uint32_t max_burst, rte_mempool *pool = nullptr,
		 uint32_t buf_bytes = 0, const MrTable *mrs = nullptr);

	/* Setup, per-QP receive queues: room for max_qps QPs, each added with add_qp(). */
	int init_qps(uint32_t max_qps, uint32_t max_burst, rte_mempool *pool = nullptr, uint32_t buf_bytes = 0,
		     const MrTable *mrs = nullptr);
	/* Setup: qp's receive queue keeps depth receives, reposted once threshold (1..depth)
	 * are missing. 0, or -EINVAL (bad sizes, no room) or -EEXIST (added twice). */
	int add_qp(ibv_qp *qp, uint32_t depth, uint32_t threshold);

	/* Setup: posts every receive. Returns the count or -errno. */
	int fill(const VerbsOps &ops);

	/* Setup, instead of fill(): nothing is ever posted, so every SEND is answered with
	 * an RNR NAK (the --inject-rnr test hook). */
	void starve();

	/* Fast path: n receive completions were polled (any status: each used up one
	 * receive). Per-QP queues count each against its QP; a QP not added is skipped. */
	void consumed(const ibv_wc *wc, int n)
	{
		if (lanes_ == nullptr) {
			missing_ += static_cast<uint32_t>(n);
			return;
		}
		for (int i = 0; i < n; i++)
			consumed_on(wc[i].qp_num);
	}

	/* Fast path: reposts what is missing wherever at least a threshold is. Returns the
	 * count posted (0 below the thresholds) or -errno. */
	int refill(const VerbsOps &ops)
	{
		if (lanes_)
			return ndue_ ? refill_lanes(ops) : 0;
		if (missing_ == 0 || missing_ < threshold_)
			return 0;
		return post(ops, nullptr, missing_);
	}

	/* A QP whose receive queue must not be posted to for now (stopped for a restart:
	 * what rxe cannot flush, the reset drops, buffers and all) and then again. No-op
	 * with an SRQ, which a QP's reset does not touch. */
	void hold(uint32_t qp_num, bool held);

	bool per_qp() const { return lanes_ != nullptr; }
	uint32_t missing() const { return missing_; }
	uint32_t posted() const { return depth_ - missing_; }
	uint64_t post_calls() const { return post_calls_; }
	uint64_t buffer_shortfalls() const { return buffer_shortfalls_; }

private:
	struct Lane {
		ibv_qp *qp;
		uint32_t depth, threshold, missing;
		bool due, held;
	};
	int alloc_chain(uint32_t len, rte_mempool *pool, uint32_t buf_bytes, const MrTable *mrs);
	void consumed_on(uint32_t qp_num)
	{
		const uint32_t i = table_.find(qp_num);
		if (i == QpTable::kNone)
			return;
		Lane &l = lanes_[i];
		missing_++;
		if (++l.missing >= l.threshold && !l.due && !l.held) {
			l.due = true;
			due_[ndue_++] = i;
		}
	}
	int refill_lanes(const VerbsOps &ops);
	int post(const VerbsOps &ops, Lane *lane, uint32_t count);

	std::unique_ptr<ibv_recv_wr[]> wrs_;
	std::unique_ptr<ibv_sge[]> sges_;
	std::unique_ptr<void *[]> bufs_;
	rte_mempool *pool_ = nullptr;
	const MrTable *mrs_ = nullptr;
	uint32_t buf_bytes_ = 0;
	ibv_srq *srq_ = nullptr;
	std::unique_ptr<Lane[]> lanes_;   // per-QP queues; null with an SRQ
	std::unique_ptr<uint32_t[]> due_;  // lanes at or past their threshold
	QpTable table_;
	uint32_t nlanes_ = 0, max_lanes_ = 0, ndue_ = 0;
	uint32_t max_burst_ = 0;
	uint32_t chain_len_ = 0;   // entries in wrs_
	uint32_t depth_ = 0;       // over every queue
	uint32_t threshold_ = 0;   // the SRQ's
	uint32_t missing_ = 0;     // over every queue
	uint64_t post_calls_ = 0;
	uint64_t buffer_shortfalls_ = 0;   // refills cut short by an empty pool
};

} // namespace rp
