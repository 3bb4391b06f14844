#include "pipeline/flow.h"

#include "log/log.h"

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_common.h>
#include <rte_mempool.h>

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <thread>

namespace rp {

rte_mempool *make_pool(const char *name, unsigned n, uint32_t elt_bytes, uint32_t burst, uint32_t cache_given)
{
	unsigned cache = burst * 2 > RTE_MEMPOOL_CACHE_MAX_SIZE ? RTE_MEMPOOL_CACHE_MAX_SIZE : burst * 2;
	if (cache_given != UINT32_MAX)
		cache = std::min<unsigned>(cache_given, RTE_MEMPOOL_CACHE_MAX_SIZE);
	if (cache * 3 / 2 > n)
		cache = 0;   // a cache would strand most of a small pool on one lcore
	/* The NIC reaches the buffers through an MR, by virtual address: they need not be
	 * IOVA-contiguous, and without that demand the pool comes in few, large chunks
	 * (one MR each) instead of one per hugepage. */
	return rte_mempool_create(name, n, elt_bytes, cache, 0, nullptr, nullptr, nullptr, nullptr,
				  static_cast<int>(rte_socket_id()), RTE_MEMPOOL_F_NO_IOVA_CONTIG);
}

RoleShape role_shape(const FlowParams &o)
{
	RoleShape r;
	const Verb verb = o.verb;
	const VerbInfo &vi = verb_info(verb);
	r.two_sided = vi.consumes_receive;
	r.local_access = vi.local_access;
	r.mem_access = vi.remote_access;
	r.mem_per_qp = responder_memory_per_qp(verb, o.msg_bytes, o.slots) * o.slices;
	const uint64_t window_total = flow_inflight(o);
	r.srq_depth = r.two_sided ? static_cast<uint32_t>(window_total + o.srq_refill) : 0;
	r.req_send_cq = static_cast<uint64_t>(o.qps) * o.sq_depth;
	/* A requester binds one buffer per place of its QPs' in-flight rings (a power of
	 * two at least the send queue: Requester::bound). */
	r.tx_pool_n = std::max(o.qps * (rte_align32pow2(o.sq_depth) + o.batch) + o.batch * 2 + 1, o.pool_count);
	r.rx_pool_n = vi.fills_receive ? r.srq_depth + kRxPollBurst + o.batch * 2 + 1 : 0;
	return r;
}

rte_mempool *make_registered_pool(const char *name, const char *what, unsigned n, const FlowParams &o,
				  const Device &dev, int access, MrTable *mrs, std::string *err)
{
	return make_registered_pool(name, what, n, o.msg_bytes, o.batch, o.pool_count ? o.pool_cache : UINT32_MAX, dev, access,
				    mrs, err);
}

rte_mempool *make_registered_pool(const char *name, const char *what, unsigned n, uint32_t elt_bytes, uint32_t burst,
				  uint32_t cache, const Device &dev, int access, MrTable *mrs, std::string *err)
{
	rte_mempool *p = make_pool(name, n, elt_bytes, burst, cache);
	if (p == nullptr) {
		*err = std::string(what) + " (" + std::to_string(n) + " x " + std::to_string(elt_bytes) +
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

namespace {

/* The responder credits a QP every quarter of its window, a flow every quarter of the
 * flow window (at least every message): the requester keeps its chains whole where
 * those steps leave room for them. */
uint32_t credit_step(uint32_t slots) { return slots / 4 ? slots / 4 : 1; }
uint32_t flow_credit_step(uint32_t flow_window) { return std::max<uint32_t>(1, flow_window / 4); }

} // namespace

RequesterParams requester_params(const FlowParams &o, bool use_wr, uint64_t hz)
{
	const double dhz = static_cast<double>(hz);
	RequesterParams p{o.verb, o.msg_bytes, o.batch, o.signal_every, o.sq_depth, o.slots,
			  o.duration_s > 0 ? 0 : o.messages, static_cast<uint64_t>(o.duration_s * dhz),
			  static_cast<uint64_t>(o.stall_timeout_s * dhz), o.corrupt_msg,
			  use_wr ? PostApi::wr : PostApi::classic, o.inline_send, o.fence, 1e9 / dhz};
	p.warmup_tsc = static_cast<uint64_t>(o.warmup_s * dhz);
	p.count_from_input = o.tx_count_from_input;
	p.wr_budget = o.wr_budget;
	p.flow_window = o.flow_window;
	p.whole_chains_window = o.slots >= o.batch + credit_step(o.slots) - 1;
	p.whole_chains_flow = o.flow_window >= o.batch + flow_credit_step(o.flow_window) - 1;
	if (o.uc && o.reliability == Reliability::software) {
		/* Timeouts: at least 2 ms (above the receiver's ACK delay and a slow host's
		 * hiccups), at most 200 ms after backing off, 10 ms before the first RTT. */
		p.reliable = true;
		p.verb = reliable_wire_verb(o.verb);
		p.rto_min_tsc = static_cast<uint64_t>(2e-3 * dhz);
		p.rto_max_tsc = static_cast<uint64_t>(kRtoMaxS * dhz);
		p.rto_initial_tsc = static_cast<uint64_t>(10e-3 * dhz);
		p.bad_retx_header = o.inject_bad_retx_header;
		p.chunk_bytes = o.chunk_bytes;
	}
	if (o.uc && o.inject_loss > 0)
		p.inject_loss = static_cast<uint32_t>(std::min(o.inject_loss, 0.5) * 4294967296.0);
	/* A gen stage before the requester keeps the rate itself. */
	if (o.rate_pps > 0 && !o.tx_gen_stage)
		p.tsc_per_msg = std::max<uint64_t>(1, static_cast<uint64_t>(dhz / o.rate_pps));
	return p;
}

ResponderParams responder_params(const FlowParams &o, uint64_t hz)
{
	ResponderParams p{o.verb, o.msg_bytes, o.slots, credit_step(o.slots), o.verify,
			  static_cast<uint64_t>(o.stall_timeout_s * static_cast<double>(hz)), hz};
	p.flow_window = o.flow_window;
	p.flow_step = flow_credit_step(o.flow_window);
	p.qp_credit = qp_credit(o);
	p.credit_retry_tsc = static_cast<uint64_t>(kCreditRetryS * static_cast<double>(hz));
	p.slices = o.slices;
	if (o.uc && o.reliability == Reliability::software) {
		p.reliable = true;
		p.verb = reliable_wire_verb(o.verb);
		p.ack_every = o.ack_every;
		p.ack_tsc = static_cast<uint64_t>(o.ack_us * 1e-6 * static_cast<double>(hz));
		p.restart_settle_tsc = static_cast<uint64_t>(kRestartSettleS * static_cast<double>(hz));
		p.chunk_bytes = o.chunk_bytes;
	}
	return p;
}

int responder_fill_srq(Responder *v, const FlowParams &o, const RoleShape &r, rte_mempool *rx_pool,
		       const MrTable *rx_mrs, const Device &dev, std::string *err)
{
	if (v->refill.init(v->srq, r.srq_depth, o.srq_refill, kRxPollBurst, rx_pool, o.msg_bytes, rx_mrs) != 0) {
		*err = "SRQ refill: bad sizes (depth " + std::to_string(r.srq_depth) + ", threshold " +
		       std::to_string(o.srq_refill) + ")";
		return -1;
	}
	int ret = v->refill.fill(*v->ops);
	if (ret < 0 || static_cast<uint32_t>(ret) != r.srq_depth) {
		*err = dev.name + ": filling the SRQ with " + std::to_string(r.srq_depth) + " receives: " +
		       (ret < 0 ? strerror(-ret) : "too few buffers");
		return -1;
	}
	ibv_srq_attr sa{};
	sa.srq_limit = o.batch;
	if ((ret = ibv_modify_srq(v->srq, &sa, IBV_SRQ_LIMIT)) != 0 && !o.quiet)
		RP_LOG(NOTICE, VERBS, "rdmapipe: %s: no SRQ limit event (ibv_modify_srq: %s)\n", dev.name.c_str(), strerror(ret));
	return 0;
}

namespace {

/* The device's IPv4 address, from its IPv4-mapped RoCE GID. */
bool gid_ipv4(const ibv_gid &g, std::string *ip)
{
	for (int i = 0; i < 10; i++)
		if (g.raw[i] != 0)
			return false;
	if (g.raw[10] != 0xff || g.raw[11] != 0xff)
		return false;
	*ip = std::to_string(g.raw[12]) + "." + std::to_string(g.raw[13]) + "." + std::to_string(g.raw[14]) + "." +
	      std::to_string(g.raw[15]);
	return true;
}

/* The GID a flow's QPs on dev use: the flow's gid_index (checked against the device's
 * table), else the device's. */
int flow_gid(const Device &dev, const Traffic &t, ibv_gid *gid, std::string *err)
{
	if (t.gid_index < 0 || t.gid_index == dev.gid_index) {
		*gid = dev.gid;
		return 0;
	}
	Device d = dev;   // device_pick_gid reads the context and writes gid: a copy's
	if (device_pick_gid(&d, t.gid_index, err) != 0) {
		*err = "gid_index: " + *err;
		return -1;
	}
	*gid = d.gid;
	return 0;
}

/* Both ends of every pair through rdma_cm, in this process: the server accepts on a
 * thread of its own (setup only) while this thread connects the client. */
int connect_with_cm(const FlowParams &o, uint32_t nqps, Device &dev_a, Device &dev_b, SharedIOContext &req_io,
		    SharedIOContext &rsp_io, const QpOptions &req_qo, const QpOptions &rsp_qo, int req_access, int rsp_access,
		    QpPairs *f, std::string *err)
{
	std::string ip, ip_a;
	for (Device *d : {&dev_b, &dev_a})
		if (!gid_ipv4(d->gid, d == &dev_b ? &ip : &ip_a)) {
			*err = d->name + " has no IPv4 address (GID index " + std::to_string(d->gid_index) +
			       " is not IPv4-mapped) for rdma_cm to connect to: run with --connect direct (run.connect)";
			return -1;
		}
	CmAddr addr, local;
	if (cm_addr_parse(ip, "0", &addr, err) != 0 || cm_addr_parse(ip_a, "0", &local, err) != 0)
		return -1;
	f->cm_server = std::make_unique<CmServer>();
	f->cm_client = std::make_unique<CmClient>();
	if (f->cm_server->listen(addr, static_cast<int>(std::max<uint32_t>(64, nqps)), err) != 0)
		return -1;
	addr.sin.sin_port = htons(f->cm_server->bound_port());
	addr.str = ip + ":" + std::to_string(f->cm_server->bound_port());
	f->cm_client->set_tos(o.traffic.traffic_class);
	if (f->cm_client->resolve(local, addr, nqps, o.connect_timeout_ms, err) != 0)
		return -1;
	if (f->cm_server->verbs() != dev_b.ctx || f->cm_client->verbs() != dev_a.ctx) {
		*err = "rdma_cm: " + (f->cm_server->verbs() != dev_b.ctx ? addr.str + " is not on " + dev_b.name
									 : ip_a + " is not on " + dev_a.name) +
		       " (give -d the device that has the address)";
		return -1;
	}
	auto choose = [&](const CmRequest &req, CmQpSpec *spec, CmPrivate *reply, std::string *why) -> int {
		if (req.peer.qp_index >= nqps) {
			*why = "QP index " + std::to_string(req.peer.qp_index) + " is outside 0.." + std::to_string(nqps - 1);
			return kCmReject;
		}
		*spec = cm_qp_spec(dev_b.pd, rsp_io, rsp_qo);
		spec->qp.qp_index = req.peer.qp_index;
		spec->access = rsp_access;
		*reply = CmPrivate{};
		reply->qp_index = req.peer.qp_index;
		return kCmAccept;
	};
	int srv_rc = 0;
	std::string srv_err;
	std::thread server([&] { srv_rc = f->cm_server->accept(nqps, o.connect_timeout_ms, choose, &srv_err); });
	std::vector<CmQpSpec> specs(nqps);
	std::vector<CmPrivate> locals(nqps);
	for (uint32_t i = 0; i < nqps; i++) {
		specs[i] = cm_qp_spec(dev_a.pd, req_io, req_qo);
		specs[i].qp.qp_index = i;
		specs[i].access = req_access;
		locals[i].qp_index = static_cast<uint16_t>(i);
		locals[i].verb = static_cast<uint8_t>(static_cast<unsigned>(o.verb) + 1);
	}
	int cli_rc = f->cm_client->connect(specs, locals, o.connect_timeout_ms, err);
	server.join();
	/* Both ends' errors: a client that failed at once leaves the server waiting out
	 * its timeout, and that alone would hide why. */
	if (srv_rc != 0 || cli_rc != 0) {
		if (srv_rc != 0)
			*err = cli_rc != 0 ? srv_err + "; the client: " + *err : srv_err;
		return -1;
	}
	f->a.assign(nqps, nullptr);
	f->b.assign(nqps, nullptr);
	for (uint32_t i = 0; i < nqps; i++)
		f->a[i] = f->cm_client->conn(i).qp;
	for (unsigned c = 0; c < f->cm_server->size(); c++)
		f->b[f->cm_server->conn(c).peer.qp_index] = f->cm_server->conn(c).qp;
	f->connected = "RC, rdma_cm " + (&dev_a != &dev_b ? "from " + ip_a + " (" + dev_a.name + ") " : "") + "to " + addr.str +
		       (&dev_a != &dev_b ? " (" + dev_b.name + ")" : "") + ", " + std::to_string(nqps) + " connection" + (nqps > 1 ? "s" : "");
	return 0;
}

} // namespace

QpOptions flow_qp_options(const FlowParams &o, uint32_t sq_depth, uint32_t max_inline, bool use_wr, uint32_t rq_depth)
{
	QpOptions q{sq_depth, max_inline, use_wr, o.rnr_retry, o.min_rnr_timer, o.uc, o.retry_cnt, rq_depth};
	q.traffic = o.traffic;
	return q;
}

void QpPairs::destroy()
{
	for (ibv_qp *q : uc)
		ibv_destroy_qp(q);
	uc.clear();
	if (cm_client || cm_server) {
		/* rdma_cm made the QPs: disconnect and destroy them through it. */
		if (cm_client)
			cm_client->close();
		if (cm_server)
			cm_server->close();
	} else {
		for (ibv_qp *q : a)
			if (q)
				ibv_destroy_qp(q);
		for (ibv_qp *q : b)
			if (q)
				ibv_destroy_qp(q);
	}
	a.clear();
	b.clear();
}

int qp_pairs_connect(const FlowParams &o, uint32_t n, Device &dev_a, Device &dev_b, SharedIOContext &io_a,
		     SharedIOContext &io_b, const QpOptions &qo_a, const QpOptions &qo_b, int access_a, int access_b,
		     QpPairs *p, std::string *err)
{
	if (loopback_through_cm(o.connect, qo_a.uc))
		return connect_with_cm(o, n, dev_a, dev_b, io_a, io_b, qo_a, qo_b, access_a, access_b, p, err);
	ibv_gid gid_a, gid_b;
	if (flow_gid(dev_a, qo_a.traffic, &gid_a, err) != 0 || flow_gid(dev_b, qo_b.traffic, &gid_b, err) != 0)
		return -1;
	p->a.assign(n, nullptr);
	p->b.assign(n, nullptr);
	for (uint32_t i = 0; i < n; i++) {
		if ((p->a[i] = rc_qp_create(dev_a, io_a, qo_a, err)) == nullptr ||
		    (p->b[i] = rc_qp_create(dev_b, io_b, qo_b, err)) == nullptr)
			return -1;
		RcPeer to_b{p->b[i]->qp_num, 0x1000 + i, gid_b};
		RcPeer to_a{p->a[i]->qp_num, 0x80000 + i, gid_a};
		QpOptions qa = qo_a, qb = qo_b;
		qa.qp_index = qb.qp_index = i;
		if (rc_qp_connect(dev_a, p->a[i], qa, to_a.psn, to_b, access_a, err) != 0 ||
		    rc_qp_connect(dev_b, p->b[i], qb, to_b.psn, to_a, access_b, err) != 0)
			return -1;
	}
	p->connected = qo_a.uc ? std::string("UC, directly (rdma_cm connects RC QPs only)")
			       : std::string("directly (each QP given the other's number and GID)");
	return 0;
}

FlowObjects::~FlowObjects()
{
	pairs.destroy();   // QPs first: no WR of theirs may outlive the MRs
	mr_table_release(&tx_mrs);
	mr_table_release(&rx_mrs);
	rte_mempool_free(tx_pool);
	rte_mempool_free(rx_pool);
	registered_buf_free(&memory);
	registered_buf_free(&credit_words);
	registered_buf_free(&credit_src);
	registered_buf_free(&ping_slots);
	registered_buf_free(&echo_slots);
}

namespace {

std::string obj_name(const std::string &tag, const char *what)
{
	return "rp_" + tag + (tag.empty() ? "" : "_") + what;
}

std::string obj_what(const std::string &tag, const char *what)
{
	return tag + (tag.empty() ? "" : ": ") + what;
}

} // namespace

int requester_buffers(const FlowParams &o, const std::string &tag, Device &dev, bool remote, FlowObjects *f,
		      std::string *err)
{
	const RoleShape &shape = f->shape;
	if (!f->fed && (f->tx_pool = make_registered_pool(obj_name(tag, "tx_pool").c_str(), obj_what(tag, "requester buffer pool").c_str(),
							  shape.tx_pool_n, o, dev, shape.local_access,
							  &f->tx_mrs, err)) == nullptr)
		return -1;
	/* Credit words the responder writes (two-sided verbs); across hosts also the word
	 * the server reads as a keep-alive (one-sided verbs). */
	if (!shape.two_sided && !remote)
		return 0;
	/* With a flow window, the flow's word follows its QPs' (cm.h: kCmFlowWindow). */
	return registered_buf_alloc(dev, obj_name(tag, "credit_words").c_str(), (o.qps + (o.flow_window ? 1 : 0)) * sizeof(uint64_t),
				    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | (remote ? IBV_ACCESS_REMOTE_READ : 0),
				    &f->credit_words, err);
}

int responder_buffers(const FlowParams &o, const std::string &tag, Device &dev, bool remote, FlowObjects *f,
		      std::string *err)
{
	const RoleShape &shape = f->shape;
	if (shape.rx_pool_n && !f->srq_by_lcore &&
	    (f->rx_pool = make_registered_pool(obj_name(tag, "rx_pool").c_str(), obj_what(tag, "responder receive pool").c_str(),
					       shape.rx_pool_n, o, dev, IBV_ACCESS_LOCAL_WRITE, &f->rx_mrs, err)) == nullptr)
		return -1;
	if (shape.mem_per_qp && registered_buf_alloc(dev, obj_name(tag, "responder_memory").c_str(), shape.mem_per_qp * o.qps,
						     shape.mem_access, &f->memory, err) != 0)
		return -1;
	/* The credit words' source (two-sided verbs); across hosts, one-sided verbs land
	 * their keep-alive reads there. */
	if (!shape.two_sided && !remote)
		return 0;
	return registered_buf_alloc(dev, obj_name(tag, "credit_src").c_str(), static_cast<size_t>(o.qps) * kCreditRing * sizeof(uint64_t),
				    shape.two_sided ? 0 : IBV_ACCESS_LOCAL_WRITE, &f->credit_src, err);
}

int requester_bind(const FlowParams &o, const char *tag, const VerbsOps *ops, bool use_wr, SharedIOContext &io,
		   RunControl *ctl, FlowObjects *f, const std::vector<RemoteTarget> &targets, Requester *q, std::string *err)
{
	const uint32_t nqps = o.qps;
	q->ops = ops;
	q->send_cq = io.send_cq;
	q->pool = f->tx_pool;
	q->mrs = &f->tx_mrs;
	q->ctl = ctl;
	q->p = requester_params(o, use_wr, rte_get_tsc_hz());
	if (requester_init(q, nqps, err) != 0 ||
	    requester_set_flows(q, &o.qps, 1, err) != 0) {
		*err = std::string(tag) + (*tag ? ": " : "") + *err;
		return -1;
	}
	for (uint32_t i = 0; i < nqps; i++) {
		RequesterQp &rq = q->qps[i];
		rq.qp = f->pairs.a[i];
		if (use_wr)
			rq.qpx = ibv_qp_to_qp_ex(f->pairs.a[i]);
		if (i < targets.size())
			rq.remote = targets[i];
		if (static_cast<int>(i) == o.bad_rkey_qp)
			rq.remote.rkey ^= 0x5a5a00;   // test hook: a key the responder never issued
		if (f->shape.two_sided && qp_credit(o))
			rq.credit_word = credit_word_at(*f, i);
	}
	if (o.flow_window)
		q->flow_credit[0].word = credit_word_at(*f, nqps);
	if (requester_add_qps(q, err) != 0)
		return -1;
	q->idler.channel = io.channel;
	q->idler.cqs[0] = io.send_cq;
	return 0;
}

int responder_bind(const FlowParams &o, const VerbsOps *ops, SharedIOContext &io, RunControl *ctl, FlowObjects *f,
		   const std::vector<CreditTarget> &credits, Responder *v, std::string *err)
{
	const uint32_t nqps = o.qps;
	v->ops = ops;
	v->recv_cq = io.recv_cq;
	v->send_cq = io.send_cq;
	v->srq = io.srq;
	v->rx_pool = f->rx_pool;
	v->memory = static_cast<unsigned char *>(f->memory.addr);
	v->credit_src = static_cast<uint64_t *>(f->credit_src.addr);
	v->credit_lkey = f->credit_src.mr ? f->credit_src.mr->lkey : 0;
	v->ctl = ctl;
	v->p = responder_params(o, rte_get_tsc_hz());
	if (responder_init(v, nqps, err) != 0)
		return -1;
	for (uint32_t i = 0; i < nqps; i++) {
		v->qps[i].qp = f->pairs.b[i];
		if (f->shape.two_sided && i < credits.size()) {
			v->qps[i].credit_remote_addr = credits[i].addr;
			v->qps[i].credit_rkey = credits[i].rkey;
		}
	}
	if (o.flow_window && credits.size() > nqps) {   // the flow's word, after its QPs'
		v->flow_credit_addr = credits[nqps].addr;
		v->flow_credit_rkey = credits[nqps].rkey;
	}
	if (responder_add_qps(v, err) != 0)
		return -1;
	v->idler.channel = io.channel;
	v->idler.cqs[0] = io.recv_cq;
	v->idler.cqs[1] = io.send_cq;
	return 0;
}

int loopback_flow_setup(const FlowParams &o, const char *tag, Device &req_dev, Device &rsp_dev, const VerbsOps *ops,
			bool use_wr, SharedIOContext &req_io, SharedIOContext &rsp_io, RunControl *ctl, FlowObjects *f,
			Requester *q, Responder *v, std::string *err)
{
	const RoleShape &shape = f->shape;
	const bool two_sided = shape.two_sided;
	const uint32_t nqps = o.qps;
	if (requester_buffers(o, tag, req_dev, false, f, err) != 0 || responder_buffers(o, tag, rsp_dev, false, f, err) != 0)
		return -1;

	const QpOptions req_qo = flow_qp_options(o, o.sq_depth, o.inline_send ? o.msg_bytes : 0, use_wr);
	const QpOptions rsp_qo = flow_qp_options(o, kCreditRing, 0, false, std::max<uint32_t>(1, o.rq_depth));
	int req_access = two_sided ? IBV_ACCESS_REMOTE_WRITE : 0;   // credits
	int rsp_access = shape.mem_access & ~IBV_ACCESS_LOCAL_WRITE;
	if (qp_pairs_connect(o, nqps, req_dev, rsp_dev, req_io, rsp_io, req_qo, rsp_qo, req_access, rsp_access, &f->pairs, err) != 0)
		return -1;

	std::vector<RemoteTarget> targets = f->far;
	std::vector<CreditTarget> credits;
	for (uint32_t i = 0; i < nqps; i++) {
		if (shape.mem_per_qp && f->far.empty())
			targets.push_back(RemoteTarget{reinterpret_cast<uintptr_t>(f->memory.addr) + i * shape.mem_per_qp,
						       f->memory.mr->rkey, verb_is_atomic(o.verb) ? 0 : o.slots});
		if (two_sided)
			credits.push_back({reinterpret_cast<uintptr_t>(credit_word_at(*f, i)),
					   f->credit_words.mr->rkey});
	}
	if (two_sided && o.flow_window)
		credits.push_back({reinterpret_cast<uintptr_t>(credit_word_at(*f, nqps)),
				   f->credit_words.mr->rkey});
	if (requester_bind(o, tag, ops, use_wr, req_io, ctl, f, targets, q, err) != 0 ||
	    responder_bind(o, ops, rsp_io, ctl, f, credits, v, err) != 0)
		return -1;
	if (two_sided && !f->srq_by_lcore && responder_fill_srq(v, o, shape, f->rx_pool, &f->rx_mrs, rsp_dev, err) != 0)
		return -1;
	return 0;
}

} // namespace rp
