/* The control plane's stats: samples of the lcores' published totals, rates between
 * two samples, totals since a baseline, progress, the printed line, and the rates the
 * console takes. Plain data: no EAL, no device. */
#include "control/metrics.h"
#include "control/qp_counters.h"
#include "control/stats.h"
#include "view_rig.h"

#include <arpa/inet.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>   // before cmocka's fail()

#include "cmocka_cpp.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Rig : ViewRig {
	explicit Rig(uint64_t target = 2000) : ViewRig(target) {}
};

void rates_between_samples(void **)
{
	Rig g;
	g.set(0, 0, 0);
	rp::Sample a = rp::sample_take(g.v, 0);
	g.set(1000, 900, 2);
	g.req.polls_busy.store(30);
	g.req.polls_idle.store(10);
	rp::Sample b = rp::sample_take(g.v, 1000000000);   // one second later
	rp::FlowRates r = rp::flow_rates(g.v, 0, a, a, b);
	assert_true(std::fabs(r.msg_per_s - 900) < 1e-9);
	assert_true(std::fabs(r.gbit_per_s - 900.0 * 64 * 8 / 1e9) < 1e-12);
	assert_int_equal(r.outstanding, 100);
	assert_int_equal(r.completed, 900);
	assert_int_equal(r.errors, 2);
	assert_true(std::fabs(r.progress - 0.45) < 1e-12);
	assert_int_equal(b.lcores[0].busy, 30);
	assert_int_equal(b.lcores[0].idle, 10);
	/* A baseline (clear stats) and a later sample: totals since the baseline, the rate
	 * since the previous sample, progress of the whole run. */
	g.set(2000, 1900, 5);
	rp::Sample c = rp::sample_take(g.v, 3000000000);
	r = rp::flow_rates(g.v, 0, b, b, c);
	assert_true(std::fabs(r.msg_per_s - 500) < 1e-9);   // 1000 in 2 s
	assert_int_equal(r.completed, 1000);
	assert_int_equal(r.errors, 3);
	assert_true(std::fabs(r.progress - 0.95) < 1e-12);
	/* The same instant twice: no rate, no division by zero. */
	r = rp::flow_rates(g.v, 0, c, c, c);
	assert_true(r.msg_per_s == 0 && r.gbit_per_s == 0);
}

void duration_progress_and_line(void **)
{
	Rig g(0);   // a duration run
	g.v.duration_s = 10;
	g.v.start_tsc = 0;
	g.set(600, 500, 0);
	rp::Sample z;
	z.tsc = 0;
	z.flows.assign(1, rp::FlowSample{});
	z.lcores.assign(2, rp::LcoreSample{});
	rp::Sample b = rp::sample_take(g.v, 2500000000);
	rp::FlowRates r = rp::flow_rates(g.v, 0, z, z, b);
	assert_true(std::fabs(r.progress - 0.25) < 1e-12);
	assert_string_equal(rp::stats_line(g.v, 0, r).c_str(),
			    "  bw            0.0002 Mmsg/s   0.0001 Gbit/s  outstanding 100  errors 0  500 done, 25% of 10.0 s");
	Rig h;
	h.set(1000, 900, 2);
	rp::Sample c = rp::sample_take(h.v, 1000000000);
	r = rp::flow_rates(h.v, 0, z, z, c);
	assert_string_equal(rp::stats_line(h.v, 0, r).c_str(),
			    "  bw            0.0009 Mmsg/s   0.0005 Gbit/s  outstanding 100  errors 2  900 of 2000 (45.0%)");
	std::string block = rp::stats_block(h.v, z, z, c);
	assert_string_equal(block.substr(0, 17).c_str(), "stats at 1.0 s:\n ");
}

void rates_the_console_takes(void **)
{
	std::string err;
	assert_true(rp::parse_rate("20000", 64, &err) == 20000);
	assert_true(rp::parse_rate("20000pps", 64, &err) == 20000);
	assert_true(rp::parse_rate("2.5Kpps", 64, &err) == 2500);
	assert_true(rp::parse_rate("1.5Mpps", 64, &err) == 1.5e6);
	assert_true(rp::parse_rate("2Gbps", 64, &err) == 2e9 / 512);   // 64 B messages: 512 bits each
	assert_true(rp::parse_rate("512Mbps", 4096, &err) == 512e6 / (4096 * 8));
	assert_true(rp::parse_rate("0", 64, &err) == 0);
	for (const char *bad : {"5zz", "", "-3", "fast", "1e10", "3 Mpps", "nanpps"}) {
		err.clear();
		assert_true(rp::parse_rate(bad, 64, &err) < 0);
		assert_false(err.empty());
	}
	rp::parse_rate("5zz", 64, &err);
	assert_string_equal(err.c_str(), "'5zz' is not a rate: give messages per second (20000, 20000pps, 1.5Mpps) or a bit "
					 "rate (2Gbps, 500Mbps); 0 lifts the limit");
	rp::parse_rate("1e10", 64, &err);
	assert_string_equal(err.c_str(), "'1e10' is more than 1e9 messages per second");
}

void device_counters(void **)
{
	/* A fake sysfs: rxe-style counters, read sorted; the delta keeps what moved. */
	char dir[] = "/tmp/rp_hwXXXXXX";
	assert_non_null(mkdtemp(dir));
	std::string ports = std::string(dir) + "/rxe9/ports/1/hw_counters";
	assert_int_equal(system(("mkdir -p " + ports).c_str()), 0);
	auto put = [&](const char *name, const char *v) {
		FILE *f = fopen((ports + "/" + name).c_str(), "w");
		assert_non_null(f);
		fputs(v, f);
		fclose(f);
	};
	put("completer_retry_err", "3\n");
	put("rcvd_rnr_err", "0\n");
	put("lifespan", "10\n");
	rp::HwCounters a = rp::hw_counters_read("rxe9", 1, dir);
	assert_int_equal(a.size(), 2);
	assert_string_equal(a[0].first.c_str(), "completer_retry_err");
	put("completer_retry_err", "7\n");
	put("rcvd_rnr_err", "2\n");
	put("out_of_sequence", "1\n");
	rp::HwCounters d = rp::hw_counters_delta(a, rp::hw_counters_read("rxe9", 1, dir));
	assert_int_equal(d.size(), 3);
	assert_string_equal(d[0].first.c_str(), "completer_retry_err");
	assert_int_equal(d[0].second, 4);
	assert_string_equal(d[1].first.c_str(), "out_of_sequence");
	assert_int_equal(d[1].second, 1);
	assert_int_equal(d[2].second, 2);
	assert_true(rp::hw_counters_read("nodev", 1, dir).empty());
	assert_int_equal(system(("rm -rf " + std::string(dir)).c_str()), 0);
}

void receiving_side_lines(void **)
{
	/* A two-process server: no flows of its own, its receiver's rate instead. */
	Rig g;
	g.v.flows.clear();
	rp::Sample a = rp::sample_take(g.v, 0);
	g.rsp.received.store(5000);
	g.rsp.srq_posted.store(640);
	rp::Sample b = rp::sample_take(g.v, 1000000000);
	std::string block = rp::stats_block(g.v, a, a, b);
	assert_true(block.find("  lcore 2       0.0050 Mmsg/s received  5000 in all, SRQ receives posted 640\n") != std::string::npos);
	assert_true(block.find("requester") == std::string::npos);
}

void flows_by_name(void **)
{
	Rig g;
	rp::FlowView second = g.v.flows[0];
	second.name = "lat";
	g.v.flows.push_back(second);
	std::string known;
	assert_int_equal(rp::flow_index(g.v, "lat", &known), 1);
	assert_int_equal(rp::flow_index(g.v, "nope", &known), -1);
	assert_string_equal(known.c_str(), "bw, lat");
}

/* The metrics a scrape gets: each flow's counters under its labels, the latency as a
 * Prometheus histogram (seconds, cumulative; an engine bucket that straddles a bound
 * counts in the next), the lcores' polls, and between runs the build's only. */
void metrics_of_a_run(void **)
{
	Rig g;
	g.set(1000, 900, 3);
	g.live.by_status[IBV_WC_REM_ACCESS_ERR].store(3);
	g.req.polls_busy.store(30);
	g.req.polls_idle.store(10);
	rp::Histogram h;
	h.record(3000);      // 3 us: le 5e-06
	h.record(3000);
	h.record(150000);    // 150 us: le 0.0002
	h.record(2000000);   // 2 ms: its bucket (1998848..2007039 ns) straddles 0.002: le 0.005
	g.v.flows[0].transport = "rc";
	g.v.flows[0].role = "requester";
	g.v.flows[0].latency = &h;
	g.v.start_unix = 1.7e9;
	rp::LcoreCpu cpu;   // this thread's CPU clock stands for lcore 1's
	clockid_t clock;
	assert_int_equal(pthread_getcpuclockid(pthread_self(), &clock), 0);
	cpu.clock = clock;
	cpu.set.store(true);
	g.v.lcores[0].cpu = &cpu;
	rp::ReceiveLive rx;
	rx.received.store(880);
	rx.verified.store(879);
	rx.payload_errors.store(1);
	rx.reliable = true;   // UC made reliable: both ends' counters
	rx.acks_sent.store(40);
	rx.duplicates.store(2);
	rx.qp_restarts.store(1);
	g.live.reliable = true;
	g.live.acks.store(39);
	g.live.retx_timeout.store(5);
	g.live.restart_requests.store(1);
	g.v.flows[0].rx = &rx;
	const std::string t = rp::metrics_text(&g.v);
	const std::string l = "{flow=\"bw\",verb=\"write_imm\",transport=\"rc\",role=\"requester\"}";
	for (const std::string &want : std::vector<std::string>{
		     "rdmapipe_running 1\n",
		     "# TYPE rdmapipe_flow_messages_sent_total counter\n",
		     "rdmapipe_flow_messages_sent_total" + l + " 1000\n",
		     "rdmapipe_flow_messages_completed_total" + l + " 900\n",
		     "rdmapipe_flow_completed_bytes_total" + l + " 57600\n",
		     "rdmapipe_flow_outstanding_messages" + l + " 100\n",
		     "rdmapipe_flow_completion_errors_total" + l + " 3\n",
		     "rdmapipe_flow_messages_received_total" + l + " 880\n",
		     "rdmapipe_flow_messages_verified_total" + l + " 879\n",
		     "rdmapipe_flow_receive_errors_total{flow=\"bw\",verb=\"write_imm\",transport=\"rc\",role=\"requester\",kind=\"payload\"} 1\n",
		     "rdmapipe_flow_target_messages" + l + " 2000\n",
		     "rdmapipe_flow_acks_total{flow=\"bw\",verb=\"write_imm\",transport=\"rc\",role=\"requester\",direction=\"sent\"} 40\n",
		     "rdmapipe_flow_acks_total{flow=\"bw\",verb=\"write_imm\",transport=\"rc\",role=\"requester\",direction=\"received\"} 39\n",
		     "rdmapipe_flow_retransmissions_total{flow=\"bw\",verb=\"write_imm\",transport=\"rc\",role=\"requester\",reason=\"timeout\"} 5\n",
		     "rdmapipe_flow_restart_requests_total" + l + " 1\n",
		     "rdmapipe_flow_qp_restarts_total" + l + " 1\n",
		     "rdmapipe_flow_duplicates_total" + l + " 2\n",
		     "rdmapipe_flow_out_of_order_total" + l + " 0\n",
		     "# TYPE rdmapipe_flow_completion_latency_seconds histogram\n",
		     "rdmapipe_flow_completion_latency_seconds_count" + l + " 4\n",
		     "rdmapipe_lcore_polls_total{lcore=\"1\",role=\"requester\",result=\"busy\"} 30\n",
		     "rdmapipe_lcore_polls_total{lcore=\"1\",role=\"requester\",result=\"idle\"} 10\n",
		     "rdmapipe_lcore_cpu_seconds_total{lcore=\"1\",role=\"requester\"} ",
	     }) {
		if (t.find(want) == std::string::npos)
			fail_msg("no '%s' in:\n%s", want.c_str(), t.c_str());
	}
	assert_null(strstr(t.c_str(), "rdmapipe_lcore_cpu_seconds_total{lcore=\"2\""));   // no clock given: no series
	auto bucket = [&](const char *le) {
		const std::string k = "rdmapipe_flow_completion_latency_seconds_bucket{flow=\"bw\",verb=\"write_imm\",transport=\"rc\",role=\"requester\",le=\"" +
				      std::string(le) + "\"} ";
		const size_t at = t.find(k);
		if (at == std::string::npos)
			fail_msg("no bucket le=%s in:\n%s", le, t.c_str());
		return atoll(t.c_str() + at + k.size());
	};
	assert_int_equal(bucket("2e-06"), 0);
	assert_int_equal(bucket("5e-06"), 2);
	assert_int_equal(bucket("0.0001"), 2);
	assert_int_equal(bucket("0.0002"), 3);
	assert_int_equal(bucket("0.002"), 3);
	assert_int_equal(bucket("0.005"), 4);
	assert_int_equal(bucket("+Inf"), 4);
	assert_non_null(strstr(t.c_str(), "rdmapipe_flow_completion_errors_by_status_total{flow=\"bw\",verb=\"write_imm\",transport=\"rc\","
					  "role=\"requester\",status=\"remote access error\"} 3\n"));
	/* Between runs: the build's metrics only. */
	const std::string none = rp::metrics_text(nullptr);
	assert_non_null(strstr(none.c_str(), "rdmapipe_running 0\n"));
	assert_non_null(strstr(none.c_str(), "rdmapipe_build_info{version=\""));
	assert_null(strstr(none.c_str(), "dpdk=\"DPDK"));          // 22.11.x, as --version says it
	assert_null(strstr(none.c_str(), "rdma_core=\"1.14."));    // the release (44.0), not libibverbs' version
	assert_null(strstr(none.c_str(), "rdmapipe_flow_"));
}

/* A netlink attribute {len, type} and its payload, padded to 4 bytes. */
void put_attr(std::vector<uint8_t> *m, uint16_t type, const void *v, size_t n)
{
	const nlattr a{static_cast<uint16_t>(sizeof(nlattr) + n), type};
	const size_t at = m->size();
	m->resize(at + ((sizeof(nlattr) + n + 3) & ~size_t{3}));
	memcpy(m->data() + at, &a, sizeof(a));
	memcpy(m->data() + at + sizeof(a), v, n);
}

/* A reply as the kernel's nldev_stat_get builds it: header, device, counter id, and the
 * hw counters nested two deep (entries of name and a padded u64). */
std::vector<uint8_t> stat_reply(const std::vector<std::pair<std::string, uint64_t>> &counters)
{
	std::vector<uint8_t> body, table;
	const uint32_t dev = 3, id = 7;
	put_attr(&body, RDMA_NLDEV_ATTR_DEV_INDEX, &dev, 4);
	put_attr(&body, RDMA_NLDEV_ATTR_STAT_COUNTER_ID, &id, 4);
	for (const auto &[name, value] : counters) {
		std::vector<uint8_t> e;
		put_attr(&e, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, name.c_str(), name.size() + 1);
		put_attr(&e, RDMA_NLDEV_ATTR_PAD, "", 0);
		put_attr(&e, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, &value, 8);
		put_attr(&table, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY | NLA_F_NESTED, e.data(), e.size());
	}
	put_attr(&body, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS | NLA_F_NESTED, table.data(), table.size());
	nlmsghdr h{};
	h.nlmsg_len = static_cast<uint32_t>(NLMSG_HDRLEN + body.size());
	std::vector<uint8_t> m(NLMSG_HDRLEN);
	memcpy(m.data(), &h, sizeof(h));
	m.insert(m.end(), body.begin(), body.end());
	return m;
}

/* The per-QP counters' netlink messages (--metrics-qp): the bind request as iproute2's
 * rdma tool sends it, a reply's counter id and hw counters, and a truncated reply read
 * no further than it goes. */
void qp_counter_messages(void **)
{
	const std::vector<uint8_t> req = rp::nldev_request(RDMA_NLDEV_CMD_STAT_SET, 42,
							   {{RDMA_NLDEV_ATTR_DEV_INDEX, 3}, {RDMA_NLDEV_ATTR_RES_LQPN, 17}});
	nlmsghdr h;
	memcpy(&h, req.data(), sizeof(h));
	assert_int_equal(h.nlmsg_len, req.size());
	assert_int_equal(req.size(), NLMSG_HDRLEN + 2 * 8);
	assert_int_equal(h.nlmsg_type, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_SET));
	assert_int_equal(h.nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
	assert_int_equal(h.nlmsg_seq, 42);
	uint32_t v = 0;
	assert_true(rp::nldev_u32(req.data(), req.size(), RDMA_NLDEV_ATTR_RES_LQPN, &v));
	assert_int_equal(v, 17);
	assert_false(rp::nldev_u32(req.data(), req.size(), RDMA_NLDEV_ATTR_STAT_COUNTER_ID, &v));

	const std::vector<uint8_t> m = stat_reply({{"rx_write_requests", 1ull << 40}, {"out_of_sequence", 3}});
	assert_true(rp::nldev_u32(m.data(), m.size(), RDMA_NLDEV_ATTR_STAT_COUNTER_ID, &v));
	assert_int_equal(v, 7);
	rp::HwCounters c;
	assert_true(rp::nldev_hwcounters(m.data(), m.size(), &c));
	assert_int_equal(c.size(), 2);
	assert_string_equal(c[0].first.c_str(), "out_of_sequence");   // sorted by name
	assert_int_equal(c[0].second, 3);
	assert_string_equal(c[1].first.c_str(), "rx_write_requests");
	assert_true(c[1].second == 1ull << 40);
	/* Cut anywhere: never a read past the end, never a counter made up. */
	for (size_t n = 0; n < m.size(); n++) {
		std::vector<uint8_t> cut(m.begin(), m.begin() + static_cast<long>(n));
		if (n >= sizeof(nlmsghdr)) {   // the header says less than is there
			nlmsghdr ch;
			memcpy(&ch, cut.data(), sizeof(ch));
			ch.nlmsg_len = static_cast<uint32_t>(n);
			memcpy(cut.data(), &ch, sizeof(ch));
		}
		rp::HwCounters part;
		rp::nldev_hwcounters(cut.data(), cut.size(), &part);
		assert_true(part.size() <= 2);
		for (const auto &[name, value] : part)
			assert_true((name == "out_of_sequence" && value == 3) || (name == "rx_write_requests" && value == 1ull << 40));
	}
	assert_false(rp::nldev_hwcounters(req.data(), req.size(), &c));   // no table
}

/* promtool (Debian's prometheus) finds nothing to say of a scrape. */
void metrics_pass_promtool(void **)
{
	if (system("command -v promtool >/dev/null 2>&1") != 0) {
		const char *ci = getenv("CI");
		if (ci && *ci)
			fail_msg("promtool missing (tools/install-deps installs prometheus)");
		skip();
	}
	Rig g;
	g.set(10, 9, 1);
	g.live.by_status[IBV_WC_RETRY_EXC_ERR].store(1);
	g.live.reliable = true;
	rp::Histogram h;
	h.record(12345);
	g.v.flows[0].transport = "uc";
	g.v.flows[0].role = "client";
	g.v.flows[0].peer = "10.0.0.2:18515";
	g.v.flows[0].latency = &h;
	g.v.flows[0].half_rtt = true;
	const std::string path = std::string(P_tmpdir) + "/rp_metrics." + std::to_string(getpid());
	FILE *f = fopen(path.c_str(), "w");
	assert_non_null(f);
	const std::string t = rp::metrics_text(&g.v);
	fputs(t.c_str(), f);
	fclose(f);
	const int rc = system(("promtool check metrics < " + path + " >&2").c_str());
	unlink(path.c_str());
	if (rc != 0)
		fail_msg("promtool check metrics refused:\n%s", t.c_str());
}

/* A port in 1..65535 nobody listens on, and a socket that holds it (closed: free). */
int bound_socket(uint16_t *port)
{
	const int fd = socket(AF_INET, SOCK_STREAM, 0);
	sockaddr_in a{};
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t n = sizeof(a);
	assert_int_equal(bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)), 0);
	assert_int_equal(getsockname(fd, reinterpret_cast<sockaddr *>(&a), &n), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

/* The endpoint serves what metrics_text gives; a port another socket listens on is
 * refused with its cause. */
void metrics_served(void **)
{
	uint16_t port;
	int fd = bound_socket(&port);
	assert_int_equal(listen(fd, 1), 0);
	std::string err;
	const std::string addr = "127.0.0.1:" + std::to_string(port);
	assert_int_equal(rp::metrics_serve(addr, &err), -1);
	if (err.find("run.metrics (--metrics) " + addr + ": cannot listen there: Address already in use") == std::string::npos)
		fail_msg("%s", err.c_str());
	close(fd);
	assert_int_equal(rp::metrics_serve(addr, &err), 0);
	assert_int_equal(rp::metrics_serve(addr, &err), 0);   // already: nothing
	Rig g;
	g.set(7, 7, 0);
	rp::metrics_set_run(&g.v);
	const int c = socket(AF_INET, SOCK_STREAM, 0);
	sockaddr_in a{};
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(c, reinterpret_cast<sockaddr *>(&a), sizeof(a)), 0);
	const char req[] = "GET /metrics HTTP/1.0\r\n\r\n";
	assert_int_equal(write(c, req, sizeof(req) - 1), sizeof(req) - 1);
	std::string got;
	char buf[4096];
	ssize_t n;
	while ((n = read(c, buf, sizeof(buf))) > 0)
		got.append(buf, static_cast<size_t>(n));
	close(c);
	rp::metrics_set_run(nullptr);
	rp::metrics_stop();
	assert_non_null(strstr(got.c_str(), "HTTP/1.1 200"));
	assert_non_null(strstr(got.c_str(), "rdmapipe_flow_messages_completed_total{flow=\"bw\""));
	assert_non_null(strstr(got.c_str(), "rdmapipe_running 1\n"));
}

/* Pushes: a gateway that does not answer is refused at once, naming it; one that does
 * gets the whole state PUT under job and grouping labels at the run's end. */
void metrics_pushed(void **)
{
	uint16_t port;
	int fd = bound_socket(&port);   // bound, not listening: connections refused
	std::string err;
	const std::string url = "http://127.0.0.1:" + std::to_string(port);
	assert_int_equal(rp::metrics_push_to(url, 0, {{"instance", "h1"}}, &err), -1);
	if (err.find("run.push (--push) " + url + ": the Pushgateway does not answer: Connection refused") == std::string::npos)
		fail_msg("%s", err.c_str());
	assert_int_equal(rp::metrics_push_to("ftp://x", 0, {}, &err), -1);
	assert_int_equal(listen(fd, 4), 0);
	assert_int_equal(rp::metrics_push_to(url, 0, {{"instance", "h1"}}, &err), 0);
	std::string req;
	std::thread gw([&] {   // one request (after the setup's connection): read it whole, answer 200
		int c = accept(fd, nullptr, nullptr);
		close(c);
		c = accept(fd, nullptr, nullptr);
		timeval tv{5, 0};   // a request that never completes fails the test, not hangs it
		setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		char buf[4096];
		ssize_t n;
		while ((n = read(c, buf, sizeof(buf))) > 0) {
			req.append(buf, static_cast<size_t>(n));
			const size_t head = req.find("\r\n\r\n"), len = req.find("Content-Length: ");
			if (head != std::string::npos && len != std::string::npos &&
			    req.size() >= head + 4 + strtoul(req.c_str() + len + 16, nullptr, 10))
				break;
		}
		const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
		(void)!write(c, ok, sizeof(ok) - 1);
		close(c);
	});
	Rig g;
	g.set(5, 5, 0);
	rp::metrics_set_run(&g.v);
	rp::metrics_set_run(nullptr);   // the end: the last state pushed
	gw.join();
	close(fd);
	rp::metrics_stop();
	if (req.rfind("PUT /metrics/job/rdmapipe/instance/h1 ", 0) != 0 ||
	    req.find("rdmapipe_flow_messages_completed_total{flow=\"bw\"") == std::string::npos)
		fail_msg("the push:\n%s", req.c_str());
}

/* One HTTP request read whole from c ("" when the peer only connected), answered 200. */
std::string http_request(int c)
{
	timeval tv{5, 0};   // a request that never completes fails the test, not hangs it
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	std::string req;
	char buf[4096];
	ssize_t n;
	while ((n = read(c, buf, sizeof(buf))) > 0) {
		req.append(buf, static_cast<size_t>(n));
		const size_t head = req.find("\r\n\r\n"), len = req.find("Content-Length: ");
		if (head != std::string::npos && len != std::string::npos && req.size() >= head + 4 + strtoul(req.c_str() + len + 16, nullptr, 10))
			break;
	}
	if (!req.empty()) {
		const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
		(void)!write(c, ok, sizeof(ok) - 1);
	}
	return req;
}

/* --push with --stats-period: the state pushed every period while the run goes on
 * (what moved between pushes among them), not only at its end, under the grouping it
 * was given even when --metrics is set up after it (a job rank's order). */
void metrics_pushed_every_period(void **)
{
	uint16_t port;
	const int fd = bound_socket(&port);
	assert_int_equal(listen(fd, 8), 0);
	std::mutex mu;
	std::condition_variable cv;
	std::vector<uint64_t> pushed;   // the flow's completed messages, as each push had it
	std::thread gw([&] {
		for (int c; (c = accept(fd, nullptr, nullptr)) >= 0; close(c)) {
			const std::string req = http_request(c);
			const std::string k = "rdmapipe_flow_messages_completed_total{flow=\"bw\"";
			const size_t at = req.find(k), val = at == std::string::npos ? at : req.find("} ", at);
			if (val == std::string::npos || req.rfind("PUT /metrics/job/rdmapipe/instance/h2 ", 0) != 0)
				continue;   // the setup's connection, no run, or not its grouping
			std::lock_guard<std::mutex> lock(mu);
			pushed.push_back(strtoull(req.c_str() + val + 2, nullptr, 10));
			cv.notify_all();
		}
	});
	std::string err;
	assert_int_equal(rp::metrics_push_to("http://127.0.0.1:" + std::to_string(port), 0.1, {{"instance", "h2"}}, &err), 0);
	uint16_t serve;   // an endpoint as well, set up after the pusher (a job rank's order): the pusher stays
	close(bound_socket(&serve));
	assert_int_equal(rp::metrics_serve("127.0.0.1:" + std::to_string(serve), &err), 0);
	Rig g;
	g.set(5, 5, 0);
	rp::metrics_set_run(&g.v);
	const auto seen = [&](uint64_t completed, size_t times) {   // bounded: 20 s, far above 0.1 s periods
		std::unique_lock<std::mutex> lock(mu);
		return cv.wait_for(lock, std::chrono::seconds(20),
				   [&] { return static_cast<size_t>(std::count(pushed.begin(), pushed.end(), completed)) >= times; });
	};
	assert_true(seen(5, 2));   // two periods' pushes of the run as it is
	g.set(9, 9, 0);
	assert_true(seen(9, 1));   // ... and then of what moved
	size_t before;
	{
		std::lock_guard<std::mutex> lock(mu);
		before = static_cast<size_t>(std::count(pushed.begin(), pushed.end(), 9));
	}
	rp::metrics_set_run(nullptr);
	assert_true(seen(9, before + 1));   // the last push, at the end (the pusher joined: no more)
	shutdown(fd, SHUT_RDWR);   // accept returns: the gateway ends
	gw.join();
	close(fd);
	rp::metrics_stop();
}

} // namespace

int main()
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rates_between_samples),
		cmocka_unit_test(duration_progress_and_line),
		cmocka_unit_test(rates_the_console_takes),
		cmocka_unit_test(device_counters),
		cmocka_unit_test(receiving_side_lines),
		cmocka_unit_test(flows_by_name),
		cmocka_unit_test(metrics_of_a_run),
		cmocka_unit_test(qp_counter_messages),
		cmocka_unit_test(metrics_pass_promtool),
		cmocka_unit_test(metrics_served),
		cmocka_unit_test(metrics_pushed),
		cmocka_unit_test(metrics_pushed_every_period),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
