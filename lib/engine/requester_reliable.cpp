/* The requester's half of UC made reliable in software: ACKs, fast and timed
 * retransmission, restarts of a broken receiving QP. */
#include "engine/requester_internal.h"

#include "engine/ctrl_port.h"
#include "verbs/ctrl_qp.h"

#include <arpa/inet.h>

#include <algorithm>

namespace rp {

namespace {


/* Reliable: sequences sent on q (messages, or their chunks: a message's go together). */
inline uint64_t seqs_sent(const Requester *r, const RequesterQp &q)
{
	return q.sent * r->ck.count;
}

/* Re-posts sequences seqs[0..k) of QP qi as one chain: a write (or a chunk of one) as
 * a SEND of its retransmission header and its chunk, a send as the same SEND_WITH_IMM.
 * Returns the count posted (fewer when the send queue is short of room), or -1. */
int retransmit(Requester *r, uint32_t qi, const uint64_t *seqs, uint32_t k, uint64_t now)
{
	RequesterQp &q = r->qps[qi];
	const RequesterParams &p = r->p;
	uint64_t room = p.sq_depth - (q.wr_posted - q.wr_done);
	if (p.wr_budget && p.wr_budget - std::min<uint64_t>(p.wr_budget, r->wr_out) < room)
		room = p.wr_budget - std::min<uint64_t>(p.wr_budget, r->wr_out);
	if (room < k) {
		r->c.retx_deferred += k - room;
		k = static_cast<uint32_t>(room);
	}
	if (k == 0)
		return 0;
	const size_t qbase = static_cast<size_t>(qi) * (r->seq_mask + 1);
	for (uint32_t j = 0; j < k; j++) {
		const uint64_t s = seqs[j];
		const uint32_t idx = static_cast<uint32_t>(s & r->seq_mask);
		void *b = q.inflight[r->ck.msg(s) & r->inflight_mask];
		Requester::Retx &e = r->retx[j];
		const uint32_t imm = htonl(static_cast<uint32_t>(s & kImmSeqMask) | (q.marks[idx] & kMarkLast ? kImmLast : 0));
		const ibv_sge chunk{reinterpret_cast<uintptr_t>(b) + static_cast<uint64_t>(r->ck.index(s)) * r->ck.bytes,
				    r->ck.len(s), r->mrs->lkey_of(b)};
		if (p.verb == Verb::write_imm) {
			RetxHeader &h = r->hdrs[qbase + idx];
			h.target_offset = r->ck.offset(s, q.remote.slots);
			if (r->p.bad_retx_header) {
				h.target_offset = static_cast<uint64_t>(q.remote.slots) * p.msg_bytes;   // one past the window
				r->p.bad_retx_header = false;
			}
			h.imm = imm;
			e.sge[0] = ibv_sge{reinterpret_cast<uintptr_t>(&h), sizeof(h), r->hdr_lkey};
			e.sge[1] = chunk;
			e.wr.num_sge = 2;
			e.wr.opcode = IBV_WR_SEND;
		} else {
			e.sge[0] = chunk;
			e.wr.num_sge = 1;
			e.wr.opcode = IBV_WR_SEND_WITH_IMM;
			e.wr.imm_data = imm;
		}
		const uint64_t place = q.wr_posted + j;
		e.wr.wr_id = place | r->wr_tag;
		e.wr.sg_list = e.sge;
		e.wr.send_flags = wr_signalled(place, p.signal_every) || j + 1 == k ? IBV_SEND_SIGNALED : 0;
		e.wr.next = j + 1 < k ? &r->retx[j + 1].wr : nullptr;
		q.post_tsc[idx] = now;
		if ((q.marks[idx] & kMarkRetxMask) != kMarkRetxMask)
			q.marks[idx]++;
	}
	r->c.post_calls++;
	/* A write's retransmission (header and chunk) goes through ibv_post_send under
	 * either API: ibv_qp_ex allows it between its chains, and no two-SGE setter of
	 * ibv_qp_ex is right on rdma-core 44's rxe (post_send_ex). */
	ibv_send_wr *bad = nullptr;
	const int ret = p.verb == Verb::write_imm ? r->ops->post_send(q.qp, &r->retx[0].wr, &bad)
						  : post_tracked(r, q, &r->retx[0].wr);
	if (ret != 0) {
		r->c.post_errors++;
		r->c.fail_reason = "ibv_post_send (retransmission) failed";
		if (!q.failed) {
			q.failed = true;
			r->c.failed_qps++;
		}
		return -1;
	}
	q.wr_posted += k;
	r->wr_out += k;
	return static_cast<int>(k);
}

/* Holes an ACK shows below the newest message it acknowledges: each was sent before
 * (or with) that one, and UC delivers a QP's messages in order, so it was lost. A hole
 * resent after that message went is left to its new copy. */
void fast_retransmit(Requester *r, uint32_t qi, const AckMsg &a, uint64_t now)
{
	RequesterQp &q = r->qps[qi];
	const uint64_t h = ack_highest(a);
	if (h + 1 <= a.cum || h >= seqs_sent(r, q))
		return;
	const uint64_t th = q.post_tsc[h & r->seq_mask];
	uint64_t seqs[kMaxBatch];
	uint32_t k = 0;
	for (uint64_t s = a.cum > q.acked ? a.cum : q.acked; s < h && k < r->p.batch; s++) {
		if (ack_has(a, s))
			continue;
		const uint32_t idx = static_cast<uint32_t>(s & r->seq_mask);
		if (q.post_tsc[idx] > th)
			continue;
		r->c.sack_holes += (q.marks[idx] & kMarkRetxMask) == 0;
		seqs[k++] = s;
	}
	int n = k ? retransmit(r, qi, seqs, k, now) : 0;
	if (n > 0) {
		r->c.retx_fast += static_cast<uint64_t>(n);
		bump(r->flow_live[q.flow].retx_fast, static_cast<uint64_t>(n));
	}
}

/* After a restart the receiver says so in an ACK: whatever was in flight then is lost,
 * so the messages the ACK does not have go again now, a batch of them (what is left
 * the ACKs this draws show as holes). Not the whole window: measured on rxe, resending
 * everything in flight at once broke the resent multi-packet messages in turn, and 8 KiB
 * at 1% loss took 2.3x as long. */
void resend_unacked(Requester *r, uint32_t qi, const AckMsg &a, uint64_t now)
{
	RequesterQp &q = r->qps[qi];
	uint64_t seqs[kMaxBatch];
	uint32_t k = 0;
	for (uint64_t s = a.cum > q.acked ? a.cum : q.acked; s < seqs_sent(r, q) && k < r->p.batch; s++)
		if (!ack_has(a, s))
			seqs[k++] = s;
	int n = k ? retransmit(r, qi, seqs, k, now) : 0;
	if (n > 0) {
		r->c.retx_fast += static_cast<uint64_t>(n);
		bump(r->flow_live[q.flow].retx_fast, static_cast<uint64_t>(n));
	}
}

} // namespace

/* A paused QP asks its receiver for the restart once its send queue is empty (every
 * chain ends signalled), so that nothing of it is still on the way: rxe 6.1 reset
 * under traffic can crash the kernel. Lost, or no room: the next timeout asks again. */
void ask_when_quiet(Requester *r, RequesterQp &q)
{
	if (q.asked || q.wr_done != q.wr_posted)
		return;
	q.asked = true;
	r->c.restart_requests++;
	bump(r->flow_live[q.flow].restart_requests);
	const AckMsg m{kAckMagic, kAckVersion, kCtrlRestartRequest, q.peer_qpn, 0, 0, {}, q.epoch};
	if (r->port && r->port->ctrl)
		ctrl_send(r->port->ctrl, *q.peer_ctrl, &m, sizeof(m));
}

namespace {

/* Pauses QP q for a restart of its receiving end (kAckBroken in reliability.h), a new
 * epoch, or asks again in the same one. A receiver that named no control QP cannot be
 * asked: nothing pauses then. */
void request_restart(Requester *r, RequesterQp &q)
{
	if (q.peer_ctrl == nullptr)
		return;
	q.epoch += !q.paused;
	q.paused = true;
	q.asked = false;
	ask_when_quiet(r, q);
}

} // namespace

/* The oldest unacknowledged message of a QP, unacknowledged for longer than its
 * timeout, goes again (one: TCP's rule; the ACK it draws shows the rest, which fast
 * retransmission then resends), and the timeout backs off until an ACK moves the QP
 * on. Resending a window's worth at once would, when the delay was queueing (large
 * messages on a slow device), only add to the queue. */
int check_timeouts(Requester *r, uint64_t now)
{
	for (uint32_t qi = 0; qi < r->nqps; qi++) {
		RequesterQp &q = r->qps[qi];
		if (q.completed == q.sent && !q.asked)
			q.paused = false;   // nothing in flight to lose, and no request on its way
		if (q.failed || q.completed == q.sent)
			continue;
		if (now - q.post_tsc[q.acked & r->seq_mask] < q.rto.current())
			continue;
		const uint64_t oldest = q.acked;
		/* On rxe, with an SRQ, a loss inside a multi-packet RDMA write leaves the
		 * receiving QP dropping every later message, and nothing tells the receiver
		 * (a broken send at least completes in error there): timeouts in a row ask. */
		const bool ask = q.paused || (r->p.restart_on_timeouts && q.rto.backoff + 1 >= kTimeoutsBeforeRestart);
		q.rto.timed_out();
		if (ask) {
			request_restart(r, q);
			if (q.paused)
				continue;   // resent once the receiver says it restarted
		}
		int n = retransmit(r, qi, &oldest, 1, now);
		if (n < 0)
			return -1;
		r->c.retx_timeout += static_cast<uint64_t>(n);
		if (n)
			bump(r->flow_live[q.flow].retx_timeout, static_cast<uint64_t>(n));
	}
	return 0;
}

void requester_on_ack(Requester *r, uint32_t qi, const AckMsg &a, uint64_t now)
{
	RequesterQp &q = r->qps[qi];
	r->c.acks_received++;
	bump(r->flow_live[q.flow].acks);
	if (q.failed)
		return;
	if (a.cum > seqs_sent(r, q)) {
		r->c.acks_invalid++;   // acknowledges what was never sent
		return;
	}
	if (a.credit / r->ck.count > q.ack_credit)
		q.ack_credit = a.credit / r->ck.count;   // in messages: slots the receiver is done with
	if (a.cum > q.acked) {
		const uint32_t idx = static_cast<uint32_t>((a.cum - 1) & r->seq_mask);
		/* Karn: only a message sent once times the round trip. */
		if ((q.marks[idx] & kMarkRetxMask) == 0) {
			const uint64_t rtt = now - q.post_tsc[idx];
			q.rto.sample(rtt);
			r->flow_latency[q.flow].record(static_cast<uint64_t>(static_cast<double>(rtt) * r->p.ns_per_tsc));
		}
		q.rto.progressed();
		q.acked = a.cum;
		const uint64_t whole = r->ck.msg(a.cum);   // messages whose every chunk is acknowledged
		if (whole > q.completed)
			r->retire(r, qi, whole - 1);
		r->last_progress = now;
	}
	if ((a.flags & kAckRestarted) && q.paused && a.epoch == q.epoch) {
		q.paused = q.asked = false;
		resend_unacked(r, qi, a, now);
	} else if (a.flags & kAckRestarted) {
		/* a repeat, or of an earlier pause: only its cum and bitmap count */
	} else if (a.flags & kAckBroken) {
		if (q.paused)
			ask_when_quiet(r, q);
		else
			request_restart(r, q);
	} else if (!q.paused) {
		fast_retransmit(r, qi, a, now);
	}
}

} // namespace rp
