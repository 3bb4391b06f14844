#include "verbs/caps.h"

#include "verbs/device.h"

#include <cerrno>
#include <cstring>

namespace rp {

namespace {

constexpr uint32_t kRxeVendorId = 0xffffff;   // soft-RoCE (rdma_rxe)


/* The send ops rdmapipe posts through ibv_qp_ex. */
constexpr uint64_t kSendOps = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_WRITE |
			      IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |
			      IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;

ibv_qp *try_qp(Device &dev, ibv_cq *cq, ibv_qp_type type, uint32_t max_inline)
{
	ibv_qp_init_attr a{};
	a.send_cq = cq;
	a.recv_cq = cq;
	a.qp_type = type;
	a.cap.max_send_wr = 1;
	a.cap.max_recv_wr = 1;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 1;
	a.cap.max_inline_data = max_inline;
	return ibv_create_qp(dev.pd, &a);
}

} // namespace

int probe_caps(Device &dev, DeviceCaps *c, std::vector<std::string> *notes, std::string *err)
{
	*c = DeviceCaps{};
	c->max_sge = dev.dev_attr.max_sge;
	c->atomics = dev.dev_attr.atomic_cap;
	ibv_cq *cq = ibv_create_cq(dev.ctx, 4, nullptr, nullptr, 0);
	if (cq == nullptr) {
		*err = dev.name + ": capability probe: ibv_create_cq: " + strerror(errno);
		return -errno;
	}

	ibv_cq_init_attr_ex ca{};
	ca.cqe = 4;
	ca.wc_flags = IBV_WC_STANDARD_FLAGS;
	if (ibv_cq_ex *x = ibv_create_cq_ex(dev.ctx, &ca)) {
		c->cq_ex = true;
		c->next_poll_ends_batch = dev.dev_attr.vendor_id == kRxeVendorId;
		ibv_destroy_cq(ibv_cq_ex_to_cq(x));
	} else {
		notes->push_back("extended CQs (ibv_create_cq_ex) unsupported: " + std::string(strerror(errno)) +
				 "; polling with ibv_poll_cq");
	}
	ca.wc_flags = static_cast<uint64_t>(IBV_WC_STANDARD_FLAGS) | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	if (ibv_cq_ex *x = c->cq_ex ? ibv_create_cq_ex(dev.ctx, &ca) : nullptr) {
		c->cq_timestamps = true;
		ibv_destroy_cq(ibv_cq_ex_to_cq(x));
	} else {
		notes->push_back("no completion timestamps: latency is taken from the TSC on the CPU");
	}

	ibv_modify_cq_attr ma{};
	ma.attr_mask = IBV_CQ_ATTR_MODERATE;
	ma.moderate.cq_count = 1;
	ma.moderate.cq_period = 0;
	int ret = ibv_modify_cq(cq, &ma);
	c->cq_moderation = ret == 0;
	if (ret)
		notes->push_back("no CQ moderation (ibv_modify_cq: " + std::string(strerror(ret)) +
				 "): selective signalling alone limits completions");

	ibv_qp_init_attr_ex qa{};
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 1;
	qa.cap.max_recv_wr = 1;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.pd = dev.pd;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	qa.send_ops_flags = kSendOps;
	if (ibv_qp *q = ibv_create_qp_ex(dev.ctx, &qa)) {
		c->qp_ex = ibv_qp_to_qp_ex(q) != nullptr;
		ibv_destroy_qp(q);
	}
	if (!c->qp_ex)
		notes->push_back("no ibv_qp_ex send ops: posting with ibv_post_send chains only");

	if (ibv_qp *q = try_qp(dev, cq, IBV_QPT_UC, 0)) {
		c->uc = true;
		ibv_destroy_qp(q);
	} else {
		notes->push_back("no UC QPs");
	}

	/* The largest inline size an RC QP accepts. */
	for (uint32_t want : {1024u, 512u, 256u, 128u, 64u, 32u, 16u}) {
		if (ibv_qp *q = try_qp(dev, cq, IBV_QPT_RC, want)) {
			c->max_inline = want;
			ibv_destroy_qp(q);
			break;
		}
	}
	if (c->max_inline == 0)
		notes->push_back("no inline sends");
	if (c->atomics == IBV_ATOMIC_NONE)
		notes->push_back("no atomics (atomic_cap NONE)");

	ibv_destroy_cq(cq);
	return 0;
}

std::string caps_str(const DeviceCaps &c)
{
	auto yn = [](bool b) { return b ? "yes" : "no"; };
	return std::string("cq_ex ") + yn(c.cq_ex) + ", timestamps " + yn(c.cq_timestamps) + ", cq moderation " +
	       yn(c.cq_moderation) + ", qp_ex " + yn(c.qp_ex) + ", uc " + yn(c.uc) + ", max inline " +
	       std::to_string(c.max_inline) + ", max sge " + std::to_string(c.max_sge) + ", atomics " +
	       (c.atomics == IBV_ATOMIC_NONE ? "none" : c.atomics == IBV_ATOMIC_HCA ? "hca" : "glob");
}

} // namespace rp
