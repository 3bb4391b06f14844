#include "cluster/job.h"

#include <mpi.h>

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace rp {

namespace {

constexpr int kTagInfo = 101, kTagLen = 102, kTagData = 103;
constexpr size_t kInfoMax = 4096;

double now_s()
{
	timespec t{};
	clock_gettime(CLOCK_MONOTONIC, &t);
	return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

std::string rank_list(const std::vector<uint32_t> &v)
{
	std::string s;
	for (uint32_t r : v)
		s += (s.empty() ? "" : ", ") + std::to_string(r);
	return s;
}

/* Tests the requests until all completed or the deadline passed (sleeping 1 ms between
 * rounds: this is setup, not the data path); done[i] says which completed. */
bool wait_all(std::vector<MPI_Request> *reqs, std::vector<bool> *done, double deadline)
{
	for (;;) {
		bool all = true;
		for (size_t i = 0; i < reqs->size(); i++) {
			if ((*done)[i])
				continue;
			int flag = 0;
			MPI_Test(&(*reqs)[i], &flag, MPI_STATUS_IGNORE);
			(*done)[i] = flag != 0;
			all &= (*done)[i];
		}
		if (all)
			return true;
		if (now_s() > deadline)
			return false;
		usleep(1000);
	}
}

/* A receive that will not be waited for: cancelled, and completed (a cancelled receive
 * completes at once), so that nothing lands in its buffer afterwards. */
void cancel(MPI_Request *r)
{
	if (*r == MPI_REQUEST_NULL)
		return;
	MPI_Cancel(r);
	MPI_Wait(r, MPI_STATUS_IGNORE);
}

} // namespace

bool job_supported()
{
	return true;
}

int job_init(int *argc, char ***argv, Job *j, std::string *err)
{
	if (MPI_Init(argc, argv) != MPI_SUCCESS) {
		*err = "MPI_Init failed";
		return -1;
	}
	j->on = true;
	int rank = 0, size = 1, local = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm host;
	if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host) == MPI_SUCCESS) {
		MPI_Comm_rank(host, &local);
		MPI_Comm_free(&host);
	}
	char name[MPI_MAX_PROCESSOR_NAME] = {};
	int len = 0;
	MPI_Get_processor_name(name, &len);
	j->rank = static_cast<uint32_t>(rank);
	j->size = static_cast<uint32_t>(size);
	j->local = static_cast<uint32_t>(local);
	j->host.assign(name, static_cast<size_t>(len));
	(void)err;
	return 0;
}

int job_allgather(const Job &j, const std::string &mine, std::vector<std::string> *all, double timeout_s,
		  std::string *err, const std::vector<uint32_t> &members)
{
	if (mine.size() >= kInfoMax) {
		*err = "a rank's setup words exceed " + std::to_string(kInfoMax) + " bytes";
		return -1;
	}
	std::vector<uint32_t> peers;
	for (uint32_t r = 0; r < j.size; r++)
		if (r != j.rank && (members.empty() || std::find(members.begin(), members.end(), r) != members.end()))
			peers.push_back(r);
	std::vector<std::vector<char>> in(j.size, std::vector<char>(kInfoMax, 0));
	std::vector<MPI_Request> reqs;
	std::vector<uint32_t> from;   // reqs[i] receives from rank from[i] (sends: UINT32_MAX)
	for (uint32_t r : peers) {
		reqs.emplace_back();
		from.push_back(r);
		MPI_Irecv(in[r].data(), static_cast<int>(kInfoMax), MPI_CHAR, static_cast<int>(r), kTagInfo, MPI_COMM_WORLD,
			  &reqs.back());
	}
	std::vector<char> out(kInfoMax, 0);
	memcpy(out.data(), mine.data(), mine.size());
	for (uint32_t r : peers) {
		reqs.emplace_back();
		from.push_back(UINT32_MAX);
		MPI_Isend(out.data(), static_cast<int>(kInfoMax), MPI_CHAR, static_cast<int>(r), kTagInfo, MPI_COMM_WORLD,
			  &reqs.back());
	}
	std::vector<bool> done(reqs.size(), false);
	if (!wait_all(&reqs, &done, now_s() + timeout_s)) {
		std::vector<uint32_t> late;
		for (size_t i = 0; i < reqs.size(); i++)
			if (!done[i] && from[i] != UINT32_MAX) {
				late.push_back(from[i]);
				cancel(&reqs[i]);
			}
		*err = late.empty() ? "the other ranks did not take this rank's words within " + std::to_string(static_cast<int>(timeout_s)) + " s"
				    : "no word from rank(s) " + rank_list(late) + " within " + std::to_string(static_cast<int>(timeout_s)) +
					      " s (pattern.timeout): they did not start, failed, or hang";
		return -1;
	}
	all->assign(j.size, std::string());
	(*all)[j.rank] = mine;
	for (uint32_t r : peers)
		(*all)[r] = std::string(in[r].data(), strnlen(in[r].data(), kInfoMax));
	return 0;
}

namespace {

/* Rank 0's side of job_gather: each rank's length, then its bytes. */
void gather_at_root(const Job &j, const std::vector<bool> &ran, std::vector<std::string> *all,
		    std::vector<uint32_t> *missing, double timeout_s)
{
	const uint32_t n = j.size;
	std::vector<uint64_t> lens(n, 0);
	std::vector<MPI_Request> len_reqs(n, MPI_REQUEST_NULL), data_reqs(n, MPI_REQUEST_NULL);
	std::vector<std::vector<char>> bufs(n);
	std::vector<int> state(n, 0);   // 0: length posted, 1: data posted, 2: in
	state[0] = 2;
	for (uint32_t r = 1; r < n; r++)
		MPI_Irecv(&lens[r], 1, MPI_UINT64_T, static_cast<int>(r), kTagLen, MPI_COMM_WORLD, &len_reqs[r]);
	double deadline = ran[0] ? now_s() + timeout_s : HUGE_VAL;
	for (;;) {
		bool all_in = true;
		for (uint32_t r = 1; r < n; r++) {
			int flag = 0;
			if (state[r] == 0 && (MPI_Test(&len_reqs[r], &flag, MPI_STATUS_IGNORE), flag)) {
				bufs[r].resize(lens[r] ? lens[r] : 1);
				MPI_Irecv(bufs[r].data(), static_cast<int>(lens[r]), MPI_CHAR, static_cast<int>(r), kTagData,
					  MPI_COMM_WORLD, &data_reqs[r]);
				state[r] = 1;
			}
			if (state[r] == 1 && (MPI_Test(&data_reqs[r], &flag, MPI_STATUS_IGNORE), flag)) {
				(*all)[r].assign(bufs[r].data(), lens[r]);
				state[r] = 2;
				if (ran[r])   // a rank that ran ended: the others get timeout_s more
					deadline = now_s() + timeout_s;
			}
			all_in &= state[r] == 2;
		}
		if (all_in || now_s() > deadline)
			break;
		usleep(1000);
	}
	for (uint32_t r = 1; r < n; r++)
		if (state[r] != 2) {   // no receive stays posted into buffers about to go
			missing->push_back(r);
			cancel(state[r] == 0 ? &len_reqs[r] : &data_reqs[r]);
		}
}

} // namespace

int job_gather(const Job &j, const std::string &mine, const std::vector<bool> &ran, std::vector<std::string> *all,
	       std::vector<uint32_t> *missing, double timeout_s)
{
	missing->clear();
	if (j.rank != 0) {
		uint64_t len = mine.size();
		std::vector<MPI_Request> reqs(2);
		MPI_Isend(&len, 1, MPI_UINT64_T, 0, kTagLen, MPI_COMM_WORLD, &reqs[0]);
		MPI_Isend(mine.data(), static_cast<int>(mine.size()), MPI_CHAR, 0, kTagData, MPI_COMM_WORLD, &reqs[1]);
		std::vector<bool> done(2, false);
		wait_all(&reqs, &done, HUGE_VAL);
		return 0;
	}
	all->assign(j.size, std::string());
	(*all)[0] = mine;
	gather_at_root(j, ran, all, missing, timeout_s);
	return 0;
}

int job_bcast(const Job &j, int *value, double timeout_s, std::string *err)
{
	std::vector<MPI_Request> req(1);
	MPI_Ibcast(value, 1, MPI_INT, 0, MPI_COMM_WORLD, &req[0]);
	std::vector<bool> done(1, false);
	if (!wait_all(&req, &done, j.rank == 0 ? now_s() + timeout_s : HUGE_VAL)) {
		*err = "the ranks did not take the job's end within " + std::to_string(static_cast<int>(timeout_s)) + " s";
		return -1;
	}
	return 0;
}

int job_bcast_text(const Job &j, std::string *text, double timeout_s, std::string *err)
{
	uint64_t len = text->size();
	std::vector<MPI_Request> req(1);
	std::vector<bool> done(1, false);
	const double deadline = j.rank == 0 ? now_s() + timeout_s : HUGE_VAL;
	MPI_Ibcast(&len, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD, &req[0]);
	if (wait_all(&req, &done, deadline)) {
		text->resize(len);
		done[0] = false;
		MPI_Ibcast(text->data(), static_cast<int>(len), MPI_CHAR, 0, MPI_COMM_WORLD, &req[0]);
		if (wait_all(&req, &done, deadline))
			return 0;
	}
	*err = "the ranks did not take rank 0's words within " + std::to_string(static_cast<int>(timeout_s)) + " s";
	return -1;
}

void job_abort(const Job &j, int code)
{
	(void)j;
	MPI_Abort(MPI_COMM_WORLD, code);
	_exit(code);   // MPI_Abort does not return; if it did, this rank still ends
}

void job_finalize(Job *j)
{
	if (j->on)
		MPI_Finalize();
	j->on = false;
}

} // namespace rp
