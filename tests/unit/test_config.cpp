/* Pipeline configuration: every malformed file of the corpus in tests/conf/bad/ fails
 * with exactly the error on its first line ("# expect: {file}:LINE: PATH: message"),
 * every good one (tests/conf/good/, conf/) loads; plus the did-you-mean hint and the
 * EAL lcore-set parsing the cross-checks use.
 *   test_config TESTS_CONF_DIR CONF_DIR */
#include "conf/config.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cmocka_cpp.h"   // last: it defines fail()

namespace {

std::string g_tests_dir, g_conf_dir;

std::vector<std::string> conf_files(const std::string &dir)
{
	std::vector<std::string> out;
	if (DIR *d = opendir(dir.c_str())) {
		while (dirent *e = readdir(d)) {
			std::string n = e->d_name;
			if (n.size() > 5 && n.compare(n.size() - 5, 5, ".conf") == 0)
				out.push_back(dir + "/" + n);
		}
		closedir(d);
	}
	std::sort(out.begin(), out.end());
	return out;
}

rp::LcoreSet lcores_0_to_2()
{
	rp::LcoreSet s;
	assert_true(rp::lcore_set_from_list("0-2", &s));
	return s;
}

void malformed_corpus(void **)
{
	std::vector<std::string> files = conf_files(g_tests_dir + "/bad");
	assert_true(files.size() >= 30);
	for (const std::string &f : files) {
		std::ifstream in(f);
		std::string first;
		std::getline(in, first);
		const std::string tag = "# expect: ";
		assert_true(first.compare(0, tag.size(), tag) == 0);
		std::string want = first.substr(tag.size());
		size_t at = want.find("{file}");
		assert_true(at != std::string::npos);
		want.replace(at, 6, f);
		rp::PipelineConf c;
		std::string err;
		int rc = rp::config_load(f, lcores_0_to_2(), &c, &err);
		if (rc == 0 || err != want)
			print_error("%s:\n  want: %s\n  got:  %s\n", f.c_str(), want.c_str(), rc == 0 ? "(loaded)" : err.c_str());
		assert_int_equal(rc, -1);
		assert_string_equal(err.c_str(), want.c_str());
	}
}

void good_files_load(void **)
{
	std::vector<std::string> files = conf_files(g_tests_dir + "/good");
	std::vector<std::string> examples = conf_files(g_conf_dir);
	/* conf/explore-*.conf are rdmapipe-explore's space files (explore_app checks them). */
	std::erase_if(examples, [](const std::string &f) { return f.find("/explore-") != std::string::npos; });
	assert_true(!examples.empty());
	files.insert(files.end(), examples.begin(), examples.end());
	for (const std::string &f : files) {
		rp::PipelineConf c;
		std::string err;
		int rc = rp::config_load(f, rp::LcoreSet{}, &c, &err);
		if (rc != 0)
			print_error("%s: %s\n", f.c_str(), err.c_str());
		assert_int_equal(rc, 0);
		assert_int_equal(c.version, rp::kConfigVersion);
		assert_false(c.stages.empty());
	}
}

void base_file_values(void **)
{
	rp::PipelineConf c;
	std::string err;
	assert_int_equal(rp::config_load(g_tests_dir + "/good/base.conf", lcores_0_to_2(), &c, &err), 0);
	assert_int_equal(c.flows.size(), 1);
	const rp::FlowConf &f = c.flows[0];
	assert_true(f.verb == rp::Verb::write_imm);
	assert_int_equal(f.sizes[0], 64);
	assert_int_equal(f.signal_every, 32);    // defaults to batch
	assert_int_equal(f.sq_depth, 128);       // 4 x max(batch, signal_every)
	assert_int_equal(f.window, 1024);
	assert_string_equal(f.peer.c_str(), "loopback");
	assert_int_equal(c.io_contexts[1].srq_refill, 128);
	assert_int_equal(c.stages[2].inputs.size(), 1);
	assert_true(c.stages[2].kind == rp::stage_kind_named("verify"));
	assert_string_equal(c.run.json.c_str(), "out.json");
	assert_true(c.run.stats_period_s == 1.0);
}

/* A pipeline made in code, as the command line makes one: loopback flow f from an
 * rdma_tx stage on lcore 1 to an rdma_rx stage on lcore 2. */
rp::PipelineConf plain_conf()
{
	rp::PipelineConf c;
	c.file = "(test)";
	c.version = rp::kConfigVersion;
	rp::DeviceConf d;
	d.name = "rxe0";
	c.devices.push_back(d);
	rp::FlowConf f;
	f.name = "f";
	f.peer = "loopback";
	f.signal_every = 32;
	f.sq_depth = 128;
	f.window = 1024;
	c.flows.push_back(f);
	for (rp::FlowEnd end : {rp::FlowEnd::requester, rp::FlowEnd::responder}) {
		rp::StageConf st;
		st.name = end == rp::FlowEnd::requester ? "tx" : "rx";
		st.kind = rp::stage_kind_of_end(end);
		st.lcore = end == rp::FlowEnd::requester ? 1 : 2;
		st.flow = "f";
		c.stages.push_back(st);
	}
	return c;
}

/* conf_validate reads the structs alone: no file behind them. A refusal names the key
 * where the object says on which line it was set, else the object. */
void validate_plain_structs(void **)
{
	rp::PipelineConf c = plain_conf();
	std::string err;
	assert_int_equal(rp::conf_validate(&c, &err), 0);
	assert_int_equal(c.io_contexts.size(), 2);   // derived for the two RDMA lcores
	assert_true(c.io_contexts[0].derived && c.io_contexts[1].derived);

	c = plain_conf();
	c.flows[0].window = 16;
	assert_int_equal(rp::conf_validate(&c, &err), -1);
	assert_string_equal(err.c_str(), "(test):0: flows.[0]: 16 is below batch 32: a chain would not fit the receive window");
	c = plain_conf();
	c.flows[0].window = 16;
	c.flows[0].line = 3;
	c.flows[0].keys.set("window", 5);
	assert_int_equal(rp::conf_validate(&c, &err), -1);
	assert_string_equal(err.c_str(), "(test):5: flows.[0].window: 16 is below batch 32: a chain would not fit the receive window");

	c = plain_conf();
	c.stages[1].flow = "g";
	assert_int_equal(rp::conf_validate(&c, &err), -1);
	assert_string_equal(err.c_str(), "(test):0: stages.[1]: no flow named 'g'; did you mean 'f'?");
	c = plain_conf();
	c.stages[1].lcore = 1;
	assert_int_equal(rp::conf_validate(&c, &err), -1);
	assert_string_equal(err.c_str(), "(test):0: flows.[0]: flow 'f' has both ends on lcore 1: its rdma_tx and rdma_rx stages "
					 "need lcores of their own");
}

/* Loads `text` as a file; *name gets its path (gone on return). */
int load_text(const std::string &text, rp::PipelineConf *c, std::string *err, std::string *name)
{
	char path[] = "/tmp/test_config_XXXXXX";
	const int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	std::ofstream(path) << text;
	*name = path;
	const int rc = rp::config_load(path, rp::LcoreSet{}, c, err);
	unlink(path);
	return rc;
}

/* run.connect_timeout: read where a flow connects to another host (default 10 s), its
 * value checked as --connect-timeout's, and refused where no flow waits for a host. */
void connect_timeout_key(void **)
{
	const std::string server = "version = 1;\n"
				   "devices = ( { name = \"rxeB\"; } );\n"
				   "flows = ( { name = \"bw\"; listen = \"10.2.0.2:18800\"; verb = \"send\"; pool = \"p\"; } );\n"
				   "pools = ( { name = \"p\"; elt_size = 64; count = 2048; } );\n"
				   "stages = ( { name = \"rx\"; kind = \"rdma_rx\"; lcore = 1; flow = \"bw\"; } );\n";
	rp::PipelineConf c;
	std::string err, f;
	assert_int_equal(load_text(server, &c, &err, &f), 0);
	assert_true(c.run.connect_timeout_s == 10);
	c = rp::PipelineConf{};
	assert_int_equal(load_text(server + "run = { connect_timeout = 2.5; };\n", &c, &err, &f), 0);
	assert_true(c.run.connect_timeout_s == 2.5);
	c = rp::PipelineConf{};
	assert_int_equal(load_text(server + "run = { connect_timeout = 86400; };\n", &c, &err, &f), 0);
	assert_true(c.run.connect_timeout_s == 86400);
	const std::pair<const char *, const char *> bad[] = {
		{"0", "0 is not a number of seconds in (0, 86400]"},
		{"-1.5", "-1.5 is not a number of seconds in (0, 86400]"},
		{"86401", "86401 is not a number of seconds in (0, 86400]"},
		{"\"2\"", "expected a number of seconds"},
		{"true", "expected a number of seconds"},
	};
	for (const auto &[value, why] : bad) {
		c = rp::PipelineConf{};
		assert_int_equal(load_text(server + "run = {\n  connect_timeout = " + value + ";\n};\n", &c, &err, &f), -1);
		assert_string_equal(err.c_str(), (f + ":7: run.connect_timeout: " + why).c_str());
	}
	c = rp::PipelineConf{};
	assert_int_equal(load_text(server + "run = { connect_timout = 2; };\n", &c, &err, &f), -1);
	assert_string_equal(err.c_str(), (f + ":6: run.connect_timout: unknown setting; did you mean 'connect_timeout'?").c_str());
	/* Loopback flows only: nothing waits for another host. */
	std::string loopback = server;
	const std::string listen = "listen = \"10.2.0.2:18800\"", stages = "stages = (";
	loopback.replace(loopback.find(listen), listen.size(), "peer = \"loopback\"");
	loopback.replace(loopback.find(stages), stages.size(), stages + " { name = \"tx\"; kind = \"rdma_tx\"; lcore = 2; flow = \"bw\"; },");
	c = rp::PipelineConf{};
	assert_int_equal(load_text(loopback, &c, &err, &f), 0);
	/* ... but an RC loopback's two ends connect through rdma_cm, and that waits. */
	c = rp::PipelineConf{};
	assert_int_equal(load_text(loopback + "run = { connect_timeout = 2; };\n", &c, &err, &f), 0);
	assert_true(c.run.connect_timeout_s == 2);
	assert_true(!rp::conf_connects_hosts(c) && rp::conf_waits_to_connect(c));
	/* Connected directly, nothing waits. */
	c = rp::PipelineConf{};
	assert_int_equal(load_text(loopback + "run = { connect = \"direct\"; connect_timeout = 2; };\n", &c, &err, &f), -1);
	assert_string_equal(err.c_str(), (f + ":6: run.connect_timeout: nothing waits for a connection: no flow connects to "
					     "another host (--listen or --peer; in a file, a flow's listen or peer = \"HOST:PORT\", "
					     "or a pattern), and the loopback flows connect their QPs directly (run.connect = "
					     "\"direct\", or UC), not through rdma_cm").c_str());
}

void missing_file(void **)
{
	rp::PipelineConf c;
	std::string err;
	assert_int_equal(rp::config_load("/nonexistent/x.conf", rp::LcoreSet{}, &c, &err), -1);
	assert_string_equal(err.c_str(), "/nonexistent/x.conf: cannot read the file: No such file or directory");
}

void did_you_mean(void **)
{
	const std::vector<std::string> keys = {"batch", "signal_every", "sq_depth", "verb", "qps"};
	assert_string_equal(rp::closest_name("bach", keys).c_str(), "batch");
	assert_string_equal(rp::closest_name("signal_evry", keys).c_str(), "signal_every");
	assert_string_equal(rp::closest_name("QPS", keys).c_str(), "qps");
	assert_string_equal(rp::closest_name("colour", keys).c_str(), "");   // nothing close
}

void lcore_sets(void **)
{
	rp::LcoreSet s;
	assert_true(rp::lcore_set_from_list("0-2,5", &s));
	assert_true(s.contains(0) && s.contains(2) && s.contains(5));
	assert_false(s.contains(3) || s.contains(6));
	assert_false(rp::lcore_set_from_list("2-1", &s));
	assert_false(rp::lcore_set_from_list("x", &s));
	assert_true(rp::lcore_set_from_mask("0x6", &s));
	assert_true(s.contains(1) && s.contains(2));
	assert_false(s.contains(0));
	char a0[] = "rdmapipe", a1[] = "-l", a2[] = "0-1", a3[] = "--in-memory";
	char *argv[] = {a0, a1, a2, a3};
	rp::LcoreSet e = rp::lcore_set_from_eal_args(4, argv);
	assert_true(e.known && e.contains(1));
	assert_false(e.contains(2));
	char *none[] = {a0, a3};
	assert_false(rp::lcore_set_from_eal_args(2, none).known);   // unknown: lcores not checked
	assert_true(rp::lcore_set_from_eal_args(2, none).contains(7));
}

} // namespace

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s TESTS_CONF_DIR CONF_DIR\n", argv[0]);
		return 2;
	}
	g_tests_dir = argv[1];
	g_conf_dir = argv[2];
	const CMUnitTest tests[] = {
		cmocka_unit_test(malformed_corpus),
		cmocka_unit_test(good_files_load),
		cmocka_unit_test(base_file_values),
		cmocka_unit_test(validate_plain_structs),
		cmocka_unit_test(connect_timeout_key),
		cmocka_unit_test(missing_file),
		cmocka_unit_test(did_you_mean),
		cmocka_unit_test(lcore_sets),
	};
	return cmocka_run_group_tests_name("config", tests, nullptr, nullptr);
}
