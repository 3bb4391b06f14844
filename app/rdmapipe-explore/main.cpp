/* rdmapipe-explore: searches the workload space a space file describes for anomalies,
 * each point a pipeline run (every byte verified) by a child rdmapipe, and writes each
 * anomaly, minimised, as a reproducer (docs/explore.md). */
#include "conf/cli_pipeline.h"
#include "explore/bare.h"
#include "explore/child.h"
#include "explore/output.h"
#include "explore/point_conf.h"
#include "explore/search.h"
#include "explore/space.h"

#include <getopt.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

namespace {

using namespace rp::explore;

constexpr int kExitNone = 0, kExitFound = 1, kExitUsage = 2, kExitChild = 3;

const char kUsage[] =
	"usage: rdmapipe-explore [OPTIONS] -f SPACE [-- CHILD-EAL-ARGS...]\n"
	"Searches the workload space SPACE describes for anomalies (failures, slow corners,\n"
	"hw_counters that move), every point a pipeline run by a child rdmapipe with every\n"
	"byte verified, and minimises each to the settings it needs (docs/explore.md).\n"
	"  -f, --space FILE     the space file (libconfig; conf/explore-default.conf)\n"
	"      --check          check the space file (and that it has valid points), then exit\n"
	"      --budget B       points (200) or wall time (90s, 10m, 2h); default: the file's, else 10m\n"
	"      --seed N         the search's seed (the same seed, the same points)\n"
	"      --strategy S     anneal (default), random or grid\n"
	"      --stop-after N   stop once N anomalies are found and minimised (default: spend the budget)\n"
	"  -o, --out DIR        the output folder (default explore-YYYYmmdd-HHMMSS; must be new or empty)\n"
	"      --rdmapipe PATH  the child binary (default: the rdmapipe beside this program, else PATH's)\n"
	"      --runner CMD     start each child (and each repro.c) through CMD, a shell command its\n"
	"                       arguments follow: 'ssh HOST', or the soft-RoCE VM (docs/explore.md). A\n"
	"                       host that stops answering is a finding (host hung); the runner is\n"
	"                       stopped and the search goes on with a new one (docs/explore.md)\n"
	"      --start-timeout S  with --runner: a new child's time to start (a VM's boot; default 600)\n"
	"      --repro-on NAME=CMD  also build and run each finding's repro.c through CMD, as --runner\n"
	"                       does, its verdict labelled NAME (another kernel's VM, another host);\n"
	"                       repeatable (docs/explore.md: a finding on Debian's 6.1 and 6.12 kernels)\n"
	"      --plant SPEC     test hook, repeatable: passed to every child as --plant SPEC\n"
	"                       (corrupt:size>=8192,qps>=4 or slow:batch<=2,inline=true)\n"
	"      --repeats N      minimisation: runs of each candidate (default 3) ...\n"
	"      --need M         ... of which M must show the anomaly (default 2)\n"
	"      --perf-flag F    slower than F x its best neighbour: an anomaly (default 0.5)\n"
	"      --bare-flag F    slower than F x plain verbs doing its verb, transport and size (the\n"
	"                       bare-verbs grid measured at start): an anomaly (default 0.03)\n"
	"      --no-bare        no bare-verbs reference (search.bare_reference = false)\n"
	"  -q, --quiet          no progress line\n"
	"  -h, --help           this text\n"
	"      --version        the version\n"
	"After --: EAL arguments for each child rdmapipe (default: -l 0-1 --in-memory --no-pci\n"
	"--log-level=lib.eal:error; without hugepages here, or with --runner, --no-huge -m 1024\n"
	"--no-shconf instead of --in-memory).\n"
	"Exit status: 0 nothing found, 1 anomalies found, 2 usage or a bad space file,\n"
	"3 the child rdmapipe could not run (no device, EAL failure), 130 interrupted.\n";

struct Args {
	std::string space, out, rdmapipe, budget, strategy, runner;
	double start_timeout_s = -1;
	bool check = false, quiet = false, no_bare = false;
	long long seed = -1, repeats = -1, need = -1, stop_after = -1;
	double perf_flag = -1, bare_flag = -1;
	std::vector<std::string> plants, eal;
	std::vector<std::pair<std::string, std::string>> repro_on;   // --repro-on NAME=CMD
	std::string command;   // as given, for the report
};

volatile sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

enum { kOptCheck = 256, kOptBudget, kOptSeed, kOptStrategy, kOptRdmapipe, kOptPlant, kOptRepeats, kOptNeed, kOptPerfFlag, kOptStopAfter, kOptVersion, kOptRunner, kOptStartTimeout, kOptReproOn, kOptBareFlag, kOptNoBare };

bool number(const char *s, long long lo, long long hi, long long *out)
{
	char *end = nullptr;
	errno = 0;
	const long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/* Two lcores, nothing on disk: hugepages where the host has them, else (or on a
 * runner's host, unknown here) plain memory. */
std::vector<std::string> default_eal(bool runner)
{
	long pages = 0;
	if (FILE *f = fopen("/proc/sys/vm/nr_hugepages", "r")) {
		if (fscanf(f, "%ld", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	if (pages > 0 && !runner)
		return {"-l", "0-1", "--in-memory", "--no-pci", "--log-level=lib.eal:error"};
	return {"-l", "0-1", "--no-huge", "-m", "1024", "--no-shconf", "--no-pci", "--log-level=lib.eal:error"};
}

/* Returns -1 to go on, else the exit status. */
int parse_option(int c, Args *a)
{
	switch (c) {
	case 'f': a->space = optarg; return -1;
	case 'o': a->out = optarg; return -1;
	case 'q': a->quiet = true; return -1;
	case 'h': printf("%s", kUsage); return kExitNone;
	case kOptVersion: printf("rdmapipe-explore %s\n", RDMAPIPE_VERSION); return kExitNone;
	case kOptCheck: a->check = true; return -1;
	case kOptBudget: a->budget = optarg; return -1;
	case kOptStrategy: a->strategy = optarg; return -1;
	case kOptRdmapipe: a->rdmapipe = optarg; return -1;
	case kOptPlant: a->plants.push_back(optarg); return -1;
	case kOptRunner:
		a->runner = optarg;
		if (a->runner.find_first_not_of(" \t") != std::string::npos) return -1;
		fprintf(stderr, "rdmapipe-explore: --runner: an empty command\n");
		return kExitUsage;
	case kOptReproOn: {
		const std::string v = optarg;
		const size_t eq = v.find('=');
		const std::string name = v.substr(0, eq == std::string::npos ? 0 : eq);
		if (!name.empty() && name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
					     std::string::npos && v.find_first_not_of(" \t", eq + 1) != std::string::npos) {
			for (const auto &[n, cmd] : a->repro_on)
				if (n == name) {
					fprintf(stderr, "rdmapipe-explore: --repro-on: '%s' given twice\n", name.c_str());
					return kExitUsage;
				}
			a->repro_on.emplace_back(name, v.substr(eq + 1));
			return -1;
		}
		fprintf(stderr, "rdmapipe-explore: --repro-on: '%s' is not NAME=CMD (NAME letters, digits, '.', '_', '-')\n", optarg);
		return kExitUsage;
	}
	case kOptStartTimeout: {
		char *end = nullptr;
		a->start_timeout_s = strtod(optarg, &end);
		if (*end == '\0' && a->start_timeout_s >= 1 && a->start_timeout_s <= 86400) return -1;
		fprintf(stderr, "rdmapipe-explore: --start-timeout: '%s' is not seconds in 1..86400\n", optarg);
		return kExitUsage;
	}
	case kOptSeed:
		if (number(optarg, 0, LLONG_MAX, &a->seed)) return -1;
		fprintf(stderr, "rdmapipe-explore: --seed: '%s' is not a number\n", optarg);
		return kExitUsage;
	case kOptRepeats:
	case kOptNeed:
		if (number(optarg, 1, 20, c == kOptRepeats ? &a->repeats : &a->need)) return -1;
		fprintf(stderr, "rdmapipe-explore: --%s: '%s' is not 1..20\n", c == kOptRepeats ? "repeats" : "need", optarg);
		return kExitUsage;
	case kOptStopAfter:
		if (number(optarg, 1, UINT32_MAX, &a->stop_after)) return -1;
		fprintf(stderr, "rdmapipe-explore: --stop-after: '%s' is not a number of findings (1 or more)\n", optarg);
		return kExitUsage;
	case kOptNoBare: a->no_bare = true; return -1;
	case kOptBareFlag: {
		char *end = nullptr;
		a->bare_flag = strtod(optarg, &end);
		if (*end == '\0' && a->bare_flag >= 0.001 && a->bare_flag <= 1) return -1;
		fprintf(stderr, "rdmapipe-explore: --bare-flag: '%s' is not in 0.001..1\n", optarg);
		return kExitUsage;
	}
	case kOptPerfFlag: {
		char *end = nullptr;
		a->perf_flag = strtod(optarg, &end);
		if (*end == '\0' && a->perf_flag > 0 && a->perf_flag <= 1) return -1;
		fprintf(stderr, "rdmapipe-explore: --perf-flag: '%s' is not in (0, 1]\n", optarg);
		return kExitUsage;
	}
	default: fprintf(stderr, "%s", kUsage); return kExitUsage;
	}
}

int parse_args(int argc, char **argv, Args *a)
{
	static const option longs[] = {
		{"space", required_argument, nullptr, 'f'},      {"out", required_argument, nullptr, 'o'},
		{"quiet", no_argument, nullptr, 'q'},            {"help", no_argument, nullptr, 'h'},
		{"version", no_argument, nullptr, kOptVersion},  {"check", no_argument, nullptr, kOptCheck},
		{"budget", required_argument, nullptr, kOptBudget}, {"seed", required_argument, nullptr, kOptSeed},
		{"strategy", required_argument, nullptr, kOptStrategy}, {"rdmapipe", required_argument, nullptr, kOptRdmapipe},
		{"plant", required_argument, nullptr, kOptPlant}, {"repeats", required_argument, nullptr, kOptRepeats},
		{"need", required_argument, nullptr, kOptNeed},  {"perf-flag", required_argument, nullptr, kOptPerfFlag},
		{"stop-after", required_argument, nullptr, kOptStopAfter}, {"runner", required_argument, nullptr, kOptRunner},
		{"start-timeout", required_argument, nullptr, kOptStartTimeout}, {"repro-on", required_argument, nullptr, kOptReproOn},
		{"bare-flag", required_argument, nullptr, kOptBareFlag}, {"no-bare", no_argument, nullptr, kOptNoBare},
		{nullptr, 0, nullptr, 0}};
	for (int i = 0; i < argc; i++)
		a->command += (i ? " " : "") + std::string(argv[i]);
	int c;
	while ((c = getopt_long(argc, argv, "+f:o:qh", longs, nullptr)) != -1)
		if (int rc = parse_option(c, a); rc >= 0)
			return rc;
	for (int i = optind; i < argc; i++)
		a->eal.push_back(argv[i]);
	if (a->space.empty()) {
		fprintf(stderr, "rdmapipe-explore: no space file (-f SPACE)\n\n%s", kUsage);
		return kExitUsage;
	}
	if (a->start_timeout_s > 0 && a->runner.empty()) {
		fprintf(stderr, "rdmapipe-explore: --start-timeout: no --runner (a child here starts at once)\n");
		return kExitUsage;
	}
	if (a->eal.empty())
		a->eal = default_eal(!a->runner.empty());
	return -1;
}

/* The command line's settings over the file's. */
int apply_args(const Args &a, Space *s)
{
	SearchConf &c = s->search;
	if (!a.budget.empty() && !parse_budget(a.budget, &c)) {
		fprintf(stderr, "rdmapipe-explore: --budget: '%s' is not points (200) or a time (90s, 10m, 2h)\n", a.budget.c_str());
		return kExitUsage;
	}
	if (!a.strategy.empty() && !strategy_from_name(a.strategy, &c.strategy)) {
		fprintf(stderr, "rdmapipe-explore: --strategy: '%s' is not anneal, random or grid\n", a.strategy.c_str());
		return kExitUsage;
	}
	if (a.seed >= 0)
		c.seed = static_cast<uint64_t>(a.seed);
	if (a.repeats > 0)
		c.repeats = static_cast<uint32_t>(a.repeats);
	if (a.need > 0)
		c.need = static_cast<uint32_t>(a.need);
	if (a.perf_flag > 0)
		c.perf_flag = a.perf_flag;
	if (a.stop_after > 0)
		c.stop_after = static_cast<uint32_t>(a.stop_after);
	if (a.bare_flag > 0)
		c.bare_flag = a.bare_flag;
	if (a.no_bare)
		c.bare_reference = false;
	if (a.bare_flag > 0 && !c.bare_reference) {
		fprintf(stderr, "rdmapipe-explore: --bare-flag: no bare-verbs reference to judge by (--no-bare, or the "
				"space file's search.bare_reference = false)\n");
		return kExitUsage;
	}
	if (c.need > c.repeats) {
		fprintf(stderr, "rdmapipe-explore: need (%u) is more than repeats (%u)\n", c.need, c.repeats);
		return kExitUsage;
	}
	return -1;
}

std::string exe_dir()
{
	char buf[4096];
	const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	if (n <= 0)
		return ".";
	buf[n] = '\0';
	std::string p = buf;
	return p.substr(0, p.rfind('/'));
}

bool executable(const std::string &p)
{
	return access(p.c_str(), X_OK) == 0;
}

/* Installed, rdmapipe is beside rdmapipe-explore; in the build tree, one folder over. */
std::string find_rdmapipe(const std::string &given)
{
	if (!given.empty())
		return executable(given) ? given : "";
	for (const std::string &p : {exe_dir() + "/rdmapipe", exe_dir() + "/../rdmapipe/rdmapipe"})
		if (executable(p))
			return p;
	return "rdmapipe";   // execv needs a path: resolved below
}

std::string on_path(const std::string &name)
{
	if (name.find('/') != std::string::npos)
		return name;
	const char *path = getenv("PATH");
	std::string all = path ? path : "/usr/bin:/bin";
	for (size_t at = 0; at <= all.size();) {
		const size_t colon = std::min(all.find(':', at), all.size());
		const std::string p = all.substr(at, colon - at) + "/" + name;
		if (executable(p))
			return p;
		at = colon + 1;
	}
	return "";
}

/* The output folder: new, or empty; absolute. */
int make_out_dir(std::string *dir)
{
	if (dir->empty()) {
		char b[64];
		const time_t t = time(nullptr);
		strftime(b, sizeof b, "explore-%Y%m%d-%H%M%S", localtime(&t));
		*dir = b;
	}
	if (mkdir(dir->c_str(), 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "rdmapipe-explore: -o %s: %s\n", dir->c_str(), strerror(errno));
		return kExitUsage;
	}
	std::error_code ec;
	if (!std::filesystem::is_empty(*dir, ec) || ec) {
		fprintf(stderr, "rdmapipe-explore: -o %s: %s\n", dir->c_str(),
			ec ? ec.message().c_str() : "the folder is not empty (a search writes a new one)");
		return kExitUsage;
	}
	char real[PATH_MAX];
	if (realpath(dir->c_str(), real))
		*dir = real;
	return -1;
}

} // namespace

namespace {

/* Points to try a value of dimension d in: the simplest point with it, then each point
 * one more setting away (a verb that needs its own size), then random ones. */
std::vector<Point> tries(const Space &s, size_t d, uint32_t v, Rng &rng)
{
	Point base = simplest_point(s);
	base[d] = v;
	std::vector<Point> out{base};
	for (size_t e = 0; e < s.dims.size(); e++)
		for (uint32_t w = 0; w < s.dims[e].values.size(); w++)
			if (e != d && w != base[e]) {
				out.push_back(base);
				out.back()[e] = w;
			}
	for (int k = 0; k < 32; k++) {
		out.push_back(random_point(s, rng));
		out.back()[d] = v;
	}
	return out;
}

/* Every value of every dimension must be part of some valid point, the simplest point
 * among them (minimisation ends there): checked with the validator, no device. */
int check_space(const Space &s, PointConf &pc)
{
	char tmpl[] = "/tmp/rdmapipe-explore-check-XXXXXX";
	if (mkdtemp(tmpl) == nullptr) {
		fprintf(stderr, "rdmapipe-explore: cannot make a folder in /tmp: %s\n", strerror(errno));
		return kExitUsage;
	}
	const std::string dir = tmpl, conf = dir + "/point.conf", res = dir + "/point.json";
	std::string why;
	int rc = -1;
	const Point simplest = simplest_point(s);
	if (pc.make(simplest, conf, res, &why) != 0) {
		fprintf(stderr, "rdmapipe-explore: %s: the simplest point (%s) is not a valid pipeline: %s\n", s.file.c_str(),
			point_text(s, simplest).c_str(), why.c_str());
		rc = kExitUsage;
	}
	Rng rng(s.search.seed);
	for (size_t d = 0; d < s.dims.size() && rc < 0; d++)
		for (uint32_t v = 0; v < s.dims[d].values.size() && rc < 0; v++) {
			const std::vector<Point> ps = tries(s, d, v, rng);
			std::string first;
			bool ok = false;
			for (size_t k = 0; k < ps.size() && !ok; k++) {
				ok = pc.make(ps[k], conf, res, &why) == 0;
				if (!ok && first.empty())
					first = why;
			}
			if (!ok) {
				fprintf(stderr, "rdmapipe-explore: %s:%d: setting '%s': the value %s makes no valid point (%zu tried); "
						"at the simplest point: %s\n", s.file.c_str(), s.dims[d].line, s.dims[d].name.c_str(),
					s.dims[d].values[v].c_str(), ps.size(), first.c_str());
				rc = kExitUsage;
			}
		}
	std::error_code ec;
	std::filesystem::remove_all(dir, ec);
	return rc;
}

std::string plot_tool()
{
	if (const char *e = getenv("RDMAPIPE_PLOT_EXPLORE"))
		return e;
	for (const std::string &p : {std::string(RDMAPIPE_LIBEXECDIR "/plot-explore"), std::string(RDMAPIPE_SOURCE_TOOLS "/plot-explore")})
		if (executable(p))
			return p;
	return "";
}

/* PNGs into DIR/plots (report.md links what is there); a note when they cannot be drawn. */
void draw_plots(const std::string &dir, bool quiet)
{
	const std::string tool = plot_tool();
	const int rc = tool.empty() ? -1 : std::system(("'" + tool + "' '" + dir + "' > '" + dir + "/plots.log' 2>&1").c_str());
	if (rc != 0 && !quiet)
		fprintf(stderr, "rdmapipe-explore: no plots (%s); report.md has the tables\n",
			tool.empty() ? "plot-explore not found" : ("see " + dir + "/plots.log").c_str());
}

/* The bare-verbs reference, once before the search: where the children run, and where
 * each --repro-on runner runs (its rates only reported); the children's judge points. */
void measure_bare(const Args &a, const Space &space, PointConf &pc, ChildRunner &runner, const std::string &dir,
		  FolderRecorder *rec, Explorer *ex)
{
	BareReference bare(space, pc, runner, dir);
	std::string why;
	if (bare.write(&why) != 0) {
		if (!a.quiet)
			fprintf(stderr, "rdmapipe-explore: no bare-verbs reference: %s\n", why.c_str());
		rec->bare_reference(bare.report_section(), {});
		return;
	}
	if (!a.quiet)
		fprintf(stderr, "rdmapipe-explore: bare-verbs reference: %llu points of %g s (bare/bare.c), at most %.0f s\n",
			static_cast<unsigned long long>(bare.points()), space.search.point_seconds, bare.estimate_s());
	const double t0 = now_s();
	bare.measure("children", nullptr);
	for (const auto &[name, cmd] : a.repro_on)
		bare.measure(name, &cmd);
	std::string err;
	if (bare.record(&err) != 0)
		fprintf(stderr, "rdmapipe-explore: %s\n", err.c_str());
	const BareTable t = bare.table();
	size_t usable = 0;
	for (const auto &[p, o] : t)
		usable += usable_reference(o) ? 1 : 0;
	if (!a.quiet)
		fprintf(stderr, "rdmapipe-explore: bare-verbs reference: %zu of %llu points measured in %.0f s (bare.jsonl)\n",
			usable, static_cast<unsigned long long>(bare.points()), now_s() - t0);
	rec->bare_reference(bare.report_section(), bare.confs());
	ex->bare_reference(t);
}

int explore(const Args &a, const Space &space, PointConf &pc)
{
	std::string dir = a.out, err;
	if (int rc = make_out_dir(&dir); rc >= 0)
		return rc;
	const std::string bin = on_path(find_rdmapipe(a.rdmapipe));
	if (bin.empty()) {
		fprintf(stderr, "rdmapipe-explore: no rdmapipe binary (%s): give --rdmapipe PATH\n",
			a.rdmapipe.empty() ? "not beside this program nor on PATH" : a.rdmapipe.c_str());
		return kExitUsage;
	}
	char stall[32];
	snprintf(stall, sizeof stall, "%g", space.search.stall_timeout_s);
	ChildConf cc{bin, a.eal, {"--stall-timeout", stall}, dir, a.runner,
		     a.runner.empty() ? 0 : a.start_timeout_s > 0 ? a.start_timeout_s : 600};
	for (const std::string &p : a.plants) {
		cc.extra.push_back("--plant");
		cc.extra.push_back(p);
	}
	ChildRunner runner(space, pc, cc);
	FolderRecorder rec(space, runner, dir, a.command, !a.quiet);
	rec.repro_on(a.repro_on);
	if (rec.open(&err) != 0) {
		fprintf(stderr, "rdmapipe-explore: %s\n", err.c_str());
		return kExitUsage;
	}
	if (!a.quiet)
		fprintf(stderr, "rdmapipe-explore: %s: %zu dimensions, %s, seed %llu; children: %s; output %s\n", space.file.c_str(),
			space.dims.size(), strategy_name(space.search.strategy), static_cast<unsigned long long>(space.search.seed),
			runner.shown_command("POINT.conf").c_str(), dir.c_str());
	const double t0 = now_s();
	Explorer ex(space, runner, rec, [] { return g_stop ? INFINITY : now_s(); });
	if (space.search.bare_reference)
		measure_bare(a, space, pc, runner, dir, &rec, &ex);
	const SearchResult r = ex.search();
	runner.stop();
	SearchTotals t{r.points, r.invalid, r.cached, r.skipped, r.crashed, r.hung, now_s() - t0, r.fatal, g_stop != 0,
		r.stopped_after ? space.search.stop_after : 0};
	if (rec.finish(&err) == 0)
		draw_plots(dir, a.quiet);
	if (err.empty() && rec.report(t, &err) != 0)
		fprintf(stderr, "rdmapipe-explore: %s\n", err.c_str());
	printf("%s%llu points, %zu anomal%s%s; report: %s/report.md\n", a.quiet ? "" : "\n", static_cast<unsigned long long>(r.points),
	       r.findings.size(), r.findings.size() == 1 ? "y" : "ies", r.stopped_after ? " (--stop-after: the budget not spent)" : "",
	       dir.c_str());
	for (const Finding &f : r.findings)
		printf("  %u %-11s %s  (%s)\n    standalone: %s\n", f.id, anomaly_kind_name(f.verdict.kind), f.mfs_text.c_str(),
		       f.verdict.why.c_str(), rec.label(f.id).c_str());
	if (!r.fatal.empty()) {
		fprintf(stderr, "rdmapipe-explore: stopped: %s\n", r.fatal.c_str());
		return kExitChild;
	}
	if (g_stop)
		return 130;
	return r.findings.empty() ? kExitNone : kExitFound;
}

} // namespace

int main(int argc, char **argv)
{
	Args a;
	if (int rc = parse_args(argc, argv, &a); rc >= 0)
		return rc;
	Space space;
	std::string err;
	if (space_load(a.space, &space, &err) != 0) {
		fprintf(stderr, "rdmapipe-explore: %s\n", err.c_str());
		return kExitUsage;
	}
	if (int rc = apply_args(a, &space); rc >= 0)
		return rc;
	std::vector<char *> eal{argv[0]};
	for (const std::string &e : a.eal)
		eal.push_back(const_cast<char *>(e.c_str()));
	const rp::LcoreSet lcores = rp::lcore_set_from_eal_args(static_cast<int>(eal.size()), eal.data());
	unsigned tx = 1, rx = 0;
	PointConf pc;
	if (!rp::cli_lcores(lcores, false, false, &tx, &rx, &err) || pc.init(space, lcores, tx, rx, &err) != 0) {
		fprintf(stderr, "rdmapipe-explore: %s\n", err.c_str());
		return kExitUsage;
	}
	if (int rc = check_space(space, pc); rc >= 0)
		return rc;
	if (a.check) {
		printf("%s: valid: %zu dimensions, %llu points; the simplest: %s\n", space.file.c_str(), space.dims.size(),
		       static_cast<unsigned long long>(space_size(space)), point_text(space, simplest_point(space)).c_str());
		return kExitNone;
	}
	struct sigaction sa {};
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, nullptr);
	sigaction(SIGTERM, &sa, nullptr);
	return explore(a, space, pc);
}
