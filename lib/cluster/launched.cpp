#include "cluster/job.h"

#include <cstdlib>

namespace rp {

bool job_env_rank(uint32_t *rank)
{
	for (const char *v : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
		if (const char *s = getenv(v)) {
			*rank = static_cast<uint32_t>(strtoul(s, nullptr, 10));
			return true;
		}
	return false;
}

bool job_launched()
{
	uint32_t rank;
	return job_env_rank(&rank);
}

} // namespace rp
