/* Standalone reproducers (issue 49): a point's pipeline, as config_load resolved it, made
 * into repro_template.c's #defines (the engine's own settings, every default lib/conf's),
 * what the template cannot model refused by name, perftest's line from the table that
 * reads perftest's, a repro run judged by the finding's own failure, and repro.c (defines
 * + template) compiling -Wall -Wextra -Werror clean for each modelled variant. */
#include "conf/perftest.h"
#include "explore/bare.h"
#include "explore/point_conf.h"
#include "explore/repro.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cmocka_cpp.h"   // last: it defines fail()

namespace {

using namespace rp;
using namespace rp::explore;

bool has(const std::string &text, const std::string &part)
{
	if (text.find(part) != std::string::npos)
		return true;
	fprintf(stderr, "'%s' not in '%s'\n", part.c_str(), text.c_str());
	return false;
}

Space space_of(const Settings &fixed)
{
	Space s;
	s.fixed = fixed;
	s.search.point_seconds = 0.4;
	s.search.perf_flag = 0.2;
	return s;
}

/* The pipeline PointConf makes of s's point p, loaded as the child's rdmapipe loads it. */
PipelineConf conf_of(const Space &s, const Point &p = {})
{
	PointConf pc;
	std::string err;
	assert_int_equal(pc.init(s, LcoreSet{}, 1, 2, &err), 0);
	PipelineConf c;
	if (pc.make(p, "test_explore_repro.conf", "test_explore_repro.json", &err, &c) != 0)
		fprintf(stderr, "%s\n", err.c_str());
	remove("test_explore_repro.conf");
	return c;
}

/* The point of these settings as repro.c's struct params (refused: "", *why). */
std::string params(const Settings &set, std::string *why)
{
	const Space s = space_of(set);
	return repro_params(conf_of(s), point_settings(s, {}), "point", why);
}

void defaults_are_the_pipelines(void **)
{
	std::string why;
	assert_true(has(params({}, &why), "{ .name = \"point\", .verb = V_WRITE_IMM, .uc = 0, .size = 64, .batch = 32, "
					  ".signal_every = 32, .sq_depth = 128, .window = 1024, .inline_send = 0, .fence = 0, .srq = 1, "
					  ".post_wr = 0, .adaptive_poll = 0, .rate = 0, .flow_window = 0, .cq_ex = { 0, 0 }, .srq_depth = { 0, 1152 }, "
					  ".srq_refill = { 0, 128 }, .reversed = 0x0, .dev_a = \"rxe0\", .dev_b = \"rxe0\", .qps = 1, .flows = 1 }"));
	// signal_every defaults to batch, sq_depth to 4 x max(batch, signal_every), window to 1024 / qps (at least batch).
	const Settings s = {{"verb", "send"}, {"size", "8192"}, {"qps", "4"}, {"batch", "2"}, {"inline", "true"}, {"fence", "true"},
			    {"recv_queue", "qp"}, {"transport", "uc"}, {"reliability", "none"}};
	assert_true(has(params(s, &why), ".verb = V_SEND, .uc = 1, .size = 8192, .batch = 2, .signal_every = 2, .sq_depth = 8, "
					 ".window = 256, .inline_send = 1, .fence = 1, .srq = 0,"));
	const Settings t = {{"verb", "fetch_add"}, {"qps", "512"}, {"batch", "64"}, {"signal_every", "128"}, {"flows", "2"},
			    {"placement", "crossing"}, {"sq_depth", "300"}, {"window", "70"}};
	assert_true(has(params(t, &why), ".verb = V_FETCH_ADD, .uc = 0, .size = 8, .batch = 64, .signal_every = 128, .sq_depth = 300, .window = 70,"));
	assert_true(has(params(t, &why), ".srq_depth = { 0, 0 }, .srq_refill = { 0, 0 }, .reversed = 0x2,"));   // no receives
	assert_true(has(params(t, &why), ".qps = 1024, .flows = 2 }"));
	assert_true(has(params({{"device", "rxe0>rxe1"}}, &why), ".dev_a = \"rxe0\", .dev_b = \"rxe1\""));
}

/* The values are the resolved conf's, not rules of the generator's own: a default that
 * lib/conf changes is what repro.c runs. */
void params_are_the_conf_as_loaded(void **)
{
	const Space s = space_of({{"qps", "4"}});
	PipelineConf c = conf_of(s);
	c.flows[0].window = 77;
	c.flows[0].sq_depth = 99;
	c.flows[0].signal_every = 5;
	std::string why;
	assert_true(has(repro_params(c, point_settings(s, {}), "point", &why), ".signal_every = 5, .sq_depth = 99, .window = 77,"));
}

/* The settings the shipped spaces use, each taking effect in repro.c. */
void post_api_cq_api_poll_and_rate_are_modelled(void **)
{
	const std::pair<Settings, std::string> cases[] = {
		{{{"post_api", "wr"}}, ".post_wr = 1,"},
		{{{"cq_api", "ex"}}, ".cq_ex = { 1, 1 },"},
		{{{"poll", "adaptive"}}, ".adaptive_poll = 1,"},
		{{{"rate", "2000"}}, ".rate = 2000,"},
		{{{"rate", "20000"}, {"flows", "2"}}, ".rate = 20000,"},
		{{{"batch", "512"}}, ".batch = 512, .signal_every = 512, .sq_depth = 2048, .window = 1024,"},   // chains of the engine's largest batch
	};
	for (const auto &[set, define] : cases) {
		std::string why;
		assert_true(has(params(set, &why), define));
	}
}

/* UC with rdmapipe's software reliability (UC's default): the UC traffic beneath it,
 * said in repro.c and beside its verdicts; plain UC says nothing. */
void uc_software_reliability_runs_the_uc_beneath(void **)
{
	std::string why;
	assert_true(has(params({{"transport", "uc"}}, &why), ".verb = V_WRITE_IMM, .uc = 1,"));
	const Space s = space_of({{"transport", "uc"}});
	const PipelineConf c = conf_of(s);
	assert_true(has(repro_caveat(c), "UC without rdmapipe's software reliability"));
	Finding f;
	f.verdict.kind = AnomalyKind::correctness;
	assert_true(has(repro_defines(s, f, {&c, nullptr}, &why), "/* UC without rdmapipe's software reliability: "));
	const Space n = space_of({{"transport", "uc"}, {"reliability", "none"}});
	const PipelineConf plain = conf_of(n);
	assert_true(repro_caveat(plain).empty());
	assert_false(has(repro_defines(n, f, {&plain, nullptr}, &why), "software reliability"));
	assert_true(repro_caveat(conf_of(space_of({}))).empty());
}

void what_is_not_modelled_is_refused_by_name(void **)
{
	const std::pair<Settings, std::string> cases[] = {
		{{{"rnr_retry", "3"}}, "rnr_retry = 3 (not modelled"},
	};
	for (const auto &[set, named] : cases) {
		std::string why;
		assert_true(params(set, &why).empty());
		assert_true(has(why, named));
	}
	std::string why;   // a setting the conf holds but the space did not name is the conf's, modelled
	assert_false(params({{"verb", "write"}, {"qps", "64"}}, &why).empty());
	assert_false(params({{"transport", "uc"}, {"reliability", "none"}}, &why).empty());
	// Flows that are not copies of one another (a base pipeline's) stay refused, named.
	const Space s = space_of({{"flows", "2"}});
	PipelineConf c = conf_of(s);
	c.flows[1].batch = 8;
	assert_true(repro_params(c, point_settings(s, {}), "point", &why).empty());
	assert_true(has(why, "flows (flow " + c.flows[1].name + " runs other traffic than " + c.flows[0].name + ")"));
}

/* The builder's flow window (graph_plan.cpp plan_flow_window): a receive-consuming verb
 * through an SRQ whose default per-QP windows add up to more than 1024 shares one of
 * 1024 over the flow's QPs (a send's QPs each up to all of it, write_imm's each its
 * slots), and the SRQ holds the flows' windows and a refill (graph_size.cpp size_lcore). */
void the_flow_window_and_the_srq_are_the_builders(void **)
{
	const std::pair<Settings, std::vector<std::string>> cases[] = {
		{{{"verb", "send"}, {"qps", "64"}},
		 {".window = 1024,", ".flow_window = 1024,", ".srq_depth = { 0, 1152 }, .srq_refill = { 0, 128 },", ".qps = 64,"}},
		{{{"verb", "write_imm"}, {"qps", "64"}}, {".window = 32,", ".flow_window = 1024,", ".srq_depth = { 0, 1152 },"}},
		{{{"verb", "send_imm"}, {"qps", "64"}, {"flows", "2"}}, {".flow_window = 1024,", ".srq_depth = { 0, 2304 }, .srq_refill = { 0, 256 },"}},
		{{{"verb", "send"}, {"qps", "64"}, {"flow_window", "512"}}, {".window = 512,", ".flow_window = 512,", ".srq_depth = { 0, 576 }, .srq_refill = { 0, 64 },"}},
		{{{"verb", "write_imm"}, {"qps", "64"}, {"flow_window", "0"}}, {".window = 32,", ".flow_window = 0,", ".srq_depth = { 0, 2304 }, .srq_refill = { 0, 256 },"}},
		{{{"verb", "send"}, {"qps", "64"}, {"recv_queue", "qp"}}, {".window = 32,", ".srq = 0,", ".flow_window = 0,", ".srq_depth = { 0, 0 },"}},
		{{{"verb", "write"}, {"qps", "64"}}, {".window = 32,", ".flow_window = 0,", ".srq_depth = { 0, 0 },"}},
		{{{"verb", "send"}, {"qps", "32"}}, {".window = 32,", ".flow_window = 0,", ".srq_depth = { 0, 1152 },"}},
	};
	for (const auto &[set, defines] : cases) {
		std::string why;
		const std::string p = params(set, &why);
		assert_false(p.empty());
		for (const std::string &d : defines)
			assert_true(has(p, d));
	}
}

/* placement = crossing: every other flow runs from the second device to the first (its
 * ends' io contexts swapped), each device's io context with an SRQ of its own. */
void crossing_flows_run_both_ways(void **)
{
	const std::pair<Settings, std::string> cases[] = {
		{{{"device", "rxeA>rxeB"}, {"placement", "crossing"}, {"flows", "2"}, {"verb", "send"}},
		 ".srq_depth = { 1152, 1152 }, .srq_refill = { 128, 128 }, .reversed = 0x2, .dev_a = \"rxeA\", .dev_b = \"rxeB\", .qps = 2, .flows = 2 }"},
		{{{"device", "rxeA>rxeB"}, {"placement", "crossing"}, {"flows", "4"}, {"qps", "2"}},
		 ".srq_depth = { 2304, 2304 }, .srq_refill = { 256, 256 }, .reversed = 0xa, .dev_a = \"rxeA\", .dev_b = \"rxeB\", .qps = 8, .flows = 4 }"},
		{{{"device", "rxeA>rxeB"}, {"placement", "same"}, {"flows", "2"}, {"verb", "send"}},
		 ".srq_depth = { 0, 2304 }, .srq_refill = { 0, 256 }, .reversed = 0x0, .dev_a = \"rxeA\", .dev_b = \"rxeB\""},
		{{{"device", "rxeA>rxeB"}, {"placement", "crossing"}, {"flows", "1"}}, ".reversed = 0x0,"},
		{{{"placement", "crossing"}, {"flows", "2"}}, ".reversed = 0x2, .dev_a = \"rxe0\", .dev_b = \"rxe0\""},   // two lcores, one device
	};
	for (const auto &[set, define] : cases) {
		std::string why;
		assert_true(has(params(set, &why), define));
	}
}

/* Each end's io context its own CQs (a base pipeline's may differ in cq_api); two ends
 * that differ in poll stay refused: one loop cannot sleep one end alone. */
void each_ends_cq_api(void **)
{
	const Space s = space_of({{"device", "rxeA>rxeB"}, {"placement", "crossing"}, {"flows", "2"}});
	PipelineConf c = conf_of(s);
	assert_int_equal(c.io_contexts.size(), 2);
	c.io_contexts[1].cq_api = CqApi::ex;
	std::string why;
	const std::string p = repro_params(c, point_settings(s, {}), "point", &why);
	const bool b_is_1 = c.io_contexts[1].device == "rxeB";
	assert_true(has(p, b_is_1 ? ".cq_ex = { 0, 1 }," : ".cq_ex = { 1, 0 },"));
	c.io_contexts[1].adaptive_poll = true;
	assert_true(repro_params(c, point_settings(s, {}), "point", &why).empty());
	assert_true(has(why, "poll (the two ends' io contexts differ"));
}

/* A list of sizes is rdmapipe's size sweep (lib/pipeline/graph_sweep.cpp): the pipeline
 * once per size, in turn, each step of its own; a performance finding's single rate
 * cannot say a sweep's. */
void a_list_of_sizes_is_a_sweep(void **)
{
	const Space s = space_of({{"flows", "2"}});
	PipelineConf c = conf_of(s);
	for (FlowConf &f : c.flows)
		f.sizes = {64, 4096, 100};
	std::string why;
	const std::string p = repro_params(c, point_settings(s, {}), "point", &why);
	assert_true(has(p, ".size = 64,") && has(p, ".steps = 3, .sweep = { 64, 4096, 100 },"));
	assert_true(repro_params(conf_of(s), point_settings(s, {}), "point", &why).find(".steps") == std::string::npos);   // one size: none
	Finding f;
	f.verdict.kind = AnomalyKind::correctness;
	assert_true(has(repro_defines(s, f, {&c, nullptr}, &why), ".steps = 3,"));
	f.verdict.kind = AnomalyKind::performance;
	f.verdict.ref_point = {0};
	assert_true(repro_defines(s, f, {&c, &c}, &why).empty());
	assert_true(has(why, "size (a list of sizes: "));
	c.flows[1].sizes = {64, 4096};   // another list: not a copy of the first flow
	assert_true(repro_params(c, point_settings(s, {}), "point", &why).empty());
	assert_true(has(why, "runs other traffic than"));
}

Space two_dims()
{
	Space s = space_of({{"device", "rxe0"}});
	Dim size{"size", {"64", "8192"}, {64, 8192}, 0};
	Dim batch{"batch", {"2", "32"}, {2, 32}, 1};
	s.dims = {size, batch};
	return s;
}

void the_kinds_defines(void **)
{
	const Space s = two_dims();
	Finding f;
	f.id = 3;
	f.minimal = {1, 0};
	f.verdict.ref_point = {};
	const PipelineConf pt = conf_of(s, f.minimal), ref = conf_of(s, {1, 1});
	std::string why;
	f.verdict.kind = AnomalyKind::correctness;
	std::string d = repro_defines(s, f, {&pt, nullptr}, &why);
	assert_true(has(d, "#define RP_KIND K_CORRECTNESS"));
	assert_true(has(d, "#define RP_POINT { .name = \"point\", .verb = V_WRITE_IMM, .uc = 0, .size = 8192, .batch = 2,"));
	assert_true(has(d, "#define RP_SECONDS 0.4"));
	assert_true(repro_defines(s, f, {}, &why).empty() && has(why, "pipeline (not read)"));
	f.verdict.kind = AnomalyKind::counters;
	f.verdict.counter = "retry_exceeded_err";
	f.verdict.reference = 0.05;
	d = repro_defines(s, f, {&pt, nullptr}, &why);
	assert_true(has(d, "#define RP_COUNTER \"retry_exceeded_err\"") && has(d, "#define RP_COUNTER_FLAG 0.05"));
	f.verdict.kind = AnomalyKind::performance;
	assert_true(repro_defines(s, f, {&pt, &ref}, &why).empty());   // no reference point: refused, named
	assert_true(has(why, "reference"));
	f.verdict.ref_point = {1, 1};
	assert_true(repro_defines(s, f, {&pt, nullptr}, &why).empty() && has(why, "reference (its pipeline was not read)"));
	d = repro_defines(s, f, {&pt, &ref}, &why);
	assert_true(has(d, "#define RP_KIND K_PERFORMANCE") && has(d, "#define RP_PERF_FLAG 0.2"));
	assert_true(has(d, "#define RP_REFERENCE { .name = \"reference\", .verb = V_WRITE_IMM, .uc = 0, .size = 8192, .batch = 32,"));
	Space b = s;   // against plain verbs: its reference the bare grid's point, judged by bare_flag
	b.search.bare_flag = 0.05;
	f.verdict.bare = true;
	d = repro_defines(b, f, {&pt, &ref}, &why);
	assert_true(has(d, "#define RP_KIND K_PERFORMANCE") && has(d, "#define RP_PERF_FLAG 0.05"));
}

void bare_lines_parse(void **)
{
	size_t k = 0;
	Outcome o;
	assert_true(bare_line("bench 3 ok: 41000 msg/s 0.0210 Gbit/s 41012 messages", &k, &o));
	assert_true(k == 3 && o.pass && o.rate == 41000 && o.gbps == 0.021 && o.messages == 41012);
	assert_true(bare_line("bench 12 failed: stall: no completion for 5 s (0 messages completed, 32 posted)", &k, &o));
	assert_true(k == 12 && !o.pass && o.rate == 0);
	assert_string_equal(o.failure.c_str(), "stall: no completion for 5 s (0 messages completed, 32 posted)");
	assert_false(bare_line("setup error: ibv_open_device (rxe0): No such device", &k, &o));
	assert_false(bare_line("benchmark 3 ok", &k, &o));
}

/* The grid (size's two values, batch at its simplest) written as one K_BENCH program,
 * compiled warning-free, run once here (no RDMA device on a build host: each point's
 * own setup error; in the VM, rates), every point answered in bare.out, bare.jsonl
 * and the report's table; what the template cannot model is refused by name. */
void bare_program_written_built_and_run(void **)
{
	if (system("command -v cc > /dev/null 2>&1 && test -e /usr/include/infiniband/verbs.h") != 0) {
		fprintf(stderr, "skipped: no cc or no libibverbs headers\n");
		return;
	}
	const std::string dir = std::filesystem::absolute("test_explore_bare.d").string();
	std::filesystem::remove_all(dir);
	std::filesystem::create_directory(dir);
	Space s = two_dims();
	s.search.point_timeout_s = 20;
	PointConf pc;
	std::string why;
	assert_int_equal(pc.init(s, LcoreSet{}, 1, 2, &why), 0);
	ChildRunner child(s, pc, ChildConf{"rdmapipe", {}, {}, dir, "", 0});
	BareReference b(s, pc, child, dir);
	assert_int_equal(b.write(&why), 0);
	assert_int_equal(b.points(), 2);
	std::stringstream c;
	c << std::ifstream(dir + "/bare/bare.c").rdbuf();
	assert_true(has(c.str(), "#define RP_KIND K_BENCH\n#define RP_BENCH { .name = \"bench\", .verb = V_WRITE_IMM, .uc = 0, .size = 64, .batch = 32,"));
	assert_true(has(c.str(), ", \\\n\t{ .name = \"bench\", .verb = V_WRITE_IMM, .uc = 0, .size = 8192, .batch = 32,"));
	assert_true(has(c.str(), "#define RP_POINT_TIMEOUT_S 20\n"));
	assert_int_equal(system(("cc -std=c11 -O2 -Wall -Wextra -Werror -o " + dir + "/werror " + dir + "/bare/bare.c -libverbs").c_str()), 0);
	b.measure("children", nullptr);
	std::stringstream out;
	out << std::ifstream(dir + "/bare/bare.out").rdbuf();
	assert_true(has(out.str(), "bench 0 ") && has(out.str(), "bench 1 "));
	const BareTable t = b.table();
	assert_int_equal(t.size(), 2);
	assert_true(t.count(Point{0, 1}) && t.count(Point{1, 1}));
	assert_true(b.confs().at(Point{1, 1}) == "bare/2.conf");
	assert_int_equal(b.record(&why), 0);
	std::ifstream jl(dir + "/bare.jsonl");
	int lines = 0;
	for (std::string l; std::getline(jl, l); lines++)
		assert_true(has(l, "{\"on\":\"children\",\"point\":{\"size\":\""));
	assert_int_equal(lines, 2);
	const std::string r = b.report_section();
	assert_true(has(r, "| size | children (") && has(r, "\n| 64 B | ") && has(r, "\n| 8192 B | "));
	Space base = two_dims();
	base.pipeline = "two-flows.conf";
	BareReference nb(base, pc, child, dir);
	assert_int_equal(nb.write(&why), -1);
	assert_true(has(why, "pipeline = two-flows.conf ("));
	assert_true(has(nb.report_section(), "\n## Bare-verbs reference (plain libibverbs)\n\nNot measured: pipeline = two-flows.conf ("));
	Space unmodelled = two_dims();
	unmodelled.fixed.push_back({"rnr_retry", "3"});
	PointConf upc;
	assert_int_equal(upc.init(unmodelled, LcoreSet{}, 1, 2, &why), 0);
	BareReference ub(unmodelled, upc, child, dir);
	assert_int_equal(ub.write(&why), -1);
	assert_true(has(why, "no point of the grid is modelled by repro_template.c: rnr_retry = 3 (not modelled"));
	std::filesystem::remove_all(dir);
}

/* A finding's command file runs through the runner as the children did, its console
 * defaulted beside it; the banner shows the same command plainly. */
void the_command_through_a_runner(void **)
{
	const Space s = two_dims();
	PointConf pc;
	ChildRunner here(s, pc, ChildConf{"rdmapipe", {"-l", "0-1"}, {"--plant", "x=y"}, "/tmp", "", 0});
	assert_string_equal(here.command("p.conf").c_str(), "rdmapipe -l 0-1 -- --plant 'x=y' -f p.conf");
	assert_string_equal(here.shown_command("p.conf").c_str(), "rdmapipe -l 0-1 -- --plant 'x=y' -f p.conf");
	ChildRunner there(s, pc, ChildConf{"rdmapipe", {"-l", "0-1"}, {}, "/tmp", "ssh h --", 0});
	assert_string_equal(there.command("p.conf").c_str(),
		"RDMAPIPE_EXPLORE_CONSOLE=${RDMAPIPE_EXPLORE_CONSOLE:-$PWD/reproduce.console} "
		"sh -c 'ssh h -- \"$@\"' rdmapipe-explore-runner rdmapipe -l 0-1 -- -f p.conf");
	assert_string_equal(there.shown_command("p.conf").c_str(), "ssh h -- rdmapipe -l 0-1 -- -f p.conf");
}

std::string perftest_of(const Settings &set, const std::string &device = "rxe0", bool cq_ex = false)
{
	const PipelineConf c = conf_of(space_of(set));
	return perftest_command({c.flows[0], 1, device, true, false, cq_ex, 1});
}

void perftest_where_it_can_say_the_point(void **)
{
	const std::string c = perftest_of({{"verb", "write"}, {"size", "8192"}, {"qps", "4"}, {"transport", "uc"},
					   {"reliability", "none"}, {"inline", "true"}});
	assert_true(has(c, "ib_write_bw -d rxe0 -s 8192 -t 128 -c UC -q 4 -I 8192 -Q 32 -l 32 -D 1 --use_old_post_send"));
	assert_true(has(perftest_of({{"verb", "write_imm"}, {"post_api", "wr"}}), "ib_write_bw -d rxe0 -s 64 -t 128 -q 1 -Q 32 -l 32 -D 1 --write_with_imm"));
	assert_true(has(perftest_of({{"verb", "cmp_swap"}}), "ib_atomic_bw -d rxe0 -s 8 -t 128 -q 1 -Q 32 -A CMP_AND_SWAP"));
	assert_true(has(perftest_of({{"verb", "send"}, {"rate", "2000"}}), "--use-srq --rate_limit 2000 --rate_units p"));
	assert_true(perftest_of({{"fence", "true"}}).empty());   // perftest has no fence
	assert_true(perftest_of({}, "rxeA>rxeB").empty());        // two devices: two perftest ends, not one line
	assert_true(perftest_of({}, "rxe0", true).empty());       // perftest polls with ibv_poll_cq only
}

/* One table both ways: perftest's line, read back by the front end, is the flow again. */
void perftest_line_reads_back_as_the_flow(void **)
{
	const std::string line = perftest_of({{"verb", "send"}, {"size", "4096"}, {"qps", "2"}, {"batch", "8"}, {"signal_every", "4"}});
	std::vector<std::string> args, out;
	size_t at = line.find(' ') + 1;
	for (size_t sp; (sp = line.find(' ', at)) != std::string::npos; at = sp + 1)
		args.push_back(line.substr(at, sp - at));
	args.push_back(line.substr(at));
	PerftestReportConf rc;
	std::string err;
	assert_int_equal(perftest_translate("send_bw", args, &out, &rc, &err), 0);
	std::string joined;
	for (const std::string &a : out)
		joined += a + " ";
	assert_true(has(joined, "-d rxe0 --sq-depth 32 -Q 2 -S 4 -b 8 -t 1 -v send -s 4096 "));
}

/* A repro run shows a finding only with the finding's own failure. */
void a_repro_run_is_judged_by_the_findings_failure(void **)
{
	Finding f;
	f.verdict.kind = AnomalyKind::correctness;
	f.minimal_outcome.failure = "flow flow0: payload mismatch at message 3";
	assert_string_equal(finding_failure(f).c_str(), "data");
	f.minimal_outcome.failure = "stalled: no credit or completion for the send queues";
	assert_string_equal(finding_failure(f).c_str(), "stall");
	f.minimal_outcome.status = RunStatus::hung;
	f.minimal_outcome.failure = "no answer within 60 s";
	assert_string_equal(finding_failure(f).c_str(), "hang");
	f.minimal_outcome.status = RunStatus::host_hung;   // --runner: its host stopped answering
	assert_string_equal(finding_failure(f).c_str(), "hang");
	f.verdict.kind = AnomalyKind::counters;
	assert_string_equal(finding_failure(f).c_str(), "counter");
	assert_string_equal(repro_failure(1, "data: payload mismatch: QP 0 message 3 at byte 0").c_str(), "data");
	assert_string_equal(repro_failure(124, "").c_str(), "hang");
	assert_string_equal(repro_failure(0, "ok: 100 messages in 1.00 s verified").c_str(), "");
	assert_true(repro_shows("data", "data"));
	assert_false(repro_shows("data", "completion"));   // another failure: labelled as such
	assert_true(repro_shows("hang", "stall") && repro_shows("stall", "hang"));
	assert_false(repro_shows("stall", "data"));
	assert_false(repro_shows("counter", "data"));       // a counters finding is not shown by a payload error
	assert_true(repro_shows("", "completion") && !repro_shows("", "counter"));
}

/* repro.c compiles warning-free for each variant it models (cc and libibverbs' headers:
 * the host's; skipped without cc). */
void repro_c_compiles(void **)
{
	if (system("command -v cc > /dev/null 2>&1 && test -e /usr/include/infiniband/verbs.h") != 0) {
		fprintf(stderr, "skipped: no cc or no libibverbs headers\n");
		return;
	}
	const Settings variants[] = {{}, {{"post_api", "wr"}}, {{"cq_api", "ex"}}, {{"poll", "adaptive"}}, {{"rate", "2000"}},
				     {{"verb", "send"}, {"qps", "64"}}, {{"placement", "crossing"}, {"flows", "2"}}};
	for (const Settings &v : variants) {
		Space s = two_dims();
		s.fixed.insert(s.fixed.end(), v.begin(), v.end());
		Finding f;
		f.minimal = {1, 0};
		f.verdict.kind = AnomalyKind::performance;
		f.verdict.ref_point = {1, 1};
		const PipelineConf pt = conf_of(s, f.minimal), ref = conf_of(s, f.verdict.ref_point);
		std::string why;
		const std::string defines = repro_defines(s, f, {&pt, &ref}, &why);
		assert_false(defines.empty());
		std::ofstream("test_explore_repro.c") << repro_source(defines);
		assert_int_equal(system("cc -std=c11 -O2 -Wall -Wextra -Werror -o test_explore_repro.bin test_explore_repro.c -libverbs"), 0);
	}
	const Space s = space_of({});   // a size sweep's
	PipelineConf c = conf_of(s);
	c.flows[0].sizes = {64, 8192};
	c.io_contexts[1].cq_api = CqApi::ex;   // and the ends' CQs read by either API
	Finding f;
	f.verdict.kind = AnomalyKind::correctness;
	std::string why;
	const std::string defines = repro_defines(s, f, {&c, nullptr}, &why);
	assert_true(has(defines, ".steps = 2,") && has(defines, ".cq_ex = { 0, 1 },"));
	std::ofstream("test_explore_repro.c") << repro_source(defines);
	assert_int_equal(system("cc -std=c11 -O2 -Wall -Wextra -Werror -o test_explore_repro.bin test_explore_repro.c -libverbs"), 0);
	remove("test_explore_repro.c");
	remove("test_explore_repro.bin");
}

} // namespace

int main()
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults_are_the_pipelines),
		cmocka_unit_test(params_are_the_conf_as_loaded),
		cmocka_unit_test(post_api_cq_api_poll_and_rate_are_modelled),
		cmocka_unit_test(uc_software_reliability_runs_the_uc_beneath),
		cmocka_unit_test(what_is_not_modelled_is_refused_by_name),
		cmocka_unit_test(the_flow_window_and_the_srq_are_the_builders),
		cmocka_unit_test(crossing_flows_run_both_ways),
		cmocka_unit_test(a_list_of_sizes_is_a_sweep),
		cmocka_unit_test(each_ends_cq_api),
		cmocka_unit_test(the_kinds_defines),
		cmocka_unit_test(perftest_where_it_can_say_the_point),
		cmocka_unit_test(perftest_line_reads_back_as_the_flow),
		cmocka_unit_test(a_repro_run_is_judged_by_the_findings_failure),
		cmocka_unit_test(repro_c_compiles),
		cmocka_unit_test(bare_lines_parse),
		cmocka_unit_test(bare_program_written_built_and_run),
		cmocka_unit_test(the_command_through_a_runner),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
