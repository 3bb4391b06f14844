#include "engine/receiver.h"

#include "engine/pattern.h"
#include "engine/wr_chain.h"

#include <rte_cycles.h>

#include <arpa/inet.h>

namespace rp {

namespace {

struct CreditState {
	uint64_t posted = 0;      // credit writes posted
	uint64_t completed = 0;   // and completed
	uint64_t last_sent = 0;   // consumed count last written
};

/* Posts one signalled 8-byte RDMA_WRITE of `consumed` into the writer's credit word. */
int send_credit(Receiver *r, CreditState *cs, uint64_t consumed)
{
	if (cs->posted - cs->completed == kCreditRing)
		return 0;   // all source words busy: the next loop tries again
	uint64_t *src = &r->credit_src[cs->posted % kCreditRing];
	*src = consumed;
	ibv_sge sge{reinterpret_cast<uintptr_t>(src), sizeof(*src), r->credit_lkey};
	ibv_send_wr wr{};
	wr.wr_id = cs->posted;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = r->credit_remote_addr;
	wr.wr.rdma.rkey = r->credit_rkey;
	ibv_send_wr *bad = nullptr;
	int ret = r->ops->post_send(r->qp, &wr, &bad);
	if (ret)
		return -ret;
	cs->posted++;
	cs->last_sent = consumed;
	r->c.credit_writes++;
	return 1;
}

int poll_credit_completions(Receiver *r, CreditState *cs)
{
	ibv_wc wc[kCreditRing];
	int n = r->ops->poll_cq(r->send_cq, kCreditRing, wc);
	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			r->c.wc_errors.count(wc[i]);
			return -1;
		}
		cs->completed++;
	}
	return n;
}

void check_message(Receiver *r, const ibv_wc &wc, uint64_t expect)
{
	ReceiverCounters &c = r->c;
	uint32_t imm = ntohl(wc.imm_data);
	bool ok = true;
	if ((imm & kImmSeqMask) != (expect & kImmSeqMask)) {
		c.sequence_errors++;
		ok = false;
	}
	if (wc.byte_len != r->p.msg_bytes) {
		c.length_errors++;
		ok = false;
	}
	if (ok && r->p.verify) {
		const unsigned char *slot = r->window + (expect % r->p.slots) * r->p.msg_bytes;
		ptrdiff_t bad = pattern_check(slot, r->p.msg_bytes, expect);
		if (bad >= 0) {
			c.payload_errors++;
			if (c.first_bad_seq == UINT64_MAX) {
				c.first_bad_seq = expect;
				c.first_bad_offset = bad;
			}
			ok = false;
		}
	}
	if (!ok && c.first_bad_seq == UINT64_MAX)
		c.first_bad_seq = expect;
	if (ok)
		c.verified++;
	if (imm & kImmLast)
		c.saw_last = true;
}

} // namespace

int receiver_run(Receiver *r)
{
	ReceiverCounters &c = r->c;
	const ReceiverParams &p = r->p;
	CreditState cs;
	ibv_wc wc[kRxPollBurst];
	uint64_t now = rte_rdtsc();
	uint64_t last_progress = now;

	while (!c.saw_last) {
		if (r->ctl->abort.load(std::memory_order_relaxed)) {
			c.fail_reason = "aborted";
			break;
		}
		int n = r->ops->poll_cq(r->recv_cq, kRxPollBurst, wc);
		if (n < 0) {
			c.fail_reason = "ibv_poll_cq on the receive CQ failed";
			break;
		}
		now = rte_rdtsc();
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				c.wc_errors.count(wc[i]);
				continue;
			}
			if (wc[i].opcode != IBV_WC_RECV_RDMA_WITH_IMM) {
				c.unexpected_opcodes++;
				continue;
			}
			if (c.received == 0)
				c.start_tsc = now;
			check_message(r, wc[i], c.received);
			c.received++;
			c.bytes += wc[i].byte_len;
		}
		if (n > 0) {
			last_progress = now;
			c.end_tsc = now;
			r->refill.consumed(static_cast<uint32_t>(n));
			if (c.wc_errors.total) {
				c.fail_reason = "receive completion error";
				break;
			}
		}
		int ret = r->refill.refill(*r->ops, r->srq);
		if (ret < 0) {
			c.fail_reason = "ibv_post_srq_recv failed";
			break;
		}
		if (poll_credit_completions(r, &cs) < 0) {
			c.fail_reason = "credit write completion error";
			break;
		}
		if (c.received - cs.last_sent >= p.credit_step && send_credit(r, &cs, c.received) < 0) {
			c.fail_reason = "ibv_post_send (credit write) failed";
			break;
		}
		if (n == 0) {
			/* The writer stopped early (an error on its side): take what it sent, then end. */
			if (r->ctl->writer_done.load(std::memory_order_acquire)) {
				uint64_t sent = r->ctl->writer_sent.load(std::memory_order_relaxed);
				if (c.received >= sent || now - last_progress > p.drain_tsc)
					break;
			} else if (now - last_progress > p.stall_tsc) {
				c.fail_reason = "stalled: no message from the writer";
				break;
			}
		}
	}
	c.srq_post_calls = r->refill.post_calls();
	/* Let outstanding credit writes finish before the QP is torn down. */
	uint64_t until = rte_rdtsc() + p.drain_tsc;
	while (cs.completed < cs.posted && rte_rdtsc() < until)
		if (poll_credit_completions(r, &cs) < 0)
			break;
	bool clean = c.fail_reason == nullptr && c.saw_last && c.verified == c.received;
	return clean ? 0 : -1;
}

} // namespace rp
