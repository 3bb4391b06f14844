#include "engine/srq_refill.h"

#include <rte_mempool.h>

#include <cerrno>

namespace rp {

int SrqRefill::init(uint32_t depth, uint32_t threshold, uint32_t max_burst, rte_mempool *pool,
		    uint32_t buf_bytes, const MrTable *mrs)
{
	if (depth == 0 || threshold == 0 || threshold > depth || (pool && (!mrs || buf_bytes == 0)))
		return -EINVAL;
	/* Long enough that one post covers what can be missing at a refill. */
	uint64_t len = static_cast<uint64_t>(threshold) + max_burst;
	chain_len_ = static_cast<uint32_t>(len < depth ? len : depth);
	wrs_.reset(new ibv_recv_wr[chain_len_]());
	if (pool) {
		sges_.reset(new ibv_sge[chain_len_]());
		bufs_.reset(new void *[chain_len_]());
	}
	for (uint32_t i = 0; i < chain_len_; i++) {
		if (pool) {
			sges_[i].length = buf_bytes;
			wrs_[i].sg_list = &sges_[i];
			wrs_[i].num_sge = 1;
		} else {
			wrs_[i].sg_list = nullptr;   // zero-SGE: the immediate and byte count are all it carries
			wrs_[i].num_sge = 0;
		}
		wrs_[i].next = i + 1 < chain_len_ ? &wrs_[i + 1] : nullptr;
	}
	pool_ = pool;
	mrs_ = mrs;
	depth_ = depth;
	threshold_ = threshold;
	missing_ = depth;
	return 0;
}

int SrqRefill::fill(const VerbsOps &ops, ibv_srq *srq)
{
	return missing_ ? post(ops, srq, missing_) : 0;
}

int SrqRefill::post(const VerbsOps &ops, ibv_srq *srq, uint32_t count)
{
	uint32_t done = 0;
	while (done < count) {
		uint32_t n = count - done < chain_len_ ? count - done : chain_len_;
		if (pool_) {
			if (rte_mempool_get_bulk(pool_, bufs_.get(), n) != 0) {
				/* Buffers still held by completions being checked: try next time. */
				buffer_shortfalls_++;
				break;
			}
			for (uint32_t i = 0; i < n; i++) {
				sges_[i].addr = reinterpret_cast<uintptr_t>(bufs_[i]);
				sges_[i].lkey = mrs_->lkey_of(bufs_[i]);
				wrs_[i].wr_id = reinterpret_cast<uintptr_t>(bufs_[i]);
			}
		}
		ibv_recv_wr *bad = nullptr;
		wrs_[n - 1].next = nullptr;
		int ret = ops.post_srq_recv(srq, &wrs_[0], &bad);
		wrs_[n - 1].next = n < chain_len_ ? &wrs_[n] : nullptr;
		post_calls_++;
		if (ret) {
			/* Receives before `bad` were posted; the rest give their buffers back. */
			uint32_t ok = 0;
			for (ibv_recv_wr *w = &wrs_[0]; w != bad && ok < n; w = w->next)
				ok++;
			if (pool_ && ok < n)
				rte_mempool_put_bulk(pool_, bufs_.get() + ok, n - ok);
			missing_ -= done + ok;
			return -ret;
		}
		done += n;
	}
	missing_ -= done;
	return static_cast<int>(done);
}

} // namespace rp
