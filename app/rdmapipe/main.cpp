/* rdmapipe: EAL arguments, then ours after "--". The only place that exits. */
#include "conf/cli_pipeline.h"
#include "conf/config.h"
#include "conf/options.h"
#include "common.h"
#include "graph_run.h"
#include "job_run.h"
#include "perftest_front.h"
#include "points.h"

#include "control/telemetry.h"
#include "verbs/device.h"
#include "pipeline/graph.h"
#include "log/log.h"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_version.h>

#include <infiniband/verbs.h>

#include <dlfcn.h>
#include <stdlib.h>

#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

/* rdmapipe [EAL options] --check FILE: validate a pipeline, no device, no EAL. The
 * EAL options, when given, supply the lcore set the stages are checked against. */
void print_plan(const rp::Graph &g);

int check_config(int eal_argc, char **argv, const char *file)
{
	rp::LcoreSet lcores = rp::lcore_set_from_eal_args(eal_argc, argv);
	rp::PipelineConf c;
	std::string err;
	if (rp::config_load(file, lcores, &c, &err) != 0) {
		RP_LOG(ERR, CONF, "rdmapipe: %s\n", err.c_str());
		return rp::kExitUsage;
	}
	printf("%s: valid (schema %d): %zu device(s), %zu pool(s), %zu io context(s), %zu flow(s), %zu ring(s), "
	       "%zu stage(s)%s\n",
	       file, c.version, c.devices.size(), c.pools.size(), c.io_contexts.size(), c.flows.size(), c.rings.size(),
	       c.stages.size(), lcores.known ? "" : "; lcores not checked (no -l/-c given)");
	/* The sizes the builder derives (the file's larger values included), per step of
	 * a size sweep. */
	std::vector<rp::PipelineConf> steps;
	if (rp::graph_sweep(c, &steps, &err) != 0) {
		RP_LOG(ERR, CONF, "rdmapipe: %s\n", err.c_str());
		return rp::kExitUsage;
	}
	if (c.pattern.on()) {   // each rank's pipeline, for the smallest job the pattern takes
		uint32_t ranks = 0;
		if (rp::check_job(c, &ranks, &err) != 0) {
			RP_LOG(ERR, PIPELINE, "rdmapipe: %s\n", err.c_str());
			return rp::kExitUsage;
		}
		printf("  pattern %s over the job's ranks: planned for every rank of a job of %u (the pairs are known at "
		       "launch: mpirun -np N)\n", rp::pattern_kind_name(c.pattern.kind), ranks);
		return rp::kExitOk;
	}
	for (size_t k = 0; k < steps.size(); k++) {
		rp::Graph g;
		if (rp::graph_plan(steps[k], &g, &err) != 0) {
			RP_LOG(ERR, PIPELINE, "rdmapipe: %s\n", err.c_str());
			return rp::kExitUsage;
		}
		if (steps.size() > 1)
			printf("  size sweep, step %zu of %zu:\n", k + 1, steps.size());
		print_plan(g);
	}
	return rp::kExitOk;
}

/* What --check prints of a plan: the sizes the builder derived. */
void print_plan(const rp::Graph &g)
{
	for (const auto &l : g.lcores)
		if (l->conf && l->has_roles())
			printf("  lcore %u (%s%s): send CQ %" PRIu64 ", receive CQ %" PRIu64 ", %s %" PRIu64 " (refill %s)%s\n",
			       l->lcore, l->conf->device.c_str(), l->conf->derived ? ", io context derived" : "", l->send_cq, l->recv_cq,
			       l->conf->rq_per_qp ? "receives in the QPs' own queues" : "SRQ", l->srq,
			       l->conf->rq_per_qp ? "an eighth of each" : std::to_string(l->srq_threshold).c_str(),
			       l->rx_pool_n ? (", receive pool " + std::to_string(l->rx_pool_n) + " x " + std::to_string(l->rx_bytes) + " B").c_str() : "");
	for (const auto &f : g.flows)
		if (!f->lanes.empty()) {
			std::string lcs;
			for (const auto &ln : f->lanes)
				lcs += (lcs.empty() ? "" : ",") + std::to_string(ln->lcore->lcore);
			printf("  flow %s: %zu lanes on lcores %s, %s, send pool %u x %u B%s\n", f->conf->name.c_str(), f->lanes.size(),
			       lcs.c_str(), f->share_qps ? "every QP shared by all (one send CQ)" : "each its own QPs and send CQ",
			       f->share_qps ? f->shape.tx_pool_n : role_shape(f->lanes[0]->params).tx_pool_n, f->params.msg_bytes,
			       f->share_qps ? "" : " each");
		} else if (!f->tx)
			printf("  flow %s: received here from %s on another host (%u B messages)\n", f->conf->name.c_str(),
			       f->listens() ? "its client" : "the server it dials", f->params.msg_bytes);
		else if (f->fed && !f->has_gen)
			printf("  flow %s: sends what its ring brings (%u B messages, no send pool of its own)\n",
			       f->conf->name.c_str(), f->params.msg_bytes);
		else
			printf("  flow %s: send pool %u x %u B\n", f->conf->name.c_str(), f->shape.tx_pool_n, f->params.msg_bytes);
}

/* The versions a bug report needs: ours, and DPDK's and rdma-core's both as loaded
 * now and as built against (a package upgrade can part them). rdma-core's release is
 * the tail of libibverbs' file name: libibverbs.so.1.14.44.0 is rdma-core 44.0. */
void print_version()
{
	printf("rdmapipe %s\n", RDMAPIPE_VERSION);
	const char *dpdk = rte_version();
	if (strncmp(dpdk, "DPDK ", 5) == 0)
		dpdk += 5;
	printf("DPDK %s (built against %s)\n", dpdk, RDMAPIPE_DPDK_BUILT);
	std::string lib = "unknown";
	Dl_info info{};
	if (dladdr(reinterpret_cast<void *>(&ibv_get_device_list), &info) != 0 && info.dli_fname != nullptr) {
		char *real = realpath(info.dli_fname, nullptr);
		lib = real ? real : info.dli_fname;
		free(real);
		lib = lib.substr(lib.rfind('/') + 1);
	}
	const std::string stem = "libibverbs.so.";
	std::string release = "unknown";
	if (lib.compare(0, stem.size(), stem) == 0) {   // 1.14.44.0: release 44.0
		const std::string v = lib.substr(stem.size());
		const size_t dot = v.find('.', v.find('.') + 1);
		if (dot != std::string::npos)
			release = v.substr(dot + 1);
	}
	printf("rdma-core %s (%s; built against libibverbs %s)\n", release.c_str(), lib.c_str(), RDMAPIPE_IBVERBS_BUILT);
}

/* What main's steps return to go on (every other value is the exit status). */
constexpr int kGoOn = -1;

/* EAL's arguments come before "--", ours after. Ours are parsed before EAL starts: a
 * typo costs no hugepages. The few options that end the run here (--help, --version,
 * --check) are taken from anywhere before "--" too. */
int scan_eal_args(int argc, char **argv, int *eal_argc)
{
	*eal_argc = argc;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			*eal_argc = i;
			break;
		}
	for (int i = 1; i < *eal_argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			printf("%s", rp::options_usage());
			printf("\nEAL options come before \"--\" (see 'rdmapipe --eal-help' or DPDK's EAL guide),\n"
			       "for example: -l 0-1 --in-memory, or -l 0-1 --no-huge -m 512.\n");
			return rp::kExitOk;
		}
		if (strcmp(argv[i], "--version") == 0) {
			print_version();
			return rp::kExitOk;
		}
		if (strcmp(argv[i], "--check") == 0) {
			if (i + 1 >= *eal_argc) {
				RP_LOG(ERR, APP, "rdmapipe: --check needs a configuration file\n");
				return rp::kExitUsage;
			}
			return check_config(*eal_argc, argv, argv[i + 1]);
		}
		if (strcmp(argv[i], "--eal-help") == 0)
			argv[i] = const_cast<char *>("--help");   // let EAL print its own usage
	}
	return kGoOn;
}

/* Our options, after "--". */
int parse_app_args(int argc, char **argv, int eal_argc, rp::RunOptions *opts)
{
	std::string err;
	int app_argc = argc - eal_argc;
	char **app_argv = argv + eal_argc;
	rp::ParseResult pr = rp::ParseResult::ok;
	if (app_argc > 0) {
		char *saved = app_argv[0];
		app_argv[0] = argv[0];   // getopt wants a program name first
		pr = rp::parse_options(app_argc, app_argv, opts, &err);
		app_argv[0] = saved;
	} else {
		char *only[] = {argv[0], nullptr};
		pr = rp::parse_options(1, only, opts, &err);
	}
	switch (pr) {
	case rp::ParseResult::help:
		printf("%s", rp::options_usage());
		return rp::kExitOk;
	case rp::ParseResult::version:
		print_version();
		return rp::kExitOk;
	case rp::ParseResult::error:
		RP_LOG(ERR, CONF, "rdmapipe: %s\n\n%s", err.c_str(), rp::options_usage());
		return rp::kExitUsage;
	case rp::ParseResult::ok:
		break;
	}
	return kGoOn;
}

/* A pipeline file is read and checked completely before EAL takes any resource. */
int load_and_check(int eal_argc, char **argv, const rp::RunOptions &opts, rp::PipelineConf *conf)
{
	const int rc = rp::load_pipeline(rp::lcore_set_from_eal_args(eal_argc, argv), opts.config_file, opts, conf);
	return rc == rp::kExitOk ? kGoOn : rc;
}

/* A command-line run is a pipeline too: --dump-conf prints it. */
int dump_conf(int eal_argc, char **argv, rp::RunOptions opts, bool two_process)
{
	unsigned tx, rx;
	std::string err;
	if (!rp::cli_lcores(rp::lcore_set_from_eal_args(eal_argc, argv), opts.interactive, two_process, &tx, &rx, &err)) {
		RP_LOG(ERR, APP, "rdmapipe: --dump-conf: %s\n", err.c_str());
		return rp::kExitUsage;
	}
	/* No -d: the device the run would take: the first one found, or (two processes)
	 * the one rdma_cm finds for the address. */
	std::string names, why;
	if (opts.device.empty() && two_process) {
		const rp::PipelineConf probe = rp::pipeline_from_options(opts, tx, rx);
		if (rp::remote_device_name(probe, probe.flows[0], &opts.device, &why) != 0)
			opts.device.clear();
	} else if (opts.device.empty() && rp::count_devices(&names, &why) > 0) {
		opts.device = names.substr(0, names.find(' '));
	}
	/* Only a pipeline the run would take: the one validator's refusal, as a run's. */
	rp::PipelineConf conf;
	if (rp::validated_pipeline(opts, tx, rx, &conf, &err) != 0) {
		RP_LOG(ERR, CONF, "rdmapipe: %s\n", err.c_str());
		return rp::kExitUsage;
	}
	if (opts.device.empty())
		printf("# No RDMA device here (%s): give -d NAME for the file to name one.\n", why.c_str());
	printf("%s", rp::pipeline_to_text(conf, opts).c_str());
	return rp::kExitOk;
}

/* EAL up, the pipeline (the command line's placed on the lcores EAL gave) run, EAL
 * down; a run a signal stopped exits as a shell reports one. */
int run(int eal_argc, char **argv, const rp::RunOptions &opts, rp::PipelineConf conf)
{
	const bool cli_graph = opts.config_file.empty();
	if (int rc = rp::eal_start(eal_argc, argv, cli_graph ? "a pipeline from the command line" : opts.config_file.c_str());
	    rc != rp::kExitOk)
		return rc;
	int rc = rp::run_pipeline(std::move(conf), opts);
	if (opts.perftest.on)   // the table's last line and --out_json
		rc = rp::perftest_finish(opts, rc);
	rte_eal_cleanup();
	RP_LOG(DEBUG, APP, "rdmapipe: exit status %d\n", rc);
	if (const int sig = rp::stop_signal()) {
		RP_LOG(NOTICE, APP, "rdmapipe: stopped by %s\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
		return 128 + sig;
	}
	return rc;
}

} // namespace

/* EAL's arguments, then ours: what every invocation comes to (pt: the perftest front
 * end's report, which the arguments cannot carry). */
int run_args(int argc, char **argv, const rp::PerftestReportConf *pt)
{
	int eal_argc;
	if (int rc = scan_eal_args(argc, argv, &eal_argc); rc != kGoOn)
		return rc;
	rp::RunOptions opts;
	if (int rc = parse_app_args(argc, argv, eal_argc, &opts); rc != kGoOn)
		return rc;
	if (pt)
		opts.perftest = rp::perftest_settled(*pt, opts);
	if (opts.points)   // many pipeline files, named on stdin, one EAL
		return rp::run_points(eal_argc, argv, opts);
	rp::PipelineConf conf;
	if (!opts.config_file.empty())
		if (int rc = load_and_check(eal_argc, argv, opts, &conf); rc != kGoOn)
			return rc;
	if (opts.dump_conf) {
		if (!opts.config_file.empty()) {
			RP_LOG(ERR, APP, "rdmapipe: --dump-conf: the file is the pipeline already (-f)\n");
			return rp::kExitUsage;
		}
		return dump_conf(eal_argc, argv, opts, !opts.listen.empty() || !opts.peer.empty());
	}
	if (conf.pattern.on())   // N ranks under mpirun or srun: a job of its own
		return rp::run_job(eal_argc, argv, opts, conf);
	return run(eal_argc, argv, opts, std::move(conf));
}

int main(int argc, char **argv)
{
	rp::job_log_setup();   // under mpirun/srun every log line names its rank
	if (const std::string test = rp::perftest_invoked(argc, argv); !test.empty())   // ib_write_bw, rdmapipe-perftest
		return rp::perftest_main(argc, argv, test, run_args);
	return run_args(argc, argv, nullptr);
}
