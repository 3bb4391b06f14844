/* The control plane's stats: samples of the lcores' published totals, rates between
 * two samples, totals since a baseline, progress, the printed line, and the rates the
 * console takes. Plain data: no EAL, no device. */
#include "control/stats.h"
#include "view_rig.h"

#include "cmocka_cpp.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

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
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
