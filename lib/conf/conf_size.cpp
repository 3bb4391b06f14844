/* The one sizing step: what a pipeline leaves to be derived, derived once and the same
 * whoever made it (a file, the command line, a point of the explorer, a job's rank),
 * before the checks across its objects see it (conf_validate). */
#include "conf/config.h"

#include <algorithm>

namespace rp {

void conf_size(PipelineConf *c)
{
	for (PoolConf &p : c->pools) {
		if (p.count != 0)
			continue;
		/* Its flows' messages in flight (qps x (sq_depth + batch), what the check of a
		 * pool's count asks) and a burst's slack either side, as the builder's own. */
		uint64_t n = 1;
		uint32_t batch = 0;
		for (const FlowConf &f : c->flows)
			if (f.pool == p.name) {
				n += static_cast<uint64_t>(f.qps) * (f.sq_depth + f.batch) + 2ull * f.batch;
				batch = std::max(batch, f.batch);
			}
		p.count = static_cast<uint32_t>(std::min<uint64_t>(n, kMaxPool));
		p.cache = std::min<uint32_t>({2 * batch, p.count * 2 / 3, 512});
	}
}

} // namespace rp
