#include "fake_verbs.h"

#include "engine/pattern.h"

#include <arpa/inet.h>

namespace fake {

namespace {

Nic g_nic;

int post_send(ibv_qp *, ibv_send_wr *wr, ibv_send_wr **bad)
{
	std::vector<PostedWr> chain;
	for (; wr; wr = wr->next) {
		if (g_nic.send_fail_after >= 0 && chain.size() == static_cast<size_t>(g_nic.send_fail_after)) {
			*bad = wr;
			g_nic.chains.push_back(chain);
			return ENOMEM;
		}
		PostedWr p{wr->wr_id, wr->opcode, wr->send_flags, ntohl(wr->imm_data), wr->wr.rdma.remote_addr,
			   wr->wr.rdma.rkey, wr->num_sge ? wr->sg_list[0].addr : 0,
			   wr->num_sge ? wr->sg_list[0].length : 0, wr->num_sge ? wr->sg_list[0].lkey : 0,
			   wr->num_sge};
		chain.push_back(p);
		if (g_nic.check_len && wr->num_sge &&
		    rp::pattern_check(reinterpret_cast<void *>(wr->sg_list[0].addr), g_nic.check_len, wr->wr_id) >= 0) {
			if (g_nic.pattern_mismatches++ == 0)
				g_nic.first_mismatch = wr->wr_id;
		}
		if (g_nic.credit_word)
			*g_nic.credit_word = *g_nic.credit_word + 1;
		bool err = wr->wr_id == g_nic.error_at_wr_id;
		if ((g_nic.complete_signalled && (wr->send_flags & IBV_SEND_SIGNALED)) || err) {
			ibv_wc wc{};
			wc.wr_id = wr->wr_id;
			wc.status = err ? g_nic.error_status : IBV_WC_SUCCESS;
			wc.opcode = IBV_WC_RDMA_WRITE;
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
	}
	g_nic.srq_chains.push_back(n);
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
		if (recv && g_nic.deliver)
			g_nic.deliver(wc[got]);
		got++;
	}
	return got;
}

} // namespace

Nic &nic() { return g_nic; }
void reset() { g_nic = Nic{}; }

const rp::VerbsOps kOps = {post_send, post_srq_recv, poll_cq};

} // namespace fake
