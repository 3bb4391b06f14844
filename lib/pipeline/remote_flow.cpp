#include "pipeline/remote_flow.h"

#include "conf/cli_pipeline.h"
#include "conf/stage_kinds.h"
#include "verbs/gid.h"

#include <rte_cycles.h>
#include <rte_lcore.h>

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <thread>

namespace rp {

namespace {

/* What a connect that ran out of time adds to its error: the setting that bounds it. */
std::string bounded_by(const RemoteEnd &e)
{
	return ", bounded by " + e.connect_setting;
}

std::string seconds_str(int ms)
{
	char b[32];
	snprintf(b, sizeof(b), "%g s", ms / 1000.0);
	return b;
}

/* "FILE:LINE: flows.[i].KEY: " in a file, "--KEY VALUE: " on the command line. */
std::string where(const PipelineConf &c, const FlowConf &fc, const char *key, const std::string &value)
{
	if (c.file == kCliPipeline)
		return std::string("--") + key + " " + value + ": ";
	return c.file + ":" + std::to_string(fc.line) + ": flows.[" + std::to_string(&fc - c.flows.data()) + "]." + key + ": ";
}

const char *dev_name_of(ibv_context *verbs)
{
	return verbs ? ibv_get_device_name(verbs->device) : "?";
}

/* Per QP, the messages the requester sends: its share of the flow's count. */
std::vector<uint64_t> qp_targets(const FlowParams &o)
{
	std::vector<uint64_t> t;
	for (uint32_t k = 0; k < o.qps; k++)
		t.push_back(qp_share(o.messages, o.qps, k));
	return t;
}

/* What both ends must agree on: the dialing end says it, the listening end checks it. `messages`
 * is this QP's own count, so both ends split a flow's count the same way. */
CmPrivate request_of(const FlowParams &o, uint32_t qi, uint64_t qp_messages)
{
	CmPrivate p;
	p.qp_index = static_cast<uint16_t>(qi);
	static_assert(kMaxSlots <= kCmMaxSlots && kMaxChunk <= 0xfff, "the handshake's slots word holds both");
	p.slots = o.slots;
	p.chunk = o.chunk_bytes;
	p.slot_bytes = o.msg_bytes;
	p.verb = static_cast<uint8_t>(static_cast<unsigned>(o.verb) + 1);
	p.messages = qp_messages;
	return p;
}

/* The receiving end's memory per QP as its word states it: the window of slots, or an
 * atomic's one 8-byte word. */
struct WindowShape {
	uint32_t slots, slot_bytes;
};
WindowShape window_shape(const FlowParams &o)
{
	return verb_is_atomic(o.verb) ? WindowShape{1, 8} : WindowShape{o.slots, o.msg_bytes};
}

std::string mismatch(const FlowParams &o, const CmPrivate &peer, uint64_t qp_messages, bool peer_receives)
{
	Verb v = static_cast<Verb>(peer.verb ? peer.verb - 1 : 0);
	/* A receiving end's word has its window's shape, and not the flow window, which it
	 * checks itself. */
	const WindowShape ws = peer_receives ? window_shape(o) : WindowShape{o.slots, o.msg_bytes};
	const uint32_t fw = peer_receives ? 0 : o.flow_window;
	if (peer.verb != 0 && v == o.verb && peer.slot_bytes == ws.slot_bytes && peer.slots == ws.slots &&
	    peer.messages == qp_messages && peer.chunk == o.chunk_bytes && peer.flow_window == fw)
		return "";
	if (peer.flow_window != fw)   // a reject carries 139 characters
		return "client flow window " + std::to_string(peer.flow_window) + ", server's " + std::to_string(o.flow_window) +
		       (o.rq_depth ? ": this server's QPs have receive queues of their own; give the client flow_window = 0"
				   : " (give both the same flow_window)");
	if (peer.chunk != o.chunk_bytes)
		return "the client cuts messages into chunks of " + std::to_string(peer.chunk) + " B, this server expects " +
		       std::to_string(o.chunk_bytes) + " B (0: whole; give both the same chunk, or the same path MTU)";
	return std::string("the client runs ") + (peer.verb ? verb_name(v) : "?") + ", " + std::to_string(peer.slot_bytes) +
	       " B, " + std::to_string(peer.slots) + " slots, " + std::to_string(peer.messages) + " messages on QP " +
	       std::to_string(peer.qp_index) + "; this server: " + verb_name(o.verb) + ", " + std::to_string(o.msg_bytes) +
	       " B, " + std::to_string(o.slots) + " slots, " + std::to_string(qp_messages) +
	       " (give both the same options, -Q and -n included)";
}

} // namespace

RemoteEnd::~RemoteEnd()
{
	if (probe_cq)
		ibv_destroy_cq(probe_cq);   // after the QPs (the flow's objects go first)
	registered_buf_free(&counts);
}

int remote_end_init(const PipelineConf &c, const FlowConf &fc, RemoteEnd *e, std::string *err)
{
	e->listens = !fc.listen.empty();
	e->server = false;   // the receiving end: an rdma_rx or echo stage of the flow here
	for (const StageConf &st : c.stages)
		e->server |= st.flow == fc.name && st.kind->end >= FlowEnd::responder;
	const std::string &s = e->listens ? fc.listen : fc.peer;
	const size_t colon = s.rfind(':');
	const std::string ip = colon == std::string::npos ? "" : s.substr(0, colon);
	const std::string port = colon == std::string::npos ? s : s.substr(colon + 1);
	if (cm_addr_parse(ip, port, &e->addr, err) != 0) {
		*err = where(c, fc, e->listens ? "listen" : "peer", s) + *err;
		return -1;
	}
	if (!e->listens && cm_addr_parse(fc.local, "0", &e->local, err) != 0) {
		*err = where(c, fc, "local", fc.local) + *err;
		return -1;
	}
	e->connect_timeout_ms = connect_timeout_ms(c.run);   // the value is checked in (0, a day]
	e->connect_setting = c.file == kCliPipeline ? "--connect-timeout" : "run.connect_timeout";
	return 0;
}

int remote_device_name(const PipelineConf &c, const FlowConf &fc, std::string *name, std::string *err)
{
	RemoteEnd e;
	if (remote_end_init(c, fc, &e, err) != 0)
		return -1;
	if (e.listens) {
		CmServer srv;   // bound for a moment: its address names the device
		if (srv.listen(e.addr, 1, err) != 0)
			return -1;
		if (srv.verbs() == nullptr) {
			*err = where(c, fc, "listen", fc.listen) + "on any address no device is implied: name it (-d, or the io context's device)";
			return -1;
		}
		*name = dev_name_of(srv.verbs());
		return 0;
	}
	CmClient cli;
	if (int rc = cli.resolve(e.local, e.addr, 1, e.connect_timeout_ms, err); rc != 0) {
		if (rc == -ETIMEDOUT)
			*err += bounded_by(e);
		return -1;
	}
	*name = dev_name_of(cli.verbs());
	return 0;
}

int remote_listen(RemoteEnd *e, uint32_t qps, const Device &dev, FlowObjects *f, std::string *err)
{
	f->pairs.cm_server = std::make_unique<CmServer>();
	CmServer &srv = *f->pairs.cm_server;
	/* Room for every QP's request at once: beyond the backlog the CM drops them. */
	if (srv.listen(e->addr, static_cast<int>(std::max<uint32_t>(64, qps)), err) != 0)
		return -1;
	if (srv.verbs() && srv.verbs() != dev.ctx) {
		*err = "listen " + e->addr.str + ": the address is on " + dev_name_of(srv.verbs()) + ", the flow's io context uses " +
		       dev.name;
		return -1;
	}
	return 0;
}

namespace {

/* The IPv4 address of an IPv4-mapped GID (::ffff:a.b.c.d; gid_is_ipv4_mapped). */
std::string gid_ipv4(const ibv_gid &g)
{
	char s[INET_ADDRSTRLEN];
	return inet_ntop(AF_INET, g.raw + 12, s, sizeof(s)) ? s : "";
}

/* Connects the client's QPs, all within the end's connect timeout: a server that is
 * not listening yet (it starts later, or is between two steps of a size sweep) is
 * asked again every 200 ms until then; any other refusal or failure is final. */
int connect_retrying(const FlowParams &o, const Device &dev, RemoteEnd *e, const std::vector<CmQpSpec> &specs,
		     const std::vector<CmPrivate> &locals, FlowObjects *f, std::string *err)
{
	using Clock = std::chrono::steady_clock;
	constexpr auto kRetry = std::chrono::milliseconds(200);
	const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(e->connect_timeout_ms);
	auto left_ms = [&] {
		const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
		return static_cast<int>(std::max<int64_t>(1, left));
	};
	std::string unheard_err;   // the last "no server listening", for a last try the deadline cuts short
	for (;;) {
		f->pairs.cm_client = std::make_unique<CmClient>();
		CmClient &cli = *f->pairs.cm_client;
		cli.set_tos(o.traffic.traffic_class);
		int rc = cli.resolve(e->local, e->addr, o.qps, left_ms(), err);
		if (rc == 0 && cli.verbs() != dev.ctx && e->local.sin.sin_addr.s_addr == htonl(INADDR_ANY) &&
		    gid_is_ipv4_mapped(dev.gid)) {
			/* No local address given: the route took another device of this host (a
			 * server on it too, as two ends in one host); the flow's device is meant,
			 * so its own address is the source, as perftest's -d makes it. */
			if (cm_addr_parse(gid_ipv4(dev.gid), "0", &e->local, err) != 0)
				return -1;
			continue;
		}
		if (rc == 0 && cli.verbs() != dev.ctx) {
			*err = "rdma_cm: the route to " + e->addr.str + " is on " + dev_name_of(cli.verbs()) +
			       ", the flow's io context uses " + dev.name + " (give local = an address of " + dev.name + ")";
			return -1;
		}
		if (rc == 0 && (rc = cli.connect(specs, locals, left_ms(), err)) == 0)
			return 0;
		const bool unheard = rc != -ETIMEDOUT && err->find("no server listening") != std::string::npos;
		if (unheard && Clock::now() + kRetry < deadline) {
			unheard_err = *err;
			std::this_thread::sleep_for(kRetry);
			continue;
		}
		if (rc == -ETIMEDOUT && !unheard_err.empty()) {   // the deadline cut short a try after no server listened
			const size_t at = err->find("timed out");
			*err = unheard_err + ", asked again for " + seconds_str(e->connect_timeout_ms) + bounded_by(*e) +
			       " (the last try " + (at == std::string::npos ? *err : err->substr(at)) + ")";
			return -1;
		}
		if (unheard)
			*err += ", asked again for " + seconds_str(e->connect_timeout_ms) + bounded_by(*e);
		else if (rc == -ETIMEDOUT)
			*err += ", " + seconds_str(e->connect_timeout_ms) + " in all" + bounded_by(*e);
		return -1;
	}
}

/* A UC flow's data QPs, beside the RC service connections rdma_cm makes (owned by
 * f->pairs.uc): made before the handshake, which names them, connected after it. */
int make_uc_qps(Device &dev, SharedIOContext &io, const QpOptions &qo, uint32_t n, FlowObjects *f, std::string *err)
{
	for (uint32_t i = 0; i < n; i++) {
		ibv_qp *q = rc_qp_create(dev, io, qo, err);
		if (q == nullptr)
			return -1;
		f->pairs.uc.push_back(q);
	}
	return 0;
}

/* UC QP qp towards the peer of connection c (its UC QP peer_qpn, its GID as rdma_cm
 * resolved the path). UC checks no PSN across messages: both ends start at 0. */
int connect_uc(Device &dev, const CmConnSet &cm, unsigned c, ibv_qp *qp, const QpOptions &qo, uint32_t qp_index,
	       uint32_t peer_qpn, int access, ibv_gid *gid, std::string *err)
{
	if (cm.peer_gid(c, gid, err) != 0)
		return -1;
	QpOptions q = qo;
	q.qp_index = qp_index;
	if (rc_qp_connect(dev, qp, q, 0, RcPeer{peer_qpn, 0, *gid}, access, err) != 0) {
		*err = cm.what() + ", UC QP beside " + cm.conn(c).name + ": " + *err;
		return -1;
	}
	return 0;
}

/* The service connections of a UC flow are RC QPs that carry only the control plane's
 * few words (final counts, keep-alive reads). */
QpOptions service_qo(const QpOptions &qo)
{
	if (!qo.uc)
		return qo;
	QpOptions s{4, 0, false, qo.rnr_retry, qo.min_rnr_timer, false, qo.retry_cnt};
	s.traffic = qo.traffic;
	return s;
}

/* Why the other end's word cannot be this end's partner: both send, or both receive
 * ("" when one of each). */
std::string same_role(const RemoteEnd &e, const CmPrivate &peer)
{
	if (((peer.flags & kCmReceiver) != 0) != e.server)
		return "";
	return std::string("both ends ") + (e.server ? "receive" : "send") + " the flow (each host's end of it has its " +
	       (e.server ? "rdma_rx or echo" : "rdma_tx") + " stage; --reversed on one end only?)";
}

/* The QPs of the end here: a's sending, b's receiving (ping-pong: ping, echo). */
std::vector<ibv_qp *> &end_qps(const RemoteEnd &e, FlowObjects *f)
{
	return e.server ? f->pairs.b : f->pairs.a;
}

/* Dialing: each QP's word in its request (asking again while nobody listens); the
 * other end's in its reply. */
int dial(const FlowParams &o, Device &dev, SharedIOContext &io, const QpOptions &qo, RemoteEnd *e, FlowObjects *f,
	 const RemoteWords &w, std::string *err)
{
	const uint32_t nqps = o.qps;
	std::vector<CmQpSpec> specs(nqps);
	std::vector<CmPrivate> locals(nqps);
	for (uint32_t i = 0; i < nqps; i++) {
		specs[i] = cm_qp_spec(dev.pd, io, service_qo(qo));
		specs[i].qp.qp_index = i;
		locals[i] = request_of(o, i, e->targets[i]);
		locals[i].flags = (qo.uc && o.reliability == Reliability::software ? kCmReliable : 0) | (e->server ? kCmReceiver : 0);
		w.say(i, &locals[i], &specs[i]);
		if (qo.uc) {
			locals[i].uc_qpn = f->pairs.uc[i]->qp_num;
			locals[i].ctrl_qpn = e->ctrl_qpn;
		}
	}
	if (connect_retrying(o, dev, e, specs, locals, f, err) != 0)
		return -1;
	const CmClient &cli = *f->pairs.cm_client;
	for (uint32_t i = 0; i < nqps; i++) {
		const CmConn &c = cli.conn(i);
		if (qo.uc != (c.peer.uc_qpn != 0)) {
			*err = e->addr.str + ": the other end runs " + (qo.uc ? "RC" : "UC") + ", this one " + (qo.uc ? "UC" : "RC") +
			       " (give both the same transport)";
			return -1;
		}
		std::string why = same_role(*e, c.peer);
		if (!why.empty() || w.take(c.peer, &why) != 0) {
			*err = e->addr.str + ": QP " + std::to_string(i) + ": " + why;
			return -1;
		}
		if (qo.uc && connect_uc(dev, cli, i, f->pairs.uc[i], qo, i, c.peer.uc_qpn, specs[i].access, &e->peer_gid, err) != 0)
			return -1;
		e->peer_uc_qpn.push_back(c.peer.uc_qpn);
		e->peer_ctrl_qpn.push_back(c.peer.ctrl_qpn);
		end_qps(*e, f).push_back(qo.uc ? f->pairs.uc[i] : c.qp);
	}
	f->pairs.connected = std::string(qo.uc ? "UC beside RC service connections, " : "RC, ") + "rdma_cm from " + dev.name +
			     " to " + e->addr.str + ", " + std::to_string(nqps) + " connection" + (nqps > 1 ? "s" : "");
	return 0;
}

/* Listening: each request checked (what both ends agree on, from the fields its role
 * states) and taken; the reply this end's word. */
int accept(const FlowParams &o, Device &dev, SharedIOContext &io, const QpOptions &qo, RemoteEnd *e, FlowObjects *f,
	   const RemoteWords &w, std::string *err)
{
	const uint32_t nqps = o.qps;
	std::vector<int> access(nqps, 0);
	auto choose = [&](const CmRequest &req, CmQpSpec *spec, CmPrivate *reply, std::string *why) -> int {
		const CmPrivate &p = req.peer;
		if (req.verbs != dev.ctx) {
			*why = "the request came in on another device than this server's " + dev.name;
			return kCmReject;
		}
		if (p.qp_index >= nqps) {   // (the server refuses one already connected)
			*why = "QP index " + std::to_string(p.qp_index) + " is not one this server expects (" + std::to_string(nqps) +
			       " QPs)";
			return kCmReject;
		}
		if (std::string m = mismatch(o, p, e->targets[p.qp_index], !e->server); !m.empty()) {
			*why = m;
			return kCmReject;
		}
		if (qo.uc != (p.uc_qpn != 0)) {
			*why = std::string("the client runs ") + (p.uc_qpn ? "UC" : "RC") + ", this server " + (qo.uc ? "UC" : "RC") +
			       " (give both the same transport)";
			return kCmReject;
		}
		const bool reliable = qo.uc && o.reliability == Reliability::software;
		const bool peer_reliable = (p.flags & kCmReliable) != 0;
		if (qo.uc && reliable != peer_reliable) {
			*why = std::string("the client runs UC ") + (peer_reliable ? "with" : "without") + " software reliability, this server " +
			       (reliable ? "with" : "without") + " (give both the same reliability)";
			return kCmReject;
		}
		if (std::string r = same_role(*e, p); !r.empty()) {
			*why = r;
			return kCmReject;
		}
		if (w.take(p, why) != 0)
			return kCmReject;
		*spec = cm_qp_spec(dev.pd, io, service_qo(qo));
		spec->qp.qp_index = p.qp_index;
		*reply = request_of(o, p.qp_index, e->targets[p.qp_index]);
		reply->flags |= e->server ? kCmReceiver : 0;
		w.say(p.qp_index, reply, spec);
		if (qo.uc) {
			reply->uc_qpn = f->pairs.uc[p.qp_index]->qp_num;
			reply->ctrl_qpn = e->ctrl_qpn;   // reliable: where the client's restart requests go
		}
		access[p.qp_index] = spec->access;
		return kCmAccept;
	};
	CmServer &srv = *f->pairs.cm_server;
	if (int rc = srv.accept(nqps, e->connect_timeout_ms, choose, err); rc != 0) {   // the client may come later than us
		if (rc == -ETIMEDOUT)
			*err += bounded_by(*e);
		return -1;
	}
	/* The set is in arrival order; the roles' tables want QP index order. */
	std::vector<ibv_qp *> &qps = end_qps(*e, f);
	qps.assign(nqps, nullptr);
	e->peer_uc_qpn.assign(nqps, 0);
	e->peer_ctrl_qpn.assign(nqps, 0);
	for (unsigned c = 0; c < srv.size(); c++) {
		const CmPrivate &peer = srv.conn(c).peer;
		const uint32_t qi = peer.qp_index;
		qps[qi] = qo.uc ? f->pairs.uc[qi] : srv.conn(c).qp;
		if (qo.uc && connect_uc(dev, srv, c, f->pairs.uc[qi], qo, qi, peer.uc_qpn, access[qi], &e->peer_gid, err) != 0)
			return -1;
		e->peer_uc_qpn[qi] = peer.uc_qpn;
		e->peer_ctrl_qpn[qi] = peer.ctrl_qpn;
	}
	f->pairs.connected = std::string(qo.uc ? "UC beside RC service connections, " : "RC, ") + "rdma_cm on " + e->addr.str +
			     " (" + dev.name + "), " + std::to_string(nqps) + " connection" + (nqps > 1 ? "s" : "");
	return 0;
}

/* The server's QPs of a one-sided verb post only keep-alive reads: their send CQ is
 * the probe's own. */
int make_probe(const FlowParams &o, Device &dev, RemoteEnd *e, FlowObjects *f, std::string *err)
{
	if ((e->probe_cq = ibv_create_cq(dev.ctx, static_cast<int>(o.qps) + 1, nullptr, nullptr, 0)) == nullptr) {
		*err = dev.name + ": the keep-alive CQ (" + std::to_string(o.qps + 1) + " entries): ibv_create_cq: " + strerror(errno);
		return -1;
	}
	e->words.assign(o.qps, RemoteTarget{});
	e->posted_at.assign(o.qps, 0);
	e->scratch = static_cast<uint64_t *>(f->credit_src.addr);
	e->scratch_lkey = f->credit_src.mr->lkey;
	return 0;
}

} // namespace

int remote_join(const FlowParams &o, Device &dev, SharedIOContext &io, const QpOptions &qo, RemoteEnd *e, FlowObjects *f,
		const RemoteWords &w, std::string *err)
{
	e->targets = qp_targets(o);
	if (e->targets[0] > kCmMaxMessages) {
		*err = std::to_string(e->targets[0]) + " messages per QP: the handshake announces at most " +
		       std::to_string(kCmMaxMessages);
		return -1;
	}
	if (qo.uc && make_uc_qps(dev, io, qo, o.qps, f, err) != 0)
		return -1;
	return e->listens ? accept(o, dev, io, qo, e, f, w, err) : dial(o, dev, io, qo, e, f, w, err);
}

int remote_client_setup(const FlowParams &o, const char *tag, Device &dev, const VerbsOps *ops, bool use_wr,
			SharedIOContext &io, bool made_upstream, RunControl *ctl, RemoteEnd *e, FlowObjects *f, Requester *q,
			std::string *err)
{
	const RoleShape &shape = f->shape;
	if (requester_buffers(o, tag, dev, true, f, err) != 0)
		return -1;
	const bool atomic = verb_is_atomic(o.verb);
	const WindowShape ws = window_shape(o);
	e->duration = o.messages == 0;
	e->final_counts = e->duration || !shape.two_sided;
	e->count_words.assign(e->final_counts ? o.qps : 0, RemoteTarget{});
	std::vector<RemoteTarget> targets(o.qps);
	bool asked_self_describing = false;
	RemoteWords w;
	w.say = [&](uint32_t i, CmPrivate *m, CmQpSpec *spec) {
		spec->access = shape.two_sided ? IBV_ACCESS_REMOTE_WRITE : IBV_ACCESS_REMOTE_READ;   // credit; keep-alive reads
		m->flags |= made_upstream ? kCmSelfDescribing : 0;
		m->credit_addr = reinterpret_cast<uintptr_t>(credit_word_at(*f, i));
		m->credit_rkey = f->credit_words.mr->rkey;
		if (o.flow_window) {   // the flow's word follows its QPs'
			m->flags |= kCmFlowWindow;
			m->flow_window = o.flow_window;
			m->flow_credit_addr = reinterpret_cast<uintptr_t>(credit_word_at(*f, o.qps));
		}
	};
	w.take = [&](const CmPrivate &p, std::string *why) {
		asked_self_describing |= (p.flags & kCmSelfDescribing) != 0;
		if (e->final_counts && p.credit_addr == 0) {
			*why = "the receiving end names no word for the final count";
			return -1;
		}
		if (e->final_counts)
			e->count_words[p.qp_index] = RemoteTarget{p.credit_addr, p.credit_rkey, 0};
		if (shape.mem_per_qp && (p.addr == 0 || p.slot_bytes != ws.slot_bytes || p.slots != ws.slots)) {
			*why = "the receiving end has no usable window";
			return -1;
		}
		targets[p.qp_index] = RemoteTarget{p.addr, p.rkey, atomic ? 0 : p.slots};
		return 0;
	};
	const QpOptions qo = flow_qp_options(o, o.sq_depth, o.inline_send ? o.msg_bytes : 0, use_wr);
	if (remote_join(o, dev, io, qo, e, f, w, err) != 0)
		return -1;
	if (e->final_counts && registered_buf_alloc(dev, (std::string("rp_") + tag + "_final_counts").c_str(), o.qps * sizeof(uint64_t),
						0, &e->counts, err) != 0)
		return -1;
	if (!shape.mem_per_qp)
		targets.clear();
	if (requester_bind(o, tag, ops, use_wr, io, ctl, f, targets, q, err) != 0)
		return -1;
	/* The receiving end hands what it receives to stages that check each message alone. */
	q->p.self_describing |= asked_self_describing;
	return 0;
}

int remote_server_setup(const FlowParams &o, const char *tag, Device &dev, const VerbsOps *ops, SharedIOContext &io,
			bool hand_on, RunControl *ctl, RemoteEnd *e, FlowObjects *f, Responder *v, std::string *err)
{
	const RoleShape &shape = f->shape;
	if (responder_buffers(o, tag, dev, true, f, err) != 0)
		return -1;
	if (!shape.two_sided && make_probe(o, dev, e, f, err) != 0)
		return -1;
	e->duration = o.messages == 0;
	e->final_counts = e->duration || !shape.two_sided;
	if (e->final_counts) {   // the sender's final counts land here
		if (registered_buf_alloc(dev, (std::string("rp_") + tag + "_final_counts").c_str(), o.qps * sizeof(uint64_t),
					 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, &e->counts, err) != 0)
			return -1;
		for (uint32_t i = 0; i < o.qps; i++)
			static_cast<uint64_t *>(e->counts.addr)[i] = UINT64_MAX;
	}
	bool self_describing = false;
	std::vector<CreditTarget> credits(o.qps + (o.flow_window ? 1 : 0));
	RemoteWords w;
	w.say = [&](uint32_t i, CmPrivate *m, CmQpSpec *spec) {
		if (e->probe_cq)
			spec->send_cq = e->probe_cq;
		spec->access = shape.mem_access & ~IBV_ACCESS_LOCAL_WRITE;
		m->flags |= hand_on ? kCmSelfDescribing : 0;   // stages after ours check each message alone
		if (shape.mem_per_qp) {
			m->addr = reinterpret_cast<uintptr_t>(f->memory.addr) + i * shape.mem_per_qp;
			m->rkey = f->memory.mr->rkey;
			m->slots = window_shape(o).slots;
			m->slot_bytes = window_shape(o).slot_bytes;
		}
		if (e->final_counts) {
			m->credit_addr = reinterpret_cast<uintptr_t>(static_cast<uint64_t *>(e->counts.addr) + i);
			m->credit_rkey = e->counts.mr->rkey;
			spec->access |= IBV_ACCESS_REMOTE_WRITE;
		}
	};
	w.take = [&](const CmPrivate &p, std::string *why) {
		if (p.credit_addr == 0) {
			*why = "the sending end gave no credit word (credit, and keep-alive for one-sided verbs)";
			return -1;
		}
		if (p.flow_window != o.flow_window) {   // (checked by mismatch() when this end listens)
			*why = "the sending end's flow window is " + std::to_string(p.flow_window) + ", this end's " +
			       std::to_string(o.flow_window) + " (give both the same flow_window)";
			return -1;
		}
		self_describing |= (p.flags & kCmSelfDescribing) != 0;
		credits[p.qp_index] = {p.credit_addr, p.credit_rkey};
		if (p.flow_window)   // every QP names the flow's word: any will do
			credits[o.qps] = {p.flow_credit_addr, p.credit_rkey};
		if (e->probe_cq)
			e->words[p.qp_index] = RemoteTarget{p.credit_addr, p.credit_rkey, 0};
		return 0;
	};
	const QpOptions qo = flow_qp_options(o, kCreditRing, 0, false, std::max<uint32_t>(1, o.rq_depth));
	if (remote_join(o, dev, io, qo, e, f, w, err) != 0 || responder_bind(o, ops, io, ctl, f, credits, v, err) != 0)
		return -1;
	v->self_describing |= self_describing || hand_on;
	if (v->p.reliable)   // 5 of the sender's largest RTO
		v->p.linger_tsc = static_cast<uint64_t>(5 * kRtoMaxS * static_cast<double>(rte_get_tsc_hz()));
	/* A duration run's counts are known once the sender has written them (before it
	 * disconnects); until then each reads "not told", and the NIC writes them while
	 * the lcore reads: each read is a fresh load after the CQ polls around it. */
	ctl->qp_sent = e->duration ? static_cast<const uint64_t *>(e->counts.addr) : e->targets.data();
	ctl->counts_known = true;
	return 0;
}

uint64_t remote_sent(const RemoteEnd &e, uint32_t qps, unsigned *told)
{
	uint64_t sent = 0;
	*told = 0;
	const auto *fin = static_cast<const uint64_t *>(e.counts.addr);
	for (uint32_t i = 0; i < qps; i++) {
		const uint64_t n = e.duration ? fin[i] : e.targets[i];
		*told += e.final_counts ? fin[i] != UINT64_MAX : 1;
		sent += n == UINT64_MAX ? 0 : n;
	}
	return sent;
}

} // namespace rp
