#include "remote.h"

#include "common.h"
#include "control/results.h"

#include "control/stats.h"
#include "control/telemetry.h"
#include "pipeline/flow.h"

#include "verbs/cm.h"
#include "verbs/io_context.h"

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mempool.h>

#include <unistd.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

namespace rp {

namespace {

constexpr int kConnectTimeoutMs = 10000;
constexpr useconds_t kWatchPeriodUs = 10000;   // the control thread's look at CM events

/* Splits "ADDR:PORT" (or ":PORT" / "PORT" for --listen: any address). */
bool split_addr(const std::string &s, bool listen, std::string *ip, std::string *port)
{
	size_t colon = s.rfind(':');
	if (colon == std::string::npos) {
		if (!listen)
			return false;
		*ip = "";
		*port = s;
		return true;
	}
	*ip = s.substr(0, colon);
	*port = s.substr(colon + 1);
	return !port->empty() && (listen || !ip->empty());
}

/* Everything one side made, torn down in reverse order. The connections go first: their
 * QPs sit on the CQs and SRQ below. */
struct Side {
	Device dev;
	bool dev_open = false;
	SharedIOContext io;
	rte_mempool *pool = nullptr;
	MrTable mrs;
	RegisteredBuf memory, credit_words, credit_src;
	AsyncEventWatch async;
	std::unique_ptr<CmServer> srv;   // one of the two
	std::unique_ptr<CmClient> cli;

	~Side()
	{
		async_watch_stop(&async);
		if (srv)
			srv->close();
		if (cli)
			cli->close();
		shared_io_context_destroy(&io);
		mr_table_release(&mrs);
		rte_mempool_free(pool);
		registered_buf_free(&memory);
		registered_buf_free(&credit_words);
		registered_buf_free(&credit_src);
		if (dev_open)
			cm_device_close(&dev);
	}
};

/* The control thread's watch over the connections while the lcore runs: the first
 * one that goes down is named; on the server, all of them down means the client is
 * done (or gone); on the client, one down mid-run stops the requester. */
struct Watch {
	CmConnSet *cm = nullptr;
	RunControl *ctl = nullptr;
	bool server = false;
	std::atomic<bool> stop{false};      // main: wo, watcher: ro
	std::atomic<bool> role_done{false}; // main: wo once the lcore's role returned
	std::string why;                    // watcher: wo; main reads after the join
	unsigned down = 0;
	pthread_t thread{};
	bool running = false;
	/* Server of a one-sided verb: nothing arrives that would show the client is alive,
	 * so the watcher reads each QP's client word once a period (8-byte RDMA READ on the
	 * send CQ, which the responder does not poll for these verbs). A read the client
	 * has not answered for kKeepaliveDeadline, with no disconnect, means its host is
	 * gone: on rxe such a read neither completes nor fails, so the answer is timed. */
	bool keepalive = false;
	ibv_cq *ka_cq = nullptr;
	std::vector<ibv_qp *> ka_qps;
	std::vector<uint64_t> ka_addr;
	std::vector<uint32_t> ka_rkey;
	uint64_t *ka_scratch = nullptr;     // registered, one word per QP
	uint32_t ka_lkey = 0;
	std::vector<unsigned> ka_posted_at; // watch iteration a QP's read went out (0: none out)
	uint64_t ka_posted = 0, ka_answered = 0;
};

constexpr unsigned kKeepaliveEvery = 100;      // watch periods: a read per QP a second
constexpr unsigned kKeepaliveDeadline = 300;   // unanswered for 3 s: the client is gone

void keepalive_step(Watch *w, unsigned it)
{
	ibv_wc wc[16];
	int n = ibv_poll_cq(w->ka_cq, 16, wc);
	for (int k = 0; k < n; k++) {
		if (wc[k].wr_id < w->ka_posted_at.size())
			w->ka_posted_at[wc[k].wr_id] = 0;
		w->ka_answered += wc[k].status == IBV_WC_SUCCESS;
	}
	for (size_t i = 0; i < w->ka_qps.size(); i++) {
		unsigned at = w->ka_posted_at[i];
		if (at && it - at > kKeepaliveDeadline && w->down == 0 && w->why.empty() &&
		    !w->role_done.load(std::memory_order_acquire)) {
			w->why = "the client stopped answering: QP " + std::to_string(i) + "'s keep-alive RDMA READ unanswered for " +
				 std::to_string(kKeepaliveDeadline * kWatchPeriodUs / 1000000) + " s";
			w->ctl->abort.store(true);
		}
		if (at || it % kKeepaliveEvery)
			continue;
		ibv_sge sge{reinterpret_cast<uintptr_t>(&w->ka_scratch[i]), 8, w->ka_lkey};
		ibv_send_wr wr{};
		wr.wr_id = i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_RDMA_READ;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.rdma.remote_addr = w->ka_addr[i];
		wr.wr.rdma.rkey = w->ka_rkey[i];
		ibv_send_wr *bad = nullptr;
		if (ibv_post_send(w->ka_qps[i], &wr, &bad) == 0) {
			w->ka_posted_at[i] = it;
			w->ka_posted++;
		}
	}
}

void *watch_main(void *arg)
{
	auto *w = static_cast<Watch *>(arg);
	for (unsigned it = 1; !w->stop.load(std::memory_order_acquire); it++) {
		if (w->keepalive)
			keepalive_step(w, it);
		std::string why;
		int d = w->cm->poll_disconnects(&why);
		if (d < 0) {
			w->why = why;
			w->ctl->abort.store(true);
			break;
		}
		if (d > 0 && w->why.empty())
			w->why = why;
		w->down = w->cm->down();
		if (w->server && w->down == w->cm->size())
			w->ctl->requester_done.store(true, std::memory_order_release);   // nothing more will come
		if (!w->server && d > 0 && !w->role_done.load(std::memory_order_acquire))
			w->ctl->abort.store(true);   // the server went away mid-run
		usleep(kWatchPeriodUs);
	}
	return nullptr;
}

int watch_start(Watch *w, std::string *err)
{
	int ret = rte_ctrl_thread_create(&w->thread, "rp-cm-watch", nullptr, watch_main, w);
	if (ret != 0) {
		*err = std::string("rdma_cm watcher thread: ") + strerror(ret < 0 ? -ret : ret);
		return -1;
	}
	w->running = true;
	return 0;
}

void watch_stop(Watch *w)
{
	if (!w->running)
		return;
	w->stop.store(true, std::memory_order_release);
	pthread_join(w->thread, nullptr);
	w->running = false;
}

/* A role's lcore body: runs it, measures its thread's CPU, says when it is done. */
struct RoleCall {
	Requester *req = nullptr;   // one of the two
	Responder *rsp = nullptr;
	int rc = -1;
	double cpu_s = 0;
	std::atomic<bool> done{false};
};

int role_main(void *arg)
{
	auto *c = static_cast<RoleCall *>(arg);
	double cpu0 = thread_cpu_s();
	c->rc = c->req ? requester_run(c->req) : responder_run(c->rsp);
	c->cpu_s = thread_cpu_s() - cpu0;
	c->done.store(true, std::memory_order_release);
	return c->rc;
}

/* Runs the role on `lcore` (a pipeline file's stage lcore), or on this, the main lcore. */
int run_role_on(int lcore, RoleCall *c)
{
	unsigned main_lc = rte_get_main_lcore();
	if (lcore < 0 || static_cast<unsigned>(lcore) == main_lc)
		return role_main(c);
	if (int ret = rte_eal_remote_launch(role_main, c, static_cast<unsigned>(lcore)); ret != 0) {
		fprintf(stderr, "rdmapipe: lcore %d: rte_eal_remote_launch: %s\n", lcore, strerror(-ret));
		return -1;
	}
	while (!c->done.load(std::memory_order_acquire))
		usleep(kWatchPeriodUs);   // rte_eal_wait_lcore would spin
	rte_eal_wait_lcore(static_cast<unsigned>(lcore));
	return c->rc;
}

/* Per-QP message counts, as the requester splits them (round-robin over the flow's QPs). */
std::vector<uint64_t> qp_targets(const RunOptions &o)
{
	std::vector<uint64_t> t;
	for (uint32_t size : o.flows)
		for (uint32_t k = 0; k < size; k++)
			t.push_back(o.messages / size + (k < o.messages % size));
	return t;
}

int open_on(Side &s, const RunOptions &o, ibv_context *verbs, uint8_t port, DeviceCaps *caps, std::string *err)
{
	if (cm_device_open(&s.dev, verbs, port, err) != 0)
		return -1;
	s.dev_open = true;
	if (!o.device.empty() && o.device != s.dev.name) {
		*err = "rdma_cm picked device " + s.dev.name + " for this address, but -d asks for " + o.device;
		return -1;
	}
	if (probe_and_report(o, s.dev, caps, err) != 0)
		return -1;
	if (verb_is_atomic(o.verb) && caps->atomics == IBV_ATOMIC_NONE) {
		*err = s.dev.name + ": " + verb_name(o.verb) + " needs atomics, and the device has none";
		return -1;
	}
	if (o.inline_send && o.msg_bytes > caps->max_inline) {
		*err = s.dev.name + ": --inline with " + std::to_string(o.msg_bytes) + " B messages: it inlines at most " +
		       std::to_string(caps->max_inline) + " B";
		return -1;
	}
	if (async_watch_start(&s.async, s.dev.ctx, err) != 0)
		return -1;
	return 0;
}

/* The control plane's view of one side of a two-process run (flows and lcores are the caller's). */
RunView remote_view(const RunOptions &o, const Device &dev, const std::string &what, RunControl *ctl)
{
	RunView v;
	v.device = dev.name;
	v.what = what + ", " + verb_opcode_name(o.verb) + ", " + std::to_string(o.msg_bytes) + " B";
	v.tsc_hz = static_cast<double>(rte_get_tsc_hz());
	v.ctl = ctl;
	v.ports = {{dev.name, dev.port, hw_counters_read(dev.name, dev.port)}};
	v.config = {"QPs: " + std::to_string(o.qps), "messages: " + std::to_string(o.messages) + " per flow"};
	return v;
}

/* What both ends must agree on: the client says it, the server checks it. */
/* `messages` is this QP's own count: flows split the same way on both sides or the
 * server refuses (a -Q 4 server and a -Q 2,2 client would judge different counts). */
CmPrivate request_of(const RunOptions &o, uint32_t qi, uint64_t qp_messages)
{
	CmPrivate p;
	p.qp_index = static_cast<uint16_t>(qi);
	p.slots = o.slots;
	p.slot_bytes = o.msg_bytes;
	p.verb = static_cast<uint8_t>(static_cast<unsigned>(o.verb) + 1);
	p.messages = qp_messages;
	return p;
}

std::string mismatch(const RunOptions &o, const CmPrivate &peer, uint64_t qp_messages)
{
	Verb v = static_cast<Verb>(peer.verb ? peer.verb - 1 : 0);
	if (peer.verb == 0 || v != o.verb || peer.slot_bytes != o.msg_bytes || peer.slots != o.slots ||
	    peer.messages != qp_messages)
		return std::string("the client runs ") + (peer.verb ? verb_name(v) : "?") + ", " +
		       std::to_string(peer.slot_bytes) + " B, " + std::to_string(peer.slots) + " slots, " +
		       std::to_string(peer.messages) + " messages on QP " + std::to_string(peer.qp_index) +
		       "; this server: " + verb_name(o.verb) + ", " + std::to_string(o.msg_bytes) + " B, " +
		       std::to_string(o.slots) + " slots, " + std::to_string(qp_messages) +
		       " (give both the same options, -Q and -n included)";
	return "";
}

/* The lcore a role will run on is in EAL's set: checked before any connection. */
bool role_lcore_ok(int lcore)
{
	if (lcore < 0 || rte_lcore_is_enabled(static_cast<unsigned>(lcore)))
		return true;
	fprintf(stderr, "rdmapipe: lcore %d is not in the EAL lcore set (-l)\n", lcore);
	return false;
}

double secs_between(uint64_t a, uint64_t b)
{
	return b > a ? tsc_to_s(b - a) : 0.0;
}

int run_server(const RunOptions &o)
{
	std::string ip, port, err;
	CmAddr addr;
	if (!split_addr(o.listen, true, &ip, &port) || cm_addr_parse(ip, port, &addr, &err) != 0) {
		fprintf(stderr, "rdmapipe: --listen %s: %s\n", o.listen.c_str(), err.empty() ? "expected [ADDR:]PORT" : err.c_str());
		return kExitUsage;
	}
	if (!role_lcore_ok(o.rx_lcore))
		return kExitUsage;
	auto s = std::make_unique<Side>();
	s->srv = std::make_unique<CmServer>();
	CmServer *srv = s->srv.get();
	/* Room for every QP's request at once: beyond the backlog the CM drops them. */
	if (srv->listen(addr, static_cast<int>(std::max<uint32_t>(64, o.qps)), &err) != 0)
		return setup_error(err);
	ibv_context *verbs = srv->verbs();
	if (verbs == nullptr) {
		/* Listening on any address: -d says which device the QPs go on. */
		if (o.device.empty()) {
			fprintf(stderr, "rdmapipe: --listen %s: on any address, give the device with -d\n", o.listen.c_str());
			return kExitUsage;
		}
		if (cm_device_context(o.device, &verbs, &err) != 0)
			return setup_error(err);
	}
	DeviceCaps caps;
	if (open_on(*s, o, verbs, srv->port_num() ? srv->port_num() : o.port, &caps, &err) != 0)
		return setup_error(err);
	const VerbsOps *ops = pick_cq_ops(o, s->dev, caps);
	const RoleShape shape = role_shape(o);
	const uint32_t nqps = o.qps;
	if (check_role_limits(shape, s->dev, nqps, &err) != 0)
		return setup_error(err);
	if (shape.rx_pool_n && (s->pool = make_registered_pool("rp_rx_pool", "receive pool", shape.rx_pool_n, o, s->dev,
								IBV_ACCESS_LOCAL_WRITE, &s->mrs, &err)) == nullptr)
		return setup_error(err);
	if (shape.mem_per_qp &&
	    registered_buf_alloc(s->dev, "rp_responder_memory", shape.mem_per_qp * nqps, shape.mem_access, &s->memory, &err) != 0)
		return setup_error(err);
	/* Credit words to write (two-sided verbs), or keep-alive reads to land (one-sided). */
	if (registered_buf_alloc(s->dev, "rp_credit_src", static_cast<size_t>(nqps) * kCreditRing * sizeof(uint64_t),
				 shape.two_sided ? 0 : IBV_ACCESS_LOCAL_WRITE, &s->credit_src, &err) != 0)
		return setup_error(err);
	if (shared_io_context_create(s->dev, static_cast<uint32_t>(shape.rsp_send_cq), static_cast<uint32_t>(shape.rsp_recv_cq),
				     shape.srq_depth, o.adaptive_poll, ops != &kIbvOps, &s->io, &err) != 0)
		return setup_error(err);

	RunControl ctl;
	auto v = std::make_unique<Responder>();
	v->ops = ops;
	v->recv_cq = s->io.recv_cq;
	v->send_cq = s->io.send_cq;
	v->srq = s->io.srq;
	v->rx_pool = s->pool;
	v->memory = static_cast<unsigned char *>(s->memory.addr);
	v->credit_src = static_cast<uint64_t *>(s->credit_src.addr);
	v->credit_lkey = s->credit_src.mr ? s->credit_src.mr->lkey : 0;
	v->ctl = &ctl;
	v->p = responder_params(o, rte_get_tsc_hz());
	if (responder_init(v.get(), nqps, &err) != 0)
		return setup_error(err);
	if (shape.two_sided && responder_fill_srq(v.get(), o, shape, s->pool, &s->mrs, s->dev, &err) != 0)
		return setup_error(err);

	/* Each request names its QP index; it gets that QP's window (or word) in the reply. */
	QpOptions qo{kCreditRing, 0, false, o.rnr_retry, o.min_rnr_timer};
	std::vector<bool> taken(nqps, false);
	std::vector<uint64_t> ka_addr(nqps);
	std::vector<uint32_t> ka_rkey(nqps);
	const std::vector<uint64_t> targets = qp_targets(o);
	auto choose = [&](const CmRequest &req, CmQpSpec *spec, CmPrivate *reply, std::string *why) -> int {
		const CmPrivate &p = req.peer;
		if (req.verbs != s->dev.ctx) {
			*why = "the request came in on another device than this server's " + s->dev.name;
			return kCmReject;
		}
		if (p.qp_index >= nqps || taken[p.qp_index]) {
			*why = "QP index " + std::to_string(p.qp_index) + " is not one this server expects (" + std::to_string(nqps) +
			       " QPs, each once)";
			return kCmReject;
		}
		if (std::string m = mismatch(o, p, targets[p.qp_index]); !m.empty()) {
			*why = m;
			return kCmReject;
		}
		if (p.credit_addr == 0) {
			*why = "the client gave no credit word (credit, and keep-alive for one-sided verbs)";
			return kCmReject;
		}
		*spec = cm_qp_spec(s->dev.pd, s->io, qo);
		spec->access = shape.mem_access & ~IBV_ACCESS_LOCAL_WRITE;
		*reply = CmPrivate{};
		reply->qp_index = p.qp_index;
		if (shape.mem_per_qp) {
			reply->addr = reinterpret_cast<uintptr_t>(s->memory.addr) + p.qp_index * shape.mem_per_qp;
			reply->rkey = s->memory.mr->rkey;
			reply->slots = verb_is_atomic(o.verb) ? 1 : o.slots;
			reply->slot_bytes = verb_is_atomic(o.verb) ? 8 : o.msg_bytes;
		}
		ResponderQp &rq = v->qps[p.qp_index];
		rq.credit_remote_addr = p.credit_addr;
		rq.credit_rkey = p.credit_rkey;
		ka_addr[p.qp_index] = p.credit_addr;
		ka_rkey[p.qp_index] = p.credit_rkey;
		taken[p.qp_index] = true;
		return kCmAccept;
	};
	if (!o.quiet)
		printf("rdmapipe: server %s on %s, waiting for %u connection%s (%s, %u B)\n", o.listen.c_str(),
		       s->dev.name.c_str(), nqps, nqps > 1 ? "s" : "", verb_opcode_name(o.verb), o.msg_bytes);
	fflush(stdout);
	/* The client may come later than us: wait as long as the stall timeout allows, at least 10 s. */
	int wait_ms = static_cast<int>(std::max(o.stall_timeout_s * 1000, static_cast<double>(kConnectTimeoutMs)));
	if (srv->accept(nqps, wait_ms, choose, &err) != 0)
		return setup_error(err);
	/* The set is in arrival order; the responder's table wants QP index order. */
	for (unsigned c = 0; c < srv->size(); c++)
		v->qps[srv->conn(c).peer.qp_index].qp = srv->conn(c).qp;
	if (responder_add_qps(v.get(), &err) != 0)
		return setup_error(err);
	v->idler.channel = s->io.channel;
	v->idler.cqs[0] = s->io.recv_cq;
	v->idler.cqs[1] = s->io.send_cq;
	ctl.qp_sent = targets.data();
	ctl.counts_known = true;

	Watch w;
	w.cm = srv;
	w.ctl = &ctl;
	w.server = true;
	if (!shape.two_sided) {
		w.keepalive = true;
		w.ka_cq = s->io.send_cq;
		for (uint32_t i = 0; i < nqps; i++)
			w.ka_qps.push_back(v->qps[i].qp);
		w.ka_addr = ka_addr;
		w.ka_rkey = ka_rkey;
		w.ka_scratch = static_cast<uint64_t *>(s->credit_src.addr);
		w.ka_lkey = s->credit_src.mr->lkey;
		w.ka_posted_at.assign(nqps, 0);
	}
	if (watch_start(&w, &err) != 0)
		return setup_error(err);
	/* Stats lines and telemetry: the server sees what arrives, per lcore. */
	RunView view = remote_view(o, s->dev, "server on " + o.listen, &ctl);
	view.lcores = {{o.rx_lcore < 0 ? rte_get_main_lcore() : static_cast<unsigned>(o.rx_lcore), "responder", &v->live}};
	if (s->pool)
		view.pools = {{"receive buffers", s->pool}};
	for (uint32_t i = 0; i < nqps; i++)
		view.qps.push_back({"all", i, v->qps[i].qp->qp_num, "responder"});
	Sampler sampler;
	sampler.view = &view;
	sampler.print_period_s = o.stats_period_s;
	if (o.stats_period_s > 0 && sampler_start(&sampler, &err) != 0)
		fprintf(stderr, "rdmapipe: %s (no stats lines)\n", err.c_str());
	view.start_tsc = rte_rdtsc();
	telemetry_set_run(&view);
	set_running(&ctl);
	RoleCall call;
	call.rsp = v.get();
	int rc = run_role_on(o.rx_lcore, &call);
	double cpu = call.cpu_s;
	/* The client's last completions need our QPs: keep them until it disconnects. */
	uint64_t until = rte_rdtsc() + static_cast<uint64_t>(o.stall_timeout_s * static_cast<double>(rte_get_tsc_hz()));
	while (!ctl.requester_done.load(std::memory_order_acquire) && !ctl.abort.load() && rte_rdtsc() < until)
		usleep(kWatchPeriodUs);
	w.role_done.store(true);
	watch_stop(&w);
	sampler_stop(&sampler);
	telemetry_set_run(nullptr);
	set_running(nullptr);
	usleep(100000);
	async_watch_stop(&s->async);

	const ResponderCounters &c = v->c;
	uint64_t expected = 0;
	for (uint64_t t : targets)
		expected += t;
	const bool two_sided = shape.two_sided;
	double secs = secs_between(c.start_tsc, c.end_tsc);
	printf("summary:\n");
	printf("  role:                server (responder) on %s, %s port %u, GID index %d\n", o.listen.c_str(),
	       s->dev.name.c_str(), s->dev.port, s->dev.gid_index);
	printf("  verb:                %s, %u B, %u QP%s, window %u\n", verb_opcode_name(o.verb), o.msg_bytes, nqps,
	       nqps > 1 ? "s" : "", o.slots);
	printf("  messages expected:   %" PRIu64 "\n", expected);
	if (two_sided) {
		printf("  messages received:   %" PRIu64 "\n", c.received);
		printf("  messages verified:   %" PRIu64 "\n", c.verified);
		printf("  message rate:        %.4f Mmsg/s\n", secs > 0 ? static_cast<double>(c.received) / secs / 1e6 : 0.0);
		printf("  credit writes:       %" PRIu64 "%s\n", c.credit_writes,
		       c.credit_flushed_late ? (" (" + std::to_string(c.credit_flushed_late) +
						" flushed when the client left after its last message: not needed)").c_str() : "");
		printf("  sequence errors:     %" PRIu64 "\n", c.sequence_errors);
	} else if (o.verb == Verb::write) {
		printf("  window slots checked: %" PRIu64 "\n", c.window_slots_checked);
	} else if (verb_is_atomic(o.verb)) {
		printf("  final words checked: %" PRIu64 "\n", c.counters_checked);
	} else {
		printf("  messages verified:   0 (reads are checked by the client)\n");
	}
	printf("  payload errors:      %" PRIu64 "\n", c.payload_errors);
	printf("  completion errors:   %" PRIu64 "\n", c.wc_errors.total);
	printf("  disconnected:        %u of %u connection%s%s%s\n", w.down, nqps, nqps > 1 ? "s" : "",
	       w.why.empty() ? "" : ", first: ", w.why.c_str());
	if (w.keepalive)
		printf("  keep-alive reads:    %" PRIu64 " posted, %" PRIu64 " answered\n", w.ka_posted, w.ka_answered);
	print_async_events(s->async);
	print_wc_errors("server", c.wc_errors);
	if (c.fail_reason)
		printf("  server failed:       %s\n", c.fail_reason);
	printf("  server CPU:          %.3f s\n", cpu);
	bool pass = rc == 0 && c.wc_errors.total == 0 && c.payload_errors == 0 &&
		    (!two_sided || (c.received == expected && c.verified == expected)) &&
		    (o.verb != Verb::write || !o.verify || c.window_slots_checked > 0) &&
		    (!verb_is_atomic(o.verb) || c.counters_checked == nqps);
	printf("result: %s\n", pass ? "PASS" : "FAIL");

	/* Results: per flow what the client announced (sent), what arrived (completed) and
	 * what checked out here; one-sided verbs are judged by the final memory. */
	Results res = results_of("rate", o.verb, o.msg_bytes, s->dev.name, secs, pass);
	res.role = "server";
	const bool memory_ok = c.payload_errors == 0 && c.fail_reason == nullptr &&
			       ((o.verb == Verb::write && c.window_slots_checked > 0) ||
				(verb_is_atomic(o.verb) && c.counters_checked == nqps));
	uint32_t qi = 0;
	for (size_t f = 0; f < o.flows.size(); f++) {
		FlowResult x;
		x.name = flow_name(o.flow_names, f);
		x.qps = o.flows[f];
		for (uint32_t k = 0; k < o.flows[f]; k++, qi++) {
			x.sent += targets[qi];
			x.completed += two_sided ? v->qps[qi].received : 0;
			x.verified += two_sided ? v->qps[qi].verified : memory_ok ? targets[qi] : 0;
			x.failed_qps += v->qps[qi].failed;
		}
		x.bytes = x.completed * o.msg_bytes;
		x.errors = o.flows.size() == 1 ? &c.wc_errors : nullptr;   // counted for all flows together
		res.flows.push_back(x);
	}
	res.lcores = {{o.rx_lcore < 0 ? rte_get_main_lcore() : static_cast<unsigned>(o.rx_lcore), "responder",
		       c.polls_busy, c.polls_idle, cpu}};
	return write_results(o, res, pass);
}

int run_client(const RunOptions &o)
{
	if (!role_lcore_ok(o.tx_lcore))
		return kExitUsage;
	std::string ip, port, err;
	CmAddr server, local;
	if (!split_addr(o.peer, false, &ip, &port) || cm_addr_parse(ip, port, &server, &err) != 0) {
		fprintf(stderr, "rdmapipe: --peer %s: %s\n", o.peer.c_str(), err.empty() ? "expected ADDR:PORT" : err.c_str());
		return kExitUsage;
	}
	if (cm_addr_parse(o.local, "0", &local, &err) != 0) {
		fprintf(stderr, "rdmapipe: --local %s: %s\n", o.local.c_str(), err.c_str());
		return kExitUsage;
	}
	auto s = std::make_unique<Side>();
	s->cli = std::make_unique<CmClient>();
	CmClient *cli = s->cli.get();
	const uint32_t nqps = o.qps;
	if (cli->resolve(local, server, nqps, kConnectTimeoutMs, &err) != 0)
		return setup_error(err);
	DeviceCaps caps;
	if (open_on(*s, o, cli->verbs(), cli->port_num(), &caps, &err) != 0)
		return setup_error(err);
	const VerbsOps *ops = pick_cq_ops(o, s->dev, caps);
	bool use_wr = o.post_api == PostApi::wr && caps.qp_ex;
	const RoleShape shape = role_shape(o);
	if (check_role_limits(shape, s->dev, nqps, &err) != 0)
		return setup_error(err);
	if ((s->pool = make_registered_pool("rp_tx_pool", "requester buffer pool", shape.tx_pool_n, o, s->dev,
					    shape.local_write ? IBV_ACCESS_LOCAL_WRITE : 0, &s->mrs, &err)) == nullptr)
		return setup_error(err);
	/* Per QP a word the server writes credit into (two-sided verbs) or reads as a
	 * keep-alive (one-sided ones). */
	if (registered_buf_alloc(s->dev, "rp_credit_words", static_cast<size_t>(nqps) * sizeof(uint64_t),
				 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, &s->credit_words,
				 &err) != 0)
		return setup_error(err);
	if (shared_io_context_create(s->dev, static_cast<uint32_t>(shape.req_send_cq), 1, 0, o.adaptive_poll,
				     ops != &kIbvOps, &s->io, &err) != 0)
		return setup_error(err);

	QpOptions qo{o.sq_depth, o.inline_send ? o.msg_bytes : 0, use_wr, o.rnr_retry, o.min_rnr_timer};
	std::vector<CmQpSpec> specs(nqps);
	std::vector<CmPrivate> locals(nqps);
	const std::vector<uint64_t> targets = qp_targets(o);
	for (uint32_t i = 0; i < nqps; i++) {
		specs[i] = cm_qp_spec(s->dev.pd, s->io, qo);
		specs[i].access = shape.two_sided ? IBV_ACCESS_REMOTE_WRITE : IBV_ACCESS_REMOTE_READ;   // credit, keep-alive
		locals[i] = request_of(o, i, targets[i]);
		locals[i].credit_addr = reinterpret_cast<uintptr_t>(static_cast<uint64_t *>(s->credit_words.addr) + i);
		locals[i].credit_rkey = s->credit_words.mr->rkey;
	}
	if (!o.quiet)
		printf("rdmapipe: client of %s on %s: %u QP%s, %s, %u B, %" PRIu64 " messages\n", o.peer.c_str(),
		       s->dev.name.c_str(), nqps, nqps > 1 ? "s" : "", verb_opcode_name(o.verb), o.msg_bytes, o.messages);
	fflush(stdout);
	if (cli->connect(specs, locals, kConnectTimeoutMs, &err) != 0)
		return setup_error(err);

	RunControl ctl;
	auto q = std::make_unique<Requester>();
	q->ops = ops;
	q->send_cq = s->io.send_cq;
	q->pool = s->pool;
	q->mrs = &s->mrs;
	q->ctl = &ctl;
	q->p = requester_params(o, use_wr, rte_get_tsc_hz());
	if (requester_init(q.get(), nqps, &err) != 0 ||
	    requester_set_flows(q.get(), o.flows.data(), static_cast<uint32_t>(o.flows.size()), &err) != 0)
		return setup_error(err);
	for (uint32_t i = 0; i < nqps; i++) {
		const CmConn &c = cli->conn(i);
		RequesterQp &rq = q->qps[i];
		rq.qp = c.qp;
		if (use_wr)
			rq.qpx = ibv_qp_to_qp_ex(c.qp);
		if (shape.mem_per_qp) {
			if (c.peer.addr == 0 || c.peer.slot_bytes != (verb_is_atomic(o.verb) ? 8u : o.msg_bytes) ||
			    c.peer.slots != (verb_is_atomic(o.verb) ? 1u : o.slots)) {
				fprintf(stderr, "rdmapipe: %s: the server's reply for QP %u has no usable window\n", o.peer.c_str(), i);
				return kExitSetup;
			}
			rq.remote = RemoteTarget{c.peer.addr, c.peer.rkey, verb_is_atomic(o.verb) ? 0 : c.peer.slots};
		}
		if (static_cast<int>(i) == o.bad_rkey_qp)
			rq.remote.rkey ^= 0x5a5a00;   // test hook: a key the server never issued
		if (shape.two_sided)
			rq.credit_word = static_cast<volatile uint64_t *>(s->credit_words.addr) + i;
	}
	if (requester_add_qps(q.get(), &err) != 0)
		return setup_error(err);
	q->idler.channel = s->io.channel;
	q->idler.cqs[0] = s->io.send_cq;

	Watch w;
	w.cm = cli;
	w.ctl = &ctl;
	if (watch_start(&w, &err) != 0)
		return setup_error(err);
	Sampler sampler;   // the results' per-second series, the stats lines
	for (uint32_t f = 0; f < q->nflows; f++)
		sampler.live.push_back(&q->flow_live[f]);
	RunView view = remote_view(o, s->dev, "client of " + o.peer, &ctl);
	uint32_t qi0 = 0;
	for (uint32_t f = 0; f < q->nflows; f++) {
		view.flows.push_back({flow_name(o.flow_names, f), o.flows[f], o.verb, o.msg_bytes, o.batch, o.signal_every,
				      o.messages, &q->flow_live[f], &q->flow_ctl[f]});
		for (uint32_t k = 0; k < o.flows[f]; k++, qi0++)
			view.qps.push_back({view.flows.back().name, k, q->qps[qi0].qp->qp_num, "requester"});
	}
	view.lcores = {{o.tx_lcore < 0 ? rte_get_main_lcore() : static_cast<unsigned>(o.tx_lcore), "requester", &q->live}};
	view.pools = {{"requester buffers", s->pool}};
	sampler.view = &view;
	sampler.print_period_s = o.stats_period_s;
	/* The connection watch is running: a sampler that cannot start is reported, not fatal. */
	if ((!o.output_json.empty() || o.stats_period_s > 0) && sampler_start(&sampler, &err) != 0)
		fprintf(stderr, "rdmapipe: %s (no stats lines, no series)\n", err.c_str());
	view.start_tsc = rte_rdtsc();
	telemetry_set_run(&view);
	set_running(&ctl);
	RoleCall call;
	call.req = q.get();
	int rc = run_role_on(o.tx_lcore, &call);
	double cpu = call.cpu_s;
	sampler_stop(&sampler);
	telemetry_set_run(nullptr);
	w.role_done.store(true, std::memory_order_release);
	watch_stop(&w);
	set_running(nullptr);
	cli->close();   // the server sees us go: it ends its run
	usleep(100000);
	async_watch_stop(&s->async);

	const RequesterCounters &c = q->c;
	double secs = secs_between(c.start_tsc, c.end_tsc);
	const Histogram &lat = q->flow_latency[0];
	printf("summary:\n");
	printf("  role:                client (requester) of %s, %s port %u, GID index %d\n", o.peer.c_str(),
	       s->dev.name.c_str(), s->dev.port, s->dev.gid_index);
	printf("  verb:                %s, %u B, %u QP%s, batch %u, signal every %u, send queue %u, window %u\n",
	       verb_opcode_name(o.verb), o.msg_bytes, nqps, nqps > 1 ? "s" : "", o.batch, o.signal_every, o.sq_depth,
	       o.slots);
	printf("  messages sent:       %" PRIu64 "\n", c.sent);
	printf("  messages completed:  %" PRIu64 "\n", c.completed);
	if (o.verb == Verb::read || verb_is_atomic(o.verb))
		printf("  messages verified:   %" PRIu64 "\n", c.verified);
	else
		printf("  messages verified:   0 here (the server checks what arrives)\n");
	printf("  message rate:        %.4f Mmsg/s\n", secs > 0 ? static_cast<double>(c.completed) / secs / 1e6 : 0.0);
	printf("  throughput:          %.4f Gbit/s\n",
	       secs > 0 ? static_cast<double>(c.completed) * o.msg_bytes * 8 / secs / 1e9 : 0.0);
	if (lat.count())
		printf("  completion latency:  p50 %.1f us, p99 %.1f us, max %.1f us (chain posted to its signalled completion)\n",
		       static_cast<double>(lat.percentile(0.5)) / 1e3, static_cast<double>(lat.percentile(0.99)) / 1e3,
		       static_cast<double>(lat.max()) / 1e3);
	printf("  payload errors:      %" PRIu64 "\n", c.result_errors);
	printf("  completion errors:   %" PRIu64 "\n", c.wc_errors.total);
	printf("  failed QPs:          %" PRIu64 "\n", c.failed_qps);
	if (!w.why.empty())
		printf("  connection lost:     %s\n", w.why.c_str());
	print_async_events(s->async);
	print_wc_errors("client", c.wc_errors);
	if (c.fail_reason)
		printf("  client failed:       %s\n", c.fail_reason);
	printf("  client CPU:          %.3f s\n", cpu);
	bool checks = o.verb == Verb::read || verb_is_atomic(o.verb);
	bool pass = rc == 0 && c.completed == c.sent && c.sent == o.messages * o.flows.size() && c.wc_errors.total == 0 &&
		    c.result_errors == 0 && (!checks || c.verified == c.sent) && w.why.empty();
	printf("result: %s\n", pass ? "PASS" : "FAIL");

	Results res = results_of("rate", o.verb, o.msg_bytes, s->dev.name, secs, pass);
	res.role = "client";
	uint32_t qi = 0;
	for (uint32_t f = 0; f < q->nflows; f++) {
		FlowResult x;
		x.name = flow_name(o.flow_names, f);
		x.qps = o.flows[f];
		for (uint32_t k = 0; k < o.flows[f]; k++, qi++) {
			const RequesterQp &a = q->qps[qi];
			x.sent += a.sent;
			x.completed += a.completed;
			x.verified += a.verified;   // read results, atomic return values; the server checks the rest
			x.failed_qps += a.failed;
		}
		x.bytes = x.completed * o.msg_bytes;
		x.errors = &q->flow_errors[f];
		x.latency = &q->flow_latency[f];
		x.latency_what = "chain posted to its signalled completion";
		res.flows.push_back(x);
	}
	res.lcores = {{o.tx_lcore < 0 ? rte_get_main_lcore() : static_cast<unsigned>(o.tx_lcore), "requester",
		       c.polls_busy, c.polls_idle, cpu}};
	res.period_s = sampler.period_s;
	res.series = sampler.series;
	return write_results(o, res, pass);
}

} // namespace

int run_remote(const RunOptions &o)
{
	return o.listen.empty() ? run_client(o) : run_server(o);
}

} // namespace rp
