/* A build without MPI (meson -Dmpi=disabled, or no Open MPI found): pattern runs are
 * refused before anything starts (job_supported), the rest never gets called. */
#include "cluster/job.h"

#include <cstdlib>

namespace rp {

bool job_supported()
{
	return false;
}

int job_init(int *, char ***, Job *, std::string *err)
{
	*err = "this rdmapipe was built without MPI (meson setup -Dmpi=enabled, with libopenmpi-dev)";
	return -1;
}

int job_allgather(const Job &, const std::string &, std::vector<std::string> *, double, std::string *err,
		  const std::vector<uint32_t> &)
{
	*err = "no MPI in this build";
	return -1;
}

int job_gather(const Job &, const std::string &, const std::vector<bool> &, std::vector<std::string> *,
	       std::vector<uint32_t> *, double)
{
	return -1;
}

int job_bcast(const Job &, int *, double, std::string *err)
{
	*err = "no MPI in this build";
	return -1;
}

int job_bcast_text(const Job &, std::string *, double, std::string *err)
{
	*err = "no MPI in this build";
	return -1;
}

void job_abort(const Job &, int code)
{
	exit(code);
}

void job_finalize(Job *j)
{
	j->on = false;
}

} // namespace rp
