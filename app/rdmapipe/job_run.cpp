#include "job_run.h"

#include "common.h"
#include "graph_run.h"

#include "cluster/job.h"
#include "conf/cli_pipeline.h"
#include "conf/ranks.h"
#include "control/job_report.h"
#include "control/metrics.h"
#include "log/log.h"
#include "pipeline/graph.h"
#include "verbs/device.h"
#include "verbs/gid.h"

#include <rte_eal.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace rp {

namespace {

/* Log lines of a rank, each written to stderr as "rank N: line"; the last error line is
 * kept for rank 0's report (why this rank failed). */
struct RankLog {
	std::string prefix, line, last_error;
};
RankLog g_rank_log;

ssize_t rank_log_write(void *cookie, const char *buf, size_t n)
{
	auto *l = static_cast<RankLog *>(cookie);
	for (size_t i = 0; i < n; i++) {
		if (buf[i] != '\n') {
			l->line += buf[i];
			continue;
		}
		const std::string out = l->prefix + l->line + "\n";
		if (write(STDERR_FILENO, out.data(), out.size()) < 0) {
			// stderr gone: nothing better to do with a log line
		}
		const int level = rte_log_cur_msg_loglevel();
		if (level > 0 && level <= static_cast<int>(RTE_LOG_ERR) && !l->line.empty())
			l->last_error = l->line.compare(0, 10, "rdmapipe: ") == 0 ? l->line.substr(10) : l->line;
		l->line.clear();
	}
	return static_cast<ssize_t>(n);
}

/* The rank's device's GID, and its IPv4 address (a RoCE v2 GID's): where it listens
 * and the others connect. Returns 0, or -1 with *err. */
int device_addr(const PipelineConf &c, const std::string &name, RankInfo *r, std::string *err)
{
	DeviceConf d = c.devices[0];
	for (const DeviceConf &e : c.devices)
		if (e.name == name)
			d = e;
	Device dev;
	if (device_open(&dev, name, d.port, d.gid_index, err) != 0)
		return -1;
	char text[INET_ADDRSTRLEN] = {}, gid[INET6_ADDRSTRLEN] = {};
	const bool ok = gid_is_ipv4_mapped(dev.gid) && inet_ntop(AF_INET, &dev.gid.raw[12], text, sizeof text) != nullptr;
	if (inet_ntop(AF_INET6, dev.gid.raw, gid, sizeof gid) != nullptr)
		r->gid = gid;
	r->gid_index = dev.gid_index;
	if (!ok)
		*err = name + ": GID index " + std::to_string(dev.gid_index) +
		       " is no IPv4 address (RoCE v2 over IPv4): the ranks connect over rdma_cm, which needs one";
	device_close(&dev);
	if (!ok)
		return -1;
	r->addr = text;
	return 0;
}

/* Each rank's pipeline planned (as the builder will), with placeholder addresses. */
int plan_ranks(const PipelineConf &c, const std::vector<RankInfo> &ranks, uint32_t only,
	       std::string *err)
{
	for (uint32_t r = 0; r < ranks.size(); r++) {
		if (only != UINT32_MAX && r != only)
			continue;
		PipelineConf x;
		if (pattern_expand(c, r, ranks, &x, err) != 0)
			return -1;
		if (x.stages.empty())
			continue;   // a rank no pair names: nothing to run
		std::vector<PipelineConf> steps;
		if (graph_sweep(x, &steps, err) != 0)
			return -1;
		for (const PipelineConf &s : steps) {
			Graph g;
			if (graph_plan(s, &g, err) != 0) {
				*err = "rank " + std::to_string(r) + ": " + *err;
				return -1;
			}
		}
	}
	return 0;
}

std::vector<RankInfo> placeholder_ranks(const PipelineConf &c, uint32_t n, std::string *err, bool *ok)
{
	std::vector<RankInfo> v(n);
	*ok = true;
	for (uint32_t r = 0; r < n; r++) {
		v[r].addr = "127.0.0.1";
		v[r].device = rank_device(c, 0);
		*ok &= rank_port(c, n, 0, &v[r].port, err) == 0;
	}
	return v;
}

/* The smallest job the pattern takes: two ranks, or as many as its root or pairs name. */
uint32_t min_ranks(const PatternConf &p)
{
	uint32_t n = 2;
	if (p.kind == PatternKind::incast)
		n = std::max(n, p.root + 1);
	for (const RankPair &x : p.pairs)
		n = std::max(n, std::max(x.from, x.to) + 1);
	return n;
}

/* EAL's arguments, with a file prefix of the rank's own unless given: several ranks of
 * a host must not share EAL's runtime files (or the telemetry socket). */
std::vector<char *> eal_args(int eal_argc, char **argv, uint32_t rank, std::string *prefix)
{
	std::vector<char *> a(argv, argv + eal_argc);
	bool given = false;
	for (char *s : a)
		given |= strncmp(s, "--file-prefix", 13) == 0;
	if (!given) {
		*prefix = "--file-prefix=rdmapipe-rank" + std::to_string(rank);
		a.push_back(prefix->data());
	}
	a.push_back(nullptr);
	return a;
}

/* The ranks of a host serve their metrics on ports of their own: run.metrics's PORT
 * plus the rank's place among the host's ranks (docs/metrics.md). */
void rank_metrics(const Job &j, PipelineConf *x)
{
	if (!x->run.metrics.empty())
		x->run.metrics = addr_plus(x->run.metrics, j.local);
}

/* A rank's pushes in a group of its own (the gateway keeps one state per group, and a
 * push replaces its families by name): {instance, rank}, and a re-run alone of
 * pattern.confirm in another ({..., confirm=PAIR}), so it never replaces the run's. */
int rank_push(const Job &j, const PipelineConf &x, const std::string &confirm, std::string *err)
{
	if (x.run.push.empty())
		return 0;
	std::vector<std::pair<std::string, std::string>> g = {{"instance", host_name()}, {"rank", std::to_string(j.rank)}};
	if (confirm.empty())
		return metrics_push_to(x.run.push, 0, g, err);   // the run's own (graph_run's call keeps it)
	g.emplace_back("confirm", confirm);
	return metrics_push_regroup(g, err);
}

/* The settings a rank cannot honour: nothing on a terminal of its own. */
int job_refusals(const RunOptions &cli, const PipelineConf &c)
{
	const char *what = cli.interactive		    ? "-i: the ranks of a job have no console each"
			   : cli.stats_period_s > 0 || c.run.stats_period_s > 0 ? "stats_period (--stats-period): a job's ranks print no stats lines; "
									       "query each rank's telemetry (its file prefix: rdmapipe-rankN)"
			   : cli.dump_conf ? "--dump-conf: a pattern file is the pipeline already"
					   : nullptr;
	if (what == nullptr)
		return kExitOk;
	RP_LOG(ERR, CONF, "rdmapipe: %s: pattern runs refuse %s\n", c.file.c_str(), what);
	return kExitUsage;
}

/* The step names of a size sweep ("64B", "4096B+64B"), "" for one step. */
std::vector<std::string> step_names(const PipelineConf &c)
{
	std::vector<PipelineConf> steps;
	std::string err;
	if (graph_sweep(c, &steps, &err) != 0 || steps.size() == 1)
		return {""};
	std::vector<std::string> v;
	for (const PipelineConf &s : steps)
		v.push_back(graph_step_name(c, s));
	return v;
}

/* The ranks that run something (a pair names them, or the file has flows of its own):
 * they take part in each step's wait for the servers; the others are idle. */
std::vector<bool> ranks_that_run(const PipelineConf &c, const std::vector<RankInfo> &ranks)
{
	std::vector<bool> ran(ranks.size(), false);
	for (uint32_t r = 0; r < ranks.size(); r++) {
		PipelineConf x;
		std::string err;
		ran[r] = pattern_expand(c, r, ranks, &x, &err) == 0 && !x.stages.empty();
	}
	return ran;
}

/* Each step, every running rank's servers listen before any client connects: a wait
 * among them, as many times as the pattern has steps on every rank (a rank that failed
 * before some of them takes part still, so that no one waits for it). A rank that
 * never comes ends the job. */
struct ListenWaits {
	const Job &j;
	const PipelineConf &c;
	std::vector<uint32_t> members;
	size_t done = 0;

	int wait(std::string *err)
	{
		std::vector<std::string> all;
		if (job_allgather(j, "listening", &all, c.pattern.timeout_s, err, members) != 0) {
			RP_LOG(ERR, APP, "rdmapipe: waiting for the other ranks to listen: %s: ending the job\n", err->c_str());
			job_abort(j, kExitSetup);
		}
		done++;
		return 0;
	}
	void pad(size_t steps)
	{
		std::string err;
		while (done < steps)
			wait(&err);
	}
};

/* stdout to /dev/null while a rank runs: rank 0 prints the job's table, no rank its
 * own summary. */
struct Hush {
	int saved = -1, null = -1;
	Hush()
	{
		fflush(stdout);
		saved = dup(STDOUT_FILENO);
		null = open("/dev/null", O_WRONLY);
		if (saved >= 0 && null >= 0)
			dup2(null, STDOUT_FILENO);
	}
	~Hush()
	{
		fflush(stdout);
		if (saved >= 0)
			dup2(saved, STDOUT_FILENO);
		for (int fd : {saved, null})
			if (fd >= 0)
				close(fd);
	}
};

/* This rank's part, once the ranks know each other: its pipeline, run with the
 * summary kept off stdout (rank 0 prints the job's). Returns its ExitCode and its
 * results per step in *texts; *eal says whether EAL is up (the caller cleans it up,
 * after the re-runs of pattern.confirm). */
int run_rank(int eal_argc, char **argv, const RunOptions &cli, const PipelineConf &c, const Job &j,
	     const std::vector<RankInfo> &ranks, const std::vector<bool> &ran, std::vector<std::string> *texts, bool *eal)
{
	if (!ran[j.rank]) {
		RP_LOG(NOTICE, APP, "rdmapipe: no pair of the pattern names this rank, and it has no flow of its own: idle\n");
		return kExitOk;
	}
	ListenWaits waits{j, c, {}};
	for (uint32_t r = 0; r < ran.size(); r++)
		if (ran[r])
			waits.members.push_back(r);
	const size_t steps = step_names(c).size();
	PipelineConf x;
	std::string err, prefix;
	pattern_expand(c, j.rank, ranks, &x, &err);   // as ranks_that_run did
	rank_metrics(j, &x);
	if (rank_push(j, x, "", &err) != 0) {
		waits.pad(steps);
		return setup_error(err);
	}
	std::vector<char *> a = eal_args(eal_argc, argv, j.rank, &prefix);
	int rc = eal_start(static_cast<int>(a.size()) - 1, a.data(), c.file.c_str());
	if (rc != kExitOk) {
		waits.pad(steps);
		return rc;
	}
	*eal = true;
	RunOptions o = cli;
	o.output_json.clear();
	o.output_csv.clear();
	Hush hush;
	rc = run_graph(x, o, texts, [&waits](std::string *e) { return waits.wait(e); });
	waits.pad(steps);
	return rc;
}

int write_text(const std::string &path, const std::string &text)
{
	FILE *f = fopen(path.c_str(), "w");
	if (f == nullptr || fwrite(text.data(), 1, text.size(), f) != text.size() || fclose(f) != 0) {
		RP_LOG(ERR, CONTROL, "rdmapipe: %s: cannot write the job's results: %s\n", path.c_str(), strerror(errno));
		return -1;
	}
	return 0;
}

/* Rank 0: what each rank sent (texts, gathered), or why nothing came. */
std::vector<JobRank> job_ranks(const std::vector<RankInfo> &ranks, const std::vector<std::string> &texts,
			       const std::vector<uint32_t> &missing, double waited)
{
	std::vector<JobRank> jr(ranks.size());
	for (size_t r = 0; r < ranks.size(); r++) {
		jr[r].info = ranks[r];
		std::string err;
		if (std::find(missing.begin(), missing.end(), r) != missing.end())
			jr[r].error = "sent no results within " + std::to_string(static_cast<int>(waited)) + " s of the others' ends (pattern.timeout)";
		else if (rank_results_parse(texts[r], &jr[r], &err) != 0)
			jr[r].error = err;
	}
	return jr;
}

/* Rank 0: every rank's results (and the flagged pairs' re-runs alone) into one report,
 * printed and written; the job's exit status. Ranks that sent nothing in time are
 * named; the caller ends them. */
int report_job(const RunOptions &cli, const PipelineConf &c, const std::vector<RankInfo> &ranks,
	       const std::vector<std::string> &texts, const std::vector<uint32_t> &missing, double waited,
	       const JobAlone &alone = {})
{
	const std::vector<JobRank> jr = job_ranks(ranks, texts, missing, waited);
	int worst = kExitOk;
	for (const JobRank &x : jr)
		worst = std::max(worst, x.reported ? x.exit : static_cast<int>(kExitRunFailed));
	const JobReport rep = job_report(c, jr, step_names(c), alone);
	printf("%s", rep.table.c_str());
	fflush(stdout);
	const std::string json = cli.output_json.empty() ? c.run.json : cli.output_json;
	const std::string csv = cli.output_csv.empty() ? c.run.csv : cli.output_csv;
	if ((!json.empty() && write_text(json, rep.json) != 0) || (!csv.empty() && write_text(csv, rep.csv) != 0))
		worst = std::max(worst, static_cast<int>(kExitRunFailed));
	if (!rep.pass)
		worst = std::max(worst, static_cast<int>(kExitRunFailed));
	return worst > 128 ? kExitRunFailed : worst;   // a signal on one rank: the job failed
}

/* Setup words of every rank, or the job's end when one failed (every rank sees the same
 * words, so each decides alike). Returns kExitOk, or the ExitCode to end with. */
int exchange(const Job &j, const PipelineConf &c, RankInfo mine, std::vector<RankInfo> *ranks)
{
	std::vector<std::string> words;
	std::string err;
	if (job_allgather(j, rank_info_text(mine), &words, c.pattern.timeout_s, &err) != 0) {
		RP_LOG(ERR, APP, "rdmapipe: %s\n", err.c_str());
		job_abort(j, kExitSetup);   // a rank that never came: end them all rather than wait
	}
	ranks->assign(j.size, RankInfo{});
	std::vector<std::pair<std::string, std::string>> refusals;   // why, the ranks (hosts) that said so
	for (uint32_t r = 0; r < j.size; r++) {
		if (rank_info_parse(words[r], &(*ranks)[r], &err) != 0)
			(*ranks)[r].failed = err;
		const RankInfo &x = (*ranks)[r];
		if (x.failed.empty())
			continue;
		auto it = std::find_if(refusals.begin(), refusals.end(), [&](const auto &f) { return f.first == x.failed; });
		if (it == refusals.end())
			it = refusals.insert(refusals.end(), {x.failed, ""});
		it->second += (it->second.empty() ? "" : ", ") + std::to_string(r) + " (host " + x.host + ")";
	}
	for (const auto &[why, who] : refusals)   // a job-wide reason (the job's size) once
		if (j.rank == 0)
			RP_LOG(ERR, APP, "rdmapipe: rank %s cannot take part: %s\n", who.c_str(), why.c_str());
	return refusals.empty() ? kExitOk : kExitSetup;
}

} // namespace

void job_log_setup()
{
	uint32_t rank = 0;
	if (!job_env_rank(&rank))
		return;
	g_rank_log.prefix = "rank " + std::to_string(rank) + ": ";
	cookie_io_functions_t io{};
	io.write = rank_log_write;
	if (FILE *f = fopencookie(&g_rank_log, "w", io)) {
		setvbuf(f, nullptr, _IOLBF, 0);
		set_log_stream(f);
	}
}

int check_job(const PipelineConf &c, uint32_t *n, std::string *err)
{
	*n = min_ranks(c.pattern);
	bool ok = true;
	const std::vector<RankInfo> ranks = placeholder_ranks(c, *n, err, &ok);
	return ok ? plan_ranks(c, ranks, UINT32_MAX, err) : -1;
}

namespace {

/* What this rank brings: its host, device, address and ports, or why it cannot take
 * part (kept short: the words have a bound). */
RankInfo prepare_rank(const Job &j, const PipelineConf &c)
{
	RankInfo mine;
	mine.host = j.host;
	mine.local = j.local;
	mine.device = rank_device(c, j.local);
	std::vector<RankPair> pairs;
	std::string err;
	bool ok = true;
	if (pattern_pairs(c, j.size, &pairs, &err) != 0 || rank_port(c, j.size, j.local, &mine.port, &err) != 0 ||
	    device_addr(c, mine.device, &mine, &err) != 0)
		ok = false;
	else if (std::vector<RankInfo> ph = placeholder_ranks(c, j.size, &err, &ok); !ok || plan_ranks(c, ph, j.rank, &err) != 0)
		ok = false;
	if (!ok)
		mine.failed = err.substr(0, 1500);
	return mine;
}

/* How long a rank idle in a round waits for the pair re-run in it: pattern.timeout,
 * and as long as the flow may take to connect (run.connect_timeout), run (its
 * duration, or the run's) and give up (a stall, then the server's wait for its
 * client to go: two stall timeouts). */
double round_wait_s(const PipelineConf &step, const JobConfirm &k)
{
	double run_s = step.run.duration_s;
	for (const FlowConf &f : step.flows)
		if (f.name == k.jf.tmpl)
			run_s = std::max(run_s, f.duration_s);
	return step.pattern.timeout_s + step.run.connect_timeout_s + run_s + 2 * step.run.stall_timeout_s;
}

/* Every rank at the start line of a round (after the last: every re-run over), within
 * wait_s; one that never comes ends the job. */
void start_line(const Job &j, size_t round, double wait_s)
{
	std::vector<std::string> all;
	std::string err;
	if (job_allgather(j, "round " + std::to_string(round), &all, wait_s, &err) != 0) {
		RP_LOG(ERR, APP, "rdmapipe: re-running flagged pairs alone: %s: ending the job\n", err.c_str());
		job_abort(j, kExitRunFailed);
	}
}

/* One flagged pair re-run alone (its two ranks; the others idle). Returns this rank's
 * results of it ("" when idle) and its ExitCode in *rc. */
std::string alone_round(const RunOptions &cli, const PipelineConf &step, const Job &j, const std::vector<RankInfo> &ranks,
			const JobConfirm &k, bool eal, int *rc)
{
	const RankPair p = k.jf.pair;
	if (p.from != j.rank && p.to != j.rank)
		return "";
	ListenWaits waits{j, step, {std::min(p.from, p.to), std::max(p.from, p.to)}};
	PipelineConf x;
	std::string err;
	std::vector<std::string> texts;
	if (!eal || pattern_expand_alone(step, j.rank, ranks, k.jf.tmpl, p, &x, &err) != 0 ||
	    rank_push(j, x, k.jf.name, &err) != 0) {
		RP_LOG(ERR, APP, "rdmapipe: cannot re-run '%s' alone: %s\n", k.jf.name.c_str(), eal ? err.c_str() : "EAL did not start");
		*rc = std::max(*rc, static_cast<int>(kExitSetup));
	} else {
		rank_metrics(j, &x);
		RunOptions o = cli;
		o.output_json.clear();
		o.output_csv.clear();
		Hush hush;
		*rc = std::max(*rc, run_graph(x, o, &texts, [&waits](std::string *e) { return waits.wait(e); }));
	}
	waits.pad(1);
	return texts.empty() ? "" : texts[0];
}

/* ClusterKit's confirmation (pattern.confirm): rank 0 names the pairs the loaded run
 * flagged (all: the loaded results it gathered), every rank re-runs them one at a
 * time, and rank 0 gets every rank's results of the rounds. */
JobAlone confirm_pairs(const Job &j, const RunOptions &cli, const PipelineConf &c, const std::vector<RankInfo> &ranks,
		       const std::vector<bool> &ran, const std::vector<std::string> &all, bool eal)
{
	JobAlone a;
	if (c.pattern.confirm == 0)
		return a;
	std::string text, err;
	if (j.rank == 0)
		text = confirm_text(job_to_confirm(c, job_ranks(ranks, all, {}, 0)));
	if (job_bcast_text(j, &text, c.pattern.timeout_s, &err) != 0 || confirm_parse(text, &a.rounds, &err) != 0) {
		RP_LOG(ERR, APP, "rdmapipe: the flagged pairs to re-run alone: %s: ending the job\n", err.c_str());
		job_abort(j, kExitRunFailed);
	}
	if (a.rounds.empty())
		return a;
	if (j.rank == 0)
		RP_LOG(NOTICE, APP, "rdmapipe: re-running %zu flagged pair(s) alone, one at a time (pattern.confirm)\n",
		       a.rounds.size());
	std::vector<PipelineConf> steps;
	if (graph_sweep(c, &steps, &err) != 0)
		steps = {c};
	std::vector<std::string> mine(a.rounds.size());
	int rc = kExitOk;
	for (size_t i = 0; i < a.rounds.size(); i++) {
		start_line(j, i, i == 0 ? c.pattern.timeout_s : round_wait_s(steps[a.rounds[i - 1].step], a.rounds[i - 1]));
		mine[i] = alone_round(cli, steps[a.rounds[i].step], j, ranks, a.rounds[i], eal, &rc);
	}
	start_line(j, a.rounds.size(), round_wait_s(steps[a.rounds.back().step], a.rounds.back()));
	std::vector<std::string> got;
	std::vector<uint32_t> missing;
	job_gather(j, rank_results_text(rc, rc == kExitOk ? "" : g_rank_log.last_error, mine), ran, &got, &missing,
		   c.pattern.timeout_s);
	if (j.rank == 0)
		a.ranks = job_ranks(ranks, got, missing, c.pattern.timeout_s);
	return a;
}

/* After the runs: every rank's results to rank 0, which reports the job (ending it if
 * a rank never sent any; re-running the flagged pairs alone first) and tells each rank
 * the job's status, which it returns. */
int finish_job(const Job &j, const RunOptions &cli, const PipelineConf &c, const std::vector<RankInfo> &ranks,
	       const std::vector<bool> &ran, int rc, const std::vector<std::string> &texts, bool eal)
{
	std::vector<std::string> all;
	std::vector<uint32_t> missing;
	const std::string mine = rank_results_text(rc, rc == kExitOk ? "" : g_rank_log.last_error, texts);
	job_gather(j, mine, ran, &all, &missing, c.pattern.timeout_s);
	if (j.rank == 0 && !missing.empty()) {
		/* The reason first: the launcher forwards stdout and stderr in chunks of its
		 * own, so a line logged after the table could land inside it. */
		std::string list;
		for (uint32_t r : missing)
			list += (list.empty() ? "" : ", ") + std::to_string(r);
		RP_LOG(ERR, APP, "rdmapipe: rank(s) %s sent no results within %.0f s of the others' ends: ending the job\n",
		       list.c_str(), c.pattern.timeout_s);
		rc = report_job(cli, c, ranks, all, missing, c.pattern.timeout_s);
		job_abort(j, rc);
	}
	const JobAlone alone = confirm_pairs(j, cli, c, ranks, ran, all, eal);
	if (eal)
		rte_eal_cleanup();
	if (j.rank == 0)
		rc = report_job(cli, c, ranks, all, missing, c.pattern.timeout_s, alone);
	std::string err;
	if (job_bcast(j, &rc, c.pattern.timeout_s, &err) != 0) {
		RP_LOG(ERR, APP, "rdmapipe: %s\n", err.c_str());
		rc = std::max(rc, static_cast<int>(kExitRunFailed));
	}
	return rc;
}

} // namespace

int run_job(int eal_argc, char **argv, const RunOptions &cli, const PipelineConf &c)
{
	std::string err;
	if (int rc = job_refusals(cli, c); rc != kExitOk)
		return rc;
	if (!job_supported() || !job_launched()) {
		RP_LOG(ERR, APP, "rdmapipe: %s:%d: pattern: %s\n", c.file.c_str(), c.pattern.line,
		       !job_supported() ? "this rdmapipe was built without MPI (meson setup -Dmpi=enabled, with libopenmpi-dev)"
					: "a pattern runs on the ranks of a job: launch it with mpirun -np N (or srun)");
		return kExitUsage;
	}
	Job j;
	if (job_init(nullptr, nullptr, &j, &err) != 0) {
		RP_LOG(ERR, APP, "rdmapipe: %s\n", err.c_str());
		return kExitSetup;
	}
	std::vector<RankInfo> ranks;
	int rc = exchange(j, c, prepare_rank(j, c), &ranks);
	if (rc == kExitOk) {
		std::vector<RankPair> pairs;
		pattern_pairs(c, j.size, &pairs, &err);   // it did on every rank
		if (j.rank == 0)
			printf("rdmapipe: job of %u ranks, pattern %s: %zu pairs\n", j.size, pattern_kind_name(c.pattern.kind),
			       pairs.size());
		fflush(stdout);
		const std::vector<bool> ran = ranks_that_run(c, ranks);
		std::vector<std::string> texts;
		bool eal = false;
		rc = run_rank(eal_argc, argv, cli, c, j, ranks, ran, &texts, &eal);
		rc = finish_job(j, cli, c, ranks, ran, rc, texts, eal);
	}
	job_finalize(&j);
	return rc;
}

} // namespace rp
