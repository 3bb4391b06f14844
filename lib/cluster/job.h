/* The job a launcher started (mpirun, or srun through Open MPI's PMI): this process's
 * rank, the job's size, its rank on its host, and the few collectives a pattern run
 * needs between its ranks, each wait bounded by rank 0 so that no rank hangs on one
 * that died or stopped answering (MPI_Init and MPI_Finalize aside: those are the
 * launcher's, whose own --timeout bounds them). MPI carries only these words of setup and results, never
 * data: the flows are rdma_cm connections (docs/cluster.md). Errors come back as -1
 * with *err; nothing here prints. */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rp {

struct Job {
	uint32_t rank = 0, size = 1;
	uint32_t local = 0;       // rank among the job's ranks on this host
	std::string host;
	bool on = false;          // MPI initialised (job_init)
};

/* Whether this build can join a job (built with MPI). */
bool job_supported();

/* Whether a launcher started this process: its environment names a rank (Open MPI's
 * OMPI_COMM_WORLD_RANK, PMIx's PMIX_RANK, Slurm's PMI_RANK). */
bool job_launched();
/* ... and which rank it named (before MPI_Init: log lines name their rank from the
 * start). Returns whether one was named. */
bool job_env_rank(uint32_t *rank);

/* MPI_Init and the job's shape. Returns 0, or -1 with *err. */
int job_init(int *argc, char ***argv, Job *j, std::string *err);

/* Every member's `mine` (at most 4 KiB) into (*all)[rank] (members: the ranks that
 * take part, this one among them; none: every rank), within timeout_s. Returns 0, or -1
 * with *err naming the ranks that did not answer in time: the caller then ends the job
 * (job_abort), as requests still posted would write into buffers gone. */
int job_allgather(const Job &j, const std::string &mine, std::vector<std::string> *all, double timeout_s,
		  std::string *err, const std::vector<uint32_t> &members = {});

/* Rank 0 gets every rank's `mine` into (*all)[rank] (its own included); *missing gets
 * the ranks that sent nothing before timeout_s passed with nothing from the ranks
 * that run something (ran[r]: the clock starts at once if ran[0], else at the first of
 * them, and starts again at each). The other ranks send and return once rank 0 took
 * it, however long that is: rank 0 bounds the job (and ends it with job_abort), and a
 * rank 0 that died takes the job with it. Returns 0. */
int job_gather(const Job &j, const std::string &mine, const std::vector<bool> &ran, std::vector<std::string> *all,
	       std::vector<uint32_t> *missing, double timeout_s);

/* Rank 0's *value to every rank. Rank 0 waits up to timeout_s for it to go out (-1 with
 * *err after that), the others until it comes (see job_gather). */
int job_bcast(const Job &j, int *value, double timeout_s, std::string *err);

/* Rank 0's *text to every rank, as job_bcast. */
int job_bcast_text(const Job &j, std::string *text, double timeout_s, std::string *err);

/* Ends every rank of the job at once (MPI_Abort), with status code. */
[[noreturn]] void job_abort(const Job &j, int code);

void job_finalize(Job *j);

} // namespace rp
