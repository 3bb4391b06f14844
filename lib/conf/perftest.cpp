/* perftest's flags, each mapped onto rdmapipe's arguments, meaningless here, or refused
 * (perftest.h). Read from perftest 4.5's src/perftest_parameters.c (Debian's) and
 * 26.04's (the flags it added: the table's last rows). */
#include "conf/perftest.h"

#include "conf/config.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>

namespace rp {

namespace {

struct Test {
	const char *name, *verb, *title;
	bool bw;
	bool pingpong;   // latency as a ping-pong (sends, and writes polled in memory); else one op in flight, timed to its completion
};

/* perftest's tests: rdmapipe's verb for each and perftest's header title. */
const Test kTests[] = {
	{"write_bw", "write", "RDMA_Write BW Test", true, false},
	{"write_lat", "write", "RDMA_Write Latency Test", false, true},
	{"read_bw", "read", "RDMA_Read BW Test", true, false},
	{"read_lat", "read", "RDMA_Read Latency Test", false, false},
	{"send_bw", "send", "Send BW Test", true, false},
	{"send_lat", "send", "Send Latency Test", false, true},
	{"atomic_bw", "fetch_add", "Atomic BW Test", true, false},
	{"atomic_lat", "fetch_add", "Atomic Latency Test", false, false},
};

const Test *find_test(const std::string &name)
{
	for (const Test &t : kTests)
		if (name == t.name)
			return &t;
	return nullptr;
}

/* The translation's state: what the flags said, settled into arguments at the end. */
struct St {
	const Test *t = nullptr;
	PerftestReportConf *rc = nullptr;
	std::vector<std::string> out;   // rdmapipe's arguments, in the flags' order
	std::string host, port = "18515", size, iters, rate, rate_units = "M", rate_type;
	bool all = false, server_flag = false, client_flag = false;
	const char *imm = nullptr;   // --send_with_imm or --write_with_imm (perftest 26.04)
	uint64_t inline_size = 0;   // -I (0: not given, or nothing inlined)

	void add(std::initializer_list<std::string> a) { out.insert(out.end(), a); }
};

using Apply = std::function<std::string(St &, const std::string &)>;
/* The way back (perftest_command): the flag's argument for a flow (a flag without one:
 * any text), nullopt where the flow does without the flag. */
using Inverse = std::function<std::optional<std::string>(const PerftestFlow &)>;

enum Fate { kMapped, kMeaningless, kRefused };

struct Flag {
	char short_name;        // 0: long only
	const char *long_name;
	bool has_arg;
	Fate fate;
	const char *what;       // mapped: what it becomes; else why
	Apply apply;            // mapped (and some meaningless ones): nullptr: nothing to do
	Inverse inverse = nullptr;   // the flag a flow's setting becomes (perftest_command); nullptr: none
};

/* A flag given when `when` holds of the flow, with arg's text. */
Inverse given(std::function<bool(const PerftestFlow &)> when, std::function<std::string(const PerftestFlow &)> arg)
{
	return [when, arg](const PerftestFlow &p) -> std::optional<std::string> {
		if (!when(p))
			return std::nullopt;
		return arg(p);
	};
}

/* A flag always given, with arg's text. */
Inverse always(std::function<std::string(const PerftestFlow &)> arg)
{
	return given([](const PerftestFlow &) { return true; }, std::move(arg));
}

std::string num(double v)
{
	std::ostringstream o;
	o << v;
	return o.str();
}

Apply pass(const char *rdmapipe_flag)
{
	return [rdmapipe_flag](St &s, const std::string &a) {
		s.add({rdmapipe_flag, a});
		return std::string();
	};
}

Apply keep(std::string St::*field)
{
	return [field](St &s, const std::string &a) {
		s.*field = a;
		return std::string();
	};
}

/* A flag that turns a report setting on. */
Apply report_on(bool PerftestReportConf::*field)
{
	return [field](St &s, const std::string &) {
		s.rc->*field = true;
		return std::string();
	};
}

/* -w, -y: a floor the run's figure must reach (a bandwidth test's). */
Apply limit(double PerftestReportConf::*field)
{
	return [field](St &s, const std::string &a) {
		char *end = nullptr;
		const double v = strtod(a.c_str(), &end);
		if (end == a.c_str() || *end || v < 0)
			return "'" + a + "' is not a figure of 0 or more";
		if (!s.t->bw)
			return std::string("a floor of a bandwidth test, as perftest's");
		s.rc->*field = v;
		return std::string();
	};
}

const char *const kRawEth = "raw Ethernet tests (raw_ethernet_*) are not among rdmapipe's: it runs RC and UC over verbs";
const char *const kCrypto = "crypto and signature offload (mlx5) are not among rdmapipe's verbs";
const char *const kNoAccel = "GPU and mmap'ed buffers: rdmapipe's buffers are its hugepage mempools";

const std::vector<Flag> &flags()
{
	static const std::vector<Flag> f = {
		{'p', "port", true, kMapped, "the rdma_cm port: --listen PORT (server) or --peer HOST:PORT (client)", keep(&St::port)},
		{'d', "ib-dev", true, kMapped, "-d, --device", pass("-d"), always([](const PerftestFlow &p) { return p.device; })},
		{'i', "ib-port", true, kMapped, "-p, --port", pass("-p")},
		{'m', "mtu", true, kRefused, "the path MTU is the port's active MTU: rdmapipe does not set it", nullptr},
		{'s', "size", true, kMapped, "-s, --size", keep(&St::size), always([](const PerftestFlow &p) { return std::to_string(p.flow.sizes[0]); })},
		{'n', "iters", true, kMapped, "-n, --messages (per QP, as perftest counts: times -q), or round trips for latency", keep(&St::iters)},
		{'t', "tx-depth", true, kMapped, "--sq-depth", [](St &s, const std::string &a) {
			 s.rc->tx_depth = static_cast<uint32_t>(strtoul(a.c_str(), nullptr, 10));
			 s.add({"--sq-depth", a});
			 return std::string();
		 }, always([](const PerftestFlow &p) { return std::to_string(p.flow.sq_depth); })},
		{'u', "qp-timeout", true, kRefused, "rdmapipe keeps the QP's ACK timeout (14) and sets its retries (--retry-cnt)", nullptr},
		{'S', "sl", true, kMapped, "--sl", pass("--sl")},
		{'x', "gid-index", true, kMapped, "-g, --gid-index", pass("-g")},
		{'a', "all", false, kMapped, "-s 2,4,...,8388608: a size sweep, a row per size", [](St &s, const std::string &) {
			 s.all = true;
			 return std::string();
		 }},
		{'F', "CPU-freq", false, kMeaningless, "rdmapipe times with the TSC at the rate DPDK measured: no cpufreq check to silence", nullptr},
		{'c', "connection", true, kMapped, "RC: the default; UC: --transport uc --reliability none (perftest's plain UC)",
		 [](St &s, const std::string &a) {
			 if (a == "RC")
				 return std::string();
			 if (a == "UC") {
				 s.rc->uc = true;
				 s.add({"--transport", "uc", "--reliability", "none"});
				 return std::string();
			 }
			 return "'" + a + "': rdmapipe runs RC and UC (UD, XRC, DC and SRD are not among its transports)";
		 }, given([](const PerftestFlow &p) { return p.flow.transport == Transport::uc; }, [](const PerftestFlow &) { return std::string("UC"); })},
		{'q', "qp", true, kMapped, "-Q, --qps (one flow of N QPs)", [](St &s, const std::string &a) {
			 s.rc->qps = static_cast<uint32_t>(strtoul(a.c_str(), nullptr, 10));
			 s.add({"-Q", a});
			 return std::string();
		 }, always([](const PerftestFlow &p) { return std::to_string(p.flows * p.flow.qps); })},
		{'e', "events", false, kMapped, "--poll adaptive (sleeps on a completion channel after a run of empty polls)", [](St &s, const std::string &) {
			 s.add({"--poll", "adaptive"});
			 return std::string();
		 }, given([](const PerftestFlow &p) { return p.adaptive_poll; }, [](const PerftestFlow &) { return std::string(); })},
		{'X', "vector", true, kRefused, "rdmapipe's completion channel takes the device's default vector", nullptr},
		{'I', "inline_size", true, kMapped, "--inline, when the message size is at most N (as perftest inlines)", [](St &s, const std::string &a) {
			 char *end = nullptr;
			 s.inline_size = strtoull(a.c_str(), &end, 10);
			 return end && *end == '\0' && !a.empty() ? std::string() : "'" + a + "' is not a size in bytes";
		 }, given([](const PerftestFlow &p) { return p.flow.inline_send; }, [](const PerftestFlow &p) { return std::to_string(p.flow.sizes[0]); })},
		{'o', "outs", true, kRefused, "rdmapipe gives a QP the device's most outstanding reads and atomics", nullptr},
		{'g', "mcg", false, kRefused, "multicast runs on UD, which rdmapipe does not run", nullptr},
		{'z', "comm_rdma_cm", false, kMeaningless, "rdmapipe connects and exchanges through rdma_cm always", nullptr},
		{'R', "rdma_cm", false, kMeaningless, "rdmapipe connects through rdma_cm always", nullptr},
		{'T', "tos", true, kMapped, "--tclass (RoCE v2: the IP header's traffic class)", pass("--tclass")},
		{0, "tclass", true, kMapped, "--tclass", pass("--tclass")},
		{'L', "hop_limit", true, kMapped, "--hop-limit", pass("--hop-limit")},
		{'M', "MGID", true, kRefused, "multicast runs on UD, which rdmapipe does not run", nullptr},
		{'r', "rx-depth", true, kRefused, "rdmapipe sizes its receive queues from the window: set it with rdmapipe's --slots", nullptr},
		{'b', "bidirectional", false, kMapped,
		 "--bidirectional (a second flow the other way at once, on the port after); the table's BW and message rate are "
		 "both ways' (perftest's sum of both ends' sends)",
		 [](St &s, const std::string &) {
			 if (!s.t->bw)
				 return std::string("Bidirectional is only available in BW test (perftest's words)");
			 s.rc->bidirectional = true;
			 s.add({"--bidirectional"});
			 return std::string();
		 }},
		{'Q', "cq-mod", true, kMapped, "-S, --signal-every (a signalled completion every N WRs)", [](St &s, const std::string &a) {
			 s.rc->cq_mod = static_cast<uint32_t>(strtoul(a.c_str(), nullptr, 10));
			 s.add({"-S", a});
			 return std::string();
		 }, always([](const PerftestFlow &p) { return std::to_string(p.flow.signal_every); })},
		{'N', "noPeak", false, kMapped, "BW peak reported as 0, as perftest does", report_on(&PerftestReportConf::no_peak)},
		{'C', "report-cycles", false, kRefused, "rdmapipe reports microseconds (its TSC's rate is known)", nullptr},
		{'H', "report-histogrm", false, kMapped, "every sample, sorted, as perftest's '#, usec' lines, at the latency histogram's resolution (0.8 %)",
		 [](St &s, const std::string &) {
			 if (s.t->bw)
				 return std::string("available only on latency tests, as perftest says");
			 s.rc->histogram = true;
			 return std::string();
		 }},
		{'U', "report-unsorted", false, kRefused, "rdmapipe keeps a histogram, not every sample", nullptr},
		{'A', "atomic_type", true, kMapped, "-v cmp_swap (CMP_AND_SWAP) or fetch_add (FETCH_AND_ADD)", [](St &s, const std::string &a) {
			 if (a != "CMP_AND_SWAP" && a != "FETCH_AND_ADD")
				 return "'" + a + "' is not CMP_AND_SWAP or FETCH_AND_ADD";
			 s.rc->atomic_type = a;
			 return std::string();
		 }, given([](const PerftestFlow &p) { return verb_is_atomic(p.flow.verb); }, [](const PerftestFlow &p) { return std::string(p.flow.verb == Verb::cmp_swap ? "CMP_AND_SWAP" : "FETCH_AND_ADD"); })},
		{'O', "dualport", false, kRefused, "rdmapipe's flows each use one port (a pipeline file runs one flow per port)", nullptr},
		{'l', "post_list", true, kMapped, "-b, --batch (chains of N WRs, one ibv_post_send each)", [](St &s, const std::string &a) {
			 s.rc->post_list = static_cast<uint32_t>(strtoul(a.c_str(), nullptr, 10));
			 s.add({"-b", a});
			 return std::string();
		 }, always([](const PerftestFlow &p) { return std::to_string(p.flow.batch); })},
		{'D', "duration", true, kMapped, "-t, --duration", [](St &s, const std::string &a) {
			 s.rc->duration = true;
			 s.add({"-t", a});
			 return std::string();
		 }, always([](const PerftestFlow &p) { return num(std::max(1.0, p.seconds)); })},
		{'f', "margin", true, kRefused, "rdmapipe's warm-up is a pipeline file's run.warmup", nullptr},
		{'B', "source_mac", true, kRefused, kRawEth, nullptr},
		{'E', "dest_mac", true, kRefused, kRawEth, nullptr},
		{'J', "dest_ip", true, kRefused, kRawEth, nullptr},
		{'j', "source_ip", true, kRefused, kRawEth, nullptr},
		{'K', "dest_port", true, kRefused, kRawEth, nullptr},
		{'k', "source_port", true, kRefused, kRawEth, nullptr},
		{'Y', "ethertype", true, kRefused, kRawEth, nullptr},
		{'w', "limit_bw", true, kMapped, "the run fails (exit 1) when its BW average, in the table's units, is below it", limit(&PerftestReportConf::limit_bw)},
		{'y', "limit_msgrate", true, kMapped, "the run fails (exit 1) when its MsgRate (Mpps) is below it", limit(&PerftestReportConf::limit_msgrate)},
		{'Z', "server", false, kMapped, "the server (as without a host)", [](St &s, const std::string &) {
			 s.server_flag = true;
			 return std::string();
		 }},
		{'P', "client", false, kMapped, "the client (a host must be given)", [](St &s, const std::string &) {
			 s.client_flag = true;
			 return std::string();
		 }},
		{'v', "mac_fwd", false, kRefused, kRawEth, nullptr},
		{'G', "use_rss", false, kRefused, kRawEth, nullptr},
		{'W', "report-counters", true, kRefused, "rdmapipe's summary has the port's hw_counters over the run", nullptr},
		{0, "force-link", true, kRefused, "the link layer is the port's", nullptr},
		{0, "remote_mac", true, kRefused, kRawEth, nullptr},
		{0, "local_mac", true, kRefused, kRawEth, nullptr},
		{0, "remote_ip", true, kRefused, kRawEth, nullptr},
		{0, "local_ip", true, kRefused, kRawEth, nullptr},
		{0, "remote_port", true, kRefused, kRawEth, nullptr},
		{0, "local_port", true, kRefused, kRawEth, nullptr},
		{0, "run_infinitely", false, kMapped, "-t 0: until stopped (SIGINT, SIGTERM), then the table", [](St &s, const std::string &) {
			 s.rc->duration = true;
			 s.add({"-t", "0"});
			 return std::string();
		 }},
		{0, "report_gbits", false, kMapped, "the table in Gb/sec", report_on(&PerftestReportConf::gbits)},
		{0, "use-srq", false, kMapped, "the lcore's SRQ (rdmapipe's default); without it, a receive queue per QP (--recv-queue qp) as perftest",
		 [](St &s, const std::string &) {
			 s.rc->use_srq = true;
			 return std::string();
		 }, given([](const PerftestFlow &p) { return p.srq && (p.flow.verb == Verb::send || p.flow.verb == Verb::send_imm); },
		       [](const PerftestFlow &) { return std::string(); })},
		{0, "report-both", false, kRefused, "rdmapipe's client and server each print their own side", nullptr},
		{0, "reversed", false, kMapped, "--reversed: the server sends, the client receives (both ends give it)",
		 [](St &s, const std::string &) {
			 s.rc->reversed = true;
			 s.add({"--reversed"});
			 return std::string();
		 }},
		{0, "pkey_index", true, kRefused, "RoCE has no partitions; rdmapipe uses P_Key index 0", nullptr},
		{0, "inline_recv", true, kRefused, "rdmapipe does not ask for inline receives", nullptr},
		{0, "tcp", false, kRefused, "rdmapipe exchanges through rdma_cm, not TCP", nullptr},
		{0, "burst_size", true, kRefused, "rdmapipe's rate limit paces chains of --batch WRs", nullptr},
		{0, "typical_pkt_size", true, kRefused, "rdmapipe's rate limit paces messages, not packets", nullptr},
		{0, "rate_limit", true, kMapped, "--rate (messages a second, from --rate_units)", keep(&St::rate), given([](const PerftestFlow &p) { return p.flow.rate_pps > 0; }, [](const PerftestFlow &p) { return num(p.flow.rate_pps * p.flows); })},
		{0, "rate_limit_type", true, kMapped, "SW (the default here): rdmapipe paces in software; HW and PP are refused", keep(&St::rate_type)},
		{0, "rate_units", true, kMapped, "M (Mb/s, default), g (Gb/s) or p (messages/s), into --rate", keep(&St::rate_units), given([](const PerftestFlow &p) { return p.flow.rate_pps > 0; }, [](const PerftestFlow &) { return std::string("p"); })},
		{0, "output", true, kMapped, "bandwidth or message_rate (bandwidth tests), latency (latency tests): that one figure, no table",
		 [](St &s, const std::string &a) {
			 if (a != "bandwidth" && a != "message_rate" && a != "latency")
				 return "'" + a + "' is not bandwidth, message_rate or latency";
			 if ((a == "latency") == s.t->bw)
				 return "'" + a + "': a " + (s.t->bw ? "bandwidth test's is bandwidth or message_rate" : "latency test's is latency");
			 s.rc->output = a;
			 return std::string();
		 }},
		{0, "cpu_util", false, kRefused, "rdmapipe's results file has each lcore's CPU time (--out_json's rdmapipe key)", nullptr},
		{0, "out_json", false, kMapped, "the results as JSON, perftest's fields and rdmapipe's counts", report_on(&PerftestReportConf::json)},
		{0, "out_json_file", true, kMapped, "where --out_json writes", [](St &s, const std::string &a) {
			 s.rc->json_file = a;
			 return std::string();
		 }},
		{0, "latency_gap", true, kRefused, "rdmapipe's ping-pong sends the next ping at once", nullptr},
		{0, "flow_label", true, kMapped, "--flow-label", pass("--flow-label")},
		{0, "retry_count", true, kMapped, "--retry-cnt", pass("--retry-cnt")},
		{0, "dont_xchg_versions", false, kMeaningless, "rdmapipe's ends check each other's handshake, not perftest's version", nullptr},
		{0, "use_cuda", true, kRefused, kNoAccel, nullptr},
		{0, "use_cuda_bus_id", true, kRefused, kNoAccel, nullptr},
		{0, "use_rocm", true, kRefused, kNoAccel, nullptr},
		{0, "mmap", true, kRefused, kNoAccel, nullptr},
		{0, "mmap-offset", true, kRefused, kNoAccel, nullptr},
		{0, "ipv6", false, kRefused, "rdmapipe's rdma_cm addresses are IPv4", nullptr},
		{0, "raw_ipv6", false, kRefused, kRawEth, nullptr},
		{'h', "help", false, kMapped, "this table, and the front end's usage", nullptr},
		{'V', "version", false, kMapped, "rdmapipe's version", nullptr},
		{0, "disable_pcie_relaxed", false, kMeaningless, "rdmapipe does not ask for relaxed ordering", nullptr},
		{0, "use_old_post_send", false, kMeaningless, "rdmapipe posts chains with ibv_post_send already (rdmapipe's --post-api wr: the ibv_wr_* API)", nullptr, given([](const PerftestFlow &p) { return p.flow.post_api == PostApi::classic; }, [](const PerftestFlow &) { return std::string(); })},
		{0, "use_hugepages", false, kMeaningless, "rdmapipe's buffers are hugepage mempools already (EAL's)", nullptr},
		{0, "perform_warm_up", false, kRefused, "rdmapipe's warm-up is a pipeline file's run.warmup", nullptr},
		{0, "recv_post_list", true, kRefused, "rdmapipe reposts receives in batches of its own (rdmapipe's --srq-refill)", nullptr},
		{0, "reply_every", true, kRefused, "rdmapipe's ping-pong answers every ping", nullptr},
		{0, "mr_per_qp", false, kRefused, "rdmapipe registers its pools once, shared by the QPs", nullptr},
		{0, "odp", false, kRefused, "rdmapipe's pools are registered hugepage memory, not on-demand paging", nullptr},
		{0, "use_ooo", false, kRefused, "out-of-order placement (mlx5) is not set by rdmapipe", nullptr},
		{0, "wait_destroy", true, kRefused, "rdmapipe frees its resources when the run ends", nullptr},
		{0, "dlid", true, kRefused, "InfiniBand LID addressing: rdmapipe connects through rdma_cm over IP", nullptr},
		{0, "report-per-port", false, kRefused, "rdmapipe's flows each use one port", nullptr},
		{0, "log_dci_streams", true, kRefused, "DC is not among rdmapipe's transports", nullptr},
		{0, "log_active_dci_streams", true, kRefused, "DC is not among rdmapipe's transports", nullptr},
		{0, "flows", true, kRefused, kRawEth, nullptr},
		{0, "flows_burst", true, kRefused, kRawEth, nullptr},
		{0, "promiscuous", false, kRefused, kRawEth, nullptr},
		{0, "sniffer", false, kRefused, kRawEth, nullptr},
		{0, "raw_mcast", false, kRefused, kRawEth, nullptr},
		{0, "vlan_en", false, kRefused, kRawEth, nullptr},
		{0, "vlan_pcp", true, kRefused, kRawEth, nullptr},
		{0, "aes_xts", false, kRefused, kCrypto, nullptr},
		{0, "aes_block_size", true, kRefused, kCrypto, nullptr},
		{0, "encrypt_on_tx", false, kRefused, kCrypto, nullptr},
		{0, "sig_before", false, kRefused, kCrypto, nullptr},
		{0, "data_enc_keys_number", true, kRefused, kCrypto, nullptr},
		{0, "data_enc_key_app_path", true, kRefused, kCrypto, nullptr},
		{0, "kek_path", true, kRefused, kCrypto, nullptr},
		{0, "credentials_path", true, kRefused, kCrypto, nullptr},
		/* Added after 4.5, up to 26.04 (its src/perftest_parameters.c). */
		{0, "bind_source_ip", true, kMapped, "--local ADDR (the client's source address, picking its device)", pass("--local")},
		{0, "send_with_imm", false, kMapped, "-v send_imm (send tests)", [](St &s, const std::string &) {
			 s.imm = "send_with_imm";
			 return std::string();
		 }, given([](const PerftestFlow &p) { return p.flow.verb == Verb::send_imm; }, [](const PerftestFlow &) { return std::string(); })},
		{0, "write_with_imm", false, kMapped, "-v write_imm (write tests)", [](St &s, const std::string &) {
			 s.imm = "write_with_imm";
			 return std::string();
		 }, given([](const PerftestFlow &p) { return p.flow.verb == Verb::write_imm; }, [](const PerftestFlow &) { return std::string(); })},
		{0, "data_validation", false, kMeaningless, "rdmapipe checks every message always", nullptr},
		{0, "data_validation_debug", false, kMeaningless, "rdmapipe's summary names the first bad message, its QP and offset", nullptr},
		{0, "pin_cores", true, kRefused, "rdmapipe's lcores are pinned by EAL: --eal \"-l ...\" or --lcores", nullptr},
		{0, "cpu_id", true, kRefused, "rdmapipe's lcores are EAL's: --eal \"-l ...\" or --lcores", nullptr},
		{0, "numa_node", true, kRefused, "rdmapipe's memory is EAL's, on the NUMA node of the lcores that use it", nullptr},
		{0, "disable_numa", false, kRefused, "rdmapipe's memory is EAL's, on the NUMA node of the lcores that use it", nullptr},
		{0, "no_lock", false, kMeaningless, "each rdmapipe lcore owns its QPs and CQs: nothing is locked on the data path", nullptr},
		{0, "disable_dynamic_polling", false, kRefused, "rdmapipe polls as --poll says (busy, or adaptive with -e)", nullptr},
		{0, "cqe_poll", true, kRefused, "rdmapipe polls its shared CQs in bursts of its own", nullptr},
		{0, "connectionless", false, kRefused, "connectionless transports (UD, SRD) are not among rdmapipe's", nullptr},
		{0, "congest_type", true, kRefused, "congestion control is the NIC's and the kernel's: rdmapipe does not set it", nullptr},
		{0, "ipv6-addr", false, kRefused, "rdmapipe's rdma_cm addresses are IPv4", nullptr},
		{0, "no_enhanced_reorder", false, kRefused, "a NIC feature (mlx5) rdmapipe does not set", nullptr},
		{0, "sig_offload", false, kRefused, "signature offload (mlx5) is not among rdmapipe's verbs", nullptr},
		{0, "unsolicited_write", false, kRefused, "not among rdmapipe's verbs", nullptr},
		{0, "use-null-mr", false, kRefused, "rdmapipe's payloads are in its registered pools: every byte is checked", nullptr},
		{0, "payload_file_path", true, kRefused, "rdmapipe's payload is its verification pattern", nullptr},
		{0, "ph", true, kRefused, "PCIe TLP processing hints are not set by rdmapipe", nullptr},
		{0, "tph_mem", true, kRefused, "PCIe TLP processing hints are not set by rdmapipe", nullptr},
		{0, "cuda_mem_type", true, kRefused, kNoAccel, nullptr},
		{0, "gpu_touch", true, kRefused, kNoAccel, nullptr},
		{0, "opencl_platform_id", true, kRefused, kNoAccel, nullptr},
		{0, "use_opencl", true, kRefused, kNoAccel, nullptr},
		{0, "use_cuda_dmabuf", false, kRefused, kNoAccel, nullptr},
		{0, "use_cuda_pcie_mapping", false, kRefused, kNoAccel, nullptr},
		{0, "use_data_direct", false, kRefused, kNoAccel, nullptr},
		{0, "use_hl", true, kRefused, kNoAccel, nullptr},
		{0, "use_ib_dm_dmabuf", true, kRefused, kNoAccel, nullptr},
		{0, "use_mlu", true, kRefused, kNoAccel, nullptr},
		{0, "use_mlu_dmabuf", false, kRefused, kNoAccel, nullptr},
		{0, "use_musa", true, kRefused, kNoAccel, nullptr},
		{0, "use_musa_bus_id", true, kRefused, kNoAccel, nullptr},
		{0, "use_musa_dmabuf", false, kRefused, kNoAccel, nullptr},
		{0, "use_musa_pcie_mapping", false, kRefused, kNoAccel, nullptr},
		{0, "use_neuron", true, kRefused, kNoAccel, nullptr},
		{0, "use_neuron_dmabuf", false, kRefused, kNoAccel, nullptr},
		{0, "use_rocm_dmabuf", false, kRefused, kNoAccel, nullptr},
	};
	return f;
}

std::string flag_name(const Flag &f)
{
	return f.short_name ? std::string("-") + f.short_name : std::string("--") + f.long_name;
}

/* "-s (--size)", "--out_json": as the errors name a flag. */
std::string flag_label(const Flag &f)
{
	return f.short_name ? flag_name(f) + " (--" + f.long_name + ")" : flag_name(f);
}

/* "-s 64", "--size=64", "--size 64", "-s64": the flag and its argument. */
const Flag *match(const std::vector<std::string> &args, size_t *i, std::string *arg, std::string *err)
{
	const std::string &a = args[*i];
	std::string name = a, inline_arg;
	bool has_inline = false;
	const Flag *hit = nullptr;
	if (a.rfind("--", 0) == 0) {
		const size_t eq = a.find('=');
		name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
		if ((has_inline = eq != std::string::npos))
			inline_arg = a.substr(eq + 1);
		for (const Flag &f : flags())
			if (name == f.long_name)
				hit = &f;
	} else if (a.size() >= 2 && a[0] == '-') {
		for (const Flag &f : flags())
			if (f.short_name == a[1])
				hit = &f;
		if ((has_inline = a.size() > 2))
			inline_arg = a.substr(2);
	}
	if (hit == nullptr) {
		*err = "'" + a + "': not a perftest flag (docs/perftest.md lists them)";
		return nullptr;
	}
	if (!hit->has_arg && has_inline) {
		*err = "'" + a + "': " + flag_name(*hit) + " takes no value";
		return nullptr;
	}
	if (hit->has_arg && !has_inline) {
		if (*i + 1 >= args.size()) {
			*err = flag_label(*hit) + " needs a value";
			return nullptr;
		}
		inline_arg = args[++*i];
	}
	*arg = inline_arg;
	return hit;
}

/* The perftest rate in messages a second (units: M Mb/s, g Gb/s, p messages/s). */
std::string rate_of(const St &s, uint64_t bytes, std::string *err)
{
	char *end = nullptr;
	const double r = strtod(s.rate.c_str(), &end);
	if (end == s.rate.c_str() || *end || r <= 0) {
		*err = "--rate_limit '" + s.rate + "' is not a positive rate";
		return "";
	}
	double pps = r;
	if (s.rate_units == "M" || s.rate_units == "g")
		pps = r * (s.rate_units == "g" ? 1e9 : 1e6) / 8 / static_cast<double>(bytes);
	else if (s.rate_units != "p") {
		*err = "--rate_units '" + s.rate_units + "' is not M (Mb/s), g (Gb/s) or p (messages/s)";
		return "";
	}
	return std::to_string(std::max<uint64_t>(1, static_cast<uint64_t>(pps)));
}

/* A host as perftest takes it (a name or an IPv4 address) as rdmapipe's --peer takes it:
 * an IPv4 address. "" with *err when it resolves to none. */
std::string ipv4_of(const std::string &host, std::string *err)
{
	in_addr a{};
	if (inet_pton(AF_INET, host.c_str(), &a) == 1)
		return host;
	addrinfo hints{}, *res = nullptr;
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	if (const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res); rc != 0 || res == nullptr) {
		*err = "host '" + host + "': no IPv4 address (" + (rc ? gai_strerror(rc) : "none") + ")";
		return "";
	}
	char s[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in *>(res->ai_addr)->sin_addr, s, sizeof(s));
	freeaddrinfo(res);
	return s;
}

bool verb_is_send(const std::string &v)
{
	return v == "send" || v == "send_imm";
}

std::string all_sizes()
{
	std::string s;
	for (uint64_t b = 2; b <= 8388608; b *= 2)
		s += (s.empty() ? "" : ",") + std::to_string(b);
	return s;
}

/* The test's own settings, after the flags: sizes, counts, shape, ends. */
int settle(St &s, std::string *err)
{
	const Test &t = *s.t;
	const bool atomic = strncmp(t.name, "atomic", 6) == 0;
	PerftestReportConf &rc = *s.rc;
	std::string verb = t.verb;
	if (atomic && rc.atomic_type == "CMP_AND_SWAP")
		verb = "cmp_swap";
	if (s.imm) {   // perftest 26.04's: a send or a write that carries an immediate
		const bool send = verb == "send", write = verb == "write";
		if (!(send && strcmp(s.imm, "send_with_imm") == 0) && !(write && strcmp(s.imm, "write_with_imm") == 0)) {
			*err = std::string("--") + s.imm + ": ib_" + t.name + " has no " + (s.imm[0] == 's' ? "sends" : "writes");
			return -1;
		}
		verb += "_imm";
	}
	if (atomic && rc.atomic_type.empty())
		rc.atomic_type = "FETCH_AND_ADD";
	if (atomic && (s.all || (!s.size.empty() && s.size != "8"))) {
		*err = std::string(s.all ? "-a" : "-s " + s.size) + ": an atomic is 8 bytes";
		return -1;
	}
	const std::string size = s.all ? all_sizes() : !s.size.empty() ? s.size : atomic ? "8" : t.bw ? "65536" : "2";
	s.add({"-v", verb, "-s", size});
	if (!rc.duration) {   // perftest's iterations are per QP (bandwidth) or round trips (latency)
		const uint64_t iters = s.iters.empty() ? (t.bw ? 5000 : 1000) : strtoull(s.iters.c_str(), nullptr, 10);
		s.add({"-n", std::to_string(t.bw ? iters * std::max<uint32_t>(rc.qps, 1) : iters)});
	} else if (!s.iters.empty()) {
		*err = "-n with -D or --run_infinitely: a run goes for a count of iterations or for a time, not both";
		return -1;
	}
	if (t.pingpong)
		s.add({"--pingpong"});
	else if (!t.bw)   // one read or atomic in flight at a time, each timed from post to completion
		s.add({"-b", "1", "-S", "1", "--sq-depth", "1"});
	const uint64_t first = strtoull(size.c_str(), nullptr, 10);
	if (s.inline_size > 0 && s.inline_size >= first)
		s.add({"--inline"});
	if (!rc.use_srq && verb_is_send(verb))
		s.add({"--recv-queue", "qp"});
	if (!s.rate.empty()) {
		if (!s.rate_type.empty() && s.rate_type != "SW") {
			*err = "--rate_limit_type " + s.rate_type + ": rdmapipe paces in software only (SW)";
			return -1;
		}
		const std::string pps = rate_of(s, first, err);
		if (pps.empty())
			return -1;
		s.add({"--rate", pps});
	}
	if (s.server_flag && s.client_flag) {
		*err = "--server and --client: one end is either";
		return -1;
	}
	if ((s.client_flag && s.host.empty()) || (s.server_flag && !s.host.empty())) {
		*err = s.client_flag ? "--client: no server host given" : "--server with a host (" + s.host + "): the client names the host";
		return -1;
	}
	rc.server = s.host.empty();
	if (rc.bidirectional)   // perftest's title: "RDMA_Write Bidirectional BW Test"
		rc.title.insert(rc.title.rfind("BW Test"), "Bidirectional ");
	const std::string ip = rc.server ? "" : ipv4_of(s.host, err);
	if (!rc.server && ip.empty())
		return -1;
	s.add({rc.server ? "--listen" : "--peer", rc.server ? s.port : ip + ":" + s.port});
	s.add({"-q"});   // perftest's table on stdout, not rdmapipe's progress
	return 0;
}

} // namespace

const std::vector<std::string> &perftest_tests()
{
	static const std::vector<std::string> t = [] {
		std::vector<std::string> v;
		for (const Test &x : kTests)
			v.push_back(x.name);
		return v;
	}();
	return t;
}

std::string perftest_test_of(const std::string &program, const std::string &first_arg)
{
	const std::string base = program.substr(program.rfind('/') == std::string::npos ? 0 : program.rfind('/') + 1);
	if (base.rfind("ib_", 0) == 0 && find_test(base.substr(3)))
		return base.substr(3);
	if (base == "rdmapipe-perftest") {
		const std::string t = first_arg.rfind("ib_", 0) == 0 ? first_arg.substr(3) : first_arg;
		return find_test(t) ? t : "";
	}
	return "";
}

int perftest_translate(const std::string &test, const std::vector<std::string> &args, std::vector<std::string> *out,
		       PerftestReportConf *rc, std::string *err)
{
	St s;
	s.t = find_test(test);
	if (s.t == nullptr) {
		*err = "'" + test + "' is not a test of this front end (ib_write_bw, ib_write_lat, ib_read_bw, ib_read_lat, "
				    "ib_send_bw, ib_send_lat, ib_atomic_bw, ib_atomic_lat)";
		return -1;
	}
	*rc = PerftestReportConf{};
	rc->on = true;
	rc->test = test;
	rc->title = s.t->title;   // (-b: "... Bidirectional BW Test", in settle)
	rc->bw = s.t->bw;
	rc->json_file = "perftest_out.json";
	s.rc = rc;
	for (size_t i = 0; i < args.size(); i++) {
		if (args[i].empty() || args[i][0] != '-') {   // the host: the server this client connects to
			if (!s.host.empty()) {
				*err = "'" + args[i] + "': one host only (the server), '" + s.host + "' given already";
				return -1;
			}
			s.host = args[i];
			continue;
		}
		std::string arg;
		const Flag *f = match(args, &i, &arg, err);
		if (f == nullptr)
			return -1;
		if (f->fate == kRefused) {
			*err = flag_label(*f) + " is refused: " + f->what;
			return -1;
		}
		if (f->apply)
			if (std::string why = f->apply(s, arg); !why.empty()) {
				*err = flag_label(*f) + ": " + why;
				return -1;
			}
	}
	rc->inline_size = static_cast<uint32_t>(s.inline_size);
	if (settle(s, err) != 0)
		return -1;
	*out = std::move(s.out);
	return 0;
}

namespace {

/* The bandwidth test of a verb: its row of kTests, the immediates and cmp_swap being
 * flags of write_bw, send_bw and atomic_bw (--write_with_imm, --send_with_imm, -A). */
const Test *bw_test_of(Verb v)
{
	const Verb base = v == Verb::write_imm ? Verb::write : v == Verb::send_imm ? Verb::send : v == Verb::cmp_swap ? Verb::fetch_add : v;
	for (const Test &t : kTests)
		if (t.bw && strcmp(verb_name(base), t.verb) == 0)
			return &t;
	return nullptr;
}

} // namespace

std::string perftest_command(const PerftestFlow &p)
{
	const FlowConf &f = p.flow;
	const Test *t = bw_test_of(f.verb);
	if (t == nullptr || p.device.find('>') != std::string::npos || f.fence || p.cq_ex || f.sizes.size() != 1 ||
	    (f.transport == Transport::uc && f.reliability != Reliability::none))
		return "";
	std::string cmd = std::string("ib_") + t->name;
	for (const Flag &fl : flags())
		if (fl.inverse)
			if (const auto arg = fl.inverse(p))
				cmd += " " + flag_name(fl) + (fl.has_arg ? " " + *arg : "");
	return cmd;
}

std::vector<std::string> perftest_eal_args(std::vector<std::string> *args, const char *env)
{
	std::string eal;
	for (size_t i = 0; i < args->size(); i++) {
		const std::string &a = (*args)[i];
		if (a == "--eal" && i + 1 < args->size()) {
			eal = (*args)[i + 1];
			args->erase(args->begin() + static_cast<long>(i), args->begin() + static_cast<long>(i) + 2);
			break;
		}
		if (a.rfind("--eal=", 0) == 0) {
			eal = a.substr(6);
			args->erase(args->begin() + static_cast<long>(i));
			break;
		}
	}
	if (eal.empty() && env)
		eal = env;
	if (eal.empty()) {
		/* Two lcores left to float over every CPU, as perftest's one thread does: two
		 * ends on one host would otherwise busy-poll the same pinned CPU. Hugepages
		 * when there are some, else none (perftest needs none). */
		long huge = 0, cpus = sysconf(_SC_NPROCESSORS_ONLN);
		std::ifstream("/proc/sys/vm/nr_hugepages") >> huge;
		const std::string set = cpus > 1 ? "(0-" + std::to_string(cpus - 1) + ")" : "0";
		eal = "--lcores 0@" + set + ",1@" + set + (huge > 0 ? " --in-memory" : " --no-huge -m 512 --no-shconf") +
		      " --no-pci --log-level=lib.eal:error";
	}
	std::vector<std::string> v;
	std::istringstream words(eal);
	for (std::string w; words >> w;)
		v.push_back(w);
	return v;
}

std::vector<PerftestFlagDoc> perftest_flag_docs()
{
	std::vector<PerftestFlagDoc> d;
	for (const Flag &f : flags()) {
		const std::string names = (f.short_name ? std::string("-") + f.short_name + ", " : "") + "--" + f.long_name;
		d.push_back({names, f.fate == kMapped ? "mapped" : f.fate == kMeaningless ? "meaningless" : "refused", f.what});
	}
	return d;
}

} // namespace rp
