/* What the app's runs (loopback rate, ping-pong latency) share: exit codes, opening
 * and probing the device, picking the completion-polling variant, buffer pools and
 * the pieces of the summary. */
#pragma once

#include "conf/options.h"
#include "control/report.h"   // the summary pieces every run prints
#include "engine/counters.h"
#include "engine/run_control.h"
#include "engine/verbs_ops.h"
#include "verbs/async_events.h"
#include "verbs/caps.h"
#include "verbs/device.h"

#include <atomic>
#include <cstdio>
#include <functional>
#include <cstdint>
#include <string>
#include <vector>

struct rte_mempool;

namespace rp {

enum ExitCode {
	kExitOk = 0,
	kExitRunFailed = 1,   // data, sequence or completion errors, stalls
	kExitUsage = 2,       // bad arguments or lcore set
	kExitSetup = 3,       // no usable device, resources could not be created
	/* 128 + the signal (130 SIGINT, 143 SIGTERM): a signal stopped the run, after its
	 * summary and results were written (main.cpp). */
};

/* Finds, opens and probes the device (printing the capabilities and what is missing
 * unless quiet): on librdmacm's context when o.connect is cm (its QPs are then made by
 * rdma_create_qp), else with ibv_open_device. Returns an ExitCode; errors are printed. */
int open_device(const RunOptions &o, Device *dev, DeviceCaps *caps);

/* Probes an open device's capabilities and prints them with a note for each thing it
 * lacks, unless quiet. Returns 0 or -errno with *err. */
int probe_and_report(const RunOptions &o, Device &dev, DeviceCaps *caps, std::string *err);

int setup_error(const std::string &err);   // prints it, returns kExitSetup
std::string host_name();                   // gethostname's ("localhost" when it fails)

/* Starts EAL with its arguments (argv[0..eal_argc-1]): our usage hook, log messages to
 * the log stream (stderr, or set_log_stream's) unless --syslog, SIGINT and SIGTERM
 * handlers, the telemetry endpoints. `what` runs, for the debug line. Returns an
 * ExitCode (errors printed). */
int eal_start(int eal_argc, char **argv, const char *what);
/* Where log messages go from now on (before EAL too): a job's ranks name themselves. */
void set_log_stream(FILE *f);
FILE *log_stream();   // set_log_stream's (stderr unless set)

/* Where the two roles of a command-line run go (role A: requester or pinging side;
 * role B: responder or echoing side): B takes the first worker (or main, with one
 * worker) and A the next. Returns an ExitCode (errors printed). */
int place_roles(const RunOptions &o, const char *run, unsigned *a, unsigned *b);
/* Where a two-process run's end goes: the first worker lcore, or the main one when
 * there is none (not with -i: the console takes it). Returns an ExitCode. */
int place_end(const RunOptions &o, unsigned *lc);

/* Work for one lcore: fn(arg), which stores true in *done (release) when it ends. */
struct LcoreJob {
	int (*fn)(void *);
	void *arg;
	unsigned lcore;
	const std::atomic<bool> *done;
};

/* Launches the jobs in order on their lcores (the main lcore's runs inline, after the
 * others are launched) and returns once all are done. Waiting main sleeps, it does not
 * spin, calling tick (if any) every 10 ms (the console). */
void run_lcore_jobs(const std::vector<LcoreJob> &jobs, const std::function<void()> &tick = {});

struct Sampler;
struct RunView;
/* The jobs with the control plane around them: the sampler (the results' series, the
 * stats lines) when `sample`, telemetry's view of the run, the target of a signal.
 * tick: as for run_lcore_jobs (the console); after: once the jobs are done, before the
 * control plane lets go of the run (the console's last commands). Then the async-event
 * watchers (one per device) get a moment for the run's last events and stops. Returns kExitOk, or
 * kExitSetup (printed) when the sampler cannot start: nothing was launched then. */
int run_watched(const std::vector<LcoreJob> &jobs, Sampler *sampler, bool sample, RunView *view, RunControl *ctl,
		const std::vector<AsyncEventWatch *> &async, const std::function<void()> &tick = {},
		const std::function<void()> &after = {});

struct Results;
/* Writes the results files o asks for; returns the run's ExitCode (pass or not), or
 * kExitRunFailed when a file cannot be written (the error is printed). */
int write_results(const std::string &json, const std::string &csv, const Results &r, bool pass);

/* The run a signal should stop (nullptr: none): request_stop() sets its abort flag and
 * says which signal; a run set running after the signal came stops at once. A run that
 * goes on until stopped (duration 0) is ended instead, as the console's quit ends it:
 * its normal end, no interruption. */
void set_running(RunControl *ctl, bool until_stopped);
void request_stop(int sig);   // async-signal-safe
bool request_stopped();   // a signal asked the process to stop (a size sweep runs no more steps)
int stop_signal();        // which interrupted a run (0: none; a run until stopped is ended, not interrupted)

} // namespace rp
