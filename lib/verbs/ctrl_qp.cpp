#include "verbs/ctrl_qp.h"

#include "verbs/device.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace rp {

namespace {

constexpr uint32_t kRecvBytes = kCtrlGrh + kCtrlMsgMax;

std::string fail(const Device &dev, const char *what, int e)
{
	return "control QP on " + dev.name + ": " + what + ": " + strerror(e);
}

unsigned char *send_slot(CtrlQp *c, uint64_t i)
{
	return c->mem + static_cast<size_t>(c->recv_slots) * kRecvBytes + (i % c->send_slots) * kCtrlMsgMax;
}

/* RESET -> INIT -> RTR -> RTS: a UD QP needs only its port, P_Key and Q_Key. */
int ctrl_qp_ready(Device &dev, ibv_qp *qp, std::string *err)
{
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = dev.port;
	a.qkey = kCtrlQkey;
	int ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
	if (ret == 0) {
		a = {};
		a.qp_state = IBV_QPS_RTR;
		ret = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	}
	if (ret == 0) {
		a = {};
		a.qp_state = IBV_QPS_RTS;
		a.sq_psn = 0;
		ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	}
	if (ret != 0)
		*err = fail(dev, "ibv_modify_qp to RTS", ret);
	return -ret;
}

ibv_qp *make_qp(Device &dev, CtrlQp *c, uint32_t inline_bytes)
{
	ibv_qp_init_attr qa{};
	qa.send_cq = c->send_cq;
	qa.recv_cq = c->recv_cq;
	qa.qp_type = IBV_QPT_UD;
	qa.cap.max_send_wr = c->send_slots;
	qa.cap.max_recv_wr = c->recv_slots;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.cap.max_inline_data = inline_bytes;
	ibv_qp *qp = ibv_create_qp(dev.pd, &qa);
	if (qp)
		c->max_inline = qa.cap.max_inline_data;
	return qp;
}

} // namespace

int ctrl_qp_create(Device &dev, uint32_t recv_slots, uint32_t send_slots, CtrlQp *c, std::string *err)
{
	if (recv_slots < 16 || recv_slots > 4096 || send_slots < 16 || send_slots > 4096) {
		*err = "control QP on " + dev.name + ": slots outside 16..4096";
		return -EINVAL;
	}
	c->recv_slots = recv_slots;
	c->send_slots = send_slots;
	const size_t bytes = static_cast<size_t>(recv_slots) * kRecvBytes + static_cast<size_t>(send_slots) * kCtrlMsgMax;
	void *mem = nullptr;
	if (posix_memalign(&mem, 4096, bytes) != 0) {
		*err = fail(dev, "its slots", ENOMEM);
		return -ENOMEM;
	}
	c->mem = static_cast<unsigned char *>(mem);
	memset(c->mem, 0, bytes);
	if ((c->mr = ibv_reg_mr(dev.pd, c->mem, bytes, IBV_ACCESS_LOCAL_WRITE)) == nullptr) {
		*err = fail(dev, "ibv_reg_mr", errno);
		return -errno;
	}
	c->send_cq = ibv_create_cq(dev.ctx, static_cast<int>(send_slots), nullptr, nullptr, 0);
	c->recv_cq = c->send_cq ? ibv_create_cq(dev.ctx, static_cast<int>(recv_slots), nullptr, nullptr, 0) : nullptr;
	if (c->recv_cq == nullptr) {
		*err = fail(dev, "ibv_create_cq", errno);
		return -errno;
	}
	/* Inline ACKs where the device takes them; rxe gives less than asked for some sizes. */
	if ((c->qp = make_qp(dev, c, kCtrlMsgMax)) == nullptr && (c->qp = make_qp(dev, c, 0)) == nullptr) {
		*err = fail(dev, "ibv_create_qp (UD)", errno);
		return -errno;
	}
	int ret = ctrl_qp_ready(dev, c->qp, err);
	if (ret != 0)
		return ret;
	c->rwr.reset(new ibv_recv_wr[recv_slots]());
	c->rsge.reset(new ibv_sge[recv_slots]());
	for (uint32_t i = 0; i < recv_slots; i++) {
		c->rsge[i] = ibv_sge{reinterpret_cast<uintptr_t>(c->mem + static_cast<size_t>(i) * kRecvBytes), kRecvBytes, c->mr->lkey};
		c->rwr[i].wr_id = i;
		c->rwr[i].sg_list = &c->rsge[i];
		c->rwr[i].num_sge = 1;
		c->rwr[i].next = i + 1 < recv_slots ? &c->rwr[i + 1] : nullptr;
	}
	ibv_recv_wr *bad = nullptr;
	if ((ret = ibv_post_recv(c->qp, &c->rwr[0], &bad)) != 0) {
		*err = fail(dev, "posting its receives", ret);
		return -ret;
	}
	return 0;
}

void ctrl_qp_destroy(CtrlQp *c)
{
	if (c->qp)
		ibv_destroy_qp(c->qp);
	if (c->send_cq)
		ibv_destroy_cq(c->send_cq);
	if (c->recv_cq)
		ibv_destroy_cq(c->recv_cq);
	if (c->mr)
		ibv_dereg_mr(c->mr);
	free(c->mem);
	c->qp = nullptr;
	c->send_cq = c->recv_cq = nullptr;
	c->mr = nullptr;
	c->mem = nullptr;
}

int ctrl_dest_create(Device &from, const ibv_gid &to, uint32_t qpn, CtrlDest *d, std::string *err)
{
	ibv_ah_attr a{};
	a.is_global = 1;
	a.grh.dgid = to;
	a.grh.sgid_index = static_cast<uint8_t>(from.gid_index);
	a.grh.hop_limit = 64;
	a.port_num = from.port;
	if ((d->ah = ibv_create_ah(from.pd, &a)) == nullptr) {
		*err = "control QP on " + from.name + ": ibv_create_ah to its peer: " + strerror(errno);
		return -errno;
	}
	d->qpn = qpn;
	return 0;
}

void ctrl_dest_destroy(CtrlDest *d)
{
	if (d->ah)
		ibv_destroy_ah(d->ah);
	d->ah = nullptr;
}

int ctrl_send(CtrlQp *c, const CtrlDest &d, const void *msg, uint32_t len)
{
	ibv_wc wc[16];
	int n = ibv_poll_cq(c->send_cq, 16, wc);
	for (int i = 0; i < n; i++)
		c->send_errors += wc[i].status != IBV_WC_SUCCESS;
	if (n > 0)
		c->send_done += static_cast<uint64_t>(n);
	if (c->send_posted - c->send_done >= c->send_slots) {
		c->no_room++;
		return 0;
	}
	unsigned char *slot = send_slot(c, c->send_posted);
	memcpy(slot, msg, len);
	ibv_sge sge{reinterpret_cast<uintptr_t>(slot), len, c->mr->lkey};
	ibv_send_wr wr{};
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED | (len <= c->max_inline ? IBV_SEND_INLINE : 0);
	wr.wr.ud.ah = d.ah;
	wr.wr.ud.remote_qpn = d.qpn;
	wr.wr.ud.remote_qkey = kCtrlQkey;
	ibv_send_wr *bad = nullptr;
	int ret = ibv_post_send(c->qp, &wr, &bad);
	if (ret != 0)
		return -ret;
	c->send_posted++;
	return 1;
}

int ctrl_recv(CtrlQp *c, const void **msgs, uint32_t *lens, uint32_t max)
{
	ibv_wc wc[kCtrlRecvBurst];
	if (max > kCtrlRecvBurst - c->ntaken)
		max = kCtrlRecvBurst - c->ntaken;
	int n = ibv_poll_cq(c->recv_cq, static_cast<int>(max), wc);
	if (n < 0)
		return -1;
	int out = 0;
	for (int i = 0; i < n; i++) {
		const uint32_t slot = static_cast<uint32_t>(wc[i].wr_id);
		c->taken[c->ntaken++] = slot;
		if (wc[i].status != IBV_WC_SUCCESS || wc[i].byte_len < kCtrlGrh) {
			c->recv_errors++;
			continue;
		}
		msgs[out] = c->mem + static_cast<size_t>(slot) * kRecvBytes + kCtrlGrh;
		lens[out++] = wc[i].byte_len - kCtrlGrh;
	}
	return out;
}

int ctrl_recv_done(CtrlQp *c)
{
	if (c->ntaken == 0)
		return 0;
	for (uint32_t i = 0; i < c->ntaken; i++)
		c->rwr[c->taken[i]].next = i + 1 < c->ntaken ? &c->rwr[c->taken[i + 1]] : nullptr;
	ibv_recv_wr *bad = nullptr;
	int ret = ibv_post_recv(c->qp, &c->rwr[c->taken[0]], &bad);
	c->ntaken = 0;
	return -ret;
}

} // namespace rp
