#include "graph_run.h"

#include "common.h"
#include "job_run.h"
#include "conf/cli_pipeline.h"
#include "control/graph_report.h"
#include "control/results.h"

#include "control/console.h"
#include "control/stats.h"
#include "control/metrics.h"
#include "perftest_front.h"
#include "control/telemetry.h"
#include "pipeline/graph.h"
#include "verbs/async_events.h"
#include "log/log.h"

#include <rte_cycles.h>
#include <rte_lcore.h>

#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace rp {

namespace {

/* One device of the run: opened, probed, its async events watched. */
struct RunDevice {
	Device dev;
	DeviceCaps caps;
	AsyncEventWatch async;
	~RunDevice()
	{
		async_watch_stop(&async);
		device_close(&dev);
	}
};

/* A device's async events that end its runs (its port down, the device failed) stop
 * the flows on it at once, on the watcher thread, rather than waiting on completions
 * that may never come (rxe sometimes just drops what a downed port sends). */
struct DeviceHook {
	AsyncEventHook hook;
	const Graph *g = nullptr;
	const Device *dev = nullptr;
};

void stop_flows(void *arg, const char *why, uint8_t port)
{
	auto *h = static_cast<DeviceHook *>(arg);
	graph_stop_flows_on(*h->g, h->dev, port, why);
}

/* Opens the devices the plan's io contexts use; what one cannot do as the file asks
 * is a usage error, named like the option or key. Returns an ExitCode. */
int open_devices(const PipelineConf &c, const RunOptions &cli, const Graph &plan,
		 std::vector<std::unique_ptr<RunDevice>> *devs, std::vector<GraphDevice> *gdevs)
{
	std::string err;
	const std::vector<const DeviceConf *> names = graph_devices(plan);   // gdevs' order
	for (const DeviceConf *d : names) {
		RunOptions dev_o = cli;
		dev_o.device = d->name;
		/* Two hosts: rdma_cm makes the QPs (on its own context), and without a name
		 * (a command line with no -d) the device is the one it finds for the address. */
		for (const auto &f : plan.flows) {
			const GraphLcore *end = f->end_here();
			if (!f->remote || end->conf->device != d->name)
				continue;
			dev_o.connect = ConnectPath::cm;
			if (dev_o.device.empty() && remote_device_name(c, *f->conf, &dev_o.device, &err) != 0)
				return setup_error(err);
		}
		dev_o.port = d->port;
		dev_o.gid_index = d->gid_index;
		devs->push_back(std::make_unique<RunDevice>());
		RunDevice &rd = *devs->back();
		if (int rc = open_device(dev_o, &rd.dev, &rd.caps); rc != kExitOk)
			return rc;
		if (async_watch_start(&rd.async, rd.dev.ctx, &err) != 0)
			return setup_error(rd.dev.name + ": " + err);
		gdevs->push_back({&rd.dev, &rd.caps});
	}
	for (const auto &f : plan.flows) {
		if (!f->tx)
			continue;   // nothing posted here: the two-host server's end
		const GraphDevice *tx = &(*gdevs)[0];
		for (size_t i = 0; i < gdevs->size(); i++)
			if (names[i]->name == f->tx->conf->device)
				tx = &(*gdevs)[i];
		const FlowConf &fc = *f->conf;
		if (fc.post_api == PostApi::wr && !tx->caps->qp_ex)
			RP_LOG(NOTICE, VERBS, "rdmapipe: %s has no ibv_qp_ex send ops: flow '%s' posts with ibv_post_send (post API wr falls back to classic)\n",
			       tx->dev->name.c_str(), fc.name.c_str());
		if (!fc.inline_send || fc.sizes[0] <= tx->caps->max_inline)
			continue;
		if (c.file == kCliPipeline)
			RP_LOG(ERR, CONF, "rdmapipe: --inline with %u B messages: %s inlines at most %u B\n", fc.sizes[0],
				tx->dev->name.c_str(), tx->caps->max_inline);
		else
			RP_LOG(ERR, CONF, "rdmapipe: %s:%d: flows.[%zu].inline: %u B messages, %s inlines at most %u B\n",
				c.file.c_str(), fc.line, static_cast<size_t>(&fc - c.flows.data()), fc.sizes[0],
				tx->dev->name.c_str(), tx->caps->max_inline);
		return kExitUsage;
	}
	return kExitOk;
}

} // namespace

namespace {

/* What each flow of the pipeline asks for, as the builder reads it. */
void log_flows(const PipelineConf &c)
{
	for (const FlowConf &f : c.flows)
		RP_LOG(DEBUG, CONF, "rdmapipe: %s%s: flow '%s': %s, %u B, %u QP%s, %s, batch %u, %s %s\n", c.file.c_str(),
		       f.line > 0 ? (":" + std::to_string(f.line)).c_str() : "", f.name.c_str(), verb_name(f.verb), f.sizes[0], f.qps, f.qps == 1 ? "" : "s",
		       f.transport == Transport::uc ? "UC" : "RC", f.batch, f.listen.empty() ? "peer" : "listening on",
		       f.listen.empty() ? f.peer.c_str() : f.listen.c_str());
}

/* Every stage on an lcore EAL has, and none on the console's (-i). */
int check_stage_lcores(const PipelineConf &c, const RunOptions &cli)
{
	const unsigned main_lc = rte_get_main_lcore();
	for (const StageConf &st : c.stages) {
		if (!rte_lcore_is_enabled(st.lcore)) {
			RP_LOG(ERR, CONF, "rdmapipe: %s:%d: stage '%s': lcore %u is not in the EAL lcore set (-l)\n", c.file.c_str(),
				st.line, st.name.c_str(), st.lcore);
			return kExitUsage;
		}
		if (cli.interactive && st.lcore == main_lc) {
			RP_LOG(ERR, CONF, "rdmapipe: %s:%d: stage '%s': -i: the console takes the main lcore %u; put the stages on other "
					"lcores (or give EAL one more: -l)\n", c.file.c_str(), st.line, st.name.c_str(), main_lc);
			return kExitUsage;
		}
	}
	return kExitOk;
}

/* "rdmapipe: running pipeline F on DEVS: N flows, M stages on lcores ...". */
void print_running(const std::string &what, const Graph &g, const std::vector<GraphDevice> &gdevs)
{
	std::string on;
	for (const GraphDevice &d : gdevs)
		on += (on.empty() ? "" : ", ") + d.dev->name;
	printf("rdmapipe: running %s on %s: %zu flow%s, %zu stages on lcores", what.c_str(), on.c_str(), g.flows.size(),
	       g.flows.size() > 1 ? "s" : "", g.stages.size());
	for (const auto &l : g.lcores)
		printf(" %u", l->lcore);
	printf("\n");
}

/* The run is over; the console (if any) stays until quit, or its input closes. */
void console_until_quit(Console *con, bool *con_done, const Graph &g)
{
	if (con == nullptr)
		return;
	bool ok = true;
	for (const auto &l : g.lcores)
		ok &= l->rc == 0;
	if (!*con_done)
		console_run_ended(con, ok ? "all sent and checked" : "with errors");
	while (!*con_done && !g.run.abort.load()) {
		*con_done = console_poll(con);
		usleep(10000);
	}
}

} // namespace

/* One pipeline (one step of a size sweep): build, run, summarise. */
int run_graph_step(const PipelineConf &c, const RunOptions &cli, SweepRow *row, std::vector<std::string> *texts,
		   const std::function<int(std::string *)> &listening)
{
	if (int rc = check_stage_lcores(c, cli); rc != kExitOk)
		return rc;
	if (log_enabled(RTE_LOG_DEBUG, rp_logtype_conf))
		log_flows(c);
	std::string err;
	std::vector<std::unique_ptr<RunDevice>> devs;   // outlive the graph
	std::vector<GraphDevice> gdevs;
	auto g = std::make_unique<Graph>();
	if (graph_plan(c, g.get(), &err) != 0)
		return setup_error(err);
	for (const auto &f : g->flows)   // a planted fault is never mistaken for a real one
		for (const std::string &p : f->planted)
			RP_LOG(NOTICE, PIPELINE, "rdmapipe: flow '%s': %s\n", f->conf->name.c_str(), p.c_str());
	if (!c.run.metrics.empty() && metrics_serve(c.run.metrics, &err) != 0)
		return setup_error(err);
	if (!c.run.push.empty() && metrics_push_to(c.run.push, c.run.stats_period_s, {{"instance", host_name()}}, &err) != 0)
		return setup_error(err);
	g->listening = listening;
	g->note = [&cli](const std::string &line) {
		if (!cli.quiet)
			RP_LOG(INFO, PIPELINE, "rdmapipe: %s\n", line.c_str());
	};
	int rc = open_devices(c, cli, *g, &devs, &gdevs);
	if (rc != kExitOk)
		return rc;
	{
		std::vector<AsyncEventWatch *> async;
		std::vector<const AsyncEventWatch *> async_ro;
		for (auto &d : devs) {
			async.push_back(&d->async);
			async_ro.push_back(&d->async);
		}
		if (graph_build(c, gdevs, g.get(), &err) != 0 || remote_watch_start(&g->watch, &err) != 0) {
			rc = setup_error(err);
		} else {
			const std::string what = "pipeline " + c.file;
			RunView view = graph_view(c, *g, what);
			const bool bound = !c.run.metrics_qp || metrics_bind_qps(&view, &err) == 0;   // refused before "running"
			if (bound && !cli.quiet)
				print_running(what, *g, gdevs);
			fflush(stdout);
			Sampler sampler;
			graph_sampled_flows(*g, &sampler);
			sampler.view = &view;
			sampler.print_period_s = c.run.stats_period_s;
			const bool results = !c.run.json.empty() || cli.perftest.on;   // (perftest's BW peak: the series)
			Console *con = nullptr;
			if (!bound ||
			    (cli.interactive && (con = console_new(&view, 0, 1, isatty(0), &err)) == nullptr)) {
				rc = setup_error(err);
			} else {
				std::vector<LcoreJob> jobs;
				for (auto &l : g->lcores)
					jobs.push_back({graph_lcore_run, l.get(), l->lcore, &l->done});
				bool con_done = false;
				std::vector<DeviceHook> hooks(devs.size());
				for (size_t i = 0; i < devs.size(); i++) {
					hooks[i] = {{stop_flows, &hooks[i]}, g.get(), &devs[i]->dev};
					devs[i]->async.hook.store(&hooks[i].hook, std::memory_order_release);
				}
				rc = run_watched(
					jobs, &sampler, results || sampler.print_period_s > 0, &view, &g->run, async,
					[&] {
						if (con && !con_done)
							con_done = console_poll(con);
					},
					[&] { console_until_quit(con, &con_done, *g); });
				for (auto &d : devs)   // (run_watched stopped them unless it failed to start)
					async_watch_stop(&d->async);
				console_free(con);
				/* Two hosts: the clients let go, the servers see them go. */
				remote_watch_finish(&g->watch, g->flows[0]->params.stall_timeout_s);
				if (rc == kExitOk) {
					Results res;
					Report out(cli.perftest.on ? stderr : stdout);   // perftest's table on stdout instead
					const bool pass = graph_summary(out, c, *g, async_ro, view, sampler, row, &res);
					if (cli.perftest.on)
						perftest_step(cli, res, *gdevs[0].dev);   // (the command line's: one device)
					rc = write_results(c.run.json, c.run.csv, res, pass);
					if (texts)
						texts->push_back(results_json_text(res));
				}
			}
		}
	}
	g.reset();   // before the devices
	return rc;
}

namespace {

/* PATH with the step's sizes before its extension: out.json -> out.64B.json. */
std::string step_path(const std::string &path, const std::string &sizes)
{
	if (path.empty())
		return path;
	const size_t slash = path.rfind('/'), dot = path.rfind('.');
	const bool ext = dot != std::string::npos && (slash == std::string::npos || dot > slash);
	return ext ? path.substr(0, dot) + "." + sizes + path.substr(dot) : path + "." + sizes;
}

} // namespace

int load_pipeline(const LcoreSet &lcores, const std::string &file, const RunOptions &cli, PipelineConf *conf)
{
	std::string err;
	if (config_load(file, lcores, conf, &err) != 0) {
		RP_LOG(ERR, CONF, "rdmapipe: %s\n", err.c_str());
		return kExitUsage;
	}
	apply_cli(cli, conf);
	if (cli.connect_timeout_s > 0 && !conf_waits_to_connect(*conf)) {
		RP_LOG(ERR, CONF, "rdmapipe: --connect-timeout with %s: %s\n", file.c_str(), kConnectTimeoutNoWait);
		return kExitUsage;
	}
	std::vector<PipelineConf> steps;
	if (graph_sweep(*conf, &steps, &err) != 0) {
		RP_LOG(ERR, CONF, "rdmapipe: %s\n", err.c_str());
		return kExitUsage;
	}
	uint32_t ranks = 0;
	if (conf->pattern.on() && check_job(*conf, &ranks, &err) != 0) {
		RP_LOG(ERR, PIPELINE, "rdmapipe: %s\n", err.c_str());
		return kExitUsage;
	}
	for (size_t k = 0; k < steps.size() && !conf->pattern.on(); k++) {
		Graph plan;
		if (graph_plan(steps[k], &plan, &err) != 0) {
			RP_LOG(ERR, PIPELINE, "rdmapipe: %s\n", err.c_str());
			return kExitUsage;
		}
	}
	return kExitOk;
}

int run_graph(const PipelineConf &c, const RunOptions &cli, std::vector<std::string> *texts,
	      const std::function<int(std::string *)> &listening)
{
	std::vector<PipelineConf> steps;
	std::string err;
	if (graph_sweep(c, &steps, &err) != 0) {   // checked before EAL already
		RP_LOG(ERR, CONF, "rdmapipe: %s\n", err.c_str());
		return kExitUsage;
	}
	if (steps.size() == 1)
		return run_graph_step(c, cli, nullptr, texts, listening);
	/* A size sweep: the pipeline once per size, in turn; its results files per step. */
	std::vector<SweepRow> rows(steps.size());
	int worst = kExitOk;
	for (size_t k = 0; k < steps.size(); k++) {
		rows[k].sizes = graph_step_name(c, steps[k]);
		RunOptions o = cli;
		o.output_json = step_path(cli.output_json, rows[k].sizes);
		o.output_csv = step_path(cli.output_csv, rows[k].sizes);
		steps[k].run.json = step_path(c.run.json, rows[k].sizes);
		steps[k].run.csv = step_path(c.run.csv, rows[k].sizes);
		printf("rdmapipe: size sweep, step %zu of %zu: %s\n", k + 1, steps.size(), rows[k].sizes.c_str());
		fflush(stdout);
		int rc = run_graph_step(steps[k], o, &rows[k], texts, listening);
		if (rc == kExitSetup || rc == kExitUsage || request_stopped())
			return rc == kExitOk ? kExitRunFailed : rc;   // nothing more can run, or a signal stopped it
		worst = std::max(worst, rc);
	}
	printf("size sweep:          %zu steps\n", steps.size());
	for (const SweepRow &r : rows) {
		printf("  %-19s %.4f Mmsg/s, %.4f Gbit/s", (r.sizes + ":").c_str(), r.mmsgs, r.gbps);
		if (r.median_us >= 0)
			printf(", latency median %.2f us", r.median_us);
		printf(", %s\n", r.pass ? "PASS" : "FAIL");
	}
	printf("result: %s\n", worst == kExitOk ? "PASS" : "FAIL");
	return worst;
}

int run_pipeline(PipelineConf conf, const RunOptions &cli)
{
	if (cli.config_file.empty()) {
		unsigned tx, rx = 0;
		const bool two_process = !cli.listen.empty() || !cli.peer.empty();
		const int rc = two_process ? place_end(cli, &tx)
					   : place_roles(cli, cli.mode == Mode::pingpong ? "ping-pong run (pinging and echoing)"
											 : "loopback run (a requester and a responder)", &tx, &rx);
		if (rc != kExitOk)
			return rc;
		std::string err;
		if (validated_pipeline(cli, tx, rx, &conf, &err) != 0) {
			RP_LOG(ERR, CONF, "rdmapipe: %s\n", err.c_str());
			return kExitUsage;
		}
	}
	return run_graph(conf, cli);
}

} // namespace rp
