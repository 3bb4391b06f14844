#include "engine/verbs_ops.h"

#include "verbs/io_context.h"

#include <cerrno>

namespace rp {

namespace {
int real_post_send(ibv_qp *qp, ibv_send_wr *wr, ibv_send_wr **bad) { return ibv_post_send(qp, wr, bad); }
int real_post_srq_recv(ibv_srq *srq, ibv_recv_wr *wr, ibv_recv_wr **bad) { return ibv_post_srq_recv(srq, wr, bad); }
int real_post_recv(ibv_qp *qp, ibv_recv_wr *wr, ibv_recv_wr **bad) { return ibv_post_recv(qp, wr, bad); }
int real_poll_cq(ibv_cq *cq, int n, ibv_wc *wc) { return ibv_poll_cq(cq, n, wc); }

int real_stop_qp(ibv_qp *qp)
{
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_ERR;
	return -ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

int real_restart_qp(ibv_qp *qp)
{
	ibv_qp_attr a{};
	ibv_qp_init_attr init{};
	int ret = ibv_query_qp(qp, &a, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS | IBV_QP_AV | IBV_QP_PATH_MTU |
			       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_SQ_PSN, &init);
	ibv_qp_attr s{};
	s.qp_state = IBV_QPS_RESET;
	if (ret == 0)
		ret = ibv_modify_qp(qp, &s, IBV_QP_STATE);
	s.qp_state = IBV_QPS_INIT;
	s.pkey_index = a.pkey_index;
	s.port_num = a.port_num;
	s.qp_access_flags = a.qp_access_flags;
	if (ret == 0)
		ret = ibv_modify_qp(qp, &s, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	a.qp_state = IBV_QPS_RTR;   // UC takes any PSN at the start of a message
	if (ret == 0)
		ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN);
	a.qp_state = IBV_QPS_RTS;
	if (ret == 0)
		ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	return -ret;
}

/* One burst through the extended CQ: the provider's start_poll/next_poll read each
 * entry in place; only the fields the dispatch uses are copied out. kEndsOnEmpty: the
 * provider's ibv_next_poll already ends the batch when it returns ENOENT (rxe: it
 * stores the consumer index and drops the CQ lock there, and a following ibv_end_poll
 * would step the index past the producer). */
template <bool kEndsOnEmpty>
int ex_poll_cq(ibv_cq *cq, int n, ibv_wc *wc)
{
	ibv_cq_ex *x = cq_ex_of(cq);
	ibv_poll_cq_attr attr{};
	int ret = ibv_start_poll(x, &attr);
	if (ret == ENOENT)
		return 0;
	if (ret != 0)
		return -1;
	int i = 0;
	for (;;) {
		ibv_wc &w = wc[i];
		w.wr_id = x->wr_id;
		w.status = x->status;
		w.qp_num = ibv_wc_read_qp_num(x);
		if (w.status == IBV_WC_SUCCESS) {
			w.opcode = ibv_wc_read_opcode(x);
			w.byte_len = ibv_wc_read_byte_len(x);
			w.wc_flags = ibv_wc_read_wc_flags(x);
			w.imm_data = w.wc_flags & IBV_WC_WITH_IMM ? ibv_wc_read_imm_data(x) : 0;
		} else {
			w.opcode = IBV_WC_SEND;   // not defined for an error completion
			w.byte_len = 0;
			w.wc_flags = 0;
			w.vendor_err = ibv_wc_read_vendor_err(x);
		}
		if (++i == n)
			break;
		ret = ibv_next_poll(x);
		if (ret == ENOENT) {
			if (kEndsOnEmpty)
				return i;
			break;
		}
		if (ret != 0) {
			ibv_end_poll(x);
			return -1;
		}
	}
	ibv_end_poll(x);
	return i;
}
} // namespace

int post_send_ex(ibv_qp_ex *x, const ibv_send_wr *head)
{
	ibv_wr_start(x);
	for (const ibv_send_wr *w = head; w; w = w->next) {
		x->wr_id = w->wr_id;
		x->wr_flags = w->send_flags;
		switch (w->opcode) {
		case IBV_WR_SEND: ibv_wr_send(x); break;
		case IBV_WR_SEND_WITH_IMM: ibv_wr_send_imm(x, w->imm_data); break;
		case IBV_WR_RDMA_WRITE_WITH_IMM:
			ibv_wr_rdma_write_imm(x, w->wr.rdma.rkey, w->wr.rdma.remote_addr, w->imm_data);
			break;
		default: ibv_wr_abort(x); return EINVAL;
		}
		if (w->num_sge != 1) {
			ibv_wr_abort(x);
			return EINVAL;
		}
		const ibv_sge &g = w->sg_list[0];
		if (w->send_flags & IBV_SEND_INLINE)
			ibv_wr_set_inline_data(x, reinterpret_cast<void *>(g.addr), g.length);
		else
			ibv_wr_set_sge(x, g.lkey, g.addr, g.length);
	}
	return ibv_wr_complete(x);
}

const VerbsOps kIbvOps = {real_post_send, real_post_srq_recv, real_post_recv, real_poll_cq, real_stop_qp, real_restart_qp};
const VerbsOps kIbvCqExOps = {real_post_send, real_post_srq_recv, real_post_recv, ex_poll_cq<false>, real_stop_qp, real_restart_qp};
const VerbsOps kIbvCqExRxeOps = {real_post_send, real_post_srq_recv, real_post_recv, ex_poll_cq<true>, real_stop_qp, real_restart_qp};

} // namespace rp
