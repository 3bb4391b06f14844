/* The Prometheus endpoint (--metrics [IPV4:]PORT, run.metrics; docs/metrics.md): a run's
 * counters as Prometheus text at http://ADDR:PORT/metrics, served by prometheus-cpp's
 * exposer (civetweb) on threads of its own, on EAL's control cpuset, never an lcore's.
 * A scrape reads what the lcores publish for the console and telemetry (relaxed
 * atomics of one writer each: FlowLive, RoleLive, StageLive, the latency histograms)
 * and the ports' hw_counters from sysfs; it never waits on an lcore. The run it
 * describes is swapped under a mutex that only the control plane and the scrapes take.
 * Counters are running totals that never reset during a run, so rate() works. */
#pragma once

#include "control/stats.h"

#include <string>
#include <utility>
#include <vector>

namespace rp {

/* Serves the endpoint at addr ([IPV4:]PORT; no address: every IPv4 one) from now on;
 * nothing when it already serves addr (the next step of a sweep, the next point), a
 * new one when addr differs. After rte_eal_init. Returns 0, or -1 with *err naming
 * the address and why it cannot listen there. */
int metrics_serve(const std::string &addr, std::string *err);

/* Pushes the metrics to the Pushgateway at url (http://HOST[:PORT]) from now on, under
 * job "rdmapipe" and the grouping labels given (instance, a job's rank): at the end of
 * each run, and every period_s while it runs (0: at the end only), from a DPDK control
 * thread. Nothing when it already pushes there. The gateway must answer a connection
 * now. Returns 0, or -1 with *err naming the URL and why. */
int metrics_push_to(const std::string &url, double period_s, const std::vector<std::pair<std::string, std::string>> &labels,
		    std::string *err);

/* The pushes from now on in another group of the same gateway (a job's re-run alone
 * beside its rank's loaded run): between runs. Nothing when nothing is pushed.
 * Returns 0, or -1 with *err. */
int metrics_push_regroup(const std::vector<std::pair<std::string, std::string>> &labels, std::string *err);

/* The run the endpoint (and the pushes) describe from now on (nullptr: none; the
 * build's metrics only). Setting nullptr after a run pushes its last state first. */
void metrics_set_run(const RunView *v);

/* run.metrics_qp: binds a kernel counter to each QP of v (v->qps, each once) into
 * v->qp_counters, which the metrics then read (rdmapipe_qp_*). Before the run starts.
 * Returns 0, or -1 with *err naming the setting, the QP and the kernel's reason, or
 * the limit (kMetricsQpMax) when v has more QPs. */
int metrics_bind_qps(RunView *v, std::string *err);

/* The text a scrape gets for run v (nullptr: no run): Prometheus text format 0.0.4. */
std::string metrics_text(const RunView *v);

/* Stops serving (the exposer's threads joined). */
void metrics_stop();

} // namespace rp
