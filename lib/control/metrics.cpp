#include "control/metrics.h"
#include "conf/config.h"
#include "log/log.h"
#include "verbs/device.h"

#include <prometheus/check_names.h>
#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <prometheus/gateway.h>
#include <prometheus/text_serializer.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_lcore.h>
#include <rte_version.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <unordered_set>

#ifndef RDMAPIPE_RDMA_CORE_VERSION
#define RDMAPIPE_RDMA_CORE_VERSION "unknown"
#endif

namespace rp {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::vector<ClientMetric::Label>;

/* Latency buckets, seconds: 1-2-5 from 1 us to 1 s (the engine's own buckets, 0.8 %
 * wide, are summed into these; one that straddles a bound counts in the next). */
constexpr double kLatencyBounds[] = {1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3,
				     2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 0.1, 0.2, 0.5, 1.0};
constexpr size_t kNumBounds = sizeof(kLatencyBounds) / sizeof(kLatencyBounds[0]);

/* The families of one scrape, each name once (Prometheus refuses a scrape that gives a
 * name's HELP twice), in the order first named. */
class Families {
public:
	MetricFamily &family(const std::string &name, const char *help, MetricType type)
	{
		for (MetricFamily &f : v_)
			if (f.name == name)
				return f;
		v_.push_back({name, help, type, {}});
		return v_.back();
	}
	void value(const std::string &name, const char *help, MetricType type, Labels labels, double x)
	{
		ClientMetric m;
		m.label = std::move(labels);
		(type == MetricType::Counter ? m.counter.value : m.gauge.value) = x;
		family(name, help, type).metric.push_back(std::move(m));
	}
	void counter(const std::string &name, const char *help, Labels labels, double x)
	{
		value(name, help, MetricType::Counter, std::move(labels), x);
	}
	void gauge(const std::string &name, const char *help, Labels labels, double x)
	{
		value(name, help, MetricType::Gauge, std::move(labels), x);
	}
	std::vector<MetricFamily> take() { return std::move(v_); }

private:
	std::vector<MetricFamily> v_;
};

Labels flow_labels(const FlowView &f)
{
	Labels l = {{"flow", f.name}, {"verb", verb_name(f.verb)}, {"transport", f.transport}, {"role", f.role}};
	if (!f.peer.empty())
		l.push_back({"peer", f.peer});
	if (f.src >= 0)   // a job's pair: a rank x rank matrix in a dashboard
		l.insert(l.end(), {{"src", std::to_string(f.src)}, {"dst", std::to_string(f.dst)}});
	return l;
}

Labels plus(Labels l, const char *name, const std::string &value)
{
	l.push_back({name, value});
	return l;
}

/* The engine's histogram (ns) as a Prometheus one (seconds): cumulative counts at each
 * bound, the count being what was read (so +Inf equals it within the scrape). */
ClientMetric::Histogram latency_of(const Histogram &h)
{
	ClientMetric::Histogram out;
	uint64_t at[kNumBounds] = {}, total = 0;
	for (size_t i = 0; i < Histogram::kBuckets; i++) {
		const uint64_t n = h.bucket_count(i);
		if (n == 0)
			continue;
		total += n;
		const double upper_s = static_cast<double>(Histogram::upper(i)) * 1e-9;
		for (size_t b = 0; b < kNumBounds; b++)
			if (upper_s <= kLatencyBounds[b] * (1 + 1e-12)) {
				at[b] += n;
				break;
			}
	}
	uint64_t cum = 0;
	for (size_t b = 0; b < kNumBounds; b++) {
		cum += at[b];
		out.bucket.push_back({cum, kLatencyBounds[b]});
	}
	out.sample_count = total;
	out.sample_sum = static_cast<double>(h.sum()) * 1e-9;
	return out;
}

double relaxed(const std::atomic<uint64_t> &a)
{
	return static_cast<double>(a.load(std::memory_order_relaxed));
}

const char *const kAcksHelp = "ACKs of UC made reliable in software (sent by the receiver, received by the sender)";

/* UC made reliable in software, the sending end. */
void add_reliable_sender(Families &m, const Labels &l, const FlowLive &x)
{
	const char *help = "Retransmissions of UC made reliable in software (fast: a hole below an ACK; timeout)";
	m.counter("rdmapipe_flow_retransmissions_total", help, plus(l, "reason", "fast"), relaxed(x.retx_fast));
	m.counter("rdmapipe_flow_retransmissions_total", help, plus(l, "reason", "timeout"), relaxed(x.retx_timeout));
	m.counter("rdmapipe_flow_acks_total", kAcksHelp, plus(l, "direction", "received"), relaxed(x.acks));
	m.counter("rdmapipe_flow_restart_requests_total",
		  "Restarts of a receiving UC QP the sender asked for (timeouts in a row: the QP may be broken)", l,
		  relaxed(x.restart_requests));
}

/* ... and the receiving end. */
void add_reliable_receiver(Families &m, const Labels &l, const ReceiveLive &rx)
{
	m.counter("rdmapipe_flow_acks_total", kAcksHelp, plus(l, "direction", "sent"), relaxed(rx.acks_sent));
	m.counter("rdmapipe_flow_duplicates_total", "Arrivals dropped: they had arrived already (a retransmission raced its ACK)",
		  l, relaxed(rx.duplicates));
	m.counter("rdmapipe_flow_out_of_order_total", "Arrivals beyond a hole (a message before them was lost)", l,
		  relaxed(rx.out_of_order));
	m.counter("rdmapipe_flow_qp_restarts_total", "Receiving UC QPs reset after a message broken by a loss", l,
		  relaxed(rx.qp_restarts));
}

void add_flow(Families &m, const FlowView &f)
{
	const Labels l = flow_labels(f);
	const FlowLive &x = *f.live;
	const uint64_t sent = x.sent.load(std::memory_order_relaxed), done = x.completed.load(std::memory_order_relaxed);
	m.gauge("rdmapipe_flow_info", "A flow's settings (value 1)",
		plus(plus(plus(l, "size_bytes", std::to_string(f.msg_bytes)), "qps", std::to_string(f.qps)), "batch", std::to_string(f.batch)), 1);
	m.counter("rdmapipe_flow_messages_sent_total", "Messages posted", l, static_cast<double>(sent));
	m.counter("rdmapipe_flow_messages_completed_total", "Messages completed and checked (a ping-pong: echoes back; a server: arrived)", l,
		  static_cast<double>(done));
	m.counter("rdmapipe_flow_completed_bytes_total", "Payload bytes of the completed messages", l,
		  static_cast<double>(done) * f.msg_bytes);
	m.gauge("rdmapipe_flow_outstanding_messages", "Messages posted and not yet completed", l,
		static_cast<double>(sent >= done ? sent - done : 0));
	m.counter("rdmapipe_flow_completion_errors_total", "Work completions in error", l,
		  static_cast<double>(x.errors.load(std::memory_order_relaxed)));
	for (unsigned s = 1; s < kWcStatusCount; s++)   // the statuses seen only: few series
		if (uint64_t n = x.by_status[s].load(std::memory_order_relaxed))
			m.counter("rdmapipe_flow_completion_errors_by_status_total", "Work completions in error, by ibv_wc_status",
				  plus(l, "status", ibv_wc_status_str(static_cast<ibv_wc_status>(s))), static_cast<double>(n));
	if (const ReceiveLive *rx = f.rx) {   // its responder here
		m.counter("rdmapipe_flow_messages_received_total", "Messages that arrived at the flow's responder", l,
			  static_cast<double>(rx->received.load(std::memory_order_relaxed)));
		m.counter("rdmapipe_flow_messages_verified_total", "Messages that arrived with payload and sequence correct", l,
			  static_cast<double>(rx->verified.load(std::memory_order_relaxed)));
		const char *help = "Messages that arrived wrong, by the check that failed";
		m.counter("rdmapipe_flow_receive_errors_total", help, plus(l, "kind", "payload"),
			  static_cast<double>(rx->payload_errors.load(std::memory_order_relaxed)));
		m.counter("rdmapipe_flow_receive_errors_total", help, plus(l, "kind", "sequence"),
			  static_cast<double>(rx->sequence_errors.load(std::memory_order_relaxed)));
		m.counter("rdmapipe_flow_receive_errors_total", help, plus(l, "kind", "length"),
			  static_cast<double>(rx->length_errors.load(std::memory_order_relaxed)));
		if (rx->reliable)
			add_reliable_receiver(m, l, *rx);
	}
	if (x.reliable)
		add_reliable_sender(m, l, x);
	if (f.target)
		m.gauge("rdmapipe_flow_target_messages", "Messages the flow is to send (absent: a duration, or until stopped)", l,
			static_cast<double>(f.target));
	if (f.latency) {
		const char *name = f.half_rtt ? "rdmapipe_flow_half_round_trip_seconds" : "rdmapipe_flow_completion_latency_seconds";
		const char *help = f.half_rtt ? "A ping-pong's half round trips" : "Post to signalled completion, per chain";
		ClientMetric c;
		c.label = l;
		c.histogram = latency_of(*f.latency);
		m.family(name, help, MetricType::Histogram).metric.push_back(std::move(c));
	}
}

/* The CPU time of an lcore's thread since its loop started (-1: not running yet). */
double lcore_cpu_s(const LcoreCpu *c)
{
	timespec t{};
	if (c == nullptr || !c->set.load(std::memory_order_acquire) || clock_gettime(c->clock, &t) != 0)
		return -1;
	return std::max(0.0, static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9 - c->start_s);
}

void add_lcores(Families &m, const RunView &v)
{
	for (const LcoreView &c : v.lcores) {
		const Labels l = {{"lcore", std::to_string(c.lcore)}, {"role", c.role}};
		if (const double cpu = lcore_cpu_s(c.cpu); cpu >= 0)
			m.counter("rdmapipe_lcore_cpu_seconds_total", "CPU time of the lcore's thread since its loop started", l, cpu);
		if (c.live == nullptr)
			continue;
		const char *help = "Loop iterations of an lcore's role (busy: found or posted work)";
		m.counter("rdmapipe_lcore_polls_total", help, plus(l, "result", "busy"),
			  static_cast<double>(c.live->polls_busy.load(std::memory_order_relaxed)));
		m.counter("rdmapipe_lcore_polls_total", help, plus(l, "result", "idle"),
			  static_cast<double>(c.live->polls_idle.load(std::memory_order_relaxed)));
		m.counter("rdmapipe_lcore_received_messages_total", "Receive completions taken by an lcore's responders", l,
			  static_cast<double>(c.live->received.load(std::memory_order_relaxed)));
		m.gauge("rdmapipe_lcore_srq_posted_receives", "Receives posted in the lcore's shared receive queue", l,
			static_cast<double>(c.live->srq_posted.load(std::memory_order_relaxed)));
	}
	for (const StageView &s : v.stages) {
		if (s.live == nullptr)
			continue;
		const Labels l = {{"stage", s.name}, {"kind", s.kind}, {"lcore", std::to_string(s.lcore)}};
		m.counter("rdmapipe_stage_calls_total", "Calls of a stage by its lcore's loop", l,
			  static_cast<double>(s.live->calls.load(std::memory_order_relaxed)));
		m.counter("rdmapipe_stage_messages_total", "Messages a stage handled", l,
			  static_cast<double>(s.live->msgs.load(std::memory_order_relaxed)));
		if (v.stage_cycles && v.tsc_hz > 0)
			m.counter("rdmapipe_stage_busy_seconds_total", "Time in a stage's calls that handled messages (--stage-cycles)", l,
				  static_cast<double>(s.live->cycles.load(std::memory_order_relaxed)) / v.tsc_hz);
	}
}

/* "rcvd_pkts" -> "rdmapipe_port_rcvd_pkts_total" (of "port"); "" when no valid name
 * comes of it. */
std::string port_counter_name(const std::string &counter, const char *of)
{
	std::string n = std::string("rdmapipe_") + of + "_";
	for (char ch : counter)
		n += isalnum(static_cast<unsigned char>(ch)) ? static_cast<char>(tolower(static_cast<unsigned char>(ch))) : '_';
	n += "_total";
	return prometheus::CheckMetricName(n) ? n : "";
}

std::string sysfs_line(const std::string &path)
{
	std::ifstream in(path);
	std::string s;
	std::getline(in, s);
	return s;
}

/* A port's state ("4: ACTIVE"), link layer and rate ("10 Gb/sec (1X QDR)"), from sysfs. */
void add_port(Families &m, const RunView::Port &p)
{
	const Labels l = {{"device", p.device}, {"port", std::to_string(p.port)}};
	const std::string dir = "/sys/class/infiniband/" + p.device + "/ports/" + std::to_string(p.port) + "/";
	const std::string state = sysfs_line(dir + "state"), rate = sysfs_line(dir + "rate");
	const size_t colon = state.find(": ");
	m.gauge("rdmapipe_port_info", "A port's state, link layer and rate as the kernel gives them (value 1)",
		plus(plus(plus(l, "state", colon == std::string::npos ? state : state.substr(colon + 2)), "link_layer",
			  sysfs_line(dir + "link_layer")),
		     "rate", rate),
		1);
	m.gauge("rdmapipe_port_up", "1 when the port is ACTIVE", l, state.find("ACTIVE") != std::string::npos ? 1 : 0);
	char *end = nullptr;
	const double gbit = strtod(rate.c_str(), &end);
	if (end != rate.c_str() && strstr(end, "Gb/sec"))
		m.gauge("rdmapipe_port_rate_bytes_per_second", "A port's signalling rate (sysfs rate, as node_exporter's)", l, gbit * 1e9 / 8);
	for (const auto &[name, value] : hw_counters_read(p.device, p.port)) {
		const std::string n = port_counter_name(name, "port");
		if (!n.empty())
			m.counter(n, "A port's hw_counter (sysfs hw_counters, as the driver names it)", l, static_cast<double>(value));
	}
	ibv_port_attr a{};
	if (p.ctx && ibv_query_port(p.ctx, static_cast<uint8_t>(p.port), &a) == 0) {
		m.gauge("rdmapipe_port_active_mtu_bytes", "A port's active path MTU (ibv_query_port)", l, mtu_bytes(a.active_mtu));
		m.gauge("rdmapipe_port_max_mtu_bytes", "The largest path MTU the port takes (ibv_query_port)", l, mtu_bytes(a.max_mtu));
	}
}

/* Each bound QP's kernel counters, read now (a netlink round trip each). */
void add_qp_counters(Families &m, const RunView &v)
{
	for (const QpCounterView &q : v.qp_counters) {
		HwCounters now;
		std::string err;
		if (qp_counter_read(q.counter, &now, &err) != 0)
			continue;   // the QP went (its flow failed): its series end
		const Labels l = {{"device", q.device}, {"port", std::to_string(q.counter.port)}, {"flow", q.flow},
				  {"qp", std::to_string(q.index)}, {"role", q.role}, {"qpn", std::to_string(q.counter.qpn)}};
		for (const auto &[name, value] : now) {
			const std::string n = port_counter_name(name, "qp");
			if (!n.empty())
				m.counter(n, "A QP's counter the kernel keeps (rdma statistic qp; --metrics-qp)", l, static_cast<double>(value));
		}
	}
}

/* The versions built against: DPDK's ("22.11.11") and rdma-core's release, the tail of
 * libibverbs' version (1.14.44.0: 44.0), as --version names them. */
Labels build_labels()
{
	const char *dpdk = rte_version();
	const std::string ibv = RDMAPIPE_RDMA_CORE_VERSION;
	const size_t dot = ibv.find('.', ibv.find('.') + 1);
	return {{"version", RDMAPIPE_VERSION},
		{"dpdk", strncmp(dpdk, "DPDK ", 5) == 0 ? dpdk + 5 : dpdk},
		{"rdma_core", dot == std::string::npos ? ibv : ibv.substr(dot + 1)}};
}

std::vector<MetricFamily> collect(const RunView *v)
{
	Families m;
	m.gauge("rdmapipe_build_info", "rdmapipe's build (value 1)", build_labels(), 1);
	m.gauge("rdmapipe_running", "1 while a run is going on (its series below), 0 between runs", {}, v ? 1 : 0);
	if (v == nullptr)
		return m.take();
	m.gauge("rdmapipe_run_info", "The running run (value 1)", {{"device", v->device}, {"what", v->what}}, 1);
	m.gauge("rdmapipe_run_start_time_seconds", "When the run started, seconds since the epoch", {}, v->start_unix);
	for (const FlowView &f : v->flows)
		add_flow(m, f);
	add_lcores(m, *v);
	for (const RunView::Port &p : v->ports)
		add_port(m, p);
	add_qp_counters(m, *v);
	return m.take();
}

std::mutex g_mu;   // the control plane and the scrapes only
const RunView *g_run = nullptr;

class RunCollectable final : public prometheus::Collectable {
public:
	std::vector<MetricFamily> Collect() const override
	{
		std::lock_guard<std::mutex> lock(g_mu);
		return collect(g_run);
	}
};

std::shared_ptr<RunCollectable> g_collectable = std::make_shared<RunCollectable>();
std::unique_ptr<prometheus::Exposer> g_exposer;
std::string g_addr;

/* A thread off the lcores: EAL's control cpuset, which the threads it makes inherit
 * (a plain thread where EAL is not up: the unit tests). Returns 0 or an errno. */
int control_thread(pthread_t *t, const char *name, void *(*fn)(void *), void *arg)
{
	const int rc = rte_lcore_count() > 0 ? rte_ctrl_thread_create(t, name, nullptr, fn, arg) : pthread_create(t, nullptr, fn, arg);
	return rc < 0 ? -rc : rc;
}

/* Why addr cannot be listened on: civetweb says only that it could not, so the same
 * bind is tried here for its errno ("" when it binds). */
std::string why_not_listen(const std::string &host, uint16_t port)
{
	sockaddr_in a{};
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	if (host.empty())
		a.sin_addr.s_addr = htonl(INADDR_ANY);
	else if (inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1)
		return "not an IPv4 address";
	const int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return strerror(errno);
	const int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	const int rc = bind(fd, reinterpret_cast<const sockaddr *>(&a), sizeof(a));
	const int e = errno;
	close(fd);
	return rc == 0 ? "" : strerror(e);
}

struct ExposerStart {
	std::string listen;   // civetweb's listening_ports
	std::unique_ptr<prometheus::Exposer> exposer;
	std::string what;     // why it did not start
};

void *start_exposer(void *arg)
{
	auto *s = static_cast<ExposerStart *>(arg);
	try {
		s->exposer = std::make_unique<prometheus::Exposer>(
			std::vector<std::string>{"listening_ports", s->listen, "num_threads", "2", "request_timeout_ms", "10000"});
	} catch (const std::exception &e) {
		s->what = e.what();
	}
	return nullptr;
}

/* The Pushgateway: pushes of the whole state (PUT: the group is this run's) from a
 * DPDK control thread, every period while a run goes on and once at its end.
 * prometheus-cpp 1.0.1's pushes have no timeout of their own: the end waits for the
 * last push at most kLastPushS, then leaves it behind (its thread and gateway let go,
 * never freed under it) rather than hold the run's end on a gateway that does not
 * answer. */
constexpr double kLastPushS = 10;

struct PushRun {            // one run's pusher thread and what it shares with the ender
	prometheus::Gateway *gw = nullptr;
	std::string url;
	double period_s = 0;
	std::mutex mu;
	std::condition_variable cv;
	bool last = false;      // the run ended: push once more, then stop
	bool done = false;      // ... done
	uint64_t failed = 0;    // pushes the gateway refused (said once)
	pthread_t thread{};
};

struct Pusher {
	std::unique_ptr<prometheus::Gateway> gw;
	std::string url;
	double period_s = 0;
	PushRun *run = nullptr;
} g_push;

void push_once(PushRun *r)
{
	const int status = r->gw->PushAdd();
	if (status >= 200 && status < 300)
		return;
	if (r->failed++ == 0)
		RP_LOG(WARNING, CONTROL, "rdmapipe: run.push (--push) %s: the push failed (%s %d)\n", r->url.c_str(),
		       status < 0 ? "curl error" : "HTTP status", status < 0 ? -status : status);
}

void *push_loop(void *arg)
{
	auto *r = static_cast<PushRun *>(arg);
	std::unique_lock<std::mutex> lock(r->mu);
	for (;;) {
		const auto last = [r] { return r->last; };
		if (r->period_s > 0)
			r->cv.wait_for(lock, std::chrono::duration<double>(r->period_s), last);
		else
			r->cv.wait(lock, last);
		const bool end = r->last;
		lock.unlock();
		push_once(r);
		lock.lock();
		if (end)
			break;
	}
	r->done = true;
	r->cv.notify_all();
	return nullptr;
}

void push_run_start()
{
	if (!g_push.gw || g_push.run)
		return;
	auto *r = new PushRun;
	r->gw = g_push.gw.get();
	r->url = g_push.url;
	r->period_s = g_push.period_s;
	if (const int rc = control_thread(&r->thread, "rp-push", push_loop, r); rc != 0) {
		RP_LOG(WARNING, CONTROL, "rdmapipe: run.push (--push) %s: no pushes for this run (no thread: %s)\n", r->url.c_str(),
		       strerror(rc));
		delete r;
		return;
	}
	g_push.run = r;
}

/* The run's last push, waited for at most kLastPushS. */
void push_run_end()
{
	PushRun *r = g_push.run;
	if (r == nullptr)
		return;
	g_push.run = nullptr;
	bool done;
	{
		std::unique_lock<std::mutex> lock(r->mu);
		r->last = true;
		r->cv.notify_all();
		done = r->cv.wait_for(lock, std::chrono::duration<double>(kLastPushS), [r] { return r->done; });
	}
	if (done) {
		pthread_join(r->thread, nullptr);
		delete r;
		return;
	}
	RP_LOG(WARNING, CONTROL, "rdmapipe: run.push (--push) %s: the last push had no answer in %.0f s: left behind\n",
	       r->url.c_str(), kLastPushS);
	pthread_detach(r->thread);
	(void)g_push.gw.release();   // the thread still holds it (and r)
	g_push.url.clear();
}

/* Whether host:port takes a TCP connection within two seconds. */
std::string why_not_connect(const std::string &host, const std::string &port)
{
	addrinfo hints{}, *res = nullptr;
	hints.ai_socktype = SOCK_STREAM;
	if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &res); rc != 0)
		return gai_strerror(rc);
	std::string why = "no address";
	for (addrinfo *a = res; a; a = a->ai_next) {
		const int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK, a->ai_protocol);
		if (fd < 0)
			continue;
		int rc = connect(fd, a->ai_addr, a->ai_addrlen), e = errno;
		if (rc != 0 && e == EINPROGRESS) {
			fd_set w;
			FD_ZERO(&w);
			FD_SET(fd, &w);
			timeval tv{2, 0};
			socklen_t n = sizeof(e);
			rc = select(fd + 1, nullptr, &w, nullptr, &tv) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &n) == 0 && e == 0 ? 0 : -1;
			if (rc != 0 && e == EINPROGRESS)
				e = ETIMEDOUT;
		}
		close(fd);
		if (rc == 0) {
			freeaddrinfo(res);
			return "";
		}
		why = strerror(e);
	}
	freeaddrinfo(res);
	return why;
}

/* The pusher's gateway, under job "rdmapipe" and these grouping labels (a Gateway's
 * group is fixed at its making). */
void push_gateway(const std::string &host, const std::string &port, const std::vector<std::pair<std::string, std::string>> &labels)
{
	prometheus::Labels grouping;
	for (const auto &[k, v] : labels)
		grouping[k] = v;
	g_push.gw = std::make_unique<prometheus::Gateway>(host, port, "rdmapipe", grouping);
	g_push.gw->RegisterCollectable(g_collectable);
}

} // namespace

int metrics_push_to(const std::string &url, double period_s, const std::vector<std::pair<std::string, std::string>> &labels,
		    std::string *err)
{
	std::string host, port;
	if (!push_url(url, &host, &port)) {
		*err = "run.push (--push) '" + url + "' is not http://HOST[:PORT]";
		return -1;
	}
	g_push.period_s = period_s;
	if (g_push.gw && g_push.url == url)
		return 0;
	const std::string name = host.substr(host.find("://") + 3);
	if (const std::string why = why_not_connect(name, port); !why.empty()) {
		*err = "run.push (--push) " + url + ": the Pushgateway does not answer: " + why;
		return -1;
	}
	push_gateway(host, port, labels);
	g_push.url = url;
	return 0;
}

int metrics_push_regroup(const std::vector<std::pair<std::string, std::string>> &labels, std::string *err)
{
	if (!g_push.gw)
		return 0;   // no pushes (or the last one left behind, said then)
	std::string host, port;
	push_url(g_push.url, &host, &port);
	try {
		push_gateway(host, port, labels);
	} catch (const std::exception &e) {
		*err = "run.push (--push) " + g_push.url + ": " + e.what();
		return -1;
	}
	return 0;
}

int metrics_serve(const std::string &addr, std::string *err)
{
	if (g_exposer && g_addr == addr)
		return 0;
	g_exposer.reset();   // another address: that one goes (the pusher stays: a job rank's has its grouping)
	g_addr.clear();
	if (!addr_listen(addr)) {   // (a job's rank adds its place on its host to the port)
		*err = "run.metrics (--metrics) '" + addr + "' is not [IPV4:]PORT with a port in 1..65535";
		return -1;
	}
	const size_t colon = addr.rfind(':');
	const std::string host = colon == std::string::npos ? "" : addr.substr(0, colon);
	const std::string port = colon == std::string::npos ? addr : addr.substr(colon + 1);
	ExposerStart s{host.empty() ? port : host + ":" + port, nullptr, ""};
	/* Made on a control thread: its own threads take that thread's affinity. */
	pthread_t t;
	if (const int rc = control_thread(&t, "rp-metrics", start_exposer, &s); rc != 0) {
		*err = "run.metrics (--metrics) " + addr + ": cannot start its thread: " + strerror(rc);
		return -1;
	}
	pthread_join(t, nullptr);
	if (!s.exposer) {
		const std::string why = why_not_listen(host, static_cast<uint16_t>(strtoul(port.c_str(), nullptr, 10)));
		*err = "run.metrics (--metrics) " + addr + ": cannot listen there: " + (why.empty() ? "civetweb: " + s.what : why);
		return -1;
	}
	g_exposer = std::move(s.exposer);
	g_exposer->RegisterCollectable(g_collectable);
	g_addr = addr;
	const std::vector<int> ports = g_exposer->GetListeningPorts();
	RP_LOG(NOTICE, CONTROL, "rdmapipe: metrics at http://%s:%d/metrics\n", host.empty() ? "0.0.0.0" : host.c_str(),
	       ports.empty() ? 0 : ports[0]);
	return 0;
}

void metrics_set_run(const RunView *v)
{
	if (v == nullptr)   // the run's last state pushed, before it goes
		push_run_end();
	{
		std::lock_guard<std::mutex> lock(g_mu);
		g_run = v;
	}
	if (v)
		push_run_start();
}

int metrics_bind_qps(RunView *v, std::string *err)
{
	std::vector<const QpView *> qps;
	std::unordered_set<const ibv_qp *> seen;   // lanes sharing QPs: each QP once
	for (const QpView &q : v->qps)
		if (q.qp && seen.insert(q.qp).second)
			qps.push_back(&q);
	if (qps.size() > kMetricsQpMax) {
		*err = "run.metrics_qp (--metrics-qp): the run has " + std::to_string(qps.size()) + " QPs, more than the " +
		       std::to_string(kMetricsQpMax) + " per-QP counters are kept for (each a netlink read per scrape and some ten series)";
		return -1;
	}
	for (const QpView *q : qps) {
		QpCounterView c{{}, ibv_get_device_name(q->qp->context->device), q->flow, q->role, q->index};
		if (qp_counter_bind(q->qp, &c.counter, err) != 0) {
			*err = "run.metrics_qp (--metrics-qp): flow '" + q->flow + "' " + q->role + " QP " + std::to_string(q->index) + ": " + *err;
			return -1;
		}
		v->qp_counters.push_back(std::move(c));
	}
	return 0;
}

std::string metrics_text(const RunView *v)
{
	std::ostringstream out;
	prometheus::TextSerializer().Serialize(out, collect(v));
	return out.str();
}

void metrics_stop()
{
	g_exposer.reset();   // joins its threads
	g_addr.clear();
	push_run_end();
	g_push.gw.reset();
	g_push.url.clear();
}

} // namespace rp
