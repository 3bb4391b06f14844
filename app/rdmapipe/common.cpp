#include "common.h"

#include "verbs/cm.h"
#include "control/results.h"
#include "control/metrics.h"
#include "control/telemetry.h"
#include "log/log.h"

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mempool.h>

#include <algorithm>

#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <vector>

namespace rp {

namespace {
std::atomic<RunControl *> g_running{nullptr};
std::atomic<bool> g_until_stopped{false};   // the running run goes on until stopped
std::atomic<int> g_stop_signal{0};          // a signal that interrupted a run
std::atomic<int> g_end_signal{0};           // ... that ended one that ran until stopped
} // namespace

void set_running(RunControl *ctl, bool until_stopped)
{
	g_until_stopped.store(until_stopped);
	g_running.store(ctl);
	if (ctl && g_stop_signal.load()) {   // the signal came during setup
		ctl->stop_signal.store(g_stop_signal.load());
		ctl->abort_now();
	}
}

void request_stop(int sig)
{
	RunControl *running = g_running.load();
	if (running && g_until_stopped.load()) {   // its way to end: as the console's quit
		g_end_signal.store(sig);
		running->end_signal.store(sig);
		running->end();
		return;
	}
	g_stop_signal.store(sig);
	cm_cancel_waits();
	if (RunControl *c = g_running.load()) {
		c->stop_signal.store(sig);
		c->abort_now();
	}
}

bool request_stopped()
{
	return g_stop_signal.load() != 0 || g_end_signal.load() != 0;
}

int stop_signal()
{
	return g_stop_signal.load();
}

int open_device(const RunOptions &o, Device *dev, DeviceCaps *caps)
{
	std::string names, why, err;
	if (count_devices(&names, &why) == 0) {
		RP_LOG(ERR, VERBS, "rdmapipe: no RDMA device: %s.\n"
				"  No RDMA hardware? Run on soft-RoCE: tools/softroce -- rdmapipe ... "
				"(boots a VM with rdma_rxe where the kernel has none; see README.md)\n",
			why.c_str());
		return kExitSetup;
	}
	if (o.connect == ConnectPath::cm) {
		/* QPs that rdma_cm connects must be made on librdmacm's own context. */
		ibv_context *verbs = nullptr;
		if (cm_device_context(o.device, &verbs, &err) != 0 || cm_device_open(dev, verbs, o.port, &err, o.gid_index) != 0 ||
		    probe_and_report(o, *dev, caps, &err) != 0)
			return setup_error(err);
		return kExitOk;
	}
	if (device_open(dev, o.device, o.port, o.gid_index, &err) != 0 || probe_and_report(o, *dev, caps, &err) != 0)
		return setup_error(err);
	return kExitOk;
}

int probe_and_report(const RunOptions &o, Device &dev, DeviceCaps *caps, std::string *err)
{
	std::vector<std::string> notes;
	if (int ret = probe_caps(dev, caps, &notes, err); ret != 0)
		return ret;
	if (!o.quiet) {
		RP_LOG(INFO, VERBS, "rdmapipe: %s capabilities: %s\n", dev.name.c_str(), caps_str(*caps).c_str());
		for (const std::string &n : notes)
			RP_LOG(NOTICE, VERBS, "rdmapipe: %s: %s\n", dev.name.c_str(), n.c_str());
	}
	return 0;
}

int place_end(const RunOptions &o, unsigned *lc)
{
	const unsigned main_lc = rte_get_main_lcore();
	const unsigned worker = rte_get_next_lcore(main_lc, 1, 0);
	if (worker < RTE_MAX_LCORE) {
		*lc = worker;
		return kExitOk;
	}
	if (o.interactive) {
		RP_LOG(ERR, APP, "rdmapipe: -i: the console takes the main lcore %u, and the run needs 1 more: pass -l 0-1\n", main_lc);
		return kExitUsage;
	}
	*lc = main_lc;
	return kExitOk;
}

int place_roles(const RunOptions &o, const char *run, unsigned *a, unsigned *b)
{
	unsigned main_lc = rte_get_main_lcore();
	unsigned workers[2], n = 0, lc;
	RTE_LCORE_FOREACH_WORKER(lc) {
		if (n < 2)
			workers[n++] = lc;
	}
	if (n == 0) {
		RP_LOG(ERR, APP, "rdmapipe: the %s needs 2 lcores; EAL has only lcore %u: pass -l 0-1\n", run, main_lc);
		return kExitUsage;
	}
	if (o.interactive && n < 2) {
		RP_LOG(ERR, APP, "rdmapipe: -i: the console takes the main lcore %u, and the %s needs 2 more: pass -l 0-2\n",
			main_lc, run);
		return kExitUsage;
	}
	*b = n == 1 ? main_lc : workers[0];
	*a = n == 1 ? workers[0] : workers[1];
	return kExitOk;
}

void run_lcore_jobs(const std::vector<LcoreJob> &jobs, const std::function<void()> &tick)
{
	unsigned main_lc = rte_get_main_lcore();
	const LcoreJob *on_main = nullptr;
	for (const LcoreJob &j : jobs) {
		if (j.lcore == main_lc)
			on_main = &j;
		else
			rte_eal_remote_launch(j.fn, j.arg, j.lcore);
	}
	if (on_main)
		on_main->fn(on_main->arg);
	/* rte_eal_wait_lcore spins: sleep until every job said it is done. */
	for (const LcoreJob &j : jobs)
		while (!j.done->load(std::memory_order_acquire)) {
			if (tick)
				tick();
			usleep(10000);
		}
	rte_eal_mp_wait_lcore();
}

int run_watched(const std::vector<LcoreJob> &jobs, Sampler *sampler, bool sample, RunView *view, RunControl *ctl,
		const std::vector<AsyncEventWatch *> &async, const std::function<void()> &tick,
		const std::function<void()> &after)
{
	std::string err;
	if (sample && sampler_start(sampler, &err) != 0)
		return setup_error(err);
	view->start_tsc = rte_rdtsc();
	view->start_unix = static_cast<double>(time(nullptr));
	telemetry_set_run(view);
	metrics_set_run(view);
	set_running(ctl, view->until_stopped);
	run_lcore_jobs(jobs, tick);
	if (after)
		after();
	set_running(nullptr, false);
	sampler_stop(sampler);
	telemetry_set_run(nullptr);
	metrics_set_run(nullptr);
	/* Each watcher takes the events already raised (the run's last moments) as it stops. */
	for (AsyncEventWatch *w : async)
		async_watch_stop(w);
	return kExitOk;
}

int write_results(const std::string &json, const std::string &csv, const Results &r, bool pass)
{
	std::string err;
	int rc = pass ? kExitOk : kExitRunFailed;
	if (!json.empty() && write_results_json(json, r, &err) != 0) {
		RP_LOG(ERR, CONTROL, "rdmapipe: %s\n", err.c_str());
		rc = kExitRunFailed;
	}
	if (!csv.empty() && write_results_csv(csv, r, &err) != 0) {
		RP_LOG(ERR, CONTROL, "rdmapipe: %s\n", err.c_str());
		rc = kExitRunFailed;
	}
	return rc;
}

std::string host_name()
{
	char h[256] = {};
	return gethostname(h, sizeof(h) - 1) == 0 && h[0] ? h : "localhost";
}

int setup_error(const std::string &err)
{
	RP_LOG(ERR, APP, "rdmapipe: %s\n", err.c_str());
	return kExitSetup;
}

namespace {

void app_usage(const char * /*prgname*/)
{
	fputs("\n", stderr);
	fputs(options_usage(), stderr);
}

bool eal_wants_syslog(int eal_argc, char **argv)
{
	for (int i = 1; i < eal_argc; i++)
		if (strncmp(argv[i], "--syslog", 8) == 0)
			return true;
	return false;
}

/* The first SIGINT or SIGTERM stops the run in order (summary and results written);
 * one more, should that stop hang, ends the process as the signal's default does. A
 * repeat within a second is the same request delivered twice, not a second one:
 * timeout(1) signals its child and then the child's process group, and a kill of a
 * process group reaches a launcher's wrapper and the run alike. */
std::atomic<int64_t> g_first_signal_ns{-1};

int64_t monotonic_ns()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);   // async-signal-safe
	return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void on_signal(int sig)
{
	constexpr int64_t kRepeatNs = 1000000000;
	int64_t now = monotonic_ns(), first = -1;
	if (g_first_signal_ns.compare_exchange_strong(first, now)) {
		request_stop(sig);
		return;
	}
	if (now - first < kRepeatNs)
		return;
	signal(sig, SIG_DFL);
	raise(sig);
}

FILE *g_log_stream = stderr;

} // namespace

void set_log_stream(FILE *f)
{
	g_log_stream = f;
	rte_openlog_stream(f);
}

FILE *log_stream()
{
	return g_log_stream;
}

int eal_start(int eal_argc, char **argv, const char *what)
{
	rte_set_application_usage_hook(app_usage);
	/* Log messages, EAL's and ours, go to stderr, the summary to stdout. EAL's default
	 * (stdout and syslog) stays when asked for with --syslog. */
	if (!eal_wants_syslog(eal_argc, argv))
		rte_openlog_stream(g_log_stream);
	if (rte_eal_init(eal_argc, argv) < 0) {
		int e = rte_errno;
		RP_LOG(ERR, APP, "rdmapipe: EAL initialisation failed: %s%s\n", rte_strerror(e),
			e == EINVAL ? " (bad EAL arguments: see the usage above)" : "");
		return e == EINVAL ? kExitUsage : kExitSetup;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	RP_LOG(DEBUG, APP, "rdmapipe: EAL up: %u lcores, main lcore %u, %s\n", rte_lcore_count(), rte_get_main_lcore(), what);
	std::string err;
	if (telemetry_register(&err) != 0)
		RP_LOG(WARNING, CONTROL, "rdmapipe: %s (running without the /rdmapipe endpoints)\n", err.c_str());
	return kExitOk;
}

} // namespace rp
