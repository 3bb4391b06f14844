/* Standalone reproducers (issue 49): a point's settings made into repro_template.c's
 * #defines, the pipeline's defaults filled in, what the template cannot model refused
 * by name, and repro.c (defines + template) compiling -Wall -Wextra -Werror clean. */
#include "explore/repro.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include "cmocka_cpp.h"   // last: it defines fail()

namespace {

using namespace rp::explore;
using Settings = std::map<std::string, std::string>;

bool has(const std::string &text, const std::string &part)
{
	if (text.find(part) != std::string::npos)
		return true;
	fprintf(stderr, "'%s' not in '%s'\n", part.c_str(), text.c_str());
	return false;
}

void defaults_are_the_pipelines(void **)
{
	std::string why;
	// { name, verb, uc, size, qps, batch, signal_every, sq_depth, window, inline, fence, srq, dev_a, dev_b }
	assert_true(has(repro_params({}, "point", &why), "{ \"point\", V_WRITE_IMM, 0, 64, 1, 32, 32, 128, 1024, 0, 0, 1, \"rxe0\", \"rxe0\" }"));
	// signal_every defaults to batch, sq_depth to 4 x max(batch, signal_every), window to 1024 / qps (at least batch).
	const Settings s = {{"verb", "send"}, {"size", "8192"}, {"qps", "4"}, {"batch", "2"}, {"inline", "true"},
			    {"fence", "true"}, {"recv_queue", "qp"}, {"transport", "uc"}, {"device", "rxe0"}};
	assert_true(has(repro_params(s, "point", &why), "V_SEND, 1, 8192, 4, 2, 2, 8, 256, 1, 1, 0, \"rxe0\", \"rxe0\""));
	const Settings t = {{"verb", "fetch_add"}, {"qps", "512"}, {"batch", "64"}, {"signal_every", "128"}, {"flows", "2"},
			    {"placement", "crossing"}, {"sq_depth", "300"}, {"window", "70"}};
	assert_true(has(repro_params(t, "point", &why), "V_FETCH_ADD, 0, 64, 1024, 64, 128, 300, 70,"));
	assert_true(has(repro_params({{"device", "rxe0>rxe1"}}, "point", &why), "\"rxe0\", \"rxe1\" }"));
}

void what_is_not_modelled_is_refused_by_name(void **)
{
	const std::pair<Settings, std::string> cases[] = {
		{{{"post_api", "wr"}}, "post_api = wr (ibv_wr_*"},
		{{{"cq_api", "ex"}}, "cq_api = ex ("},
		{{{"poll", "adaptive"}}, "poll = adaptive ("},
		{{{"rate", "2000"}}, "rate = 2000 (pacing"},
		{{{"batch", "128"}}, "batch = 128 ("},
		{{{"mtu", "1024"}}, "mtu = 1024 (not modelled"},
		{{{"verb", "ping"}}, "verb = ping ("},
		{{{"transport", "uc"}, {"reliability", "software"}}, "reliability = software ("},
		{{{"device", "rxe0>rxe1"}, {"placement", "crossing"}}, "placement = crossing ("},
	};
	for (const auto &[set, named] : cases) {
		std::string why;
		assert_true(repro_params(set, "point", &why).empty());
		assert_true(has(why, named));
	}
	std::string why;
	assert_false(repro_params({{"post_api", "classic"}, {"rate", "0"}}, "point", &why).empty());
}

Space two_dims()
{
	Space s;
	s.fixed = {{"device", "rxe0"}};
	Dim size{"size", {"64", "8192"}, {64, 8192}, 0};
	Dim batch{"batch", {"2", "32"}, {2, 32}, 1};
	s.dims = {size, batch};
	s.search.point_seconds = 0.4;
	s.search.perf_flag = 0.2;
	return s;
}

void the_kinds_defines(void **)
{
	const Space s = two_dims();
	Finding f;
	f.id = 3;
	f.minimal = {1, 0};
	std::string why;
	f.verdict.kind = AnomalyKind::correctness;
	std::string d = repro_defines(s, f, &why);
	assert_true(has(d, "#define RP_KIND K_CORRECTNESS"));
	assert_true(has(d, "#define RP_POINT { \"point\", V_WRITE_IMM, 0, 8192, 1, 2,"));
	assert_true(has(d, "#define RP_SECONDS 0.4"));
	f.verdict.kind = AnomalyKind::counters;
	f.verdict.counter = "retry_exceeded_err";
	f.verdict.reference = 0.05;
	d = repro_defines(s, f, &why);
	assert_true(has(d, "#define RP_COUNTER \"retry_exceeded_err\"") && has(d, "#define RP_COUNTER_FLAG 0.05"));
	f.verdict.kind = AnomalyKind::performance;
	assert_true(repro_defines(s, f, &why).empty());   // no reference point: refused, named
	assert_true(has(why, "reference"));
	f.verdict.ref_point = {1, 1};
	d = repro_defines(s, f, &why);
	assert_true(has(d, "#define RP_KIND K_PERFORMANCE") && has(d, "#define RP_PERF_FLAG 0.2"));
	assert_true(has(d, "#define RP_REFERENCE { \"reference\", V_WRITE_IMM, 0, 8192, 1, 32,"));
}

void perftest_where_it_can_say_the_point(void **)
{
	assert_true(perftest_command({{"verb", "write_imm"}}, 1).empty());   // the immediates' sequence: no perftest equivalent
	const std::string c = perftest_command({{"verb", "write"}, {"size", "8192"}, {"qps", "4"}, {"transport", "uc"},
						 {"inline", "true"}, {"device", "rxe0"}}, 1);
	assert_true(has(c, "ib_write_bw -d rxe0 -s 8192 -q 4 -D 1 -l 32 -c UC -I 8192"));
	assert_true(has(perftest_command({{"verb", "fetch_add"}}, 2), "ib_atomic_bw -A FETCH_AND_ADD"));
	assert_true(has(perftest_command({{"verb", "send"}, {"signal_every", "8"}, {"sq_depth", "64"}}, 1), " --cq-mod 8 -t 64"));
	assert_true(perftest_command({{"verb", "send"}, {"device", "rxeA>rxeB"}}, 1).empty());   // two devices: two perftest ends, not one line
}

/* repro.c for several points compiles warning-free (cc and libibverbs' headers: the
 * host's; skipped without cc). */
void repro_c_compiles(void **)
{
	if (system("command -v cc > /dev/null 2>&1 && test -e /usr/include/infiniband/verbs.h") != 0) {
		fprintf(stderr, "skipped: no cc or no libibverbs headers\n");
		return;
	}
	const Space s = two_dims();
	Finding f;
	f.minimal = {1, 0};
	f.verdict.kind = AnomalyKind::performance;
	f.verdict.ref_point = {1, 1};
	std::string why;
	const std::string src = repro_source(repro_defines(s, f, &why));
	const char *path = "test_explore_repro.c";
	std::ofstream(path) << src;
	const std::string cmd = std::string("cc -std=c11 -O2 -Wall -Wextra -Werror -o test_explore_repro.bin ") + path + " -libverbs";
	assert_int_equal(system(cmd.c_str()), 0);
	remove(path);
	remove("test_explore_repro.bin");
}

} // namespace

int main()
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults_are_the_pipelines),
		cmocka_unit_test(what_is_not_modelled_is_refused_by_name),
		cmocka_unit_test(the_kinds_defines),
		cmocka_unit_test(perftest_where_it_can_say_the_point),
		cmocka_unit_test(repro_c_compiles),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
