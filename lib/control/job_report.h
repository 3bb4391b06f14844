/* One result for a job of N ranks (docs/cluster.md): every rank's results reach rank
 * 0, which makes one table (per rank, per pair: rate, latency percentiles, errors), one
 * JSON document (docs/job-results.schema.json) and one CSV, and flags the pairs
 * whose rate is under pattern.bw_flag of the best pair's, or whose median latency is
 * over pattern.lat_flag times the best (ClusterKit's bad pairs), and says of each
 * flagged pair re-run alone whether it is bad alone or slow only under load. Also the words ranks
 * exchange on the way, as JSON. Plain data: no MPI here. */
#pragma once

#include "conf/config.h"
#include "conf/ranks.h"

#include <string>
#include <vector>

namespace rp {

/* What rank 0 knows of one rank at the end. */
struct JobRank {
	RankInfo info;
	bool reported = false;            // its results reached rank 0
	int exit = 0;                     // its exit status
	std::string error;                // why it has no results (or why it failed)
	std::vector<std::string> steps;   // its results file's JSON, per step of a size sweep
};

/* A flagged pair to re-run alone (pattern.confirm): its step and its flow. */
struct JobConfirm {
	size_t step = 0;
	JobFlow jf;
};

/* The re-runs: rounds[i] ran alone, every other rank idle; ranks[r].steps[i] is rank
 * r's results of round i ("" where it was idle). */
struct JobAlone {
	std::vector<JobConfirm> rounds;
	std::vector<JobRank> ranks;
};

struct JobReport {
	std::string table;   // for stdout
	std::string json;    // the job's results file
	std::string csv;     // a row per pair and step
	bool pass = false;   // every rank reported, every flow passed
	unsigned flagged = 0;   // pairs flagged
	unsigned bad_alone = 0, load_only = 0;   // flagged pairs, re-run alone: still out of tolerance, or not
};

/* The report of the job that ran c's pattern over ranks (in rank order); step_names
 * label the steps of a size sweep ("" for a single step). */
JobReport job_report(const PipelineConf &c, const std::vector<JobRank> &ranks, const std::vector<std::string> &step_names,
		     const JobAlone &alone = {});

/* The pairs the loaded run flagged, in the table's order: the first pattern.confirm of
 * them, to re-run alone. Their text (rank 0 sends it to every rank) and back: parsing
 * returns 0, or -1 with *err. */
std::vector<JobConfirm> job_to_confirm(const PipelineConf &c, const std::vector<JobRank> &ranks);
std::string confirm_text(const std::vector<JobConfirm> &v);
int confirm_parse(const std::string &text, std::vector<JobConfirm> *v, std::string *err);

/* A rank's setup words (RankInfo) and its results, as the text it sends; parsing
 * returns 0, or -1 with *err (bytes that are not what a rank sends). */
std::string rank_info_text(const RankInfo &r);
int rank_info_parse(const std::string &text, RankInfo *r, std::string *err);
std::string rank_results_text(int exit, const std::string &error, const std::vector<std::string> &steps);
int rank_results_parse(const std::string &text, JobRank *r, std::string *err);

/* The job's results file schema version (docs/job-results.schema.json). */
constexpr int kJobResultsSchema = 1;

} // namespace rp
