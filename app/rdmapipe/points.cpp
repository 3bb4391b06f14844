#include "points.h"

#include "common.h"
#include "control/hw_counters.h"
#include "graph_run.h"
#include "log/log.h"

#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_log.h>

#include <fcntl.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace rp {

namespace {

/* stdin's lines, read without blocking a signal out: a stop is seen within kPollMs. */
struct LineReader {
	std::string buf;
	bool eof = false;
};
constexpr int kPollMs = 200;

/* The next line (without its '\n'); false at the end of input or once a signal asked
 * the process to stop. A last line without '\n' counts. */
bool next_line(LineReader *r, std::string *line)
{
	for (;;) {
		if (const size_t nl = r->buf.find('\n'); nl != std::string::npos) {
			*line = r->buf.substr(0, nl);
			r->buf.erase(0, nl + 1);
			return true;
		}
		if (r->eof || request_stopped()) {
			if (r->eof && !r->buf.empty() && !request_stopped()) {
				*line = std::move(r->buf);
				r->buf.clear();
				return true;
			}
			return false;
		}
		pollfd p{0, POLLIN, 0};
		if (poll(&p, 1, kPollMs) <= 0)
			continue;   // timeout, or EINTR: look at the stop flag again
		char chunk[4096];
		const ssize_t n = read(0, chunk, sizeof(chunk));
		if (n > 0)
			r->buf.append(chunk, static_cast<size_t>(n));
		else if (n == 0 || errno != EINTR)
			r->eof = true;
	}
}

/* One request line: CONF<TAB>LOG, or --<TAB>LOG<TAB>ARG... (rdmapipe's own arguments). */
struct Request {
	std::string conf, log;
	std::vector<std::string> args;
	bool command_line = false;
};

std::vector<std::string> split_tabs(const std::string &line)
{
	std::vector<std::string> f;
	for (size_t at = 0;;) {
		const size_t tab = line.find('\t', at);
		f.push_back(line.substr(at, tab == std::string::npos ? std::string::npos : tab - at));
		if (tab == std::string::npos)
			return f;
		at = tab + 1;
	}
}

/* false with *err when the line is neither form. */
bool parse_request(const std::string &line, Request *q, std::string *err)
{
	std::vector<std::string> f = split_tabs(line);
	q->command_line = f[0] == "--";
	if (f.size() < 2 || (!q->command_line && f.size() != 2)) {
		*err = "not CONF<TAB>LOG, nor --<TAB>LOG<TAB>ARG... (fields between single tabs)";
		return false;
	}
	q->log = f[1];
	if (q->command_line)
		q->args.assign(f.begin() + 2, f.end());
	else
		q->conf = f[0];
	if (q->log.empty() || (!q->command_line && q->conf.empty())) {
		*err = q->log.empty() ? "no LOG in its field" : "no CONF before the tab";
		return false;
	}
	return true;
}

/* The process's stdout and stderr (and a log stream of its own) sent to one file for
 * the time of a point, then back. */
struct Redirect {
	int out = -1, err = -1;   // the originals, dup'ed
	bool log_stream = false;  // the log stream was not stderr: stderr for the time
};

void flush_all()
{
	fflush(stdout);
	fflush(stderr);
	fflush(log_stream());
}

int redirect_to(const std::string &path, Redirect *r, std::string *err)
{
	const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		*err = "cannot open the log " + path + ": " + strerror(errno);
		return -1;
	}
	flush_all();
	r->out = fcntl(1, F_DUPFD_CLOEXEC, 3);
	r->err = fcntl(2, F_DUPFD_CLOEXEC, 3);
	dup2(fd, 1);
	dup2(fd, 2);
	close(fd);
	r->log_stream = log_stream() != stderr;
	if (r->log_stream)
		rte_openlog_stream(stderr);
	return 0;
}

void restore(Redirect *r)
{
	flush_all();
	if (r->log_stream)
		rte_openlog_stream(log_stream());
	dup2(r->out, 1);
	dup2(r->err, 2);
	close(r->out);
	close(r->err);
}

/* A request's arguments read as the command line's after "--" would be (the same
 * errors, the same usage); false with the exit status in *rc when they run nothing. */
bool request_options(const std::vector<std::string> &args, char *prog, RunOptions *o, int *rc)
{
	std::vector<std::string> a = args;
	std::vector<char *> av{prog};
	for (std::string &s : a)
		av.push_back(s.data());
	av.push_back(nullptr);
	std::string err;
	switch (parse_options(static_cast<int>(av.size()) - 1, av.data(), o, &err)) {
	case ParseResult::ok:
		break;
	case ParseResult::error:
		RP_LOG(ERR, CONF, "rdmapipe: %s\n\n%s", err.c_str(), options_usage());
		*rc = kExitUsage;
		return false;
	case ParseResult::help:
	case ParseResult::version:
		err = "--help or --version";
		break;
	}
	if (err.empty() && (o->points || o->dump_conf || o->interactive))
		err = o->points ? "--points" : o->dump_conf ? "--dump-conf" : "-i (the console wants a terminal)";
	if (!err.empty()) {
		RP_LOG(ERR, APP, "rdmapipe: --points: a request runs a pipeline: %s has no place in one\n", err.c_str());
		*rc = kExitUsage;
		return false;
	}
	return true;
}

/* The hw_counters of the devices a point names, DEV.counter when it names several (read
 * here, beside the devices: the explorer may be on another host). */
HwCounters read_counters(std::vector<std::string> devs)
{
	std::sort(devs.begin(), devs.end());
	devs.erase(std::unique(devs.begin(), devs.end()), devs.end());
	HwCounters all;
	for (const std::string &d : devs)
		for (const auto &kv : hw_counters_read(d, 1))
			all.emplace_back(devs.size() > 1 ? d + "." + kv.first : kv.first, kv.second);
	std::sort(all.begin(), all.end());
	return all;
}

std::vector<std::string> device_names(const PipelineConf &c, const RunOptions &o)
{
	std::vector<std::string> v;
	for (const DeviceConf &d : c.devices)
		v.push_back(d.name);
	if (v.empty() && !o.device.empty())
		v.push_back(o.device);
	return v;
}

/* One point: a pipeline file (CONF, or the arguments' -f) loaded and checked as -f
 * would (a job's pattern refused), or the command line's pipeline, then run. Returns
 * what the same command line would exit with; the counters that moved in *moved. */
int run_point(int eal_argc, char **argv, const RunOptions &opts, const Request &q, HwCounters *moved)
{
	RunOptions o = q.command_line ? RunOptions{} : opts;   // a command line's options are its own
	if (q.command_line) {
		if (int rc; !request_options(q.args, argv[0], &o, &rc))
			return rc;
	} else {
		o.config_file = q.conf;
	}
	PipelineConf conf;
	if (!o.config_file.empty()) {
		if (int rc = load_pipeline(lcore_set_from_eal_args(eal_argc, argv), o.config_file, o, &conf); rc != kExitOk)
			return rc;
		if (conf.pattern.on()) {
			RP_LOG(ERR, CONF, "rdmapipe: %s: --points: a pattern's job runs under mpirun, one process per rank, not as a point\n",
			       o.config_file.c_str());
			return kExitUsage;
		}
	}
	const std::vector<std::string> devs = device_names(conf, o);
	const HwCounters before = read_counters(devs);
	const int rc = run_pipeline(std::move(conf), o);
	*moved = hw_counters_delta(before, read_counters(devs));
	if (const int sig = stop_signal()) {
		RP_LOG(NOTICE, APP, "rdmapipe: stopped by %s\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
		return 128 + sig;
	}
	return rc;
}

/* "done<TAB>RC[<TAB>COUNTER=DELTA]...\n" on the original stdout, at once. */
void answer(int fd, int rc, const HwCounters &moved)
{
	std::string line = "done\t" + std::to_string(rc);
	for (const auto &[name, n] : moved)
		line += "\t" + name + "=" + std::to_string(n);
	line += "\n";
	const int n = static_cast<int>(line.size());
	for (int off = 0; off < n;) {
		const ssize_t w = write(fd, line.data() + off, static_cast<size_t>(n - off));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;   // the reader is gone: the next request (or EOF) ends the loop
		off += static_cast<int>(w);
	}
}

/* A request: its line checked, its output redirected, the point run. */
int serve(int eal_argc, char **argv, const RunOptions &opts, const std::string &line, HwCounters *moved)
{
	Request q;
	std::string err;
	Redirect r;
	if (!parse_request(line, &q, &err) || redirect_to(q.log, &r, &err) != 0) {
		RP_LOG(ERR, APP, "rdmapipe: --points: request '%s': %s\n", line.c_str(), err.c_str());
		return kExitUsage;
	}
	const int rc = run_point(eal_argc, argv, opts, q, moved);
	RP_LOG(DEBUG, APP, "rdmapipe: %s: exit status %d\n", q.command_line ? "a command line" : q.conf.c_str(), rc);
	restore(&r);
	return rc;
}

/* "alive\n" every second while a point runs, from a thread of its own: the explorer
 * tells a point that hangs (its process still says this) from a host that stopped
 * answering (nothing comes). One write(2) a line, as the answer's, so none interleave. */
struct Heartbeat {
	int fd = -1;
	std::atomic<bool> serving{false}, stop{false};
	pthread_t thread{};
	bool started = false;
};

void *beat(void *arg)
{
	auto *h = static_cast<Heartbeat *>(arg);
	const timespec tick{0, 100 * 1000 * 1000};
	for (unsigned n = 1; !h->stop.load(std::memory_order_relaxed); n++) {
		nanosleep(&tick, nullptr);
		if (n % 10 == 0 && h->serving.load(std::memory_order_relaxed) && write(h->fd, "alive\n", 6) < 0)
			return nullptr;   // the reader is gone
	}
	return nullptr;
}

void heartbeat_start(Heartbeat *h, int fd)
{
	h->fd = fd;
	const int rc = rte_ctrl_thread_create(&h->thread, "rp-alive", nullptr, beat, h);
	h->started = rc == 0;
	if (rc != 0)   // the explorer then takes a hang for its host's
		RP_LOG(WARNING, APP, "rdmapipe: --points: no heartbeat thread: %s\n", strerror(rc < 0 ? -rc : rc));
}

void heartbeat_stop(Heartbeat *h)
{
	h->stop = true;
	if (h->started)
		pthread_join(h->thread, nullptr);
}

} // namespace

int run_points(int eal_argc, char **argv, const RunOptions &opts)
{
	fflush(stdout);
	const int out = fcntl(1, F_DUPFD_CLOEXEC, 3);   // the answers' (a point's stdout is its log)
	if (out < 0) {
		RP_LOG(ERR, APP, "rdmapipe: --points: cannot duplicate stdout: %s\n", strerror(errno));
		return kExitSetup;
	}
	if (int rc = eal_start(eal_argc, argv, "pipeline files from stdin (--points)"); rc != kExitOk)
		return rc;
	Heartbeat h;
	heartbeat_start(&h, out);
	if (write(out, "alive\n", 6) < 0)   // ready: a runner's start (a VM's boot) is over
		RP_LOG(DEBUG, APP, "rdmapipe: --points: stdout: %s\n", strerror(errno));
	LineReader in;
	std::string line;
	while (!request_stopped() && next_line(&in, &line)) {
		HwCounters moved;
		h.serving = true;
		const int rc = serve(eal_argc, argv, opts, line, &moved);
		h.serving = false;
		answer(out, rc, moved);
	}
	heartbeat_stop(&h);
	rte_eal_cleanup();
	close(out);
	if (const int sig = stop_signal())
		return 128 + sig;
	return kExitOk;
}

} // namespace rp
