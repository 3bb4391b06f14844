/* The results file's JSON (nlohmann's writer): every field where docs/results.md puts
 * it, figures rounded, names that are not UTF-8 replaced rather than thrown about.
 * `test_results --write DIR` writes the sample files that results_schema.py checks
 * against docs/results.schema.json. Plain data: no EAL, no device. */
#include "control/results.h"

#include <nlohmann/json.hpp>   // before cmocka, whose fail() macro it would meet

#include "cmocka_cpp.h"

#include <cstdio>
#include <cstring>
#include <string>

namespace {

using json = nlohmann::json;

/* A run with every optional part: errors, software reliability, latency, stage cycles. */
struct Full {
	rp::Histogram lat;
	rp::WcErrorCounts errs;
	rp::Results r;

	Full()
	{
		for (uint64_t ns = 1000; ns <= 100000; ns += 1000)
			lat.record(ns);
		errs.by_status[IBV_WC_REM_ACCESS_ERR] = 1;
		errs.by_status[IBV_WC_WR_FLUSH_ERR] = 31;
		errs.total = 32;
		r = rp::results_of("rate", rp::Verb::write_imm, 64, "rxe0", 2.5, true);
		rp::FlowResult f;
		f.name = "bw";
		f.qps = 4;
		f.sent = f.completed = f.verified = 61504;
		f.bytes = 61504 * 64;
		f.errors = &errs;
		f.latency = &lat;
		f.latency_what = "chain posted to its signalled completion";
		f.rel.on = true;
		f.rel.retx_fast = 3;
		f.rel.retx_timeout = 2;
		r.flows.push_back(f);
		rp::FlowResult bare;
		bare.name = std::string("n\xff\xfe", 3);   // not UTF-8
		bare.qps = 1;
		r.flows.push_back(bare);
		r.lcores.push_back({1, "requester", 8830, 181234, 2.4981234});
		r.stages.push_back({"flow0_tx", "rdma_tx", 1, 100, 61504, 123456789});
		r.stage_cycles = true;
		r.series = {{24410, 0}, {49120, 0}};
	}
};

void every_field_in_place(void **)
{
	Full x;
	const json j = json::parse(rp::results_json_text(x.r));
	assert_int_equal(j["rdmapipe"]["results_schema"].get<int>(), rp::kResultsSchema);
	assert_string_equal(j["run"]["verb"].get<std::string>().c_str(), "RDMA_WRITE_WITH_IMM");
	assert_string_equal(j["run"]["result"].get<std::string>().c_str(), "PASS");
	const json &f = j["flows"][0];
	assert_int_equal(f["messages_verified"].get<uint64_t>(), 61504);
	assert_true(f["message_rate"].get<double>() == 24601.6);   // 61504 / 2.5, to 0.1
	assert_int_equal(f["completion_errors"]["remote access error"].get<int>(), 1);
	assert_int_equal(f["completion_errors"]["Work Request Flushed Error"].get<int>(), 31);
	assert_int_equal(f["reliability"]["retransmissions"].get<int>(), 5);
	assert_int_equal(f["latency_us"]["samples"].get<int>(), 100);
	assert_true(f["latency_cdf"].front()[1].get<double>() == 0);
	assert_true(f["latency_cdf"].back()[1].get<double>() == 1);
	assert_true(j["lcores"][0]["cpu_s"].get<double>() == 2.498);
	assert_int_equal(j["stages"][0]["busy_cycles"].get<uint64_t>(), 123456789);
	assert_int_equal(j["series"]["completed"][1][0].get<int>(), 49120);
	/* Keys in the documented order. */
	const std::string text = rp::results_json_text(x.r);
	assert_true(text.find("\"rdmapipe\"") < text.find("\"run\""));
	assert_true(text.find("\"run\"") < text.find("\"flows\""));
	assert_true(text.find("\"messages_sent\"") < text.find("\"messages_completed\""));
}

/* latency_hist: the non-empty buckets, [lower_ns, upper_ns, count], increasing, summing
 * to the count; known values land in the buckets worked out by hand from the layout
 * (exact below 256 ns, then 128 buckets per power of two). */
void latency_hist_buckets(void **)
{
	Full x;
	const json j = json::parse(rp::results_json_text(x.r));
	assert_true(j["flows"][0].contains("latency_hist"));   // before indexing a const json by it
	const json &h = j["flows"][0]["latency_hist"];
	assert_string_equal(h["unit"].get<std::string>().c_str(), "ns");
	assert_int_equal(h["count"].get<uint64_t>(), 100);
	uint64_t sum = 0, prev_upper = 0;
	for (size_t i = 0; i < h["buckets"].size(); i++) {
		const json &b = h["buckets"][i];
		assert_int_equal(b.size(), 3);
		const uint64_t lo = b[0].get<uint64_t>(), hi = b[1].get<uint64_t>(), n = b[2].get<uint64_t>();
		assert_true(lo <= hi);
		assert_true(i == 0 || lo > prev_upper);
		assert_true(n > 0);
		prev_upper = hi;
		sum += n;
	}
	assert_int_equal(sum, 100);
	assert_int_equal(h["buckets"].size(), 100);   // 1000 ns apart: a bucket each

	rp::Histogram lat;
	for (uint64_t ns : {5, 5, 255, 256, 257, 1000, 1003, 1004, 100000})
		lat.record(ns);
	x.r.flows[0].latency = &lat;
	const json k = json::parse(rp::results_json_text(x.r));
	const json want = json::parse(R"([[5, 5, 2], [255, 255, 1], [256, 257, 2], [1000, 1003, 2], [1004, 1007, 1],
					   [99840, 100351, 1]])");
	assert_true(k["flows"][0]["latency_hist"]["buckets"] == want);
	assert_int_equal(k["flows"][0]["latency_hist"]["count"].get<uint64_t>(), 9);
}

void optional_parts_absent(void **)
{
	Full x;
	const json j = json::parse(rp::results_json_text(x.r));
	const json &bare = j["flows"][1];
	assert_true(bare["completion_errors"].is_object() && bare["completion_errors"].empty());
	assert_false(bare.contains("reliability"));
	assert_false(bare.contains("latency_us"));
	assert_false(bare.contains("latency_cdf"));
	assert_false(bare.contains("latency_hist"));
	x.r.stage_cycles = false;
	const json k = json::parse(rp::results_json_text(x.r));
	assert_false(k["stages"][0].contains("busy_cycles"));
}

void bad_utf8_replaced(void **)
{
	Full x;
	const json j = json::parse(rp::results_json_text(x.r));
	assert_string_equal(j["flows"][1]["name"].get<std::string>().c_str(), "n\xef\xbf\xbd\xef\xbf\xbd");   // two U+FFFD
	x.r.flows[0].name = "quote\" back\\ nl\n";
	const json k = json::parse(rp::results_json_text(x.r));
	assert_string_equal(k["flows"][0]["name"].get<std::string>().c_str(), "quote\" back\\ nl\n");
}

void interrupted_and_unwritable(void **)
{
	Full x;
	x.r.stop_signal = 2;
	assert_string_equal(json::parse(rp::results_json_text(x.r))["run"]["result"].get<std::string>().c_str(), "INTERRUPTED");
	std::string err;
	assert_int_equal(rp::write_results_json("/nonexistent-dir/r.json", x.r, &err), -1);
	assert_non_null(strstr(err.c_str(), "/nonexistent-dir/r.json: cannot write the results: "));
}

int write_samples(const std::string &dir)
{
	Full x;
	std::string err;
	rp::Results none = rp::results_of("pingpong", rp::Verb::send, 64, "rxe0", 0.0, false);
	none.role = "client";
	if (rp::write_results_json(dir + "/full.json", x.r, &err) != 0 ||
	    rp::write_results_json(dir + "/empty.json", none, &err) != 0) {
		fprintf(stderr, "test_results: %s\n", err.c_str());
		return 1;
	}
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--write") == 0)
		return write_samples(argv[2]);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_field_in_place),
		cmocka_unit_test(latency_hist_buckets),
		cmocka_unit_test(optional_parts_absent),
		cmocka_unit_test(bad_utf8_replaced),
		cmocka_unit_test(interrupted_and_unwritable),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
