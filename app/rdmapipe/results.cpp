#include "results.h"

#include <infiniband/verbs.h>
#include <rte_lcore.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace rp {

namespace {

std::string json_str(const std::string &s)
{
	std::string o = "\"";
	for (char ch : s) {
		if (ch == '"' || ch == '\\')
			o += '\\';
		if (static_cast<unsigned char>(ch) < 0x20) {
			char b[8];
			snprintf(b, sizeof(b), "\\u%04x", ch);
			o += b;
			continue;
		}
		o += ch;
	}
	return o + "\"";
}

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
	const useconds_t step = 10000;
	const unsigned steps = static_cast<unsigned>(s->period_s * 1e6 / step + 0.5);
	for (;;) {
		for (unsigned i = 0; i < steps; i++) {
			if (s->stop.load(std::memory_order_acquire))
				return nullptr;
			usleep(step);
		}
		std::vector<uint64_t> row(s->live.size());
		for (size_t f = 0; f < s->live.size(); f++)
			row[f] = s->live[f]->completed.load(std::memory_order_relaxed);
		s->series.push_back(std::move(row));
	}
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

int write_results_json(const std::string &path, const Results &r, std::string *err)
{
	FILE *f = fopen(path.c_str(), "w");
	if (f == nullptr) {
		*err = path + ": cannot write the results: " + strerror(errno);
		return -1;
	}
	fprintf(f, "{\n  \"rdmapipe\": {\"version\": %s, \"results_schema\": 1},\n", json_str(RDMAPIPE_VERSION).c_str());
	fprintf(f, "  \"run\": {\"mode\": %s, \"role\": %s, \"verb\": %s, \"message_bytes\": %u, \"device\": %s, "
		   "\"elapsed_s\": %.6f, \"result\": %s},\n",
		json_str(r.mode).c_str(), json_str(r.role).c_str(), json_str(r.verb).c_str(), r.msg_bytes, json_str(r.device).c_str(), r.elapsed_s,
		r.pass ? "\"PASS\"" : "\"FAIL\"");
	fprintf(f, "  \"flows\": [");
	for (size_t i = 0; i < r.flows.size(); i++) {
		const FlowResult &x = r.flows[i];
		fprintf(f, "%s\n    {\"name\": %s, \"qps\": %u, \"messages_sent\": %" PRIu64 ", \"messages_completed\": %" PRIu64
			   ", \"messages_verified\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"message_rate\": %.1f, "
			   "\"gbit_per_s\": %.6f, \"failed_qps\": %" PRIu64 ",\n     \"completion_errors\": {",
			i ? "," : "", json_str(x.name).c_str(), x.qps, x.sent, x.completed, x.verified, x.bytes,
			rate(x.completed, r.elapsed_s), rate(x.bytes, r.elapsed_s) * 8 / 1e9, x.failed_qps);
		bool first = true;
		for (unsigned s = 0; x.errors && s < kWcStatusCount; s++)
			if (x.errors->by_status[s]) {
				fprintf(f, "%s%s: %" PRIu64, first ? "" : ", ",
					json_str(ibv_wc_status_str(static_cast<ibv_wc_status>(s))).c_str(), x.errors->by_status[s]);
				first = false;
			}
		fprintf(f, "}");
		if (x.latency && x.latency->count()) {
			const Histogram &h = *x.latency;
			fprintf(f, ",\n     \"latency_us\": {\"what\": %s, \"samples\": %" PRIu64 ", \"min\": %.3f, \"p50\": %.3f, "
				   "\"p90\": %.3f, \"p99\": %.3f, \"p99.9\": %.3f, \"max\": %.3f, \"mean\": %.3f}",
				json_str(x.latency_what).c_str(), h.count(), us(h.min()), us(h.percentile(0.5)),
				us(h.percentile(0.9)), us(h.percentile(0.99)), us(h.percentile(0.999)), us(h.max()),
				h.mean() / 1000.0);
		}
		fprintf(f, "}");
	}
	fprintf(f, "\n  ],\n  \"lcores\": [");
	for (size_t i = 0; i < r.lcores.size(); i++) {
		const LcoreResult &l = r.lcores[i];
		fprintf(f, "%s\n    {\"lcore\": %u, \"role\": %s, \"polls_busy\": %" PRIu64 ", \"polls_idle\": %" PRIu64
			   ", \"cpu_s\": %.3f}",
			i ? "," : "", l.lcore, json_str(l.role).c_str(), l.polls_busy, l.polls_idle, l.cpu_s);
	}
	fprintf(f, "\n  ],\n  \"series\": {\"period_s\": %.3f, \"flows\": [", r.period_s);
	for (size_t i = 0; i < r.flows.size(); i++)
		fprintf(f, "%s%s", i ? ", " : "", json_str(r.flows[i].name).c_str());
	fprintf(f, "],\n    \"completed\": [");
	for (size_t t = 0; t < r.series.size(); t++) {
		fprintf(f, "%s[", t ? ", " : "");
		for (size_t i = 0; i < r.series[t].size(); i++)
			fprintf(f, "%s%" PRIu64, i ? ", " : "", r.series[t][i]);
		fprintf(f, "]");
	}
	fprintf(f, "]}\n}\n");
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
			h ? us(h->max()) : 0.0, r.pass ? "PASS" : "FAIL", r.role);
	}
	return finish(f, path, err);
}

} // namespace rp
