#include "control/results.h"

#include <infiniband/verbs.h>
#include <rte_cycles.h>
#include <rte_lcore.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace rp {

using json = nlohmann::ordered_json;   // keys in the documented order

namespace {

double rate(uint64_t n, double s)
{
	return s > 0 ? static_cast<double>(n) / s : 0.0;
}

double us(uint64_t ns)
{
	return static_cast<double>(ns) / 1000.0;
}

/* A CSV text field (RFC 4180): quoted, inner quotes doubled. */
std::string csv_str(const std::string &v)
{
	std::string o = "\"";
	for (char ch : v) {
		if (ch == '"')
			o += '"';
		o += ch;
	}
	return o + "\"";
}

int finish(FILE *f, const std::string &path, std::string *err)
{
	bool bad = ferror(f) != 0;
	if (fclose(f) != 0 || bad) {
		*err = path + ": cannot write the results: " + strerror(errno ? errno : EIO);
		return -1;
	}
	return 0;
}

} // namespace

namespace {
void *sampler_main(void *arg)
{
	auto *s = static_cast<Sampler *>(arg);
	const double hz = static_cast<double>(rte_get_tsc_hz());
	const uint64_t t0 = rte_rdtsc();
	const uint64_t sample_every = static_cast<uint64_t>(s->period_s * hz);
	const uint64_t print_every = static_cast<uint64_t>(s->print_period_s * hz);
	uint64_t next_sample = t0 + sample_every, next_print = t0 + print_every;
	Sample base, last;
	if (s->view)
		base = last = sample_take(*s->view, t0);
	while (!s->stop.load(std::memory_order_acquire)) {
		usleep(10000);
		const uint64_t now = rte_rdtsc();
		if (!s->live.empty() && now >= next_sample) {
			std::vector<uint64_t> row(s->live.size());
			for (size_t f = 0; f < s->live.size(); f++)
				row[f] = s->live[f]->completed.load(std::memory_order_relaxed);
			s->series.push_back(std::move(row));
			next_sample += sample_every;
		}
		if (s->view && print_every && now >= next_print) {
			Sample cur = sample_take(*s->view, now);
			std::string block = stats_block(*s->view, base, last, cur);
			s->out.put("%s", block.c_str());
			s->out.flush();
			last = cur;
			next_print += print_every;
		}
	}
	return nullptr;
}
} // namespace

int sampler_start(Sampler *s, std::string *err)
{
	int ret = rte_ctrl_thread_create(&s->thread, "rp-sampler", nullptr, sampler_main, s);
	if (ret != 0) {
		*err = std::string("results sampler thread: ") + strerror(-ret > 0 ? -ret : ret);
		return -1;
	}
	s->running = true;
	return 0;
}

void sampler_stop(Sampler *s)
{
	if (!s->running)
		return;
	s->stop.store(true, std::memory_order_release);
	pthread_join(s->thread, nullptr);
	s->running = false;
}

Results results_of(const char *mode, Verb verb, uint32_t msg_bytes, const std::string &device, double elapsed_s,
		   bool pass)
{
	Results r;
	r.mode = mode;
	r.verb = verb_opcode_name(verb);
	r.device = device;
	r.msg_bytes = msg_bytes;
	r.elapsed_s = elapsed_s;
	r.pass = pass;
	return r;
}

std::string flow_name(const std::vector<std::string> &names, size_t i)
{
	return i < names.size() ? names[i] : "flow" + std::to_string(i);
}

const char *result_word(const Results &r)
{
	return r.stop_signal ? "INTERRUPTED" : r.pass ? "PASS" : "FAIL";
}

namespace {

/* Figures rounded as a reader wants them (nlohmann writes a double's shortest exact
 * form, so 24484.1 stays 24484.1 and never becomes 24484.099999999999). */
double rounded(double v, int decimals)
{
	const double k = std::pow(10.0, decimals);
	return std::round(v * k) / k;
}

json errors_json(const FlowResult &x)
{
	json e = json::object();
	for (unsigned s = 0; x.errors && s < kWcStatusCount; s++)
		if (x.errors->by_status[s])
			e[ibv_wc_status_str(static_cast<ibv_wc_status>(s))] = x.errors->by_status[s];
	return e;
}

json reliability_json(const FlowResult::Reliability &r)
{
	return {{"kind", "software"},
		{"retransmissions", r.retx_fast + r.retx_timeout},
		{"retx_fast", r.retx_fast},
		{"retx_timeout", r.retx_timeout},
		{"acks_sent", r.acks_sent},
		{"acks_received", r.acks_received},
		{"duplicates", r.duplicates},
		{"sack_holes", r.sack_holes},
		{"retx_header_refused", r.retx_header_bad},
		{"injected_losses", r.injected_losses},
		{"messages_lost", r.lost},
		{"qp_restarts", r.qp_restarts}};
}

void latency_json(const FlowResult &x, json *o)
{
	const Histogram &h = *x.latency;
	(*o)["latency_us"] = {{"what", x.latency_what},
			      {"samples", h.count()},
			      {"min", rounded(us(h.min()), 3)},
			      {"p50", rounded(us(h.percentile(0.5)), 3)},
			      {"p90", rounded(us(h.percentile(0.9)), 3)},
			      {"p99", rounded(us(h.percentile(0.99)), 3)},
			      {"p99.9", rounded(us(h.percentile(0.999)), 3)},
			      {"max", rounded(us(h.max()), 3)},
			      {"mean", rounded(h.mean() / 1000.0, 3)}};
	/* The distribution at fixed fractions, for a CDF plot (tools/plot-results). */
	static const double kCdf[] = {0.001, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9,
				      0.95, 0.98, 0.99, 0.995, 0.999, 0.9999};
	json cdf = json::array({json::array({rounded(us(h.min()), 3), 0})});
	for (double q : kCdf)
		cdf.push_back(json::array({rounded(us(h.percentile(q)), 3), q}));
	cdf.push_back(json::array({rounded(us(h.max()), 3), 1}));
	(*o)["latency_cdf"] = std::move(cdf);
	/* The whole histogram, its non-empty buckets only, so a plot can draw every step. */
	json buckets = json::array();
	for (size_t i = 0; i < Histogram::kBuckets; i++)
		if (h.bucket_count(i))
			buckets.push_back(json::array({Histogram::lower(i), Histogram::upper(i), h.bucket_count(i)}));
	(*o)["latency_hist"] = {{"unit", "ns"}, {"count", h.count()}, {"buckets", std::move(buckets)}};
}

json flow_json(const Results &r, const FlowResult &x)
{
	json o = {{"name", x.name},
		  {"qps", x.qps},
		  {"messages_sent", x.sent},
		  {"messages_completed", x.completed},
		  {"messages_verified", x.verified},
		  {"bytes", x.bytes},
		  {"message_rate", rounded(rate(x.completed, r.elapsed_s), 1)},
		  {"gbit_per_s", rounded(rate(x.bytes, r.elapsed_s) * 8 / 1e9, 6)},
		  {"failed_qps", x.failed_qps},
		  {"completion_errors", errors_json(x)}};
	if (x.pass >= 0)
		o["result"] = x.pass ? "PASS" : "FAIL";
	if (!x.failure.empty())
		o["failure"] = x.failure;
	if (x.rel.on)
		o["reliability"] = reliability_json(x.rel);
	if (x.latency && x.latency->count())
		latency_json(x, &o);
	return o;
}

json stage_json(const Results &r, const StageResult &s)
{
	json o = {{"name", s.name}, {"kind", s.kind}, {"lcore", s.lcore}, {"calls", s.calls}, {"objects", s.objects}};
	if (r.stage_cycles) {
		o["busy_cycles"] = s.cycles;
		o["cycles_per_object"] =
			rounded(s.objects ? static_cast<double>(s.cycles) / static_cast<double>(s.objects) : 0.0, 1);
	}
	return o;
}

} // namespace

std::string results_json_text(const Results &r)
{
	json doc;
	doc["rdmapipe"] = {{"version", RDMAPIPE_VERSION}, {"results_schema", kResultsSchema}};
	doc["run"] = {{"mode", r.mode},
		      {"role", r.role},
		      {"verb", r.verb},
		      {"message_bytes", r.msg_bytes},
		      {"device", r.device},
		      {"elapsed_s", rounded(r.elapsed_s, 6)},
		      {"result", result_word(r)}};
	doc["flows"] = json::array();
	for (const FlowResult &x : r.flows)
		doc["flows"].push_back(flow_json(r, x));
	doc["lcores"] = json::array();
	for (const LcoreResult &l : r.lcores)
		doc["lcores"].push_back({{"lcore", l.lcore},
					 {"role", l.role},
					 {"polls_busy", l.polls_busy},
					 {"polls_idle", l.polls_idle},
					 {"cpu_s", rounded(l.cpu_s, 3)},
					 {"cpu_us_per_message", rounded(l.cpu_us_per_msg, 3)},
					 {"passive_sleeps", l.sleeps}});
	doc["stages"] = json::array();
	for (const StageResult &s : r.stages)
		doc["stages"].push_back(stage_json(r, s));
	json names = json::array();
	for (const FlowResult &x : r.flows)
		names.push_back(x.name);
	doc["series"] = {{"period_s", rounded(r.period_s, 3)}, {"flows", std::move(names)}, {"completed", r.series}};
	/* Names come from files and the wire's peers: bytes that are not UTF-8 are
	 * replaced (U+FFFD) rather than thrown about. */
	return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

int write_results_json(const std::string &path, const Results &r, std::string *err)
{
	const std::string text = results_json_text(r);
	FILE *f = fopen(path.c_str(), "w");
	if (f == nullptr) {
		*err = path + ": cannot write the results: " + strerror(errno);
		return -1;
	}
	fwrite(text.data(), 1, text.size(), f);
	return finish(f, path, err);
}

int write_results_csv(const std::string &path, const Results &r, std::string *err)
{
	FILE *f = fopen(path.c_str(), "w");
	if (f == nullptr) {
		*err = path + ": cannot write the results: " + strerror(errno);
		return -1;
	}
	fprintf(f, "flow,mode,verb,message_bytes,qps,messages_sent,messages_completed,messages_verified,bytes,elapsed_s,"
		   "message_rate,gbit_per_s,failed_qps,completion_errors,latency_what,latency_p50_us,latency_p90_us,"
		   "latency_p99_us,latency_p999_us,latency_max_us,result,role\n");
	for (const FlowResult &x : r.flows) {
		const Histogram *h = x.latency && x.latency->count() ? x.latency : nullptr;
		fprintf(f, "%s,%s,%s,%u,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.6f,%.1f,%.6f,%" PRIu64 ",%" PRIu64
			   ",%s,%.3f,%.3f,%.3f,%.3f,%.3f,%s,%s\n",
			x.name.c_str(), r.mode, r.verb.c_str(), r.msg_bytes, x.qps, x.sent, x.completed, x.verified, x.bytes,
			r.elapsed_s, rate(x.completed, r.elapsed_s), rate(x.bytes, r.elapsed_s) * 8 / 1e9, x.failed_qps,
			x.errors ? x.errors->total : 0, csv_str(h ? x.latency_what : "").c_str(), h ? us(h->percentile(0.5)) : 0.0,
			h ? us(h->percentile(0.9)) : 0.0, h ? us(h->percentile(0.99)) : 0.0, h ? us(h->percentile(0.999)) : 0.0,
			h ? us(h->max()) : 0.0, result_word(r), r.role);
	}
	return finish(f, path, err);
}

} // namespace rp
