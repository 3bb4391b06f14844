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

double now_s()
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

namespace {

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
/* A child says "alive" each second while a point runs: this long without a line from
 * a runner's child (at most half the point's timeout, at least 3 s), its host stopped
 * answering (not only the point). */
constexpr double kSilentS = 10;
double silent_s(double point_timeout_s)
{
	return std::min(kSilentS, std::max(3.0, point_timeout_s / 2));
}
/* A host restored after a hang, a fresh child that cannot start is tried again this
 * often until start_timeout_s (an ssh host rebooting). */
constexpr unsigned kHostRetryS = 5;

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

std::string sh_quote(const std::string &s)
{
	std::string q = "'";
	for (char ch : s)
		q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
	return q + "'";
}

int shell_in(ChildRunner &child, const std::string &dir, const std::string &cmd, const std::string &out,
	     const std::string *runner, double work_s)
{
	const std::string in_dir = "cd " + sh_quote(dir) + " && { " + cmd + "; } >> " + sh_quote(out) + " 2>&1";
	const std::string c = runner ? child.through(*runner, in_dir, work_s) : child.on_host(in_dir, work_s);
	const int st = system(c.c_str());
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* The current child's file in the output folder: child-N.log, child-N.console. */
std::string ChildRunner::child_file(const char *ext) const
{
	return "child-" + std::to_string(children_) + "." + ext;
}

std::string ChildRunner::on_host(const std::string &cmd, double work_s)
{
	return through(cc_.runner, cmd, work_s);
}

std::string ChildRunner::through(const std::string &runner, const std::string &cmd, double work_s)
{
	if (runner.empty())
		return cmd;
	stop();   // a runner's host may take one at a time (tools/softroce's VMs do)
	const double start_s = cc_.start_timeout_s > 0 ? cc_.start_timeout_s : 600;
	const int bound = static_cast<int>((work_s < 0 ? space_.search.point_timeout_s : work_s) + start_s + 30);
	return "timeout -k 10 " + std::to_string(bound) + " sh -c " + sh_quote(runner + " \"$@\"") +
	       " rdmapipe-explore-runner sh -c " + sh_quote(cmd) + " < /dev/null >> " +
	       sh_quote(cc_.dir + "/runner.log") + " 2>&1";
}

/* Through a runner as the children ran: sh -c 'RUNNER "$@"', its console (a runner may
 * keep one in $RDMAPIPE_EXPLORE_CONSOLE) beside the command when run by hand. */
std::string ChildRunner::command(const std::string &conf) const
{
	if (cc_.runner.empty())
		return child_command(conf);
	return "RDMAPIPE_EXPLORE_CONSOLE=${RDMAPIPE_EXPLORE_CONSOLE:-$PWD/reproduce.console} sh -c " +
	       sh_quote(cc_.runner + " \"$@\"") + " rdmapipe-explore-runner " + child_command(conf);
}

std::string ChildRunner::shown_command(const std::string &conf) const
{
	return (cc_.runner.empty() ? "" : cc_.runner + " ") + child_command(conf);
}

std::string ChildRunner::child_command(const std::string &conf) const
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
	children_++;
	const std::string log = cc_.dir + "/" + child_file("log");
	std::vector<std::string> args;
	if (!cc_.runner.empty())   // the runner's words, then the child's ("$@")
		args = {"/bin/sh", "-c", cc_.runner + " \"$@\"", "rdmapipe-explore-runner"};
	args.push_back(cc_.rdmapipe);
	args.insert(args.end(), cc_.eal.begin(), cc_.eal.end());
	args.push_back("--");
	args.push_back("--points");
	args.insert(args.end(), cc_.extra.begin(), cc_.extra.end());
	std::vector<char *> argv;
	for (std::string &a : args)
		argv.push_back(a.data());
	argv.push_back(nullptr);
	const std::string console = cc_.dir + "/" + child_file("console");
	pid_ = fork();
	if (pid_ == 0) {
		setpgid(0, 0);   // the terminal's SIGINT is the explorer's to handle
		setenv("RDMAPIPE_EXPLORE_CONSOLE", console.c_str(), 1);   // where a runner may keep its host's console
		const int err = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(err >= 0 ? err : 2, 2);
		execv(argv[0], argv.data());
		dprintf(2, "rdmapipe-explore: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	if (pid_ < 0) {
		fatal_ = std::string("cannot fork the child rdmapipe: ") + strerror(errno);
		close(in[1]);
		close(out[0]);
		return -1;
	}
	to_ = in[1];
	/* A runner's child writes its stderr to stdout (the VM's serial line): the lines
	 * that are no answer go to its log, beside the runner's own. */
	if (!cc_.runner.empty())
		said_ = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	from_ = out[0];
	pending_.clear();
	answered_ = 0;
	alive_at_ = 0;
	return 0;
}

void ChildRunner::reap(bool kill_it)
{
	if (pid_ <= 0)
		return;
	if (to_ >= 0)
		close(to_);   // EOF: a child between points exits
	if (kill_it)   // a runner (tools/softroce) ends its host (qemu) on SIGTERM, and cleans up
		kill(-pid_, cc_.runner.empty() ? SIGKILL : SIGTERM);
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
	if (said_ >= 0)
		close(said_);
	said_ = -1;
	pid_ = -1;
	to_ = from_ = -1;
}

void ChildRunner::stop()
{
	reap(false);
}

/* One line of the child's: true when it is the answer (its status in *rc, the
 * counters that moved in *moved); "alive" says the child and its host still answer. */
bool ChildRunner::line(const std::string &l, int *rc, HwCounters *moved)
{
	if (l == "alive") {
		alive_at_ = now_s();
		heartbeats_ = true;
		return false;
	}
	if (l.rfind("done\t", 0) != 0) {   // not an answer: only a runner's child writes any
		const std::string kept = l + "\n";
		if (said_ >= 0 && write(said_, kept.data(), kept.size()) < 0) {
			close(said_);   // its log is lost: the search goes on
			said_ = -1;
		}
		return false;
	}
	*rc = atoi(l.c_str() + 5);
	for (size_t at = l.find('\t', 5); at != std::string::npos;) {
		const size_t next = l.find('\t', at + 1);
		const std::string f = l.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1);
		if (const size_t eq = f.rfind('='); eq != std::string::npos && eq > 0)
			moved->emplace_back(f.substr(0, eq), strtoull(f.c_str() + eq + 1, nullptr, 10));
		at = next;
	}
	return true;
}

/* The child's lines until its answer (done), or with ready, until it says "alive";
 * timeout at the deadline, died at the end of its output. */
ChildRunner::Answer ChildRunner::await(double deadline, bool ready, int *rc, HwCounters *moved)
{
	for (;;) {
		const size_t nl = pending_.find('\n');
		if (nl != std::string::npos) {
			const std::string l = pending_.substr(0, nl);
			pending_.erase(0, nl + 1);
			if (line(l, rc, moved) || (ready && alive_at_ > 0))
				return Answer::done;
			continue;
		}
		const double left = deadline - now_s();
		if (left <= 0)
			return Answer::timeout;
		pollfd pfd{from_, POLLIN, 0};
		const int r = poll(&pfd, 1, static_cast<int>(std::min(left, 1.0) * 1000) + 1);
		if (r <= 0)
			continue;   // EINTR, or no line yet: the deadline again
		char buf[256];
		const ssize_t n = read(from_, buf, sizeof buf);
		if (n <= 0)
			return Answer::died;
		pending_.append(buf, static_cast<size_t>(n));
	}
}

ChildRunner::Answer ChildRunner::ask(const std::string &conf, const std::string &log, int *rc, HwCounters *moved)
{
	/* A runner's new child is sent nothing before it says it is ready (its VM booted,
	 * EAL up): a serial line drops what comes before the guest reads it. */
	if (!cc_.runner.empty() && alive_at_ == 0) {
		asked_at_ = now_s();
		if (const Answer a = await(asked_at_ + cc_.start_timeout_s, true, rc, moved); a != Answer::done)
			return a;
	}
	const std::string req = conf + "\t" + log + "\n";
	if (write(to_, req.data(), req.size()) != static_cast<ssize_t>(req.size()))
		return Answer::died;
	asked_at_ = now_s();
	return await(asked_at_ + space_.search.point_timeout_s, false, rc, moved);
}

/* A runner's child silent past silent_s while its point hung: its host stopped answering. */
bool ChildRunner::host_silent() const
{
	return !cc_.runner.empty() && heartbeats_ &&
	       now_s() - std::max(alive_at_, asked_at_) > silent_s(space_.search.point_timeout_s);
}

/* A point with no answer in time: the child (with a runner, its host) killed. */
void ChildRunner::hung(Outcome *o, const std::string &log)
{
	const bool host = host_silent();
	const std::string console = child_file("console");
	reap(true);
	o->status = host ? RunStatus::host_hung : RunStatus::hung;
	o->pass = false;
	const std::string said = file_tail(log, 1);
	o->failure = "no answer within " + std::to_string(static_cast<int>(space_.search.point_timeout_s)) + " s" +
		     (said.empty() ? "" : "; its output ended: " + said);
	if (!host)
		return;
	host_down_at_ = now_s();
	const std::string seen = file_tail(cc_.dir + "/" + console, 3);
	o->failure += "; nothing from its host for " + std::to_string(static_cast<int>(silent_s(space_.search.point_timeout_s))) +
		      " s (no 'alive'): the runner was stopped and starts anew; " +
		      (seen.empty() ? "the runner's log: " + child_file("log") : "its console (" + console + ") ended: " + seen);
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
 * that exits (not by a signal) before its first point ever cannot start: fatal; so is
 * one whose host, restored after a hang, does not come back within start_timeout_s. */
ChildRunner::Answer ChildRunner::answer(const std::string &conf, const std::string &log, int *rc, Outcome *o,
					HwCounters *moved)
{
	Answer a = Answer::died;
	for (int attempt = 0; attempt < 2 && a == Answer::died; attempt++) {
		if (pid_ < 0 && start() != 0)
			return a;
		const bool fresh = answered_ == 0;
		a = ask(conf, log, rc, moved);
		if (a != Answer::died)
			break;
		reap(false);
		const bool signalled = WIFSIGNALED(last_status_);
		const int code = WIFEXITED(last_status_) ? WEXITSTATUS(last_status_) : 0;
		const std::string tail = file_tail(cc_.dir + "/" + child_file("log"), 2);
		if (fresh && !signalled && host_down_at_ > 0) {
			if (now_s() - host_down_at_ < cc_.start_timeout_s) {
				sleep(kHostRetryS);   // its host is coming back
				attempt--;
				continue;
			}
			fatal_ = "the runner's host did not come back within " + std::to_string(static_cast<int>(cc_.start_timeout_s)) +
				 " s of its hang: " + tail;
		} else if (fresh && !signalled && !any_ran_) {
			fatal_ = "the child rdmapipe exited with status " + std::to_string(code) + " before its first point: " + tail;
		}
		if (!fatal_.empty()) {
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
	int rc = 0;
	HwCounters moved;
	const Answer a = answer(conf, log, &rc, &o, &moved);
	if (!fatal_.empty())
		return o;
	o.elapsed_s = now_s() - t0;
	if (a == Answer::timeout) {
		hung(&o, log);
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
	host_down_at_ = 0;
	judge_exit(rc, &o);
	o.counters = std::move(moved);
	return o;
}

} // namespace rp::explore
