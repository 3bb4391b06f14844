#include "roles.h"

#include "common.h"

#include <rte_errno.h>
#include <rte_mempool.h>

#include <algorithm>
#include <cstring>

namespace rp {

RoleShape role_shape(const RunOptions &o)
{
	RoleShape r;
	const Verb verb = o.verb;
	r.two_sided = verb_consumes_receive(verb);
	r.local_write = verb == Verb::read || verb_is_atomic(verb);
	switch (verb) {
	case Verb::write:
	case Verb::write_imm: r.mem_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE; break;
	case Verb::read: r.mem_access = IBV_ACCESS_REMOTE_READ; break;
	case Verb::fetch_add:
	case Verb::cmp_swap: r.mem_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC; break;
	case Verb::send:
	case Verb::send_imm: break;
	}
	r.mem_per_qp = responder_memory_per_qp(verb, o.msg_bytes, o.slots);
	const uint64_t window_total = static_cast<uint64_t>(o.slots) * o.qps;
	r.srq_depth = r.two_sided ? static_cast<uint32_t>(window_total + o.srq_refill) : 0;
	r.req_send_cq = static_cast<uint64_t>(o.qps) * o.sq_depth;
	r.rsp_recv_cq = r.two_sided ? r.srq_depth : 1;
	r.rsp_send_cq = static_cast<uint64_t>(o.qps) * kCreditRing;
	r.tx_pool_n = o.qps * (o.sq_depth + o.batch) + o.batch * 2 + 1;
	r.rx_pool_n = r.two_sided && verb != Verb::write_imm ? r.srq_depth + kRxPollBurst + o.batch * 2 + 1 : 0;
	return r;
}

int check_role_limits(const RoleShape &r, const Device &dev, uint64_t qps_here, std::string *err)
{
	const uint64_t max_cqe = static_cast<uint64_t>(dev.dev_attr.max_cqe);
	uint64_t biggest = std::max({r.req_send_cq, r.rsp_recv_cq, r.rsp_send_cq});
	if (biggest > max_cqe) {
		*err = dev.name + ": a CQ of " + std::to_string(biggest) + " entries would be needed, the device allows " +
		       std::to_string(max_cqe) + " (lower --slots or --qps)";
		return -1;
	}
	if (qps_here > static_cast<uint64_t>(dev.dev_attr.max_qp)) {
		*err = dev.name + ": " + std::to_string(qps_here) + " QPs needed, the device allows " +
		       std::to_string(dev.dev_attr.max_qp);
		return -1;
	}
	return 0;
}

rte_mempool *make_registered_pool(const char *name, const char *what, unsigned n, const RunOptions &o,
				  const Device &dev, int access, MrTable *mrs, std::string *err)
{
	rte_mempool *p = make_pool(name, n, o.msg_bytes, o.batch);
	if (p == nullptr) {
		*err = std::string(what) + " (" + std::to_string(n) + " x " + std::to_string(o.msg_bytes) +
		       " B): rte_mempool_create: " + rte_strerror(rte_errno) + " (give EAL more memory: -m, or more hugepages)";
		return nullptr;
	}
	if (mr_register_mempool(const_cast<Device &>(dev), p, access, mrs, err) != 0) {
		mr_table_release(mrs);
		rte_mempool_free(p);
		return nullptr;
	}
	return p;
}

RequesterParams requester_params(const RunOptions &o, bool use_wr, uint64_t hz)
{
	const double dhz = static_cast<double>(hz);
	return RequesterParams{o.verb, o.msg_bytes, o.batch, o.signal_every, o.sq_depth, o.slots,
			       o.duration_s > 0 ? 0 : o.messages, static_cast<uint64_t>(o.duration_s * dhz),
			       static_cast<uint64_t>(o.stall_timeout_s * dhz), o.corrupt_msg,
			       use_wr ? PostApi::wr : PostApi::classic, o.inline_send, o.fence, 1e9 / dhz};
}

ResponderParams responder_params(const RunOptions &o, uint64_t hz)
{
	uint32_t credit_step = o.slots / 4 ? o.slots / 4 : 1;
	return ResponderParams{o.verb, o.msg_bytes, o.slots, credit_step, o.verify,
			       static_cast<uint64_t>(o.stall_timeout_s * static_cast<double>(hz)), hz};
}

int responder_fill_srq(Responder *v, const RunOptions &o, const RoleShape &r, rte_mempool *rx_pool,
		       const MrTable *rx_mrs, const Device &dev, std::string *err)
{
	if (v->refill.init(r.srq_depth, o.srq_refill, kRxPollBurst, rx_pool, o.msg_bytes, rx_mrs) != 0) {
		*err = "SRQ refill: bad sizes (depth " + std::to_string(r.srq_depth) + ", threshold " +
		       std::to_string(o.srq_refill) + ")";
		return -1;
	}
	int ret = v->refill.fill(*v->ops, v->srq);
	if (ret < 0 || static_cast<uint32_t>(ret) != r.srq_depth) {
		*err = dev.name + ": filling the SRQ with " + std::to_string(r.srq_depth) + " receives: " +
		       (ret < 0 ? strerror(-ret) : "too few buffers");
		return -1;
	}
	ibv_srq_attr sa{};
	sa.srq_limit = o.batch;
	if ((ret = ibv_modify_srq(v->srq, &sa, IBV_SRQ_LIMIT)) != 0 && !o.quiet)
		printf("rdmapipe: %s: no SRQ limit event (ibv_modify_srq: %s)\n", dev.name.c_str(), strerror(ret));
	return 0;
}

} // namespace rp
