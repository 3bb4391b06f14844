/* perftest's table and JSON for a run (perftest_report.h). The formats are perftest
 * 4.5's (src/perftest_parameters.h: RESULT_FMT, REPORT_FMT, RESULT_FMT_LAT,
 * REPORT_FMT_LAT, ...), so a script that parses its output parses this. */
#include "control/perftest_report.h"
#include "verbs/device.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>

namespace rp {

namespace {

const char *const kLine = "---------------------------------------------------------------------------------------";
const char *const kLatTitle = " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   "
			      "99% percentile[usec]   99.9% percentile[usec] ";
constexpr double kMB = 0x100000;       // perftest's MB: 2^20 bytes
constexpr double kGbit = 125000000;    // bytes in a Gbit

/* The histogram's spread, from its buckets' midpoints (ns). */
double stdev_ns(const Histogram &h)
{
	const uint64_t n = h.count();
	if (n < 2)
		return 0;
	const double mean = h.mean();
	double sq = 0;
	for (size_t i = 0; i < Histogram::kBuckets; i++)
		if (const uint64_t k = h.bucket_count(i)) {
			const double mid = i + 1 < Histogram::kBuckets ? (static_cast<double>(Histogram::lower(i)) + static_cast<double>(Histogram::upper(i))) / 2
								       : static_cast<double>(h.max());
			sq += static_cast<double>(k) * (mid - mean) * (mid - mean);
		}
	return std::sqrt(sq / static_cast<double>(n));
}

/* The best second's messages (the run's series), else the average. */
double peak_msgs_per_s(const Results &r, double avg)
{
	double best = 0;
	for (size_t i = 1; i < r.series.size(); i++)
		if (!r.series[i].empty() && !r.series[i - 1].empty() && r.series[i][0] >= r.series[i - 1][0])
			best = std::max(best, static_cast<double>(r.series[i][0] - r.series[i - 1][0]) / r.period_s);
	return std::max(best, avg);
}

std::string test_json_name(const PerftestReportConf &c)
{
	std::string t = c.title;   // "RDMA_Write BW Test" -> "RDMA_Write_BW_Test"
	for (char &ch : t)
		if (ch == ' ')
			ch = '_';
	if (!c.atomic_type.empty())
		t.insert(t.find('_') == std::string::npos ? 6 : t.find('_'), "_" + c.atomic_type);
	return t;
}

} // namespace

PerftestPort perftest_port_of(const Device &dev)
{
	return {mtu_bytes(dev.port_attr.active_mtu), dev.gid_index, dev.port_attr.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "IB"};
}

PerftestFigures perftest_figures(const PerftestReportConf &c, const Results &r)
{
	PerftestFigures f;
	f.bytes = r.msg_bytes;
	if (r.flows.empty())
		return f;
	/* -b: a flow each way (the one this end sends, the other it receives); perftest's
	 * row is its own sends' count and both ends' rates summed, here both flows' as this
	 * end counts them (what it received of a one-sided verb, unseen: what the sender
	 * announced or told, once the flow checked out). */
	const FlowResult &fl = r.flows[c.bidirectional && !c.sends() && r.flows.size() > 1 ? 1 : 0];
	uint64_t msgs = fl.completed;
	if (c.bidirectional)
		for (size_t i = 0; i < r.flows.size(); i++)
			if (&r.flows[i] != &fl)
				msgs += r.flows[i].completed == 0 && r.flows[i].pass == 1 ? r.flows[i].sent : r.flows[i].completed;
	f.iterations = fl.completed;   // perftest's -n is per QP, its table's #iterations all QPs'
	f.observed = fl.completed > 0 && r.elapsed_s > 0 && (c.bw || (fl.latency && fl.latency->count()));   // (an echo times nothing)
	if (!f.observed)
		return f;
	const double rate = static_cast<double>(msgs) / r.elapsed_s;
	const double unit = c.gbits ? kGbit : kMB;
	f.msg_rate = rate / 1e6;
	f.bw_avg = rate * f.bytes / unit;
	f.bw_peak = c.no_peak ? 0 : peak_msgs_per_s(r, rate) * f.bytes / unit;
	if (const Histogram *h = fl.latency; h && h->count()) {
		f.t_min = static_cast<double>(h->min()) / 1e3;
		f.t_max = static_cast<double>(h->max()) / 1e3;
		f.t_typical = static_cast<double>(h->percentile(0.5)) / 1e3;
		f.t_avg = h->mean() / 1e3;
		f.t_stdev = stdev_ns(*h) / 1e3;
		f.p99 = static_cast<double>(h->percentile(0.99)) / 1e3;
		f.p999 = static_cast<double>(h->percentile(0.999)) / 1e3;
	}
	return f;
}

void perftest_header(Report &out, const PerftestReportConf &c, const Results &r, const PerftestPort &port)
{
	if (!c.output.empty())   // --output: the one figure only, as perftest
		return;
	out.line("%s", kLine);
	out.line("                    %s", c.title.c_str());
	out.line(" Dual-port       : OFF\t\tDevice         : %s", r.device.c_str());
	out.line(" Number of qps   : %u\t\tTransport type : IB", c.qps);
	out.line(" Connection type : %s\t\tUsing SRQ      : %s", c.uc ? "UC" : "RC", c.use_srq ? "ON" : "OFF");
	out.line(" PCIe relax order: Unsupported");
	out.line(" ibv_wr* API     : OFF");
	if (c.sends() && c.tx_depth)
		out.line(" TX depth        : %u", c.tx_depth);
	if (c.post_list > 1)
		out.line(" Post List       : %u", c.post_list);
	if (c.bw && c.cq_mod)
		out.line(" CQ Moderation   : %u", c.cq_mod);
	out.line(" Mtu             : %u[B]", port.mtu);
	out.line(" Link type       : %s", port.link_type);
	out.line(" GID index       : %d", port.gid_index);
	out.line(" Max inline data : %u[B]", c.inline_size);
	out.line(" rdma_cm QPs\t : ON");
	out.line(" Data ex. method : rdma_cm");
	out.line(" Data verified   : every message (rdmapipe)");
	out.line("%s", kLine);
	if (c.bw)
		out.line(" #bytes     #iterations    BW peak[%s/sec]    BW average[%s/sec]   MsgRate[Mpps]", c.gbits ? "Gb" : "MB",
			 c.gbits ? "Gb" : "MB");
	else if (c.duration)
		out.line(" #bytes        #iterations       t_avg[usec]    tps average");
	else
		out.line("%s", kLatTitle);
}

/* -H: each sample, sorted, as perftest prints them ("#, usec", then "i, value"), each
 * at its histogram bucket's value (its upper bound, the largest clamped to the max),
 * then the table's title again, as perftest's. */
void print_samples(Report &out, const Histogram &h)
{
	out.line("#, usec");
	uint64_t i = 0;
	const uint64_t mx = h.max();
	for (size_t b = 0; b < Histogram::kBuckets; b++)
		for (uint64_t k = h.bucket_count(b); k; k--)
			out.line("%lu, %g", static_cast<unsigned long>(++i), static_cast<double>(std::min(Histogram::upper(b), mx)) / 1e3);
	out.line("%s", kLine);
	out.line("%s", kLatTitle);
}

void perftest_row(Report &out, const PerftestReportConf &c, const PerftestFigures &f, const Histogram *samples)
{
	if (!f.observed)
		return;
	if (c.histogram && c.output.empty() && !c.duration && samples)
		print_samples(out, *samples);
	if (!c.output.empty())   // perftest's printf("%lf\n", ...) of the one figure asked for
		out.line("%lf", c.output == "bandwidth" ? f.bw_avg : c.output == "message_rate" ? f.msg_rate : f.t_avg);
	else if (c.bw && c.gbits && f.bw_avg < 0.1)   // perftest's REPORT_FMT_EXT: more digits for slow links
		out.line(" %-7lu    %lu           %-7.6lf            %-7.6lf            %-7.6lf", static_cast<unsigned long>(f.bytes),
			 static_cast<unsigned long>(f.iterations), f.bw_peak, f.bw_avg, f.msg_rate);
	else if (c.bw)
		out.line(" %-7lu    %-10lu       %-7.2lf            %-7.2lf\t\t   %-7.6lf", static_cast<unsigned long>(f.bytes),
			 static_cast<unsigned long>(f.iterations), f.bw_peak, f.bw_avg, f.msg_rate);
	else if (c.duration)
		out.line(" %-7lu       %lu            %-7.2f        %-7.2f", static_cast<unsigned long>(f.bytes),
			 static_cast<unsigned long>(f.iterations), f.t_avg, f.t_avg > 0 ? 1e6 / f.t_avg : 0.0);
	else
		out.line(" %-7lu %lu          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f",
			 static_cast<unsigned long>(f.bytes), static_cast<unsigned long>(f.iterations), f.t_min, f.t_max, f.t_typical,
			 f.t_avg, f.t_stdev, f.p99, f.p999);
}

void perftest_footer(Report &out, const PerftestReportConf &c)
{
	if (c.output.empty())
		out.line("%s", kLine);
}

PerftestRun perftest_run_of(const PerftestReportConf &c, const Results &r, const PerftestPort &port)
{
	PerftestRun x;
	x.f = perftest_figures(c, r);
	x.port = port;
	x.device = r.device;
	x.pass = r.pass;
	x.elapsed_s = r.elapsed_s;
	if (!r.flows.empty()) {
		const FlowResult &fl = r.flows[0];
		x.sent = fl.sent;
		x.completed = fl.completed;
		x.verified = fl.verified;
		x.errors = fl.errors ? fl.errors->total : 0;
	}
	return x;
}

int perftest_write_json(const std::string &path, const PerftestReportConf &c, const std::vector<PerftestRun> &runs,
			std::string *err)
{
	using nlohmann::ordered_json;
	ordered_json info;
	info["test"] = test_json_name(c);
	info["Dual_port"] = "OFF";
	info["Device"] = runs.empty() ? "" : runs[0].device;
	info["Number_of_qps"] = c.qps;
	info["Transport_type"] = "IB";
	info["Connection_type"] = c.uc ? "UC" : "RC";
	info["Using_SRQ"] = c.use_srq ? "ON" : "OFF";
	info["PCIe_relax_order"] = "Unsupported";
	info["ibv_wr_API"] = "OFF";
	if (c.sends() && c.tx_depth)
		info["TX_depth"] = c.tx_depth;
	if (c.bw && c.cq_mod)
		info["CQ_Moderation"] = c.cq_mod;
	if (!runs.empty()) {
		info["Mtu"] = runs[0].port.mtu;
		info["Link_type"] = runs[0].port.link_type;
		info["GID_index"] = runs[0].port.gid_index;
	}
	info["Max_inline_data"] = c.inline_size;
	info["rdma_cm_QPs"] = "ON";
	info["Data_ex_method"] = "rdma_cm";
	ordered_json results = ordered_json::array();
	for (const PerftestRun &r : runs) {
		const PerftestFigures &f = r.f;
		ordered_json x;
		x["MsgSize"] = f.bytes;
		x["n_iterations"] = f.iterations;
		if (c.bw) {
			x["BW_peak"] = f.bw_peak;
			x["BW_average"] = f.bw_avg;
			x["MsgRate"] = f.msg_rate;
		} else if (c.duration) {
			x["t_avg"] = f.t_avg;
			x["tps_average"] = f.t_avg > 0 ? 1e6 / f.t_avg : 0.0;
		} else {
			x["t_min"] = f.t_min;
			x["t_max"] = f.t_max;
			x["t_typical"] = f.t_typical;
			x["t_avg"] = f.t_avg;
			x["t_stdev"] = f.t_stdev;
			x["percentile_99"] = f.p99;
			x["percentile_99.9"] = f.p999;
		}
		x["rdmapipe"] = {{"result", r.pass ? "PASS" : "FAIL"}, {"messages_sent", r.sent},   {"messages_completed", r.completed},
				 {"messages_verified", r.verified},       {"completion_errors", r.errors}, {"elapsed_s", r.elapsed_s}};
		results.push_back(std::move(x));
	}
	ordered_json doc;
	doc["test_info"] = std::move(info);
	doc["results"] = results.size() == 1 ? results[0] : results;   // a size sweep (-a): one per size
	std::ofstream o(path);
	o << doc.dump(1) << "\n";
	o.close();
	if (!o) {
		*err = "--out_json_file " + path + ": " + strerror(errno);
		return -1;
	}
	return 0;
}

} // namespace rp
