/* The perftest front end (perftest_front.h): argument translation in, perftest's table
 * out; everything between is the one path every run takes. */
#include "perftest_front.h"

#include "common.h"
#include "control/perftest_report.h"
#include "log/log.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace rp {

namespace {

struct FrontState {
	bool header = false;               // printed (before the first row)
	std::vector<PerftestRun> runs;     // for --out_json
} g_front;

void usage(const char *program, const std::string &test)
{
	printf("Usage: %s%s%s [perftest options] [server host]\n"
	       "rdmapipe's perftest front end: perftest's command line and table, every message verified.\n"
	       "Without a host: the server; with one: the client. EAL arguments: --eal \"...\" or $RDMAPIPE_EAL\n"
	       "(default: -l 0-1, hugepages if there are any). Tests:", program, test.empty() ? " TEST" : "",
	       "");
	for (const std::string &t : perftest_tests())
		printf(" ib_%s", t.c_str());
	printf("\n\nperftest options, and what each becomes (docs/perftest.md):\n");
	for (const PerftestFlagDoc &d : perftest_flag_docs())
		printf("  %-28s %-11s %s\n", d.flags.c_str(), d.fate.c_str(), d.what.c_str());
}

const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

} // namespace

std::string perftest_invoked(int argc, char **argv)
{
	const char *base = base_name(argv[0]);
	const std::string t = perftest_test_of(argv[0], argc > 1 ? argv[1] : "");
	return t.empty() && strcmp(base, "rdmapipe-perftest") == 0 ? "?" : t;   // "?": no test named
}

int perftest_main(int argc, char **argv, const std::string &test,
		  int (*run_args)(int argc, char **argv, const PerftestReportConf *pt))
{
	const char *base = base_name(argv[0]);
	const bool named = strcmp(base, "rdmapipe-perftest") == 0;   // its test the first argument
	if (test == "?") {   // rdmapipe-perftest with no test: its usage, or which test is not one
		if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
			usage(argv[0], "");
			return argc < 2 ? kExitUsage : kExitOk;
		}
		RP_LOG(ERR, CONF, "%s: '%s' is not a test (ib_write_bw, ib_send_lat, ...: --help lists them)\n", base, argv[1]);
		return kExitUsage;
	}
	std::vector<std::string> args(argv + 1 + (named ? 1 : 0), argv + argc);
	for (const std::string &a : args) {
		if (a == "-h" || a == "--help") {
			usage(argv[0], named ? "" : test);
			return kExitOk;
		}
		if (a == "-V" || a == "--version") {
			printf("rdmapipe %s: perftest's command line for ib_%s (perftest 4.5's and 26.04's flags)\n", RDMAPIPE_VERSION, test.c_str());
			return kExitOk;
		}
	}
	const std::vector<std::string> eal = perftest_eal_args(&args, getenv("RDMAPIPE_EAL"));
	std::vector<std::string> ours;
	PerftestReportConf pt;
	std::string err;
	if (perftest_translate(test, args, &ours, &pt, &err) != 0) {
		RP_LOG(ERR, CONF, "%s: %s\n", base, err.c_str());
		return kExitUsage;
	}
	std::vector<std::string> all{argv[0]};
	all.insert(all.end(), eal.begin(), eal.end());
	all.push_back("--");
	all.insert(all.end(), ours.begin(), ours.end());
	RP_LOG(DEBUG, CONF, "%s: as rdmapipe's arguments:%s\n", base, [&] {
		std::string s;
		for (const std::string &a : all)
			s += " " + a;
		return s;
	}().c_str());
	std::vector<char *> v;
	for (std::string &a : all)
		v.push_back(a.data());
	v.push_back(nullptr);
	return run_args(static_cast<int>(all.size()), v.data(), &pt);
}

PerftestReportConf perftest_settled(PerftestReportConf pt, const RunOptions &o)
{
	if (!pt.bw) {   // one operation in flight, as perftest's latency tests
		pt.post_list = pt.tx_depth = 1;
		return pt;
	}
	pt.post_list = o.batch;   // (parse_options has derived the other two where not given)
	pt.cq_mod = o.signal_every;
	pt.tx_depth = o.sq_depth;
	return pt;
}

void perftest_step(const RunOptions &cli, const Results &res, const Device &dev)
{
	Report out;
	const PerftestPort port = perftest_port_of(dev);
	if (!g_front.header) {
		perftest_header(out, cli.perftest, res, port);
		g_front.header = true;
	}
	g_front.runs.push_back(perftest_run_of(cli.perftest, res, port));
	perftest_row(out, cli.perftest, g_front.runs.back().f, res.flows.empty() ? nullptr : res.flows[0].latency);
	out.flush();
}

int perftest_finish(const RunOptions &cli, int rc)
{
	if (g_front.header) {
		Report out;
		perftest_footer(out, cli.perftest);
		out.flush();
	}
	const PerftestReportConf &c = cli.perftest;
	for (const PerftestRun &r : g_front.runs) {   // -w, -y: perftest's floors, its words on stderr
		if (!r.f.observed)
			continue;
		if (c.limit_bw >= 0 && r.f.bw_avg < c.limit_bw) {
			fprintf(stderr, "Error: BW result is below bw limit\n");
			rc = rc == kExitOk ? kExitRunFailed : rc;
		}
		if (c.limit_msgrate >= 0 && r.f.msg_rate < c.limit_msgrate) {
			fprintf(stderr, "Error: Msg rate  is below msg_rate limit\n");
			rc = rc == kExitOk ? kExitRunFailed : rc;
		}
	}
	std::string err;
	if (cli.perftest.json && perftest_write_json(cli.perftest.json_file, cli.perftest, g_front.runs, &err) != 0) {
		RP_LOG(ERR, APP, "rdmapipe: %s\n", err.c_str());
		return rc == kExitOk ? kExitRunFailed : rc;
	}
	return rc;
}

} // namespace rp
