/* A responder's side of UC made reliable in software (reliability.h): each arrival
 * placed by its sequence (an original's immediate, a retransmission's header) in the
 * QP's window, duplicates dropped, ACKs with the window and the credit, and a QP
 * stopped and restarted when its sender asks. */
#include "engine/responder_internal.h"

#include "engine/ctrl_port.h"
#include "engine/wr_chain.h"

#include <arpa/inet.h>

#include <cstring>

namespace rp {

namespace {

/* Reliable: where message m of QP qi lives in a write window. */
inline unsigned char *slot_of(Responder *r, uint32_t qi, uint64_t m)
{
	return r->memory + (static_cast<uint64_t>(qi) * r->p.slots + m % r->p.slots) * r->p.msg_bytes;
}

/* Reliable: a retransmitted write or chunk (header + chunk in a receive buffer). The
 * header is checked before anything is written: its target must be that write's or
 * chunk's place in the window, its length that one's. Returns false when dropped. */
bool take_retx(Responder *r, uint32_t qi, const ibv_wc &wc, const unsigned char *buf, uint64_t *seq, bool *last)
{
	ResponderQp &q = r->qps[qi];
	RetxHeader h;
	if (buf == nullptr || wc.byte_len < sizeof(h)) {
		r->c.retx_header_bad++;
		return false;
	}
	memcpy(&h, buf, sizeof(h));
	if (!retx_header_ok(h, q.win.cum, q.win.window, r->p.slots, r->ck, seq) || wc.byte_len != sizeof(h) + r->ck.len(*seq)) {
		r->c.retx_header_bad++;
		return false;
	}
	*last = (ntohl(h.imm) & kImmLast) != 0;
	if (*seq < q.win.cum || q.win.has(*seq)) {
		r->c.duplicates++;
		q.ack_now = true;
		return false;
	}
	memcpy(slot_of(r, qi, 0) + h.target_offset, buf + sizeof(h), r->ck.len(*seq));   // offset checked: in the QP's window
	r->c.retx_received++;
	return true;
}

/* Reliable: the sequence of an original message (its immediate), checked for opcode
 * and length. Returns false when dropped (counted). */
bool take_original(Responder *r, uint32_t qi, const ibv_wc &wc, uint64_t *seq, bool *last)
{
	ResponderCounters &c = r->c;
	ResponderQp &q = r->qps[qi];
	const ibv_wc_opcode want = verb_recv_wc_opcode(r->p.verb);
	if (wc.opcode != want || !(wc.wc_flags & IBV_WC_WITH_IMM)) {
		c.unexpected_opcodes++;
		c.bad(qi, q.win.cum, -1);
		return false;
	}
	const uint32_t imm = ntohl(wc.imm_data);
	*last = (imm & kImmLast) != 0;
	switch (seq_from_imm(q.win.cum, imm & kImmSeqMask, q.win.window, seq)) {
	case SeqClass::outside:
		c.outside_window++;
		c.bad(qi, q.win.cum, -1);
		return false;
	case SeqClass::old:
		c.duplicates++;
		q.ack_now = true;
		return false;
	case SeqClass::in_window:
		break;
	}
	if (q.win.has(*seq)) {
		c.duplicates++;
		q.ack_now = true;
		return false;
	}
	if (wc.byte_len != r->ck.len(*seq)) {
		c.length_errors++;
		c.bad(qi, *seq, -1);
		return false;
	}
	return true;
}

/* Reliable: sequence seq of QP qi (a message, or a chunk of one) arrived for the first
 * time: its place in the window marked, an ACK asked for at once when it opens a hole
 * or is the QP's last, and a message whole now has its payload (at data) checked. */
void arrived(Responder *r, uint32_t qi, uint64_t seq, bool last, const unsigned char *data, uint64_t now)
{
	ResponderCounters &c = r->c;
	ResponderQp &q = r->qps[qi];
	if (seq > q.win.cum)
		c.out_of_order++;
	if (seq > q.highest)
		q.ack_now = true;   // a new hole: tell the sender now
	if (seq + 1 > q.highest)
		q.highest = seq + 1;
	q.win.mark(seq);
	if (last)
		q.last_seq = seq;
	if (!q.complete && q.last_seq != UINT64_MAX && q.win.cum == q.last_seq + 1) {
		q.complete = true;
		q.saw_last = true;
		r->lasts++;
		q.ack_now = true;
	}
	if (q.unacked++ == 0)
		q.first_unacked_tsc = now;
	/* A message cut into chunks is in once its last chunk to come is. */
	if (r->ck.count > 1) {
		const uint64_t m = r->ck.msg(seq);
		uint32_t &in = q.chunks_in[m % r->p.slots];
		if (++in < r->ck.count)
			return;
		in = 0;
		seq = m;
	}
	if (payload_ok(r, qi, seq, data))
		c.verified++;
	q.received++;
	c.received++;
	c.bytes += r->p.msg_bytes;
}

/* Reliable: a QP its sender asked to restart is stopped (ERR) now and restarted
 * (RESET to RTS) restart_settle_tsc later, not at once: rxe 6.1 resets a QP while its
 * responder may still run on another CPU for a packet that came just before
 * (rxe_run_task is not held off by the reset's tasklet_disable), and both then drop
 * that packet's reference to the QP; after some hundred restarts the count reaches
 * zero and every later packet of the QP is dropped unseen. Stopped, rxe drops new
 * packets before they are queued and flushes a receive it held (WR_FLUSH_ERR, its
 * buffer comes back), so the reset finds the responder idle. */
bool stop_for_restart(Responder *r, ResponderQp &q, uint64_t now)
{
	if (r->ops->stop_qp == nullptr || r->ops->stop_qp(q.qp) != 0)
		return false;
	q.restart_at = now + r->p.restart_settle_tsc + 1;
	r->restarting++;
	r->recv_refill().hold(q.qp->qp_num, true);   // its own receive queue: left alone until the reset
	r->c.qp_restarts++;   // what was broken or in flight is lost: its sender resends it
	return true;
}

/* A restart step failed: the QP is lost, and so is the run (why: which step). */
void restart_failed(Responder *r, ResponderQp &q, const char *why)
{
	r->c.restart_errors++;
	q.failed = true;
	if (r->c.fail_reason == nullptr)
		r->c.fail_reason = why;
	r->finished = true;
}

} // namespace

/* Reliable: one receive completion of QP qi. Only a first arrival of a send is handed
 * on; everything else goes back to the pool. A message the NIC found broken (a loss
 * inside a multi-packet UC message, reported by rxe with an SRQ as REM_INV_REQ_ERR)
 * does not fail the QP: the ACKs say it is broken, and the sender pauses it and asks
 * for a restart (reliability.h); so does a flushed receive (the QP went to ERR), and
 * one flushed while the QP is stopped is just its buffer coming back. */
void on_recv_rel(Responder *r, uint32_t qi, const ibv_wc &wc, uint64_t now)
{
	ResponderQp &q = r->qps[qi];
	unsigned char *buf = r->rx_pool && wc.wr_id ? reinterpret_cast<unsigned char *>(wc.wr_id) : nullptr;
	bool fresh = false;
	const bool restartable = wc.status == IBV_WC_REM_INV_REQ_ERR || wc.status == IBV_WC_WR_FLUSH_ERR;
	if (wc.status != IBV_WC_SUCCESS && !q.failed && (q.restart_at || restartable)) {
		if (q.restart_at == 0 && !q.broken) {
			q.broken = q.ack_now = true;
			r->acks_waiting++;
			r->c.broken++;
			/* Its own receive queue (if it has one) gets nothing more until the restart:
			 * what rxe does not flush from a QP in ERR, the reset would drop. */
			r->recv_refill().hold(wc.qp_num, true);
		}
	} else if (wc.status != IBV_WC_SUCCESS) {
		r->c.wc_errors.count(wc);
		q.failed = true;
		r->recv_refill().hold(wc.qp_num, true);
	} else {
		if (r->c.received == 0)
			r->c.start_tsc = now;
		uint64_t seq = 0;
		bool last = false;
		const bool retx = r->p.verb == Verb::write_imm && !(wc.wc_flags & IBV_WC_WITH_IMM);
		fresh = retx ? take_retx(r, qi, wc, buf, &seq, &last) : take_original(r, qi, wc, &seq, &last);
		if (fresh)
			arrived(r, qi, seq, last, r->p.verb == Verb::write_imm ? slot_of(r, qi, r->ck.msg(seq)) : buf, now);
		r->credit_due = true;
	}
	/* write_imm: the buffer carried a retransmission, now copied into the window. */
	if (buf != nullptr)
		recv_buffer_done(r, qi, buf, fresh && r->p.verb != Verb::write_imm);
}

void responder_finish_restarts(Responder *r, uint64_t now)
{
	for (uint32_t qi = 0; r->restarting && qi < r->nqps; qi++) {
		ResponderQp &q = r->qps[qi];
		if (q.restart_at == 0 || now < q.restart_at)
			continue;
		q.restart_at = 0;
		r->restarting--;
		q.restarted = q.ack_now = true;   // the sender resends what was in flight
		r->acks_waiting++;
		if (r->ops->restart_qp(q.qp) != 0)
			restart_failed(r, q, "restarting a UC QP after a broken message failed (ibv_modify_qp)");
		else
			r->recv_refill().hold(q.qp->qp_num, false);
	}
}

/* Reliable: an ACK to every QP that is due one (ack_every messages, ack_tsc since the
 * first unacknowledged, credit worth a step, or at once). Returns -1 when a post failed. */
int send_acks(Responder *r, uint64_t now)
{
	const ResponderParams &p = r->p;
	uint32_t waiting = 0;
	for (uint32_t qi = 0; qi < r->nqps; qi++) {
		ResponderQp &q = r->qps[qi];
		if (q.failed)
			continue;
		const uint64_t consumed = consumed_of(r, q) * r->ck.count;   // in sequences, as cum
		const uint64_t credit = consumed < q.win.cum ? consumed : q.win.cum;
		const bool due = q.ack_now || q.unacked >= p.ack_every || (q.unacked && now - q.first_unacked_tsc >= p.ack_tsc) ||
				 credit >= q.acked_credit + p.credit_step;
		if (!due) {
			waiting += q.unacked != 0;
			continue;
		}
		const uint8_t flags = q.restarted ? kAckRestarted : q.broken ? kAckBroken : uint8_t{0};
		AckMsg a{kAckMagic, kAckVersion, flags, q.peer_qpn, q.win.cum, credit, {}, q.epoch};
		q.win.sack(a.sack);
		int ret = ctrl_send(r->ctrl, q.ack_to, &a, sizeof(a));
		if (ret < 0)
			return -1;
		if (ret == 0) {
			r->c.ack_no_room++;
			waiting++;   // every slot busy: the next burst tries again
			continue;
		}
		r->c.acks_sent++;
		q.unacked = 0;
		q.ack_now = q.restarted = false;
		q.acked_credit = credit;
	}
	r->acks_waiting = waiting;
	return 0;
}

void responder_on_restart_request(Responder *r, uint32_t qi, uint64_t epoch, uint64_t now)
{
	ResponderQp &q = r->qps[qi];
	r->c.restart_requests++;
	if (q.failed || epoch < q.epoch)
		return;
	if (epoch == q.epoch) {
		if (q.restart_at == 0 && !q.restarted) {   // its ACK was lost: say it again
			q.restarted = q.ack_now = true;
			r->acks_waiting++;
		}
		return;
	}
	q.epoch = epoch;
	q.broken = false;
	if (q.restart_at == 0 && !stop_for_restart(r, q, now))
		restart_failed(r, q, "stopping a UC QP for its restart failed (ibv_modify_qp)");
}

} // namespace rp
