#include "control/results.h"

#include <infiniband/verbs.h>
#include <rte_cycles.h>
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
			fputs(block.c_str(), stdout);
			fflush(stdout);
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
		json_str(result_word(r)).c_str());
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
		if (x.rel.on)
			fprintf(f, ",\n     \"reliability\": {\"kind\": \"software\", \"retransmissions\": %" PRIu64 ", \"retx_fast\": %" PRIu64
				   ", \"retx_timeout\": %" PRIu64 ", \"acks_sent\": %" PRIu64 ", \"acks_received\": %" PRIu64
				   ", \"duplicates\": %" PRIu64 ", \"sack_holes\": %" PRIu64 ", \"retx_header_refused\": %" PRIu64
				   ", \"injected_losses\": %" PRIu64 ", \"messages_lost\": %" PRIu64 ", \"qp_restarts\": %" PRIu64 "}",
				x.rel.retx_fast + x.rel.retx_timeout, x.rel.retx_fast, x.rel.retx_timeout, x.rel.acks_sent,
				x.rel.acks_received, x.rel.duplicates, x.rel.sack_holes, x.rel.retx_header_bad, x.rel.injected_losses,
				x.rel.lost, x.rel.qp_restarts);
		if (x.latency && x.latency->count()) {
			const Histogram &h = *x.latency;
			fprintf(f, ",\n     \"latency_us\": {\"what\": %s, \"samples\": %" PRIu64 ", \"min\": %.3f, \"p50\": %.3f, "
				   "\"p90\": %.3f, \"p99\": %.3f, \"p99.9\": %.3f, \"max\": %.3f, \"mean\": %.3f}",
				json_str(x.latency_what).c_str(), h.count(), us(h.min()), us(h.percentile(0.5)),
				us(h.percentile(0.9)), us(h.percentile(0.99)), us(h.percentile(0.999)), us(h.max()),
				h.mean() / 1000.0);
			/* The distribution at fixed fractions, for a CDF plot (tools/plot-results). */
			static const double kCdf[] = {0.001, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9,
						      0.95, 0.98, 0.99, 0.995, 0.999, 0.9999};
			fprintf(f, ",\n     \"latency_cdf\": [[%.3f, 0]", us(h.min()));
			for (double q : kCdf)
				fprintf(f, ", [%.3f, %g]", us(h.percentile(q)), q);
			fprintf(f, ", [%.3f, 1]]", us(h.max()));
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
	fprintf(f, "\n  ],\n  \"stages\": [");
	for (size_t i = 0; i < r.stages.size(); i++) {
		const StageResult &s = r.stages[i];
		fprintf(f, "%s\n    {\"name\": %s, \"kind\": %s, \"lcore\": %u, \"calls\": %" PRIu64 ", \"objects\": %" PRIu64,
			i ? "," : "", json_str(s.name).c_str(), json_str(s.kind).c_str(), s.lcore, s.calls, s.objects);
		if (r.stage_cycles)
			fprintf(f, ", \"busy_cycles\": %" PRIu64 ", \"cycles_per_object\": %.1f", s.cycles,
				s.objects ? static_cast<double>(s.cycles) / static_cast<double>(s.objects) : 0.0);
		fprintf(f, "}");
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
			h ? us(h->max()) : 0.0, result_word(r), r.role);
	}
	return finish(f, path, err);
}

} // namespace rp
