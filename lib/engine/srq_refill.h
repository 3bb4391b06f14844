/* Batched SRQ replenishment: the SRQ is filled completely at setup; the receiver
 * reports what it consumed and reposts one pre-linked chain of zero-SGE receives
 * (WRITE_WITH_IMM needs no buffer) once `threshold` are missing. */
#pragma once

#include "engine/verbs_ops.h"

#include <cstdint>
#include <memory>

namespace rp {

class SrqRefill {
public:
	/* Setup: depth receives in the SRQ; repost once threshold (1..depth) are missing.
	 * max_burst bounds how many can be consumed between two refill() calls. */
	int init(uint32_t depth, uint32_t threshold, uint32_t max_burst);

	/* Setup: posts all `depth` receives. Returns 0 or -errno (the post's error). */
	int fill(const VerbsOps &ops, ibv_srq *srq);

	void consumed(uint32_t n) { missing_ += n; }

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

private:
	int post(const VerbsOps &ops, ibv_srq *srq, uint32_t count);

	std::unique_ptr<ibv_recv_wr[]> wrs_;
	uint32_t chain_len_ = 0;   // entries in wrs_
	uint32_t depth_ = 0;
	uint32_t threshold_ = 0;
	uint32_t missing_ = 0;
	uint64_t post_calls_ = 0;
};

} // namespace rp
