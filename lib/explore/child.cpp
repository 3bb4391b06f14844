/* Points run in a child rdmapipe (--points): one request line per point, one answer. */
#include "explore/child.h"

#include "control/hw_counters.h"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>

namespace rp::explore {

namespace {

double now_s()
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/* Counters of each device, named DEV.counter when there are several. */
HwCounters read_counters(const std::vector<std::string> &devs)
{
	HwCounters all;
	for (const std::string &d : devs)
		for (const auto &kv : hw_counters_read(d, 1))
			all.emplace_back(devs.size() > 1 ? d + "." + kv.first : kv.first, kv.second);
	std::sort(all.begin(), all.end());
	return all;
}

/* The first line of a run's output that says what went wrong: a role's failure or a
 * mismatch first, else a count of errors that is not 0. */
std::string first_error(const std::string &log)
{
	std::ifstream in(log);
	std::string counted;
	for (std::string l; std::getline(in, l);) {
		std::string low = l;
		std::transform(low.begin(), low.end(), low.begin(), [](unsigned char c) { return static_cast<char>(tolower(c)); });
		if (low.find("failed:") != std::string::npos || low.find("mismatch") != std::string::npos ||
		    low.find("stalled") != std::string::npos || low.find("bad message") != std::string::npos)
			return l.size() > 200 ? l.substr(0, 197) + "..." : l;
		const size_t at = low.find("errors:");
		if (counted.empty() && at != std::string::npos && atoll(low.c_str() + at + 7) > 0)
			counted = l;
	}
	return counted;
}

/* Setup errors in a row, no point ever run: the child's environment, not a finding. */
constexpr uint32_t kSetupFatal = 5;

} // namespace

std::string file_tail(const std::string &path, int lines)
{
	std::ifstream in(path);
	std::vector<std::string> all;
	for (std::string l; std::getline(in, l);)
		if (!l.empty())
			all.push_back(l);
	std::string t;
	for (size_t i = all.size() > static_cast<size_t>(lines) ? all.size() - lines : 0; i < all.size(); i++)
		t += (t.empty() ? "" : " | ") + all[i];
	return t;
}

std::string ChildRunner::command(const std::string &conf) const
{
	std::string c = cc_.rdmapipe;
	for (const std::string &a : cc_.eal)
		c += " " + a;
	c += " --";
	for (const std::string &a : cc_.extra)
		c += " " + (a.find_first_of(" <>=;|&") == std::string::npos ? a : "'" + a + "'");
	return c + " -f " + conf;
}

int ChildRunner::start()
{
	int in[2], out[2];
	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) {
		fatal_ = std::string("cannot make pipes for the child: ") + strerror(errno);
		return -1;
	}
	const std::string log = cc_.dir + "/child-" + std::to_string(++children_) + ".log";
	std::vector<std::string> args{cc_.rdmapipe};
	args.insert(args.end(), cc_.eal.begin(), cc_.eal.end());
	args.push_back("--");
	args.push_back("--points");
	args.insert(args.end(), cc_.extra.begin(), cc_.extra.end());
	std::vector<char *> argv;
	for (std::string &a : args)
		argv.push_back(a.data());
	argv.push_back(nullptr);
	pid_ = fork();
	if (pid_ == 0) {
		setpgid(0, 0);   // the terminal's SIGINT is the explorer's to handle
		const int err = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(err >= 0 ? err : 2, 2);
		execv(argv[0], argv.data());
		dprintf(2, "rdmapipe-explore: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	to_ = in[1];
	from_ = out[0];
	pending_.clear();
	answered_ = 0;
	if (pid_ < 0) {
		fatal_ = std::string("cannot fork the child rdmapipe: ") + strerror(errno);
		return -1;
	}
	return 0;
}

void ChildRunner::reap(bool kill_it)
{
	if (pid_ <= 0)
		return;
	if (to_ >= 0)
		close(to_);   // EOF: a child between points exits
	if (kill_it)
		kill(-pid_, SIGKILL);
	int st = 0;
	for (int i = 0; i < 500 && waitpid(pid_, &st, WNOHANG) == 0; i++)
		usleep(10000);   // up to 5 s for a clean exit ...
	if (waitpid(pid_, &st, WNOHANG) == 0) {   // ... then it is killed
		kill(-pid_, SIGKILL);
		waitpid(pid_, &st, 0);
	}
	last_status_ = st;
	if (from_ >= 0)
		close(from_);
	pid_ = -1;
	to_ = from_ = -1;
}

void ChildRunner::stop()
{
	reap(false);
}

ChildRunner::Answer ChildRunner::ask(const std::string &conf, const std::string &log, int *rc)
{
	const std::string req = conf + "\t" + log + "\n";
	if (write(to_, req.data(), req.size()) != static_cast<ssize_t>(req.size()))
		return Answer::died;
	const double deadline = now_s() + space_.search.point_timeout_s;
	for (;;) {
		const size_t nl = pending_.find('\n');
		if (nl != std::string::npos) {
			const std::string line = pending_.substr(0, nl);
			pending_.erase(0, nl + 1);
			if (line.rfind("done\t", 0) == 0) {
				*rc = atoi(line.c_str() + 5);
				return Answer::done;
			}
			continue;   // not an answer: ignored (nothing else is written there)
		}
		const double left = deadline - now_s();
		if (left <= 0)
			return Answer::timeout;
		pollfd pfd{from_, POLLIN, 0};
		const int r = poll(&pfd, 1, static_cast<int>(std::min(left, 1.0) * 1000) + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		char buf[256];
		const ssize_t n = read(from_, buf, sizeof buf);
		if (n <= 0)
			return Answer::died;
		pending_.append(buf, static_cast<size_t>(n));
	}
}

void ChildRunner::read_results(const std::string &path, Outcome *o)
{
	std::ifstream in(path);
	if (!in)
		return;
	try {
		const nlohmann::json r = nlohmann::json::parse(in);
		o->pass = r["run"].value("result", "FAIL") == "PASS";
		for (const auto &f : r["flows"]) {
			const uint64_t done = f.value("messages_completed", uint64_t{0}), ok = f.value("messages_verified", done);
			if (o->failure.empty() && ok < done)
				o->failure = "flow " + f.value("name", std::string("?")) + ": " + std::to_string(ok) + " of " +
					     std::to_string(done) + " messages verified";
			o->rate += f.value("message_rate", 0.0);
			o->gbps += f.value("gbit_per_s", 0.0);
			o->messages += f.value("messages_completed", uint64_t{0});
			if (o->failure.empty() && f.contains("failure"))
				o->failure = f.value("failure", "");
			if (o->p50_us < 0 && f.contains("latency_us")) {
				o->p50_us = f["latency_us"].value("p50", -1.0);
				o->p99_us = f["latency_us"].value("p99", -1.0);
			}
			if (f.contains("completion_errors") && o->failure.empty())
				for (const auto &[status, n] : f["completion_errors"].items())
					o->failure += (o->failure.empty() ? "completion errors: " : ", ") + status + " x" + std::to_string(n.get<uint64_t>());
		}
	} catch (const nlohmann::json::exception &ex) {
		o->pass = false;
		o->failure = "unreadable results " + path + ": " + ex.what();
	}
}

/* The exit status as the point's verdict on running: 2 and 3 refused it (invalid). */
void ChildRunner::judge_exit(int rc, Outcome *o)
{
	o->exit_code = rc;
	if (rc == 2 || rc == 3) {
		o->status = RunStatus::invalid;
		o->pass = false;
		o->failure = (rc == 2 ? "refused: " : "setup failed: ") + file_tail(cc_.dir + "/" + o->log, 1);
		if (rc == 3 && !any_ran_ && ++setup_failed_ >= kSetupFatal)
			fatal_ = "the first " + std::to_string(kSetupFatal) + " points all failed to set up; the last: " + o->failure;
		return;
	}
	any_ran_ = true;
	setup_failed_ = 0;
	read_results(cc_.dir + "/" + o->results, o);
	if (rc != 0) {
		o->pass = false;
		const std::string said = first_error(cc_.dir + "/" + o->log);
		if (!said.empty())
			o->failure = said + (o->failure.empty() ? "" : " (" + o->failure + ")");
		else if (o->failure.empty())
			o->failure = "exit status " + std::to_string(rc) + ": " + file_tail(cc_.dir + "/" + o->log, 1);
	}
}

/* The point's answer; a child that died runs it again alone in a fresh one. A child
 * that exits (not by a signal) before its first point ever cannot start: fatal. */
ChildRunner::Answer ChildRunner::answer(const std::string &conf, const std::string &log, int *rc, Outcome *o)
{
	Answer a = Answer::died;
	for (int attempt = 0; attempt < 2 && a == Answer::died; attempt++) {
		if (pid_ < 0 && start() != 0)
			return a;
		const bool fresh = answered_ == 0;
		a = ask(conf, log, rc);
		if (a != Answer::died)
			break;
		reap(false);
		const bool signalled = WIFSIGNALED(last_status_);
		const int code = WIFEXITED(last_status_) ? WEXITSTATUS(last_status_) : 0;
		if (fresh && !signalled && !any_ran_) {
			fatal_ = "the child rdmapipe exited with status " + std::to_string(code) + " before its first point: " +
				 file_tail(cc_.dir + "/child-" + std::to_string(children_) + ".log", 2);
			o->status = RunStatus::invalid;
			return a;
		}
		o->failure = signalled ? std::string("killed by ") + strsignal(WTERMSIG(last_status_)) : "exited with status " + std::to_string(code);
		if (fresh)
			break;   // alone in a fresh child it died again: a crash
	}
	return a;
}

Outcome ChildRunner::run(const Point &p)
{
	Outcome o;
	const std::string id = std::to_string(++n_);
	o.conf = "points/" + id + ".conf";
	o.log = "points/" + id + ".log";
	o.results = "points/" + id + ".json";
	const std::string conf = cc_.dir + "/" + o.conf, log = cc_.dir + "/" + o.log;
	if (pc_.make(p, conf, cc_.dir + "/" + o.results, &o.failure) != 0) {
		o.status = RunStatus::invalid;
		o.pass = false;
		return o;
	}
	const double t0 = now_s();
	const HwCounters before = read_counters(pc_.devices());
	int rc = 0;
	const Answer a = answer(conf, log, &rc, &o);
	if (!fatal_.empty())
		return o;
	o.elapsed_s = now_s() - t0;
	if (a == Answer::timeout) {
		reap(true);
		o.status = RunStatus::hung;
		o.pass = false;
		const std::string said = file_tail(log, 1);
		o.failure = "no answer within " + std::to_string(static_cast<int>(space_.search.point_timeout_s)) + " s" +
			    (said.empty() ? "" : "; its output ended: " + said);
		return o;
	}
	if (a == Answer::died) {
		o.status = RunStatus::crashed;
		o.pass = false;
		const std::string said = file_tail(log, 1);
		o.failure += said.empty() ? "" : "; its output ended: " + said;
		return o;
	}
	answered_++;
	judge_exit(rc, &o);
	o.counters = hw_counters_delta(before, read_counters(pc_.devices()));
	return o;
}

} // namespace rp::explore
