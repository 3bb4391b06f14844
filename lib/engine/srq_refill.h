/* Batched SRQ replenishment: the SRQ is filled completely at setup; the responder
 * reports what it consumed and reposts one pre-linked chain of receives once
 * `threshold` are missing. Two kinds, chosen at setup: zero-SGE receives (RDMA
 * WRITE_WITH_IMM carries no payload into them) or buffer receives for SENDs, each
 * buffer taken from an rte_mempool and found again through wr_id. */
#pragma once

#include "engine/verbs_ops.h"
#include "verbs/memory.h"

#include <cstdint>
#include <memory>

struct rte_mempool;

namespace rp {

class SrqRefill {
public:
	/* Setup: depth receives in the SRQ; repost once threshold (1..depth) are missing.
	 * max_burst bounds how many can be consumed between two refill() calls. With a
	 * pool, every receive carries one pool buffer of buf_bytes (registered in mrs). */
	int init(uint32_t depth, uint32_t threshold, uint32_t max_burst, rte_mempool *pool = nullptr,
		 uint32_t buf_bytes = 0, const MrTable *mrs = nullptr);

	/* Setup: posts all `depth` receives. Returns the count or -errno. */
	int fill(const VerbsOps &ops, ibv_srq *srq);

	void consumed(uint32_t n) { missing_ += n; }

	/* Setup, instead of fill(): the SRQ stays empty for the whole run, so every SEND to
	 * it is answered with an RNR NAK (the --inject-rnr test hook). */
	void starve()
	{
		missing_ = depth_;
		threshold_ = UINT32_MAX;
	}

	/* Fast path: reposts every missing receive once at least `threshold` are missing.
	 * Returns the count posted (0 below the threshold) or -errno. */
	int refill(const VerbsOps &ops, ibv_srq *srq)
	{
		if (missing_ < threshold_)
			return 0;
		return post(ops, srq, missing_);
	}

	uint32_t missing() const { return missing_; }
	uint32_t posted() const { return depth_ - missing_; }
	uint64_t post_calls() const { return post_calls_; }
	uint64_t buffer_shortfalls() const { return buffer_shortfalls_; }

private:
	int post(const VerbsOps &ops, ibv_srq *srq, uint32_t count);

	std::unique_ptr<ibv_recv_wr[]> wrs_;
	std::unique_ptr<ibv_sge[]> sges_;
	std::unique_ptr<void *[]> bufs_;
	rte_mempool *pool_ = nullptr;
	const MrTable *mrs_ = nullptr;
	uint32_t chain_len_ = 0;   // entries in wrs_
	uint32_t depth_ = 0;
	uint32_t threshold_ = 0;
	uint32_t missing_ = 0;
	uint64_t post_calls_ = 0;
	uint64_t buffer_shortfalls_ = 0;   // refills cut short by an empty pool
};

} // namespace rp
