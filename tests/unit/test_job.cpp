/* Jobs of N ranks, without MPI: which pairs each pattern joins, the pipeline each rank
 * runs for it (client and server ends, addresses, ports, pools, devices), what the
 * loader refuses, and rank 0's one report from every rank's results (pairs that
 * failed named with their rank, ranks that sent nothing, ClusterKit's flags). */
#include "conf/config.h"
#include "conf/ranks.h"
#include "control/job_report.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "cmocka_cpp.h"
#include "load_conf.h"

namespace {

using rp::RankPair;
using json = nlohmann::ordered_json;

const char *kRing = "version = 1;\n"
		    "devices = ( { name = \"mlx5_0\"; } );\n"
		    "pools = ( { name = \"p\"; elt_size = 4096; count = 4096; } );\n"
		    "flows = (\n"
		    "  { name = \"bw\"; verb = \"write_imm\"; size = 4096; qps = 2; messages = 1000; pool = \"p\"; },\n"
		    "  { name = \"mine\"; verb = \"send\"; size = 64; messages = 10; }\n"
		    ");\n"
		    "stages = (\n"
		    "  { name = \"tx\"; kind = \"rdma_tx\"; flow = \"bw\"; lcore = 1; },\n"
		    "  { name = \"rx\"; kind = \"rdma_rx\"; flow = \"bw\"; lcore = 1; },\n"
		    "  { name = \"mtx\"; kind = \"rdma_tx\"; flow = \"mine\"; lcore = 1; },\n"
		    "  { name = \"mrx\"; kind = \"rdma_rx\"; flow = \"mine\"; lcore = 2; }\n"
		    ");\n"
		    "run = { output = { json = \"job.json\"; }; };\n";

std::string with_pattern(const std::string &pattern)
{
	return std::string(kRing) + "pattern = { " + pattern + " };\n";
}

std::vector<RankPair> pairs_of(const std::string &pattern, uint32_t n, std::string *err)
{
	rp::PipelineConf c;
	load(with_pattern(pattern), &c);
	std::vector<RankPair> v;
	if (rp::pattern_pairs(c, n, &v, err) != 0)
		v.clear();
	return v;
}

void assert_pairs(const std::vector<RankPair> &got, const std::vector<RankPair> &want)
{
	assert_int_equal(got.size(), want.size());
	for (size_t i = 0; i < want.size(); i++) {
		assert_int_equal(got[i].from, want[i].from);
		assert_int_equal(got[i].to, want[i].to);
	}
}

void patterns_join_their_pairs(void **)
{
	std::string err;
	assert_pairs(pairs_of("kind = \"pairs\";", 4, &err), {{0, 2}, {1, 3}, {2, 0}, {3, 1}});
	assert_pairs(pairs_of("kind = \"ring\";", 3, &err), {{0, 1}, {1, 2}, {2, 0}});
	assert_pairs(pairs_of("kind = \"ring\";", 2, &err), {{0, 1}, {1, 0}});
	assert_pairs(pairs_of("kind = \"all_to_all\";", 3, &err), {{0, 1}, {0, 2}, {1, 0}, {1, 2}, {2, 0}, {2, 1}});
	assert_pairs(pairs_of("kind = \"incast\"; root = 2;", 4, &err), {{0, 2}, {1, 2}, {3, 2}});
	assert_pairs(pairs_of("kind = \"incast\";", 3, &err), {{1, 0}, {2, 0}});
	assert_pairs(pairs_of("kind = \"list\"; pairs = ( [3, 0], [1, 2] );", 4, &err), {{3, 0}, {1, 2}});
}

void patterns_refuse_jobs_they_do_not_fit(void **)
{
	std::string err;
	assert_true(pairs_of("kind = \"pairs\";", 3, &err).empty());
	assert_non_null(strstr(err.c_str(), "pattern.kind: pairs joins rank i and i + N/2: it needs an even number of ranks, the job has 3"));
	assert_true(pairs_of("kind = \"incast\"; root = 4;", 4, &err).empty());
	assert_non_null(strstr(err.c_str(), "pattern.root: rank 4 is not in the job (ranks 0..3)"));
	assert_true(pairs_of("kind = \"list\"; pairs = ( [0, 5] );", 4, &err).empty());
	assert_non_null(strstr(err.c_str(), "pattern.pairs: [0, 5] names rank 5, the job has ranks 0..3"));
	assert_true(pairs_of("kind = \"ring\";", 1, &err).empty());
	assert_non_null(strstr(err.c_str(), "needs two ranks or more, the job has 1 (launch it with mpirun -np N)"));
}

std::vector<rp::RankInfo> ranks_of(const rp::PipelineConf &c, uint32_t n, uint32_t per_host)
{
	std::vector<rp::RankInfo> v(n);
	for (uint32_t r = 0; r < n; r++) {
		v[r].host = "h" + std::to_string(r / per_host);
		v[r].local = r % per_host;
		v[r].device = rp::rank_device(c, v[r].local);
		v[r].addr = "10.0." + std::to_string(r / per_host) + ".1";   // the ranks of a host share its NIC
		std::string err;
		assert_int_equal(rp::rank_port(c, n, v[r].local, &v[r].port, &err), 0);
	}
	return v;
}

const rp::FlowConf *flow(const rp::PipelineConf &c, const std::string &name)
{
	for (const rp::FlowConf &f : c.flows)
		if (f.name == name)
			return &f;
	return nullptr;
}

/* Ring of 3, rank 1: the client of 1 -> 2 and the server of 0 -> 1, its own flow as
 * it was, each pair its own pool, the rank's device everywhere, no results files. */
void a_rank_runs_its_ends(void **)
{
	rp::PipelineConf c, x;
	load(with_pattern("kind = \"ring\"; flows = [\"bw\"]; devices = [\"mlx5_0\", \"mlx5_1\"]; port = 20000;"), &c);
	const std::vector<rp::RankInfo> ranks = ranks_of(c, 3, 2);   // ranks 0, 1 on h0; 2 on h1
	std::string err;
	assert_int_equal(rp::pattern_expand(c, 1, ranks, &x, &err), 0);
	assert_int_equal(x.flows.size(), 3);
	const rp::FlowConf *cl = flow(x, "bw_1to2"), *sv = flow(x, "bw_0to1"), *own = flow(x, "mine");
	assert_non_null(cl);
	assert_non_null(sv);
	assert_non_null(own);
	/* Ports: the server's first port + template x n + client; h0's rank 1 starts a rank's
	 * worth (1 template x 3 ranks) above rank 0. */
	assert_int_equal(ranks[1].port, 20003);
	assert_string_equal(cl->peer.c_str(), "10.0.1.1:20001");   // rank 2: first on h1, port 20000 + 1
	assert_string_equal(cl->local.c_str(), "10.0.0.1");
	assert_true(cl->listen.empty());
	assert_string_equal(sv->listen.c_str(), "10.0.0.1:20003");   // rank 1's port + client 0
	assert_true(sv->peer.empty());
	assert_string_equal(own->peer.c_str(), "loopback");
	assert_int_equal(cl->qps, 2);
	assert_int_equal(cl->messages, 1000);
	assert_string_equal(cl->pool.c_str(), "p_1to2");
	assert_string_equal(sv->pool.c_str(), "p_0to1");
	std::set<std::string> pools;
	for (const rp::PoolConf &p : x.pools)
		pools.insert(p.name);
	assert_true(pools == (std::set<std::string>{"p_1to2", "p_0to1"}));   // the template's went with it
	/* Stages: tx of the client, rx of the server, the rank's own two. */
	std::set<std::string> stages;
	for (const rp::StageConf &st : x.stages)
		stages.insert(st.name + "@" + st.flow);
	assert_true(stages == (std::set<std::string>{"tx_1to2@bw_1to2", "rx_0to1@bw_0to1", "mtx@mine", "mrx@mine"}));
	assert_int_equal(x.devices.size(), 1);
	assert_string_equal(x.devices[0].name.c_str(), "mlx5_1");   // rank 1 of its host
	for (const rp::IoContextConf &io : x.io_contexts)
		assert_string_equal(io.device.c_str(), "mlx5_1");
	assert_true(x.run.json.empty());
	assert_false(x.pattern.on());
}

/* A flagged pair re-run alone (pattern.confirm): its two ends, where the loaded run had
 * them, and nothing else: not the rank's other pairs, not the file's own flows. */
void one_pair_alone(void **)
{
	rp::PipelineConf c, x;
	load(with_pattern("kind = \"ring\"; flows = [\"bw\"]; devices = [\"mlx5_0\", \"mlx5_1\"]; port = 20000;"), &c);
	const std::vector<rp::RankInfo> ranks = ranks_of(c, 3, 2);
	std::string err;
	assert_int_equal(rp::pattern_expand_alone(c, 1, ranks, "bw", {1, 2}, &x, &err), 0);
	assert_int_equal(x.flows.size(), 1);
	assert_string_equal(x.flows[0].name.c_str(), "bw_1to2");
	assert_string_equal(x.flows[0].peer.c_str(), "10.0.1.1:20001");   // as in the loaded run
	assert_int_equal(x.stages.size(), 1);
	assert_string_equal(x.stages[0].name.c_str(), "tx_1to2");
	assert_int_equal(x.pools.size(), 1);
	assert_string_equal(x.pools[0].name.c_str(), "p_1to2");
	assert_int_equal(rp::pattern_expand_alone(c, 2, ranks, "bw", {1, 2}, &x, &err), 0);
	assert_int_equal(x.stages.size(), 1);
	assert_string_equal(x.stages[0].name.c_str(), "rx_1to2");
	assert_string_equal(x.flows[0].listen.c_str(), "10.0.1.1:20001");
	assert_int_equal(rp::pattern_expand_alone(c, 0, ranks, "bw", {1, 2}, &x, &err), 0);
	assert_true(x.stages.empty() && x.flows.empty());   // idle
}

/* Every listen address:port of a job is taken once, however many ranks share a host
 * (and its one address). */
void listen_ports_never_collide(void **)
{
	rp::PipelineConf c;
	load(with_pattern("kind = \"all_to_all\"; devices = [\"d0\"];"), &c);
	for (uint32_t per_host : {1u, 2u, 5u}) {
		const std::vector<rp::RankInfo> ranks = ranks_of(c, 5, per_host);
		std::set<std::string> taken;
		size_t servers = 0;
		for (uint32_t r = 0; r < 5; r++) {
			rp::PipelineConf x;
			std::string err;
			assert_int_equal(rp::pattern_expand(c, r, ranks, &x, &err), 0);
			for (const rp::FlowConf &f : x.flows)
				if (!f.listen.empty()) {
					servers++;
					taken.insert(f.listen);
				}
		}
		assert_int_equal(servers, 2 * 5 * 4);   // two pattern flows, 20 ordered pairs
		assert_int_equal(taken.size(), servers);
	}
	std::string err;
	uint32_t port = 0;
	load(with_pattern("kind = \"ring\"; port = 65000;"), &c);
	assert_int_equal(rp::rank_port(c, 300, 1, &port, &err), -1);
	assert_non_null(strstr(err.c_str(), "pattern.port: the ranks on one host need 600 ports each"));
}

void loader_refuses_two_devices_for_one_rank(void **)
{
	rp::PipelineConf c;
	std::string err;
	const std::string text = "version = 1;\n"
				 "devices = ( { name = \"a\"; }, { name = \"b\"; } );\n"
				 "io_contexts = ( { lcore = 1; device = \"a\"; }, { lcore = 2; device = \"b\"; } );\n"
				 "flows = ( { name = \"f\"; verb = \"send\"; } );\n"
				 "stages = ( { name = \"t\"; kind = \"rdma_tx\"; flow = \"f\"; lcore = 1; },\n"
				 "           { name = \"r\"; kind = \"rdma_rx\"; flow = \"f\"; lcore = 2; } );\n"
				 "pattern = { kind = \"ring\"; devices = [\"x\"]; };\n";
	assert_int_equal(try_load(text, &c, &err), -1);
	assert_non_null(strstr(err.c_str(), ":7: pattern.devices: devices picks each rank's one device, but the io contexts use 2"));
	/* A two-host flow beside the pattern: every rank would listen on its port. */
	const std::string two_host = "version = 1;\n"
				     "devices = ( { name = \"d\"; } );\n"
				     "flows = ( { name = \"bw\"; verb = \"send\"; },\n"
				     "          { name = \"mine\"; listen = \"18000\"; verb = \"send\"; } );\n"
				     "stages = ( { name = \"t\"; kind = \"rdma_tx\"; flow = \"bw\"; lcore = 1; },\n"
				     "           { name = \"r\"; kind = \"rdma_rx\"; flow = \"bw\"; lcore = 1; },\n"
				     "           { name = \"m\"; kind = \"rdma_rx\"; flow = \"mine\"; lcore = 2; } );\n"
				     "pattern = { kind = \"ring\"; flows = [\"bw\"]; };\n";
	assert_int_equal(try_load(two_host, &c, &err), -1);
	assert_non_null(strstr(err.c_str(), "flows.[1].listen: flow 'mine' goes between two hosts, and every rank of a job would run it"));
}

/* One rank's results file as rank 0 receives it: flows with their rates and results. */
struct FlowIn {
	std::string name;
	double rate;
	bool pass;
	double p50 = -1;
	std::string failure = "";
};
std::string rank_doc(const char *role, const std::vector<FlowIn> &flows)
{
	json d;
	d["run"] = {{"mode", "rate"}, {"role", role}, {"result", "PASS"}};
	d["flows"] = json::array();
	for (const FlowIn &f : flows) {
		json o = {{"name", f.name}, {"messages_sent", 100}, {"messages_completed", 100}, {"messages_verified", 100},
			  {"message_rate", f.rate}, {"gbit_per_s", 0.1}, {"failed_qps", 0}, {"completion_errors", json::object()},
			  {"result", f.pass ? "PASS" : "FAIL"}};
		if (f.p50 >= 0)
			o["latency_us"] = {{"p50", f.p50}, {"p99", f.p50 * 2}};
		if (!f.failure.empty())
			o["failure"] = f.failure;
		d["flows"].push_back(o);
		if (!f.pass)
			d["run"]["result"] = "FAIL";
	}
	return d.dump();
}

rp::JobRank reported(uint32_t r, int exit, std::string doc)
{
	rp::JobRank j;
	j.info.host = "h" + std::to_string(r);
	j.info.device = "d";
	j.info.addr = "10.0.0." + std::to_string(r + 1);
	j.reported = true;
	j.exit = exit;
	j.steps = {std::move(doc)};
	return j;
}

/* Ring of 4: a slow pair flagged, a failed pair named with its rank and reason, a rank
 * that sent nothing named; the job fails, its JSON and CSV say the same. */
void one_report_for_the_job(void **)
{
	rp::PipelineConf c;
	load(with_pattern("kind = \"ring\"; flows = [\"bw\"]; bw_flag = 0.8;"), &c);
	std::vector<rp::JobRank> ranks = {
		reported(0, 0, rank_doc("client+server", {{"bw_0to1", 1000, true}, {"bw_3to0", 0, true}})),
		reported(1, 0, rank_doc("client+server", {{"bw_1to2", 700, true}, {"bw_0to1", 0, true}})),
		reported(2, 1, rank_doc("client+server", {{"bw_2to3", 950, false, -1, "completion errors"}, {"bw_1to2", 0, true}})),
		rp::JobRank{},
	};
	ranks[3].info.host = "h3";
	ranks[3].error = "sent no results within 60 s";
	const rp::JobReport rep = rp::job_report(c, ranks, {""});
	assert_false(rep.pass);
	assert_int_equal(rep.flagged, 1);
	const json j = json::parse(rep.json);
	assert_string_equal(j["job"]["result"].get<std::string>().c_str(), "FAIL");
	assert_int_equal(j["pairs"].size(), 4);
	const json &p01 = j["pairs"][0], &p12 = j["pairs"][1], &p23 = j["pairs"][2], &p30 = j["pairs"][3];
	assert_string_equal(p01["result"].get<std::string>().c_str(), "PASS");
	assert_true(p01["flags"].empty());
	assert_string_equal(p12["result"].get<std::string>().c_str(), "PASS");
	assert_string_equal(p12["flags"][0].get<std::string>().c_str(), "rate");   // 700 < 0.8 x 1000
	assert_string_equal(p23["reason"].get<std::string>().c_str(), "rank 2 (sender) failed it: completion errors");
	assert_true(p23["flags"].empty());   // a failed pair is not compared
	assert_non_null(strstr(p30["reason"].get<std::string>().c_str(), "rank 3 (sender) sent no results: sent no results within 60 s"));
	assert_false(j["ranks"][3]["reported"].get<bool>());
	assert_non_null(strstr(rep.table.c_str(), "  3     h3"));
	assert_non_null(strstr(rep.table.c_str(), "NO RESULTS"));
	assert_non_null(strstr(rep.table.c_str(), "FLAGGED: rate"));
	assert_non_null(strstr(rep.table.c_str(), "job result: FAIL\n"));
	assert_non_null(strstr(rep.csv.c_str(), ",bw,1,2,4096,100,100,100,700.0,"));
	assert_non_null(strstr(rep.csv.c_str(), ",FAIL,,\n"));
	assert_non_null(strstr(rep.csv.c_str(), ",PASS,rate,not re-run\n"));   // pattern.confirm on, no re-run given
}

/* Rank r's results of the rounds: its flows in the rounds it took part in, "" where idle. */
rp::JobRank alone_rank(uint32_t r, std::vector<std::string> rounds)
{
	rp::JobRank j = reported(r, 0, "");
	j.steps = std::move(rounds);
	return j;
}

/* ClusterKit's confirmation: the flagged pairs (in the table's order, at most
 * pattern.confirm) re-run alone against the loaded run's best pair: bad alone, slow
 * only under load, or failed alone; those past the bound not re-run. */
void flagged_pairs_confirmed_alone(void **)
{
	rp::PipelineConf c;
	load(with_pattern("kind = \"ring\"; flows = [\"bw\"]; bw_flag = 0.8; confirm = 2;"), &c);
	assert_int_equal(c.pattern.confirm, 2);
	std::vector<rp::JobRank> ranks = {
		reported(0, 0, rank_doc("client+server", {{"bw_0to1", 700, true}, {"bw_3to0", 0, true}})),
		reported(1, 0, rank_doc("client+server", {{"bw_1to2", 600, true}, {"bw_0to1", 0, true}})),
		reported(2, 0, rank_doc("client+server", {{"bw_2to3", 1000, true}, {"bw_1to2", 0, true}})),
		reported(3, 0, rank_doc("client+server", {{"bw_3to0", 500, true}, {"bw_2to3", 0, true}})),
	};
	rp::JobAlone alone;
	alone.rounds = rp::job_to_confirm(c, ranks);   // 0->1, 1->2 and 3->0 flagged; the first two re-run
	assert_int_equal(alone.rounds.size(), 2);
	std::string err;
	std::vector<rp::JobConfirm> back;
	assert_int_equal(rp::confirm_parse(rp::confirm_text(alone.rounds), &back, &err), 0);
	assert_int_equal(back.size(), 2);
	assert_string_equal(back[1].jf.name.c_str(), "bw_1to2");
	assert_int_equal(back[1].jf.pair.from, 1);
	assert_int_equal(back[1].jf.pair.to, 2);
	assert_int_equal(rp::confirm_parse("[[0, 7]]", &back, &err), -1);
	/* Alone, 0->1 does 950 (within 0.8 x the loaded best, 1000): slow only under load;
	 * 1->2 still 650: bad alone. */
	alone.ranks = {alone_rank(0, {rank_doc("client", {{"bw_0to1", 950, true}}), ""}),
		       alone_rank(1, {rank_doc("server", {{"bw_0to1", 0, true}}), rank_doc("client", {{"bw_1to2", 650, true}})}),
		       alone_rank(2, {"", rank_doc("server", {{"bw_1to2", 0, true}})}), alone_rank(3, {"", ""})};
	rp::JobReport rep = rp::job_report(c, ranks, {""}, alone);
	assert_true(rep.pass);   // flags and their confirmation do not fail a job
	assert_int_equal(rep.flagged, 3);
	assert_int_equal(rep.bad_alone, 1);
	assert_int_equal(rep.load_only, 1);
	json j = json::parse(rep.json);
	assert_int_equal(j["job"]["confirm"].get<int>(), 2);
	assert_int_equal(j["job"]["bad_alone"].get<int>(), 1);
	assert_int_equal(j["job"]["slow_only_under_load"].get<int>(), 1);
	const json &p01 = j["pairs"][0], &p12 = j["pairs"][1], &p23 = j["pairs"][2], &p30 = j["pairs"][3];
	assert_string_equal(p01["confirmed"].get<std::string>().c_str(), "slow only under load");
	assert_true(p01["alone"]["message_rate"].get<double>() == 950);
	assert_true(p01["alone"]["flags"].empty());
	assert_string_equal(p12["confirmed"].get<std::string>().c_str(), "bad alone");
	assert_string_equal(p12["alone"]["flags"][0].get<std::string>().c_str(), "rate");
	assert_false(p23.contains("confirmed"));   // not flagged
	assert_string_equal(p30["confirmed"].get<std::string>().c_str(), "not re-run");   // past pattern.confirm
	assert_false(p30.contains("alone"));
	assert_non_null(strstr(rep.table.c_str(), "FLAGGED: rate -> slow only under load (alone: 950.0 msg/s, p50 - us)"));
	assert_non_null(strstr(rep.table.c_str(), "FLAGGED: rate -> bad alone (alone: 650.0 msg/s, p50 - us)"));
	assert_non_null(strstr(rep.table.c_str(), "re-run alone (at most pattern.confirm = 2): 2, 1 bad alone, 1 slow only under load"));
	assert_non_null(strstr(rep.csv.c_str(), ",bw,0,1,4096,100,100,100,700.0,0.100000,0.000,0.000,0,0,PASS,rate,slow only under load\n"));
	assert_non_null(strstr(rep.csv.c_str(), ",PASS,rate,bad alone\n"));

	/* A re-run that fails says so, naming the rank. */
	alone.ranks[1].steps[1] = rank_doc("client", {{"bw_1to2", 0, false, -1, "gave up: no progress"}});
	rep = rp::job_report(c, ranks, {""}, alone);
	j = json::parse(rep.json);
	assert_string_equal(j["pairs"][1]["confirmed"].get<std::string>().c_str(), "failed alone");
	assert_string_equal(j["pairs"][1]["alone"]["reason"].get<std::string>().c_str(), "rank 1 (sender) failed it: gave up: no progress");
	assert_true(rep.pass);

	/* confirm = 0 (or false; true is the default bound): nothing re-run, nothing said. */
	load(with_pattern("kind = \"ring\"; flows = [\"bw\"]; confirm = true;"), &c);
	assert_int_equal(c.pattern.confirm, 8);
	load(with_pattern("kind = \"ring\"; flows = [\"bw\"]; confirm = false;"), &c);
	assert_int_equal(c.pattern.confirm, 0);
	assert_true(rp::job_to_confirm(c, ranks).empty());
	rep = rp::job_report(c, ranks, {""});
	j = json::parse(rep.json);
	assert_int_equal(rep.flagged, 3);
	for (const json &p : j["pairs"])
		assert_false(p.contains("confirmed"));
	assert_null(strstr(rep.table.c_str(), "re-run alone"));
}

/* Ping-pongs between pairs of ranks, flagged on latency only. */
const char *const kPingPongPairs = "version = 1;\n"
				   "devices = ( { name = \"d\"; } );\n"
				   "flows = ( { name = \"pp\"; verb = \"send\"; messages = 10; } );\n"
				   "stages = ( { name = \"t\"; kind = \"rdma_tx\"; flow = \"pp\"; lcore = 1; },\n"
				   "           { name = \"e\"; kind = \"echo\"; flow = \"pp\"; lcore = 1; } );\n"
				   "pattern = { kind = \"pairs\"; lat_flag = 2.0; bw_flag = 0.0; };\n";

/* A ping-pong flagged on latency is judged alone against the loaded run's best median:
 * better alone is not enough, it must be within lat_flag of that. */
void latency_confirmed_against_the_loaded_best(void **)
{
	rp::PipelineConf c;
	load(kPingPongPairs, &c);
	const std::vector<rp::JobRank> ranks = {
		reported(0, 0, rank_doc("client+server", {{"pp_0to1", 50, true, 10}, {"pp_1to0", 0, true}})),
		reported(1, 0, rank_doc("client+server", {{"pp_1to0", 50, true, 40}, {"pp_0to1", 0, true}})),
	};
	rp::JobAlone alone;
	alone.rounds = rp::job_to_confirm(c, ranks);
	assert_int_equal(alone.rounds.size(), 1);
	assert_string_equal(alone.rounds[0].jf.name.c_str(), "pp_1to0");
	for (double p50 : {25.0, 15.0}) {   // 25 > 2 x 10 (though under the loaded 40); 15 within
		alone.ranks = {alone_rank(0, {rank_doc("server", {{"pp_1to0", 0, true}})}),
			       alone_rank(1, {rank_doc("client", {{"pp_1to0", 50, true, p50}})})};
		const json j = json::parse(rp::job_report(c, ranks, {""}, alone).json);
		assert_string_equal(j["pairs"][1]["confirmed"].get<std::string>().c_str(),
				    p50 > 20 ? "bad alone" : "slow only under load");
		assert_true(j["pairs"][1]["alone"]["latency_us"]["p50"].get<double>() == p50);
	}
}

/* Ping-pong pairs are compared on latency too; rate pairs never are. */
void latency_flags_ping_pongs_only(void **)
{
	rp::PipelineConf c;
	load(kPingPongPairs, &c);
	std::vector<rp::JobRank> ranks = {
		reported(0, 0, rank_doc("client+server", {{"pp_0to1", 50, true, 10}, {"pp_1to0", 0, true}})),
		reported(1, 0, rank_doc("client+server", {{"pp_1to0", 50, true, 25}, {"pp_0to1", 0, true}})),
	};
	rp::JobReport rep = rp::job_report(c, ranks, {""});
	assert_true(rep.pass);
	assert_int_equal(rep.flagged, 1);
	json j = json::parse(rep.json);
	assert_true(j["pairs"][0]["flags"].empty());
	assert_string_equal(j["pairs"][1]["flags"][0].get<std::string>().c_str(), "latency");   // 25 > 2 x 10

	load(with_pattern("kind = \"pairs\"; flows = [\"bw\"];"), &c);   // rate flows: same latencies, no flag
	ranks = {reported(0, 0, rank_doc("client+server", {{"bw_0to1", 50, true, 10}, {"bw_1to0", 0, true}})),
		 reported(1, 0, rank_doc("client+server", {{"bw_1to0", 50, true, 25}, {"bw_0to1", 0, true}}))};
	rep = rp::job_report(c, ranks, {""});
	assert_int_equal(rep.flagged, 0);
}

void rank_words_round_trip(void **)
{
	rp::RankInfo a;
	a.host = "node7";
	a.device = "mlx5_3";
	a.addr = "192.0.2.7";
	a.local = 3;
	a.port = 18600;
	rp::RankInfo b;
	std::string err;
	assert_int_equal(rp::rank_info_parse(rp::rank_info_text(a), &b, &err), 0);
	assert_string_equal(b.host.c_str(), "node7");
	assert_string_equal(b.addr.c_str(), "192.0.2.7");
	assert_int_equal(b.local, 3);
	assert_int_equal(b.port, 18600);
	assert_int_equal(rp::rank_info_parse("{\"host\": 7}", &b, &err), -1);
	assert_int_equal(rp::rank_info_parse("\xff garbage", &b, &err), -1);
	rp::JobRank r;
	assert_int_equal(rp::rank_results_parse(rp::rank_results_text(3, "no device", {"{}", "{}"}), &r, &err), 0);
	assert_int_equal(r.exit, 3);
	assert_int_equal(r.steps.size(), 2);
	assert_true(r.reported);
	assert_int_equal(rp::rank_results_parse("[]", &r, &err), -1);
}

} // namespace

int main()
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(patterns_join_their_pairs),
		cmocka_unit_test(patterns_refuse_jobs_they_do_not_fit),
		cmocka_unit_test(a_rank_runs_its_ends),
		cmocka_unit_test(listen_ports_never_collide),
		cmocka_unit_test(loader_refuses_two_devices_for_one_rank),
		cmocka_unit_test(one_report_for_the_job),
		cmocka_unit_test(latency_flags_ping_pongs_only),
		cmocka_unit_test(flagged_pairs_confirmed_alone),
		cmocka_unit_test(latency_confirmed_against_the_loaded_best),
		cmocka_unit_test(one_pair_alone),
		cmocka_unit_test(rank_words_round_trip),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
