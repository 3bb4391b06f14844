/* The requester's completions out of the burst (errors, other lanes', other roles'),
 * the choice of burst and the end of its input. The burst itself is requester_burst.h,
 * instantiated in requester_post.cpp. */
#include "engine/requester_burst.h"

namespace rp {

namespace {

/* A failed WR whose status says the receiver never took it (nor what followed it). */
inline bool never_arrived(ibv_wc_status st)
{
	switch (st) {
	case IBV_WC_RNR_RETRY_EXC_ERR:
	case IBV_WC_REM_INV_REQ_ERR:
	case IBV_WC_REM_ACCESS_ERR:
	case IBV_WC_REM_OP_ERR:
	case IBV_WC_LOC_LEN_ERR:
	case IBV_WC_LOC_QP_OP_ERR:
	case IBV_WC_LOC_PROT_ERR:
		return true;
	default:
		return false;
	}
}

} // namespace

/* A failed send completion of QP qi: only this QP stops; its outstanding WRs come
 * back flushed. */
void on_send_error(Requester *r, uint32_t qi, const ibv_wc &wc)
{
	RequesterQp &q = r->qps[qi];
	ibv_wc e = wc;
	if (r->prebuilt)   // an unsignalled WR's wr_id is its sequence mod the period
		e.wr_id = r->pre.full_seq(wc.wr_id, q.completed);
	r->c.wc_errors.count(e);
	r->flow_errors[q.flow].count(e);
	{
		const WcErrorCounts &fe = r->flow_errors[q.flow];
		FlowLive &fl = r->flow_live[q.flow];
		const unsigned st = e.status < kWcStatusCount ? e.status : IBV_WC_GENERAL_ERR;
		fl.by_status[st].store(fe.by_status[st], std::memory_order_relaxed);
		fl.errors.store(fe.total, std::memory_order_relaxed);
	}
	if (!q.failed) {
		q.failed = true;
		r->c.failed_qps++;
	}
	if (!q.settled) {
		/* RC completes in order: what came before the failed WR arrived and is
		 * credited; where its status proves that it and what follows never
		 * arrived, they leave the flow's window instead of holding it from the
		 * flow's other QPs. A flush or a retry exceeded proves nothing (an ACK
		 * may have been lost): those stay counted. */
		q.settled = true;
		const uint64_t seq = e.wr_id & kSeqMask;
		if (r->p.flow_window && never_arrived(e.status) && seq < q.sent)
			r->flow_credit[q.flow].lost += q.sent - seq;
	}
}

/* Completions other lanes polled for this one. */
int take_handed(Requester *r, uint64_t now)
{
	void *e[kTxPollBurst];
	unsigned n = rte_ring_sc_dequeue_burst(r->lane_rings[r->lane], e, kTxPollBurst, nullptr);
	for (unsigned i = 0; i < n; i++) {
		uint64_t v = reinterpret_cast<uint64_t>(e[i]);
		ibv_wc wc{};
		wc.status = static_cast<ibv_wc_status>(v >> 56);
		wc.wr_id = v & kSeqMask;
		wc.opcode = verb_wc_opcode(r->p.verb);
		req::on_send_wc<false, req::ViaPointers>(r, static_cast<uint32_t>((v >> 40) & 0xffff), wc, now);
	}
	r->c.handed_in += n;
	return static_cast<int>(n);
}

/* Bound buffers (requester_burst.h's bind, in its first round): the QP takes those of
 * its first round of messages from the pool, as they are first needed, and keeps them.
 * False when the pool is short. */
bool bind_more(Requester *r, RequesterQp &q, uint32_t n)
{
	const uint64_t size = r->inflight_mask + 1;
	const uint32_t k = static_cast<uint32_t>(std::min<uint64_t>(q.sent + n, size) - q.bound);
	if (rte_mempool_get_bulk(r->pool, &q.inflight[q.bound], k) != 0)
		return false;
	for (uint32_t i = q.bound; i < q.bound + k; i++)
		q.lkeys[i] = r->mrs->lkey_of(q.inflight[i]);
	q.bound += k;
	return true;
}


/* What a lean burst leaves out must be absent from the run (prebuilt chains imply
 * bound buffers, no input ring, no lanes, no loss injected). */
bool requester_lean(const Requester *r)
{
	const RequesterParams &p = r->p;
	return r->prebuilt && !p.reliable && r->in == nullptr && r->nlanes == 0 && r->lane_rings == nullptr &&
	       !p.wr_budget && !p.flow_window && !p.count_from_input;
}

uint32_t requester_burst(Requester *r)
{
	return r->burst(r);
}

void requester_on_send_wc(void *requester, const ibv_wc &wc, uint64_t now)
{
	auto *r = static_cast<Requester *>(requester);
	uint32_t qi = r->table.find(wc.qp_num);
	if (qi == QpTable::kNone) {
		r->c.wc_errors.count(wc);
		return;
	}
	ibv_wc own = wc;
	own.wr_id &= kSeqMask;
	req::on_send_wc<false, req::ViaPointers>(r, qi, own, now);
	if (!r->p.reliable && now > r->last_progress)
		r->last_progress = now;   // the other role polled it: still progress of ours
}

void requester_input_ended(Requester *r)
{
	for (uint32_t i = 0; i < r->nqps; i++) {
		RequesterQp &q = r->qps[i];
		if (q.target > q.sent) {
			q.target = q.sent;
			if (r->c.fail_reason == nullptr && !r->timed_out && !r->p.count_from_input && !r->ctl->ending())
				r->c.fail_reason = "its input ended early: the stages before it made fewer messages than the flow's count";
		}
	}
}

int requester_run(Requester *r)
{
	requester_start(r);
	while (!r->finished)
		requester_burst(r);
	return requester_finish(r);
}

} // namespace rp
