/* Size sweeps: one pipeline per step of the flows' size lists. */
#include "pipeline/graph_internal.h"

namespace rp {

std::string graph_step_name(const PipelineConf &c, const PipelineConf &step)
{
	std::string n;
	for (size_t i = 0; i < c.flows.size(); i++)
		if (c.flows[i].sizes.size() > 1)
			n += (n.empty() ? "" : "+") + std::to_string(step.flows[i].sizes[0]) + "B";
	return n;
}

int graph_sweep(const PipelineConf &c, std::vector<PipelineConf> *steps, std::string *err)
{
	size_t n = 1;
	const FlowConf *first = nullptr;
	for (const FlowConf &f : c.flows) {
		if (f.sizes.size() <= 1)
			continue;
		if (first && f.sizes.size() != n) {
			*err = at(c, f.line, "flows.[" + std::to_string(&f - c.flows.data()) + "].sizes") + std::to_string(f.sizes.size()) +
			       " sizes, flow '" + first->name + "' has " + std::to_string(n) +
			       ": the flows' size lists are swept in step (give lists of one length, or one size)";
			return -1;
		}
		n = f.sizes.size();
		first = &f;
	}
	steps->assign(n, c);
	for (size_t k = 0; k < n; k++)
		for (FlowConf &f : (*steps)[k].flows)
			if (f.sizes.size() > 1)
				f.sizes = {f.sizes[k]};
	return 0;
}

} // namespace rp
