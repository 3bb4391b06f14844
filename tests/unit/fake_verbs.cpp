#include "fake_verbs.h"

#include "engine/pattern.h"
#include "verbs/memory.h"

#include <rte_mempool.h>

#include <arpa/inet.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace fake {

namespace {

Nic g_nic;

void execute(const ibv_send_wr *wr)
{
	if (!g_nic.execute_one_sided || wr->num_sge == 0)
		return;
	auto *local = reinterpret_cast<unsigned char *>(wr->sg_list[0].addr);
	uint32_t len = wr->sg_list[0].length;
	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		memcpy(reinterpret_cast<void *>(wr->wr.rdma.remote_addr), local, len);
		break;
	case IBV_WR_RDMA_READ:
		memcpy(local, reinterpret_cast<void *>(wr->wr.rdma.remote_addr), len);
		break;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_ATOMIC_CMP_AND_SWP: {
		auto *word = reinterpret_cast<uint64_t *>(wr->wr.atomic.remote_addr);
		uint64_t old = *word;
		if (wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD)
			*word = old + wr->wr.atomic.compare_add;
		else if (old == wr->wr.atomic.compare_add)
			*word = wr->wr.atomic.swap;
		memcpy(local, &old, sizeof(old));
		break;
	}
	default:
		break;
	}
}

/* A WR's sequence: its wr_id, but an unsignalled WR of a prebuilt chain keeps an
 * earlier round's (congruent mod the period): one below its QP's next is that next. */
uint64_t seq_of(const ibv_qp *qp, const ibv_send_wr *wr)
{
	if (qp == nullptr)
		return wr->wr_id;
	uint64_t &next = g_nic.next_seq[qp->qp_num];
	const uint64_t seq = wr->wr_id < next && !(wr->send_flags & IBV_SEND_SIGNALED) ? next : wr->wr_id;
	next = seq + 1;
	return seq;
}

int post_send(ibv_qp *qp, ibv_send_wr *wr, ibv_send_wr **bad)
{
	std::vector<PostedWr> chain;
	for (; wr; wr = wr->next) {
		if (g_nic.send_fail_after >= 0 && chain.size() == static_cast<size_t>(g_nic.send_fail_after)) {
			*bad = wr;
			g_nic.chains.push_back(chain);
			return ENOMEM;
		}
		const uint64_t seq = seq_of(qp, wr);
		PostedWr p{seq, wr->wr_id, wr->opcode, wr->send_flags, ntohl(wr->imm_data), wr->wr.rdma.remote_addr,
			   wr->wr.rdma.rkey, wr->num_sge ? wr->sg_list[0].addr : 0,
			   wr->num_sge ? wr->sg_list[0].length : 0, wr->num_sge ? wr->sg_list[0].lkey : 0,
			   wr->num_sge, 0, qp ? qp->qp_num : 0};
		if (wr->num_sge && wr->sg_list[0].length >= 8)
			memcpy(&p.first_word, reinterpret_cast<void *>(wr->sg_list[0].addr), 8);
		chain.push_back(p);
		if (g_nic.check_len && wr->num_sge &&
		    rp::pattern_check(reinterpret_cast<void *>(wr->sg_list[0].addr), g_nic.check_len,
				      rp::msg_key(qp ? qp->qp_num - kQpNumBase : 0, seq)) >= 0) {
			if (g_nic.pattern_mismatches++ == 0)
				g_nic.first_mismatch = seq;
		}
		if (g_nic.hold_qp_num && qp && qp->qp_num == g_nic.hold_qp_num)
			continue;
		if (g_nic.credit_word)
			*g_nic.credit_word = *g_nic.credit_word + 1;
		bool err = seq == g_nic.error_at_wr_id &&
			   (g_nic.error_qp_num == 0 || (qp && qp->qp_num == g_nic.error_qp_num));
		if (!err)
			execute(wr);
		if ((g_nic.complete_signalled && (wr->send_flags & IBV_SEND_SIGNALED)) || err) {
			ibv_wc wc{};
			wc.wr_id = wr->wr_id;
			wc.status = err ? g_nic.error_status : IBV_WC_SUCCESS;
			wc.opcode = IBV_WC_RDMA_WRITE;
			wc.qp_num = qp ? qp->qp_num : 0;
			g_nic.send_cq.push_back(wc);
		}
	}
	g_nic.chains.push_back(chain);
	return 0;
}

int post_srq_recv(ibv_srq *, ibv_recv_wr *wr, ibv_recv_wr **bad)
{
	uint32_t n = 0;
	for (; wr; wr = wr->next) {
		if (g_nic.srq_fail_after >= 0 && g_nic.srq_posted == static_cast<uint64_t>(g_nic.srq_fail_after)) {
			*bad = wr;
			g_nic.srq_chains.push_back(n);
			return ENOMEM;
		}
		n++;
		g_nic.srq_posted++;
		g_nic.srq_wr_ids.push_back(wr->wr_id);
	}
	g_nic.srq_chains.push_back(n);
	return 0;
}

int post_recv(ibv_qp *qp, ibv_recv_wr *wr, ibv_recv_wr **bad)
{
	std::deque<uint64_t> &rq = g_nic.rq_wr_ids[qp->qp_num];
	uint32_t n = 0;
	for (; wr; wr = wr->next) {
		if (rq.size() == g_nic.rq_cap) {
			*bad = wr;
			g_nic.rq_chains.emplace_back(qp->qp_num, n);
			return ENOMEM;
		}
		n++;
		rq.push_back(wr->wr_id);
	}
	g_nic.rq_chains.emplace_back(qp->qp_num, n);
	return 0;
}

int poll_cq(ibv_cq *cq, int n, ibv_wc *wc)
{
	bool recv = cq == g_nic.recv_cq_handle;
	std::deque<ibv_wc> &q = recv ? g_nic.recv_cq : g_nic.send_cq;
	if (recv && n > g_nic.recv_burst)
		n = g_nic.recv_burst;
	int got = 0;
	while (got < n && !q.empty()) {
		wc[got] = q.front();
		q.pop_front();
		if (recv && wc[got].wr_id == kFromSrq) {
			if (g_nic.srq_wr_ids.empty()) {
				/* Nothing posted: a real NIC would answer RNR; the test is wrong. */
				fprintf(stderr, "fake: receive completion with an empty SRQ\n");
				abort();
			}
			wc[got].wr_id = g_nic.srq_wr_ids.front();
			g_nic.srq_wr_ids.pop_front();
		} else if (recv && wc[got].wr_id == kFromRq) {
			std::deque<uint64_t> &rq = g_nic.rq_wr_ids[wc[got].qp_num];
			if (rq.empty()) {
				fprintf(stderr, "fake: receive completion on QP %u with an empty receive queue\n", wc[got].qp_num);
				abort();
			}
			wc[got].wr_id = rq.front();
			rq.pop_front();
		}
		if (recv && g_nic.deliver)
			g_nic.deliver(wc[got]);
		got++;
	}
	return got;
}

int stop_qp(ibv_qp *qp)
{
	if (g_nic.stop_error)
		return -g_nic.stop_error;
	g_nic.stopped.push_back(qp->qp_num);
	return 0;
}

int restart_qp(ibv_qp *qp)
{
	if (g_nic.restart_error)
		return -g_nic.restart_error;
	g_nic.restarted.push_back(qp->qp_num);
	return 0;
}

} // namespace

void map_pool(rte_mempool *pool, rp::MrTable *mrs)
{
	rte_mempool_mem_iter(pool, [](rte_mempool *, void *arg, rte_mempool_memhdr *m, unsigned) {
		auto *t = static_cast<rp::MrTable *>(arg);
		auto b = reinterpret_cast<uintptr_t>(m->addr);
		t->chunks[t->n] = {b, b + m->len, 0x40 + t->n};
		t->n++;
	}, mrs);
}

Nic &nic() { return g_nic; }
void reset() { g_nic = Nic{}; }

const rp::VerbsOps kOps = {post_send, post_srq_recv, post_recv, poll_cq, stop_qp, restart_qp};

} // namespace fake
