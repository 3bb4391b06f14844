#include "pingpong.h"

#include "engine/pingpong.h"
#include "results.h"
#include "pipeline/flow.h"
#include "verbs/io_context.h"
#include "verbs/memory.h"

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

namespace rp {

namespace {

/* Each side keeps a few receives posted and reposts them in small batches: one message
 * is in flight, so a deep SRQ would only cost memory. */
constexpr uint32_t kSrqDepth = 64;
constexpr uint32_t kSrqRefill = 16;
constexpr uint32_t kRecvBurst = 16;

struct Side {
	SharedIOContext io;
	ibv_qp *qp = nullptr;
	rte_mempool *pool = nullptr;
	MrTable mrs;
	PingPongSide eng;
	double cpu_s = 0;
	int rc = -1;
	std::atomic<bool> done{false};
	const std::atomic<bool> *other_done = nullptr;   // echo side: the pinging side's flag
};

struct Setup {
	Device dev;
	AsyncEventWatch async;
	Side ping, echo;
	std::unique_ptr<QpPairs> pairs;
	Histogram hist;
	RunControl ctl;
	unsigned ping_lc = 0, echo_lc = 0;

	~Setup()
	{
		async_watch_stop(&async);
		pairs.reset();   // QPs before the io contexts they use
		for (Side *s : {&ping, &echo}) {
			shared_io_context_destroy(&s->io);
			mr_table_release(&s->mrs);
			rte_mempool_free(s->pool);
		}
		device_close(&dev);
	}
};

int ping_lcore(void *arg)
{
	auto *s = static_cast<Side *>(arg);
	double cpu0 = thread_cpu_s();
	s->rc = pingpong_ping(&s->eng);
	s->cpu_s = thread_cpu_s() - cpu0;
	s->done.store(true, std::memory_order_release);
	return s->rc;
}

int echo_lcore(void *arg)
{
	auto *s = static_cast<Side *>(arg);
	double cpu0 = thread_cpu_s();
	s->rc = pingpong_echo(&s->eng);
	s->cpu_s = thread_cpu_s() - cpu0;
	/* An echo side that gave up cannot be waited for by the pinging side: stop it too. */
	if (s->rc != 0 && !s->other_done->load(std::memory_order_acquire))
		s->eng.ctl->abort.store(true);
	s->done.store(true, std::memory_order_release);
	return s->rc;
}

int make_side(Setup &s, Side &side, const char *name, const RunOptions &o, const VerbsOps *ops, bool inl,
	      std::string *err)
{
	unsigned n = kSrqDepth + o.sq_depth + 2 * kRecvBurst + 1;
	side.pool = make_pool(name, n, o.msg_bytes, kRecvBurst);
	if (side.pool == nullptr) {
		*err = std::string(name) + " (" + std::to_string(n) + " x " + std::to_string(o.msg_bytes) +
		       " B): rte_mempool_create failed (give EAL more memory: -m, or more hugepages)";
		return -1;
	}
	if (mr_register_mempool(s.dev, side.pool, IBV_ACCESS_LOCAL_WRITE, &side.mrs, err) != 0 ||
	    shared_io_context_create(s.dev, o.sq_depth, kSrqDepth, kSrqDepth, o.adaptive_poll, ops != &kIbvOps,
				     &side.io, err) != 0)
		return -1;
	PingPongSide &e = side.eng;
	e.ops = ops;
	e.send_cq = side.io.send_cq;
	e.recv_cq = side.io.recv_cq;
	e.srq = side.io.srq;
	e.pool = side.pool;
	e.mrs = &side.mrs;
	e.ctl = &s.ctl;
	e.p = PingPongParams{o.verb, o.msg_bytes, o.messages, o.sq_depth, o.signal_every, inl, o.verify,
			     static_cast<uint64_t>(o.stall_timeout_s * static_cast<double>(rte_get_tsc_hz())),
			     rte_get_tsc_hz(), o.corrupt_msg};
	e.idler.channel = side.io.channel;
	e.idler.cqs[0] = side.io.recv_cq;
	e.idler.cqs[1] = side.io.send_cq;
	if (pingpong_init(&e, err) != 0)
		return -1;
	if (e.refill.init(kSrqDepth, kSrqRefill, kRecvBurst, side.pool, o.msg_bytes, &side.mrs) != 0) {
		*err = "ping-pong: bad SRQ sizes";
		return -1;
	}
	int ret = e.refill.fill(*ops, e.srq);
	if (ret < 0 || static_cast<uint32_t>(ret) != kSrqDepth) {
		*err = s.dev.name + ": filling the SRQ with " + std::to_string(kSrqDepth) + " receives: " +
		       (ret < 0 ? strerror(-ret) : "too few buffers");
		return -1;
	}
	return 0;
}

double us(uint64_t ns)
{
	return static_cast<double>(ns) / 1000.0;
}

int summarise(const RunOptions &o, const Setup &s)
{
	const ResponderCounters &pc = s.ping.eng.c, &ec = s.echo.eng.c;
	const Histogram &h = s.hist;
	printf("summary:\n");
	printf("  device:              %s port %u, GID index %d, MTU %s\n", s.dev.name.c_str(), s.dev.port,
	       s.dev.gid_index, mtu_str(s.dev.port_attr.active_mtu));
	printf("  mode:                ping-pong, %s, %u B, 1 QP each way, signal every %u, send queue %u\n",
	       verb_opcode_name(o.verb), o.msg_bytes, o.signal_every, o.sq_depth);
	printf("  connected:           %s\n", s.pairs->connected.c_str());
	printf("  completions:         %s\n", cq_ops_str(s.ping.eng.ops));
	printf("  posting:             one ibv_post_send per message%s\n", s.ping.eng.p.inline_send ? ", inline" : "");
	printf("  iterations:          %" PRIu64 "\n", o.messages);
	printf("  pings sent:          %" PRIu64 "\n", s.ping.eng.sent);
	printf("  pings received:      %" PRIu64 " (verified %" PRIu64 ")\n", ec.received, ec.verified);
	printf("  echoes received:     %" PRIu64 "\n", pc.received);
	printf("  echoes verified:     %" PRIu64 "\n", pc.verified);
	double secs = tsc_to_s(pc.end_tsc - pc.start_tsc);
	printf("  elapsed:             %.3f s\n", secs);
	printf("  round trips:         %.0f /s\n", secs > 0 ? static_cast<double>(pc.received) / secs : 0.0);
	/* perftest's lat tests print the same figures, of half round trips. */
	printf("  latency samples:     %" PRIu64 " (half round trips: one iteration, post to post, / 2)\n", h.count());
	printf("  latency min:         %.2f us\n", us(h.min()));
	printf("  latency median:      %.2f us\n", us(h.percentile(0.5)));
	printf("  latency average:     %.2f us\n", h.mean() / 1000.0);
	printf("  latency p90:         %.2f us\n", us(h.percentile(0.90)));
	printf("  latency p99:         %.2f us\n", us(h.percentile(0.99)));
	printf("  latency p99.9:       %.2f us\n", us(h.percentile(0.999)));
	printf("  latency max:         %.2f us\n", us(h.max()));
	uint64_t seq_err = pc.sequence_errors + ec.sequence_errors, len_err = pc.length_errors + ec.length_errors;
	uint64_t data_err = pc.payload_errors + ec.payload_errors, op_err = pc.unexpected_opcodes + ec.unexpected_opcodes;
	uint64_t wc_err = pc.wc_errors.total + ec.wc_errors.total;
	printf("  sequence errors:     %" PRIu64 "\n", seq_err);
	printf("  length errors:       %" PRIu64 "\n", len_err);
	printf("  unexpected opcodes:  %" PRIu64 "\n", op_err);
	printf("  payload errors:      %" PRIu64 "\n", data_err);
	printf("  completion errors:   %" PRIu64 "\n", wc_err);
	if (pc.first_bad_seq != UINT64_MAX || ec.first_bad_seq != UINT64_MAX) {
		bool at_echo = ec.first_bad_seq != UINT64_MAX;
		const ResponderCounters &b = at_echo ? ec : pc;
		printf("  first bad message:   seq %" PRIu64 " at the %s side", b.first_bad_seq, at_echo ? "echoing" : "pinging");
		if (b.first_bad_offset >= 0)
			printf(", byte %" PRId64 " differs from the pattern", b.first_bad_offset);
		printf("\n");
	}
	print_async_events(s.async);
	print_wc_errors("ping", pc.wc_errors);
	print_wc_errors("echo", ec.wc_errors);
	if (pc.fail_reason)
		printf("  ping failed:         %s\n", pc.fail_reason);
	if (ec.fail_reason)
		printf("  echo failed:         %s\n", ec.fail_reason);
	printf("  polling:             %s\n", o.adaptive_poll ? "adaptive (sleeps on a completion channel when idle)" : "busy");
	printf("  ping CPU:            %.3f s\n", s.ping.cpu_s);
	printf("  echo CPU:            %.3f s\n", s.echo.cpu_s);
	bool pass = s.ping.rc == 0 && s.echo.rc == 0 && pc.received == o.messages && pc.verified == o.messages &&
		    ec.verified == o.messages && wc_err == 0 && data_err == 0 && h.count() == o.messages;
	printf("result: %s\n", pass ? "PASS" : "FAIL");

	Results res = results_of("pingpong", o.verb, o.msg_bytes, s.dev.name, secs, pass);
	FlowResult x;
	x.name = flow_name(o.flow_names, 0);
	x.qps = 1;
	x.sent = s.ping.eng.sent;
	x.completed = pc.received;
	x.verified = pc.verified;
	x.bytes = pc.received * o.msg_bytes;
	x.failed_qps = wc_err ? 1 : 0;
	x.errors = wc_err ? (pc.wc_errors.total ? &pc.wc_errors : &ec.wc_errors) : nullptr;
	x.latency = &h;
	x.latency_what = "half round trip: one iteration, post to post, / 2 (as ib_send_lat)";
	res.flows.push_back(x);
	res.lcores = {{s.ping_lc, "ping", pc.polls_busy, pc.polls_idle, s.ping.cpu_s},
		      {s.echo_lc, "echo", ec.polls_busy, ec.polls_idle, s.echo.cpu_s}};
	return write_results(o, res, pass);
}

} // namespace

int run_pingpong(const RunOptions &o)
{
	unsigned ping_lc, echo_lc;
	if (int rc = place_roles(o, "ping-pong run (pinging and echoing)", &ping_lc, &echo_lc); rc != kExitOk)
		return rc;
	auto s = std::make_unique<Setup>();
	DeviceCaps caps;
	if (int rc = open_device(o, &s->dev, &caps); rc != kExitOk)
		return rc;
	if (o.inline_send && o.msg_bytes > caps.max_inline) {
		fprintf(stderr, "rdmapipe: --inline with %u B messages: %s inlines at most %u B\n", o.msg_bytes,
			s->dev.name.c_str(), caps.max_inline);
		return kExitUsage;
	}
	/* Latency wants inline sends wherever they fit, as ib_send_lat does. */
	const bool inl = o.msg_bytes <= caps.max_inline;
	const VerbsOps *ops = pick_cq_ops(o, s->dev, caps);
	std::string err;
	if (async_watch_start(&s->async, s->dev.ctx, &err) != 0)
		return setup_error(s->dev.name + ": " + err);
	if (make_side(*s, s->ping, "rp_ping_pool", o, ops, inl, &err) != 0 ||
	    make_side(*s, s->echo, "rp_echo_pool", o, ops, inl, &err) != 0)
		return setup_error(err);
	/* One pair, connected the way loopback rate runs connect theirs (rdma_cm by default). */
	QpOptions qo{o.sq_depth, inl ? o.msg_bytes : 0, false, o.rnr_retry, o.min_rnr_timer, o.uc};
	s->pairs = std::make_unique<QpPairs>();
	if (qp_pairs_connect(o, 1, s->dev, s->dev, s->ping.io, s->echo.io, qo, qo, 0, 0, s->pairs.get(), &err) != 0)
		return setup_error(err);
	for (Side *side : {&s->ping, &s->echo}) {
		side->qp = side == &s->ping ? s->pairs->a[0] : s->pairs->b[0];
		side->eng.qp = side->qp;
	}
	s->ping.eng.hist = &s->hist;

	if (!o.quiet)
		printf("rdmapipe: ping-pong %s %u B on %s: pinging lcore %u <-> echoing lcore %u, %" PRIu64
		       " iterations%s\n",
		       verb_opcode_name(o.verb), o.msg_bytes, s->dev.name.c_str(), ping_lc, echo_lc, o.messages,
		       inl ? ", inline" : "");
	fflush(stdout);
	s->ping_lc = ping_lc;
	s->echo_lc = echo_lc;
	set_running(&s->ctl);
	s->echo.other_done = &s->ping.done;
	run_two_roles(ping_lcore, &s->ping, ping_lc, s->ping.done, echo_lcore, &s->echo, echo_lc, s->echo.done);
	set_running(nullptr);
	usleep(100000);   // async events of the run's last moments
	async_watch_stop(&s->async);
	return summarise(o, *s);
}

} // namespace rp
