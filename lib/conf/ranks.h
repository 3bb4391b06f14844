/* Traffic patterns over the ranks of a job (an MPI launch, docs/cluster.md): which
 * pairs of ranks a pattern joins, and the pipeline each rank runs for it. A pattern
 * flow of the file is a template: on each rank it becomes one client flow per pair the
 * rank sends on (its rdma_tx stage, peer = the receiver's address) and one server flow
 * per pair it receives on (its rdma_rx or echo stage, listening), so every pair runs
 * through the same builder as any two-host flow. Plain data: no MPI, no verbs, so the
 * unit tests and --check run it anywhere. */
#pragma once

#include "conf/config.h"

#include <cstdint>
#include <string>
#include <vector>

namespace rp {

/* What a rank tells every other one before any flow connects. */
struct RankInfo {
	std::string host;     // its host's name
	std::string device;   // the device it runs the pattern on
	std::string addr;     // that device's IPv4 address (its RoCE v2 GID), where it listens
	std::string gid;      // that GID (IPv6 text) and its index
	int gid_index = -1;
	uint32_t local = 0;   // its rank among the job's ranks on its host
	uint32_t port = 0;    // its first listen port (rank_port)
	std::string failed;   // non-empty: its setup failed, and why
};

/* One flow of the job: a pattern flow between two ranks. */
struct JobFlow {
	std::string name;   // job_flow_name
	std::string tmpl;   // the file's flow
	uint32_t index = 0; // the template's place among the pattern's flows
	RankPair pair;
};

/* The pattern's directed pairs over n ranks, senders in order, then receivers:
 * pairs i <-> i + n/2 (both ways, n even), ring i -> i+1, all_to_all every ordered
 * pair, incast every rank -> root, list as the file lists them. Returns 0, or -1 with
 * *err naming the setting (a rank or root beyond n, too few ranks). */
int pattern_pairs(const PipelineConf &c, uint32_t n, std::vector<RankPair> *out, std::string *err);

/* "bw_0to2": the template's name and the pair. */
std::string job_flow_name(const std::string &tmpl, RankPair p);

/* Every flow of the job, per template (the pattern's order) per pair. */
std::vector<JobFlow> job_flows(const PipelineConf &c, const std::vector<RankPair> &pairs);

/* The device a rank runs on: the pattern's devices by its rank on its host (round
 * robin), else the device of the file's io contexts. */
std::string rank_device(const PipelineConf &c, uint32_t local);

/* A rank's first listen port: pattern.port + local x (pattern flows x n), so the ranks
 * of one host never share one. Returns 0, or -1 with *err when past 65535. */
int rank_port(const PipelineConf &c, uint32_t n, uint32_t local, uint32_t *port, std::string *err);

/* The pipeline rank `me` of ranks.size() runs: the file's own flows and stages as
 * they are, each pattern flow as its client and server ends here, on the rank's
 * device. No results files (rank 0 writes the job's). A rank no pair names and with no
 * flow of its own gets no stages: it has nothing to run. Returns 0, or -1 with *err. */
int pattern_expand(const PipelineConf &c, uint32_t me, const std::vector<RankInfo> &ranks, PipelineConf *out,
		   std::string *err);

/* What rank `me` runs to re-run one pair of template tmpl alone (pattern.confirm): that
 * pair's end here and nothing else (not the file's own flows), so that every other
 * rank is idle. c is the step's pipeline (a size sweep's). No stages: the pair does not
 * name `me`. Returns 0, or -1 with *err. */
int pattern_expand_alone(const PipelineConf &c, uint32_t me, const std::vector<RankInfo> &ranks, const std::string &tmpl,
			 RankPair pair, PipelineConf *out, std::string *err);

} // namespace rp
