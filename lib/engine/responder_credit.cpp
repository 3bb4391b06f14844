/* A responder's credit: each QP's consumed count RDMA-written into its sender's credit
 * word, the flow's into the flow credit word (through one QP at a time, moved on when
 * one fails or a write does not land), and those writes' completions. */
#include "engine/responder_internal.h"

#include <rte_cycles.h>

#include <algorithm>

namespace rp {

namespace {

/* Posts one signalled 8-byte RDMA_WRITE of `count` through QP qi to addr/rkey, from
 * the QP's ring of source words. Returns 1, 0 when every source word is still in
 * flight (a later loop tries again) or -errno. */
int post_credit(Responder *r, uint32_t qi, uint64_t count, uint64_t addr, uint32_t rkey, uint64_t tag = 0)
{
	ResponderQp &q = r->qps[qi];
	if (q.credit_posted - q.credit_completed == kCreditRing)
		return 0;
	uint64_t *src = &r->credit_src[static_cast<size_t>(qi) * kCreditRing + q.credit_posted % kCreditRing];
	*src = count;
	ibv_sge sge{reinterpret_cast<uintptr_t>(src), sizeof(*src), r->credit_lkey};
	ibv_send_wr wr{};
	wr.wr_id = q.credit_posted | tag;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = addr;
	wr.wr.rdma.rkey = rkey;
	ibv_send_wr *bad = nullptr;
	int ret = r->ops->post_send(q.qp, &wr, &bad);
	if (ret)
		return -ret;
	q.credit_posted++;
	r->credit_inflight++;
	r->c.credit_writes++;
	return 1;
}

/* The QP after qi that has not failed and has a free credit source word (nqps: none). */
uint32_t next_credit_qp(const Responder *r, uint32_t qi)
{
	for (uint32_t k = 1; k <= r->nqps; k++) {
		const uint32_t j = (qi + k) % r->nqps;
		const ResponderQp &q = r->qps[j];
		if (!q.failed && !q.flushed_credit && q.credit_posted - q.credit_completed < kCreditRing)
			return j;
	}
	return r->nqps;
}

/* One send completion of QP qi (ours): a credit write. */
inline void on_credit_wc(Responder *r, uint32_t qi, const ibv_wc &wc)
{
	ResponderQp &q = r->qps[qi];
	r->credit_inflight -= r->credit_inflight != 0;
	/* A peer process disconnects once its messages are done: a credit write it no longer
	 * needed is flushed then, which is no error once everything it announced arrived;
	 * whether it did is judged at the end (responder_finish). */
	if (wc.status == IBV_WC_WR_FLUSH_ERR && r->ctl->counts_known && r->ctl->qp_sent) {
		q.credit_completed++;
		if (q.flushed_credit++ == 0 && r->first_flush.status == IBV_WC_SUCCESS)
			r->first_flush = wc;
		return;
	}
	if (wc.status != IBV_WC_SUCCESS) {
		r->c.wc_errors.count(wc);
		q.failed = true;
		r->credit_due = true;   // the flow's credit may have to move to another QP
		return;
	}
	q.credit_completed++;
	r->credit_freed++;
	if (wc.wr_id & kFlowCreditTag) {   // its source word is not reused before this completion
		const uint64_t count = r->credit_src[static_cast<size_t>(qi) * kCreditRing + (wc.wr_id & ~kFlowCreditTag) % kCreditRing];
		r->flow_credit_landed = std::max(r->flow_credit_landed, count);
	}
}

} // namespace

/* QP qi's consumed count into its credit word. */
int send_credit(Responder *r, uint32_t qi)
{
	ResponderQp &q = r->qps[qi];
	const uint64_t consumed = consumed_of(r, q);
	int ret = post_credit(r, qi, consumed, q.credit_remote_addr, q.credit_rkey);
	if (ret > 0)
		q.credit_last = consumed;
	return ret;
}

/* The flow's consumed count into its flow credit word, once it moved a step, or again
 * through the next QP: when the QP that carried it failed, or when it has not landed
 * for credit_retry_tsc (the sender's end of that QP may have failed unseen from here;
 * rxe retries such a write for ever). Returns -errno when a post failed. */
int send_flow_credit(Responder *r, uint64_t now)
{
	const uint32_t cur = r->credit_qp;
	const bool stuck = r->p.credit_retry_tsc && r->flow_credit_landed < r->flow_credit_last &&
			   now - r->flow_write_tsc > r->p.credit_retry_tsc;
	if (cur == r->nqps || r->qps[cur].failed || r->qps[cur].flushed_credit || stuck) {   // nqps: none was free last time
		r->credit_qp = next_credit_qp(r, cur);
		r->flow_credit_again = true;
		r->flow_write_tsc = now;   // one move per retry time
		r->c.flow_credit_moves += stuck;
	}
	const uint64_t consumed = r->out ? r->handed_total : r->c.received;
	if (r->credit_qp == r->nqps || (!r->flow_credit_again && consumed - r->flow_credit_last < r->p.flow_step))
		return 0;
	int ret = post_credit(r, r->credit_qp, consumed, r->flow_credit_addr, r->flow_credit_rkey, kFlowCreditTag);
	if (ret > 0) {
		r->flow_credit_last = consumed;
		r->flow_credit_again = false;
		r->flow_write_tsc = now;
	}
	return ret < 0 ? ret : 0;
}

/* Polls the send CQ once; completions of a sharing role's QPs go to it. */
int poll_credit_completions(Responder *r)
{
	ibv_wc wc[kRxPollBurst];
	int n = r->ops->poll_cq(r->send_cq, kRxPollBurst, wc);
	if (n < 0)
		return -1;
	const uint64_t now = n && r->send_peer.on_wc ? rte_rdtsc() : 0;
	for (int i = 0; i < n; i++) {
		uint32_t qi = r->table.find(wc[i].qp_num);
		if (qi != QpTable::kNone)
			on_credit_wc(r, qi, wc[i]);
		else if (r->send_peer.on_wc)
			r->send_peer.on_wc(r->send_peer.role, wc[i], now);
		else
			r->c.wc_errors.count(wc[i]);
	}
	return n;
}

void responder_on_send_wc(void *responder, const ibv_wc &wc, uint64_t)
{
	auto *r = static_cast<Responder *>(responder);
	uint32_t qi = r->table.find(wc.qp_num);
	if (qi == QpTable::kNone) {
		r->c.wc_errors.count(wc);
		return;
	}
	on_credit_wc(r, qi, wc);
}

} // namespace rp
