#include "engine/recv_refill.h"

#include <rte_mempool.h>

#include <cerrno>

namespace rp {

namespace {

/* A chain long enough that one post covers what can be missing from a queue of depth at
 * a refill: its threshold and a burst consumed since. */
uint32_t chain_for(uint32_t depth, uint32_t threshold, uint32_t max_burst)
{
	const uint64_t len = static_cast<uint64_t>(threshold) + max_burst;
	return static_cast<uint32_t>(len < depth ? len : depth);
}

} // namespace

/* The one pre-linked chain every post is made from; len grows it (setup only). */
int RecvRefill::alloc_chain(uint32_t len, rte_mempool *pool, uint32_t buf_bytes, const MrTable *mrs)
{
	if (pool && (!mrs || buf_bytes == 0))
		return -EINVAL;
	pool_ = pool;
	mrs_ = mrs;
	buf_bytes_ = buf_bytes;
	if (len <= chain_len_)
		return 0;
	chain_len_ = len;
	wrs_.reset(new ibv_recv_wr[len]());
	sges_.reset(pool ? new ibv_sge[len]() : nullptr);
	bufs_.reset(pool ? new void *[len]() : nullptr);
	for (uint32_t i = 0; i < len; i++) {
		if (pool) {
			sges_[i].length = buf_bytes;
			wrs_[i].sg_list = &sges_[i];
			wrs_[i].num_sge = 1;
		}   // else zero-SGE: the immediate and byte count are all it carries
		wrs_[i].next = i + 1 < len ? &wrs_[i + 1] : nullptr;
	}
	return 0;
}

int RecvRefill::init(ibv_srq *srq, uint32_t depth, uint32_t threshold, uint32_t max_burst, rte_mempool *pool,
		     uint32_t buf_bytes, const MrTable *mrs)
{
	if (depth == 0 || threshold == 0 || threshold > depth)
		return -EINVAL;
	if (alloc_chain(chain_for(depth, threshold, max_burst), pool, buf_bytes, mrs) != 0)
		return -EINVAL;
	srq_ = srq;
	depth_ = missing_ = depth;
	threshold_ = threshold;
	return 0;
}

int RecvRefill::init_qps(uint32_t max_qps, uint32_t max_burst, rte_mempool *pool, uint32_t buf_bytes, const MrTable *mrs)
{
	if (max_qps == 0 || alloc_chain(1, pool, buf_bytes, mrs) != 0)
		return -EINVAL;
	lanes_.reset(new Lane[max_qps]());
	due_.reset(new uint32_t[max_qps]());
	table_.init(max_qps);
	max_lanes_ = max_qps;
	max_burst_ = max_burst;
	return 0;
}

int RecvRefill::add_qp(ibv_qp *qp, uint32_t depth, uint32_t threshold)
{
	if (lanes_ == nullptr || nlanes_ == max_lanes_ || depth == 0 || threshold == 0 || threshold > depth)
		return -EINVAL;
	if (table_.find(qp->qp_num) != QpTable::kNone)
		return -EEXIST;
	if (alloc_chain(chain_for(depth, threshold, max_burst_), pool_, buf_bytes_, mrs_) != 0)
		return -EINVAL;
	table_.insert(qp->qp_num, nlanes_);
	lanes_[nlanes_++] = Lane{qp, depth, threshold, depth, false, false};
	depth_ += depth;
	missing_ += depth;
	return 0;
}

int RecvRefill::fill(const VerbsOps &ops)
{
	if (lanes_ == nullptr)
		return missing_ ? post(ops, nullptr, missing_) : 0;
	uint32_t done = 0;
	for (uint32_t i = 0; i < nlanes_; i++) {
		const uint32_t want = lanes_[i].missing;
		int ret = post(ops, &lanes_[i], want);
		if (ret < 0)
			return ret;
		done += static_cast<uint32_t>(ret);
		if (static_cast<uint32_t>(ret) < want)
			break;   // the pool ran short: the caller sees the count
	}
	return static_cast<int>(done);
}

void RecvRefill::starve()
{
	threshold_ = UINT32_MAX;
	for (uint32_t i = 0; i < nlanes_; i++)
		lanes_[i].threshold = UINT32_MAX;
}

void RecvRefill::hold(uint32_t qp_num, bool held)
{
	const uint32_t i = lanes_ ? table_.find(qp_num) : QpTable::kNone;
	if (i == QpTable::kNone)
		return;
	Lane &l = lanes_[i];
	l.held = held;
	if (!held && !l.due && l.missing >= l.threshold) {
		l.due = true;
		due_[ndue_++] = i;
	}
}

int RecvRefill::refill_lanes(const VerbsOps &ops)
{
	uint32_t done = 0;
	while (ndue_) {
		Lane &l = lanes_[due_[ndue_ - 1]];
		if (!l.held) {
			const uint32_t want = l.missing;
			int ret = post(ops, &l, want);
			if (ret < 0)
				return ret;
			done += static_cast<uint32_t>(ret);
			if (static_cast<uint32_t>(ret) < want)
				break;   // the pool ran short: this QP stays due, tried next time
		}
		l.due = false;   // held: due again when released (hold())
		ndue_--;
	}
	return static_cast<int>(done);
}

int RecvRefill::post(const VerbsOps &ops, Lane *lane, uint32_t count)
{
	uint32_t done = 0;
	int ret = 0;
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
		ret = lane ? ops.post_recv(lane->qp, &wrs_[0], &bad) : ops.post_srq_recv(srq_, &wrs_[0], &bad);
		wrs_[n - 1].next = n < chain_len_ ? &wrs_[n] : nullptr;
		post_calls_++;
		if (ret) {
			/* Receives before `bad` were posted; the rest give their buffers back. */
			uint32_t ok = 0;
			for (ibv_recv_wr *w = &wrs_[0]; w != bad && ok < n; w = w->next)
				ok++;
			if (pool_ && ok < n)
				rte_mempool_put_bulk(pool_, bufs_.get() + ok, n - ok);
			done += ok;
			break;
		}
		done += n;
	}
	missing_ -= done;
	if (lane)
		lane->missing -= done;
	return ret ? -ret : static_cast<int>(done);
}

} // namespace rp
