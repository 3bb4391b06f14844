/* A pattern file run by the N ranks of an MPI job (mpirun, srun): each rank finds its
 * device's address, the ranks exchange them (lib/cluster), each expands the pattern
 * into its own pipeline of two-host flows (conf/ranks) and runs it through the builder
 * like any other (graph_run), and rank 0 gathers every rank's results into one table
 * and one results file (control/job_report). docs/cluster.md. */
#pragma once

#include "conf/config.h"
#include "conf/options.h"

#include <string>

namespace rp {

/* When a launcher started this process: log lines name the rank ("rank 2: ..."), from
 * now on, EAL's included. Call first thing. */
void job_log_setup();

/* The job: called instead of starting EAL, for a validated pipeline with a pattern.
 * Returns the job's ExitCode, the same on every rank (mpirun exits with it). */
int run_job(int eal_argc, char **argv, const RunOptions &cli, const PipelineConf &c);

/* --check and the checks before a run: the pattern expanded for every rank of a job of
 * the smallest size it takes (its pairs known at launch), each rank's pipeline planned.
 * Returns 0, or -1 with *err; *ranks gets the size checked. */
int check_job(const PipelineConf &c, uint32_t *ranks, std::string *err);

} // namespace rp
