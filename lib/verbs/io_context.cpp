#include "verbs/io_context.h"

#include "verbs/device.h"
#include "log/log.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace rp {

namespace {

constexpr uint8_t kAckTimeout = 14;    // 4.096 us * 2^14 = 67 ms

std::string errstr(const Device &dev, const char *what, int e)
{
	return dev.name + ": " + what + ": " + strerror(e);
}

ibv_cq *cq_create(Device &dev, uint32_t depth, ibv_comp_channel *channel, bool ex)
{
	if (!ex)
		return ibv_create_cq(dev.ctx, static_cast<int>(depth), nullptr, channel, 0);
	ibv_cq_init_attr_ex ca{};
	ca.cqe = depth;
	ca.channel = channel;
	ca.wc_flags = kCqExWcFlags;
	/* One lcore polls it: the provider may skip its CQ lock. */
	ca.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	ca.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
	ibv_cq_ex *x = ibv_create_cq_ex(dev.ctx, &ca);
	if (x == nullptr) {
		ca.comp_mask = 0;   // a provider without the single-threaded hint
		ca.flags = 0;
		x = ibv_create_cq_ex(dev.ctx, &ca);
	}
	return x ? ibv_cq_ex_to_cq(x) : nullptr;
}

} // namespace

int shared_io_context_create(Device &dev, uint32_t send_cq_depth, uint32_t recv_cq_depth,
			uint32_t srq_depth, bool with_channel, bool cq_ex, SharedIOContext *io, std::string *err)
{
	const ibv_device_attr &a = dev.dev_attr;
	int ret;
	if (send_cq_depth > static_cast<uint32_t>(a.max_cqe) || recv_cq_depth > static_cast<uint32_t>(a.max_cqe)) {
		*err = dev.name + ": CQ depth " + std::to_string(send_cq_depth > recv_cq_depth ? send_cq_depth : recv_cq_depth) +
		       " exceeds the device's max_cqe " + std::to_string(a.max_cqe);
		return -EINVAL;
	}
	if (srq_depth > static_cast<uint32_t>(a.max_srq_wr)) {
		*err = dev.name + ": SRQ depth " + std::to_string(srq_depth) + " exceeds the device's max_srq_wr " +
		       std::to_string(a.max_srq_wr);
		return -EINVAL;
	}
	if (with_channel && (io->channel = ibv_create_comp_channel(dev.ctx)) == nullptr) {
		*err = errstr(dev, "completion channel", errno);
		return -errno;
	}
	io->cq_ex = cq_ex;
	io->send_cq = cq_create(dev, send_cq_depth, io->channel, cq_ex);
	if (io->send_cq == nullptr) {
		ret = errno;
		*err = errstr(dev, ("send CQ (" + std::to_string(send_cq_depth) + " entries)").c_str(), ret);
		goto destroy_channel;
	}
	io->recv_cq = cq_create(dev, recv_cq_depth, io->channel, cq_ex);
	if (io->recv_cq == nullptr) {
		ret = errno;
		*err = errstr(dev, ("receive CQ (" + std::to_string(recv_cq_depth) + " entries)").c_str(), ret);
		goto destroy_send_cq;
	}
	if (srq_depth) {
		ibv_srq_init_attr sa{};
		sa.attr.max_wr = srq_depth;
		sa.attr.max_sge = 1;
		io->srq = ibv_create_srq(dev.pd, &sa);
		if (io->srq == nullptr) {
			ret = errno;
			*err = errstr(dev, ("SRQ (" + std::to_string(srq_depth) + " receives)").c_str(), ret);
			goto destroy_recv_cq;
		}
	}
	io->send_cq_depth = send_cq_depth;
	io->recv_cq_depth = recv_cq_depth;
	io->srq_depth = srq_depth;
	RP_LOG(DEBUG, VERBS, "rdmapipe: %s: io context: send CQ %u, receive CQ %u, SRQ %u entries%s%s\n", dev.name.c_str(),
	       send_cq_depth, recv_cq_depth, srq_depth, cq_ex ? ", extended CQs" : "", with_channel ? ", completion channel" : "");
	return 0;

destroy_recv_cq:
	ibv_destroy_cq(io->recv_cq);
	io->recv_cq = nullptr;
destroy_send_cq:
	ibv_destroy_cq(io->send_cq);
	io->send_cq = nullptr;
destroy_channel:
	if (io->channel)
		ibv_destroy_comp_channel(io->channel);
	io->channel = nullptr;
	return -ret;
}

void shared_io_context_destroy(SharedIOContext *io)
{
	if (io->srq)
		ibv_destroy_srq(io->srq);
	if (io->recv_cq)
		ibv_destroy_cq(io->recv_cq);
	if (io->send_cq)
		ibv_destroy_cq(io->send_cq);
	if (io->channel)
		ibv_destroy_comp_channel(io->channel);
	*io = SharedIOContext{};
}

ibv_qp *rc_qp_create(Device &dev, SharedIOContext &io, const QpOptions &o, std::string *err)
{
	const uint32_t rq_depth = io.srq ? 0 : o.rq_depth;
	if (std::max(o.sq_depth, rq_depth) > static_cast<uint32_t>(dev.dev_attr.max_qp_wr)) {
		*err = dev.name + ": " + (o.sq_depth >= rq_depth ? "send" : "receive") + " queue depth " +
		       std::to_string(std::max(o.sq_depth, rq_depth)) + " exceeds the device's max_qp_wr " +
		       std::to_string(dev.dev_attr.max_qp_wr);
		errno = EINVAL;
		return nullptr;
	}
	ibv_qp_init_attr_ex qa{};
	qa.send_cq = io.send_cq;
	qa.recv_cq = io.recv_cq;
	qa.srq = io.srq;
	qa.qp_type = o.uc ? IBV_QPT_UC : IBV_QPT_RC;
	qa.sq_sig_all = 0;   // selective signalling: each WR says whether it wants a completion
	qa.cap.max_send_wr = o.sq_depth;
	qa.cap.max_send_sge = o.uc ? 2 : 1;   // UC: a retransmitted write is a SEND of header and chunk
	qa.cap.max_recv_wr = rq_depth;
	qa.cap.max_recv_sge = io.srq ? 0 : 1;
	qa.cap.max_inline_data = o.max_inline;
	qa.pd = dev.pd;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;
	if (o.qp_ex) {
		qa.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		qa.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_WRITE |
				    IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
		if (!o.uc)
			qa.send_ops_flags |= IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
					     IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
	}
	ibv_qp *qp = ibv_create_qp_ex(dev.ctx, &qa);
	if (qp == nullptr)
		*err = errstr(dev, (std::string(o.uc ? "UC" : "RC") + " QP (send queue " + std::to_string(o.sq_depth) +
				    (io.srq ? "" : ", receive queue " + std::to_string(rq_depth)) + ", inline " +
				    std::to_string(o.max_inline) + (o.qp_ex ? ", qp_ex" : "") + ")").c_str(), errno);
	return qp;
}

int rc_qp_connect(Device &dev, ibv_qp *qp, const QpOptions &o, uint32_t local_psn, const RcPeer &peer,
		  int access, std::string *err)
{
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = dev.port;
	a.qp_access_flags = o.uc ? access & IBV_ACCESS_REMOTE_WRITE : access;
	int ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret) {
		*err = dev.name + ": QP " + std::to_string(qp->qp_num) + " to INIT: " + strerror(ret);
		return -ret;
	}

	a = ibv_qp_attr{};
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = dev.port_attr.active_mtu;
	a.dest_qp_num = peer.qpn;
	a.rq_psn = peer.psn;
	a.max_dest_rd_atomic = static_cast<uint8_t>(dev.dev_attr.max_qp_rd_atom < 16 ? dev.dev_attr.max_qp_rd_atom : 16);
	a.min_rnr_timer = o.min_rnr_timer;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer.gid;
	a.ah_attr.grh.sgid_index = static_cast<uint8_t>(dev.gid_index);
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.dlid = dev.port_attr.lid;   // ignored on RoCE, needed on InfiniBand loopback
	a.ah_attr.port_num = dev.port;
	traffic_apply(o.traffic, o.qp_index, &a.ah_attr);
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					   (o.uc ? 0 : IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER));
	if (ret) {
		const std::string t = o.traffic.describe(o.qp_index);
		*err = dev.name + ": QP " + std::to_string(qp->qp_num) + " to RTR (peer QP " +
		       std::to_string(peer.qpn) + (t.empty() ? "" : ", " + t) + "): " + strerror(ret);
		return -ret;
	}
	if ((ret = traffic_verify(qp, o.traffic, o.qp_index, err)) != 0) {
		*err = dev.name + ": " + *err;
		return ret;
	}

	a = ibv_qp_attr{};
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = local_psn;
	a.timeout = kAckTimeout;
	a.retry_cnt = o.retry_cnt;
	a.rnr_retry = o.rnr_retry;
	a.max_rd_atomic = static_cast<uint8_t>(dev.dev_attr.max_qp_init_rd_atom < 16 ? dev.dev_attr.max_qp_init_rd_atom : 16);
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
					   (o.uc ? 0 : IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC));
	if (ret) {
		*err = dev.name + ": QP " + std::to_string(qp->qp_num) + " to RTS: " + strerror(ret);
		return -ret;
	}
	return 0;
}

} // namespace rp
