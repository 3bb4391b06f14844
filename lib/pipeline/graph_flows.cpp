/* Each flow's objects and roles: a loopback flow's two ends, a two-host flow's end here, a
 * ping-pong, lanes; and software reliability's control QPs. */
#include "pipeline/graph_internal.h"

namespace rp {

namespace {

/* A reliable ping-pong times out as a reliable rate flow does, over the same wire verb. */
void pingpong_reliable(PingPongParams *p, const RequesterParams &r)
{
	p->reliable = true;
	p->verb = r.verb;
	p->rto_min_tsc = r.rto_min_tsc;
	p->rto_max_tsc = r.rto_max_tsc;
	p->rto_initial_tsc = r.rto_initial_tsc;
}

/* A ping-pong of writes: the slots of each end here, which the other end writes into
 * (and the echoing side writes back from). */
int pingpong_slots(GraphFlow &f, std::string *err)
{
	const FlowParams &o = f.params;
	FlowObjects &obj = *f.objs;
	const size_t len = static_cast<size_t>(o.qps) * ping_slot_stride(o.msg_bytes);
	const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	for (GraphLcore *end : {f.tx, f.rx}) {
		if (!end)
			continue;   // on the other host
		const std::string name = "rp_" + f.conf->name + (end == f.tx ? "_ping_slots" : "_echo_slots");
		if (registered_buf_alloc(*end->dev, name.c_str(), len, access, end == f.tx ? &obj.ping_slots : &obj.echo_slots, err) != 0)
			return -1;
	}
	return 0;
}

RemoteTarget slot_target(const RegisteredBuf &slots, uint32_t qi, uint32_t msg_bytes)
{
	return RemoteTarget{reinterpret_cast<uintptr_t>(slots.addr) + static_cast<uint64_t>(qi) * ping_slot_stride(msg_bytes),
			    slots.mr->rkey, 1};
}

/* A write ping-pong's role polls its end's slots and writes back from them. */
void pingpong_take_slots(PingPong *pp, const RegisteredBuf &slots, uint32_t msg_bytes)
{
	pp->slots = static_cast<uint8_t *>(slots.addr);
	pp->slot_stride = ping_slot_stride(msg_bytes);
	const auto base = reinterpret_cast<uintptr_t>(slots.addr);
	pp->slot_mrs.n = 1;
	pp->slot_mrs.chunks[0] = {base, base + slots.len, slots.mr->lkey};
	pp->slot_mrs.mrs[0] = nullptr;   // the flow's objects own the registration
}

/* A ping-pong's end across two hosts: its QPs' access (writes: the far end writes its
 * slots), and in each word, a write ping-pong's slot of the QP here; the far end's, from
 * its word, in *far. */
RemoteWords pingpong_words(const GraphFlow &f, bool writes, int access, std::vector<RemoteTarget> *far)
{
	RemoteWords w;
	const RegisteredBuf &mine = f.tx ? f.objs->ping_slots : f.objs->echo_slots;
	w.say = [&f, &mine, writes, access](uint32_t qi, CmPrivate *m, CmQpSpec *spec) {
		spec->access = access;
		if (!writes)
			return;
		const RemoteTarget t = slot_target(mine, qi, f.params.msg_bytes);
		m->addr = t.base;
		m->rkey = t.rkey;
	};
	w.take = [far, writes](const CmPrivate &p, std::string *why) {
		if (!writes)
			return 0;
		if (p.addr == 0 || p.rkey == 0) {
			*why = "the other end named no slot to write QP " + std::to_string(p.qp_index) + "'s messages to";
			return -1;
		}
		(*far)[p.qp_index] = RemoteTarget{p.addr, p.rkey, 1};
		return 0;
	};
	return w;
}

/* A ping-pong flow's objects (its ping buffers, its QP pairs; writes: its slots) and its
 * two roles on its lcores' io contexts; their receive pools are set once the SRQs are
 * filled. */
int pingpong_setup(GraphFlow &f, std::string *err)
{
	const FlowParams &o = f.params;
	FlowObjects &obj = *f.objs;
	const std::string name = "rp_" + f.conf->name + "_ping_pool", what = "flow '" + f.conf->name + "': ping buffer pool";
	if (f.tx && (obj.tx_pool = make_registered_pool(name.c_str(), what.c_str(), f.shape.tx_pool_n, o, *f.tx->dev, 0,
							&obj.tx_mrs, err)) == nullptr)
		return -1;
	const bool writes = verb_info(o.verb).ping_wait == PingWait::memory;
	if (writes && pingpong_slots(f, err) != 0)
		return -1;
	/* Latency wants inline sends wherever they fit, as ib_send_lat does (the far end of
	 * a two-host flow inlines as its own device allows). */
	const bool inl = o.inline_send || ((!f.tx || o.msg_bytes <= f.tx->caps->max_inline) &&
					   (!f.rx || o.msg_bytes <= f.rx->caps->max_inline));
	const QpOptions qo = flow_qp_options(o, o.sq_depth, inl ? o.msg_bytes : 0, false, std::max<uint32_t>(1, o.rq_depth));
	const int access = writes ? IBV_ACCESS_REMOTE_WRITE : 0;
	std::vector<RemoteTarget> far_ping(o.qps), far_echo(o.qps);
	for (uint32_t i = 0; writes && !f.remote && i < o.qps; i++) {   // both ends here
		far_ping[i] = slot_target(obj.echo_slots, i, o.msg_bytes);
		far_echo[i] = slot_target(obj.ping_slots, i, o.msg_bytes);
	}
	GraphLcore &end = *f.end_here();
	int rc = f.remote ? remote_join(o, *end.dev, end.io, qo, f.remote.get(), &obj,
					pingpong_words(f, writes, access, f.tx ? &far_ping : &far_echo), err)
			  : qp_pairs_connect(o, o.qps, *f.tx->dev, *f.rx->dev, f.tx->io, f.rx->io, qo, qo, access, access, &obj.pairs, err);
	if (rc != 0)
		return -1;
	const uint64_t hz = rte_get_tsc_hz();
	for (PingPong *pp : {&f.ping, &f.pong}) {
		const bool echo = pp == &f.pong;
		if (!(echo ? f.rx : f.tx))
			continue;   // on the other host
		GraphLcore &l = echo ? *f.rx : *f.tx;
		pp->echo = echo;
		pp->ops = l.ops;
		pp->send_cq = l.io.send_cq;
		pp->recv_cq = l.io.recv_cq;
		pp->srq = l.io.srq;
		pp->refill = &l.refill;
		pp->tx_pool = echo ? nullptr : obj.tx_pool;
		pp->tx_mrs = echo ? &l.rx_mrs : &obj.tx_mrs;   // the echo goes back from its receive buffer
		pp->ctl = &f.ctl;
		pp->p = PingPongParams{o.verb, o.msg_bytes, o.messages, o.sq_depth, o.signal_every, inl, o.verify,
				       static_cast<uint64_t>(o.stall_timeout_s * static_cast<double>(hz)), hz,
				       echo ? UINT64_MAX : o.corrupt_msg};
		pp->p.until_stopped = until_stopped(o.duration_s);
		if (pp->p.until_stopped && echo)
			pp->p.signal_every = 1;   // it cannot know its last echo: each reaped as it goes
		if (f.reliable())
			pingpong_reliable(&pp->p, requester_params(o, false, hz));
		pp->qps = std::make_unique<PingPongQp[]>(o.qps);
		pp->nqps = o.qps;
		for (uint32_t i = 0; i < o.qps; i++) {
			pp->qps[i].qp = echo ? obj.pairs.b[i] : obj.pairs.a[i];
			pp->qps[i].peer = writes ? (echo ? far_echo : far_ping)[i] : RemoteTarget{};
		}
		if (writes)
			pingpong_take_slots(pp, echo ? obj.echo_slots : obj.ping_slots, o.msg_bytes);
		pp->hist = f.hist.get();
		if (pingpong_init(pp, err) != 0)
			return -1;
	}
	return 0;
}

/* A lane's requester with a WR budget (fit_lanes) keeps at most that many WRs, and
 * their buffers, outstanding: its send CQ and pool need hold no more. */
void budget_shape(const FlowParams &o, uint32_t nl, RoleShape *shape)
{
	if (o.wr_budget == 0)
		return;
	shape->req_send_cq = std::min<uint64_t>(shape->req_send_cq, static_cast<uint64_t>(o.wr_budget) * nl);
	shape->tx_pool_n = std::max(std::min<unsigned>(shape->tx_pool_n, nl * (o.wr_budget + 2 * o.batch) + 1), o.pool_count);
}

/* The far end of a flow's lanes: the flow's memory (each QP's window or word; with
 * shared QPs a slice of it per lane), on QPs of the lanes' device, passive; checked at
 * the end by the flow's responder, which its rdma_rx stage runs (READs check their own
 * results and need none). Its counts come from the lanes (requester_join_lanes). */
int far_end_setup(GraphFlow &f, std::string *err)
{
	const uint32_t nl = static_cast<uint32_t>(f.lanes.size());
	const size_t nslices = static_cast<size_t>(f.params.qps) * f.params.slices;
	f.lanes_sent.assign(nslices, 0);
	f.lanes_completed.assign(nslices, 0);
	f.lanes_failed.reset(new bool[nslices]());
	f.lanes_left.store(nl, std::memory_order_relaxed);
	for (uint32_t t = 0; t < nl; t++)
		if (requester_join_lanes(&f.lanes[t]->requester, t, nl, f.lanes_sent.data(), f.lanes_completed.data(),
					 f.lanes_failed.get(), &f.lanes_left, err) != 0)
			return -1;
	if (f.rx_stage) {   // its rdma_rx stage's lcore polls nothing of its own
		f.responder.ops = f.rx->ops;
		f.responder.idler.channel = nullptr;
	}
	return 0;
}

/* Lanes owning their QPs, each with a send CQ and a far-end context of its own on its
 * device. Checked by an rdma_rx stage (writes, atomics), lane t's QP i is the flow's QP
 * i x T + t, its window (or word) in the flow's memory, so all lanes are on one device;
 * unchecked (reads), each lane's far ends have their memory and may be on its device. */
int split_lanes_setup(GraphFlow &f, bool use_wr, std::string *err)
{
	const uint32_t nl = static_cast<uint32_t>(f.lanes.size());
	const bool checked = f.rx_stage != nullptr;
	f.objs->shape = f.shape;
	if (checked && responder_buffers(f.params, f.conf->name, *f.tx->dev, false, f.objs.get(), err) != 0)
		return -1;
	const RegisteredBuf &mem = f.objs->memory;
	for (uint32_t t = 0; t < nl; t++) {
		GraphLane &ln = *f.lanes[t];
		Device &dev = *ln.lcore->dev;
		if (checked && &dev != f.tx->dev) {
			*err = "its lanes' far end is checked in one memory (rdma_rx stage): lcore " + std::to_string(ln.lcore->lcore) +
			       " is on " + dev.name + ", lcore " + std::to_string(f.tx->lcore) + " on " + f.tx->dev->name;
			return -1;
		}
		ln.objs = std::make_unique<FlowObjects>();
		ln.objs->shape = role_shape(ln.params);
		budget_shape(ln.params, 1, &ln.objs->shape);
		if (checked) {
			ln.objs->shape.mem_per_qp = 0;   // the flow's memory, not the lane's
			for (uint32_t i = 0; i < ln.params.qps && f.shape.mem_per_qp; i++)
				ln.objs->far.push_back(RemoteTarget{reinterpret_cast<uintptr_t>(mem.addr) + (static_cast<uint64_t>(i) * nl + t) * f.shape.mem_per_qp,
								    mem.mr->rkey, verb_is_atomic(f.params.verb) ? 0 : f.params.slots});
		}
		const std::string tag = f.conf->name + "_lane" + std::to_string(t);
		if (shared_io_context_create(dev, static_cast<uint32_t>(ln.objs->shape.req_send_cq), 1, 0, false,
					     ln.lcore->ops != &kIbvOps, &ln.io, err) != 0)
			return -1;
		ln.has_io = true;
		if (shared_io_context_create(dev, 1, 1, 0, false, false, &ln.passive_io, err) != 0)
			return -1;
		ln.has_passive_io = true;
		if (loopback_flow_setup(ln.params, tag.c_str(), dev, dev, ln.lcore->ops, use_wr, ln.io, ln.passive_io, &f.ctl,
					ln.objs.get(), &ln.requester, &ln.passive, err) != 0)
			return -1;
		ln.requester.idler.channel = nullptr;   // the lcore idles
	}
	if (!checked)
		return 0;
	/* The flow's responder over every lane's far-end QPs, in the flow's QP order; it
	 * polls lane 0's far-end CQs, where nothing completes (one-sided verbs). */
	Responder &v = f.responder;
	v.ops = f.tx->ops;
	v.recv_cq = f.lanes[0]->passive_io.recv_cq;
	v.send_cq = f.lanes[0]->passive_io.send_cq;
	v.memory = static_cast<unsigned char *>(mem.addr);
	v.ctl = &f.ctl;
	v.p = responder_params(f.params, rte_get_tsc_hz());
	if (responder_init(&v, f.params.qps, err) != 0)
		return -1;
	for (uint32_t k = 0; k < f.params.qps; k++)
		v.qps[k].qp = f.lanes[k % nl]->objs->pairs.b[k / nl];
	return responder_add_qps(&v, err);
}

/* Lanes sharing the QPs: the flow's QPs once (a template requester on them, their far
 * end the flow's responder, a slice of each QP's memory per lane), then a requester per
 * lane on all of them, with its share of every send queue, into its slice. */
int shared_lanes_setup(GraphFlow &f, bool use_wr, std::string *err)
{
	const uint64_t hz = rte_get_tsc_hz();
	const uint32_t nl = static_cast<uint32_t>(f.lanes.size());
	Device &dev = *f.tx->dev;
	for (auto &ln : f.lanes)
		if (ln->lcore->dev != &dev) {
			*err = "lanes sharing QPs post to one device's QPs: lcore " + std::to_string(ln->lcore->lcore) + " is on " +
			       ln->lcore->dev->name + ", lcore " + std::to_string(f.tx->lcore) + " on " + dev.name;
			return -1;
		}
	f.objs->shape = f.shape;
	budget_shape(f.lanes[0]->params, nl, &f.objs->shape);
	if (shared_io_context_create(dev, static_cast<uint32_t>(f.objs->shape.req_send_cq), 1, 0, false, f.tx->ops != &kIbvOps,
				     &f.lane_io, err) != 0)
		return -1;
	f.has_lane_io = true;
	if (shared_io_context_create(dev, 1, 1, 0, false, false, &f.passive_io, err) != 0)
		return -1;
	f.has_passive_io = true;
	if (loopback_flow_setup(f.params, f.conf->name.c_str(), dev, dev, f.tx->ops, use_wr, f.lane_io, f.passive_io, &f.ctl,
				f.objs.get(), &f.requester, &f.responder, err) != 0)
		return -1;
	const unsigned ring_size = rte_align32pow2(static_cast<uint32_t>(f.objs->shape.req_send_cq) + 1);   // every WR outstanding
	for (uint32_t t = 0; t < nl; t++) {
		std::string name = ("rp_" + f.conf->name + "_lane" + std::to_string(t)).substr(0, RTE_RING_NAMESIZE - 1);
		rte_ring *ring = rte_ring_create(name.c_str(), ring_size, static_cast<int>(rte_socket_id()), RING_F_SC_DEQ);
		if (ring == nullptr) {
			*err = "ring " + name + " (" + std::to_string(ring_size) + "): rte_ring_create: " + rte_strerror(rte_errno);
			return -1;
		}
		f.lane_rings.push_back(ring);
	}
	const uint64_t slice = f.shape.mem_per_qp / f.params.slices;
	for (uint32_t t = 0; t < nl; t++) {
		Requester &q = f.lanes[t]->requester;
		q.ops = f.tx->ops;
		q.send_cq = f.lane_io.send_cq;
		q.pool = f.requester.pool;
		q.mrs = f.requester.mrs;
		q.ctl = &f.ctl;
		q.p = requester_params(f.lanes[t]->params, use_wr, hz);
		if (requester_init(&q, f.params.qps, err) != 0)
			return -1;
		for (uint32_t i = 0; i < f.params.qps; i++) {
			q.qps[i].qp = f.requester.qps[i].qp;
			q.qps[i].qpx = f.requester.qps[i].qpx;
			q.qps[i].remote = f.requester.qps[i].remote;
			q.qps[i].remote.base += t * slice;   // its slice of the QP's memory
		}
		if (requester_add_qps(&q, err) != 0 || requester_set_lane(&q, t, f.lane_rings.data(), nl, err) != 0)
			return -1;
	}
	return 0;
}

/* A flow's lanes (seed 002): their QPs to a passive far end, the flow's, on send CQs of
 * their own: one polled by all lanes when they share the QPs (each hands the others'
 * completions over through their rings), else one per lane. */
int lanes_setup(GraphFlow &f, std::string *err)
{
	const bool use_wr = f.params.post_api == PostApi::wr;
	const int rc = f.share_qps ? shared_lanes_setup(f, use_wr, err) : split_lanes_setup(f, use_wr, err);
	if (rc != 0 || (!f.share_qps && !f.rx_stage))
		return rc;   // unchecked reads on their own QPs: each lane's far ends are its own
	return far_end_setup(f, err);
}

/* The sending end: its retransmission headers registered, its ACKs routed to it, its
 * restart requests addressed to the receiver's control QP (ctrl_qpn at gid; 0: the
 * receiver named none) for the receiver's QPs (peer_qpns, in QP order). */
int reliability_tx(GraphFlow &f, const ibv_gid &gid, uint32_t ctrl_qpn, const uint32_t *peer_qpns, std::string *err)
{
	const std::string who = "flow '" + f.conf->name + "': ";
	if (ensure_ctrl(f.tx, err) != 0)
		return -1;
	f.hdr_mr = ibv_reg_mr(f.tx->dev->pd, f.requester.hdrs.get(), f.requester.hdrs_bytes, IBV_ACCESS_LOCAL_WRITE);
	if (f.hdr_mr == nullptr) {
		*err = who + "registering its retransmission headers on " + f.tx->dev->name + ": " + strerror(errno);
		return -1;
	}
	f.requester.hdr_lkey = f.hdr_mr->lkey;
	CtrlPort &port = f.tx->port;
	if (port.nsenders == kMaxFlows) {
		*err = who + "more than " + std::to_string(kMaxFlows) + " reliable flows send from lcore " + std::to_string(f.tx->lcore);
		return -1;
	}
	port.senders[port.nsenders++] = &f.requester;
	f.requester.port = &port;
	if (ctrl_qpn == 0)
		return 0;
	/* What goes on the wire in more than one packet (a retransmitted write carries its
	 * header too) can break so that nothing tells the receiver. */
	const uint32_t mtu = 128u << f.tx->dev->port_attr.active_mtu;
	f.requester.p.restart_on_timeouts = f.requester.ck.bytes + (verb_info(f.params.verb).chunkable ? sizeof(RetxHeader) : 0) > mtu;
	if (ctrl_dest_create(*f.tx->dev, gid, ctrl_qpn, &f.request_dest, err) != 0) {
		*err = who + *err;
		return -1;
	}
	for (uint32_t i = 0; i < f.requester.nqps; i++) {
		f.requester.qps[i].peer_ctrl = &f.request_dest;
		f.requester.qps[i].peer_qpn = peer_qpns[i];
	}
	return 0;
}

/* The receiving end: its ACKs addressed to the sender's control QP (ctrl_qpn, at gid),
 * each naming the sender's data QP (peer_qpns, in QP order). */
int reliability_rx(GraphFlow &f, const ibv_gid &gid, uint32_t ctrl_qpn, const uint32_t *peer_qpns, std::string *err)
{
	if (ensure_ctrl(f.rx, err) != 0)
		return -1;
	if (ctrl_dest_create(*f.rx->dev, gid, ctrl_qpn, &f.ack_dest, err) != 0) {
		*err = "flow '" + f.conf->name + "': " + *err;
		return -1;
	}
	f.responder.ctrl = &f.rx->ctrl;
	CtrlPort &port = f.rx->port;
	if (port.nreceivers == kMaxFlows) {
		*err = "flow '" + f.conf->name + "': more than " + std::to_string(kMaxFlows) + " reliable flows receive on lcore " +
		       std::to_string(f.rx->lcore);
		return -1;
	}
	port.receivers[port.nreceivers++] = &f.responder;
	f.responder.port = &port;
	for (uint32_t i = 0; i < f.responder.nqps; i++) {
		f.responder.qps[i].ack_to = f.ack_dest;
		f.responder.qps[i].peer_qpn = peer_qpns[i];
	}
	return 0;
}

/* The qp_num of each QP of a requester or responder, in QP order. */
template <typename Role>
std::vector<uint32_t> qp_nums(const Role &r)
{
	std::vector<uint32_t> n;
	for (uint32_t i = 0; i < r.nqps; i++)
		n.push_back(r.qps[i].qp->qp_num);
	return n;
}

} // namespace

GraphLane::~GraphLane()
{
	objs.reset();   // its QPs before their CQs
	if (has_io)
		shared_io_context_destroy(&io);
	if (has_passive_io)
		shared_io_context_destroy(&passive_io);
}

GraphFlow::~GraphFlow()
{
	lanes.clear();  // their QPs (owned) before the flow's far-end memory they write to
	objs.reset();   // its QPs before the MRs they may use and the CQs they post to
	ctrl_dest_destroy(&ack_dest);
	ctrl_dest_destroy(&request_dest);
	if (hdr_mr)
		ibv_dereg_mr(hdr_mr);
	if (has_lane_io)
		shared_io_context_destroy(&lane_io);
	if (has_passive_io)
		shared_io_context_destroy(&passive_io);
	for (rte_ring *r : lane_rings)
		rte_ring_free(r);
	mr_table_release(&fed_mrs);
}

/* The lcore's control QP, made by the first reliable flow with an end there. */
int ensure_ctrl(GraphLcore *l, std::string *err)
{
	constexpr uint32_t kCtrlRecvSlots = 1024, kCtrlSendSlots = 256;
	if (l->has_ctrl)
		return 0;
	if (ctrl_qp_create(*l->dev, kCtrlRecvSlots, kCtrlSendSlots, &l->ctrl, err) != 0)
		return -1;
	l->has_ctrl = true;
	l->port.ctrl = &l->ctrl;
	return 0;
}

/* The shapes' hooks (flow_shape.cpp's rows), shape by shape. */

/* What the end does, said as it starts to connect: the listening end waits, the
 * dialing one connects; a listening end that sends, or a dialing one that receives,
 * says so. */
static void note_end(Graph *g, const GraphFlow &f, bool echoed)
{
	if (!g->note)
		return;
	const FlowParams &o = f.params;
	const std::string s = o.qps > 1 ? "s" : "";
	if (f.listens())
		g->note("flow '" + f.conf->name + "': server on " + f.remote->addr.str + " (" + f.end_here()->dev->name + "), waiting for " +
			std::to_string(o.qps) + " connection" + s + " (" + verb_opcode_name(o.verb) + ", " + std::to_string(o.msg_bytes) +
			" B" + (echoed ? ", echoed" : "") + (f.serves() ? "" : ", sent from here") + ")");
	else
		g->note("flow '" + f.conf->name + "': client of " + f.remote->addr.str + " on " + f.end_here()->dev->name + ", " +
			std::to_string(o.qps) + " QP" + s + ", " + verb_opcode_name(o.verb) + ", " + std::to_string(o.msg_bytes) + " B, " +
			std::to_string(o.messages) + " messages" + (f.serves() ? ", received here" : ""));
}

int loopback_setup(Graph *, GraphFlow &f, std::string *err)
{
	return loopback_flow_setup(f.params, f.conf->name.c_str(), *f.tx->dev, *f.rx->dev, f.tx->ops,
				   f.params.post_api == PostApi::wr, f.tx->io, f.rx->io, &f.ctl, f.objs.get(), &f.requester,
				   &f.responder, err);
}

int client_setup(Graph *g, GraphFlow &f, std::string *err)
{
	note_end(g, f, false);
	/* The handshake names the control QP the client's ACKs come to. */
	if (f.reliable() && ensure_ctrl(f.tx, err) != 0)
		return -1;
	f.remote->ctrl_qpn = f.reliable() ? f.tx->ctrl.qpn() : 0;
	return remote_client_setup(f.params, f.conf->name.c_str(), *f.tx->dev, f.tx->ops, f.params.post_api == PostApi::wr,
				   f.tx->io, f.fed, &f.ctl, f.remote.get(), f.objs.get(), &f.requester, err);
}

int server_setup(Graph *g, GraphFlow &f, std::string *err)
{
	note_end(g, f, false);
	/* The handshake names the control QP the client's restart requests come to. */
	if (f.reliable() && ensure_ctrl(f.rx, err) != 0)
		return -1;
	f.remote->ctrl_qpn = f.reliable() ? f.rx->ctrl.qpn() : 0;
	return remote_server_setup(f.params, f.conf->name.c_str(), *f.rx->dev, f.rx->ops, f.rx->io, f.handed_on, &f.ctl,
				   f.remote.get(), f.objs.get(), &f.responder, err);
}

int pingpong_shape_setup(Graph *g, GraphFlow &f, std::string *err)
{
	if (f.listens())
		note_end(g, f, f.serves());
	return pingpong_setup(f, err);
}

int lanes_shape_setup(Graph *, GraphFlow &f, std::string *err)
{
	return lanes_setup(f, err);
}

/* The lcore idles, not a role; the lcore's SRQ is refilled once for all its flows. */
void roles_ready(GraphFlow &f)
{
	if (f.tx) {
		f.requester.ops = f.tx->ops;
		f.requester.idler.channel = nullptr;
	}
	if (f.rx) {
		f.responder.ops = f.rx->ops;
		f.responder.idler.channel = nullptr;
		f.responder.shared_refill = &f.rx->refill;
	}
}

int loopback_reliability(Graph *, GraphFlow &f, std::string *err)
{
	if (ensure_ctrl(f.rx, err) != 0 ||
	    reliability_tx(f, f.rx->dev->gid, f.rx->ctrl.qpn(), qp_nums(f.responder).data(), err) != 0)
		return -1;
	return reliability_rx(f, f.tx->dev->gid, f.tx->ctrl.qpn(), qp_nums(f.requester).data(), err);
}

/* A two-host client: the server's reply named its QPs. */
int client_reliability(Graph *, GraphFlow &f, std::string *err)
{
	const RemoteEnd &e = *f.remote;
	return reliability_tx(f, e.peer_gid, e.peer_ctrl_qpn.empty() ? 0 : e.peer_ctrl_qpn[0], e.peer_uc_qpn.data(), err);
}

/* A two-host server addresses its ACKs as the client's handshake said. */
int server_reliability(Graph *, GraphFlow &f, std::string *err)
{
	if (ensure_ctrl(f.rx, err) != 0)
		return -1;
	const RemoteEnd &e = *f.remote;
	for (uint32_t q : e.peer_ctrl_qpn)
		if (q == 0 || q != e.peer_ctrl_qpn[0]) {
			*err = "flow '" + f.conf->name + "': the client named no control QP, or not one for all QPs";
			return -1;
		}
	return reliability_rx(f, e.peer_gid, e.peer_ctrl_qpn[0], e.peer_uc_qpn.data(), err);
}

/* The connections of a two-host end: accepted, or dialed. */
static CmConnSet *cm_of(const GraphFlow &f)
{
	const QpPairs &p = f.objs->pairs;
	return f.listens() ? static_cast<CmConnSet *>(p.cm_server.get()) : static_cast<CmConnSet *>(p.cm_client.get());
}

void watch_server(Graph *g, GraphFlow &f)
{
	g->watch.ends.push_back({f.remote.get(), cm_of(f), &f.ctl});
}

/* A client's end: counts, when given, go to the server at the end (duration runs). */
static void watch_client_end(Graph *g, GraphFlow &f, Requester *counts)
{
	g->watch.ends.push_back({f.remote.get(), cm_of(f), &f.ctl, counts, f.tx->io.send_cq});
}

void watch_client(Graph *g, GraphFlow &f)
{
	watch_client_end(g, f, &f.requester);
}

/* A ping-pong across two hosts: its end here (no requester's counts to send). */
void watch_pingpong(Graph *g, GraphFlow &f)
{
	if (f.serves())
		watch_server(g, f);
	else if (f.remote)
		watch_client_end(g, f, nullptr);
}

void responder_pool(GraphFlow &f)
{
	f.responder.rx_pool = f.rx->rx_pool;
}

void pingpong_pools(GraphFlow &f)
{
	if (f.tx)
		f.ping.rx_pool = f.tx->rx_pool;
	if (f.rx)
		f.pong.rx_pool = f.rx->rx_pool;
}

/* One flow's objects and roles, as its shape makes them. */
int flow_setup(Graph *g, GraphFlow &f, std::string *err)
{
	FlowObjects &o = *f.objs;
	o.shape = f.shape;
	o.srq_by_lcore = true;
	o.fed = f.fed && !f.has_gen;   // gen stages make the flow's messages in its send pool
	if (f.form->setup(g, f, err) != 0) {
		*err = "flow '" + f.conf->name + "': " + *err;
		return -1;
	}
	if (fill_flow_rqs(f.tx, f, err) != 0 || (f.rx != f.tx && fill_flow_rqs(f.rx, f, err) != 0))
		return -1;
	if (f.form->ready)
		f.form->ready(f);
	return 0;
}

/* Reliable UC flows: a control QP on each lcore with an end of one; the ends here set
 * up as their shape addresses them. */
int reliability_setup(Graph *g, std::string *err)
{
	for (auto &f : g->flows)
		if (f->reliable() && f->form->reliability && f->form->reliability(g, *f, err) != 0)
			return -1;
	return 0;
}

} // namespace rp
