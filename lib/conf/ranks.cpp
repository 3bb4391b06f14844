#include "conf/ranks.h"

#include <algorithm>
#include <set>

namespace rp {

namespace {

std::string at(const PipelineConf &c, const std::string &key)
{
	return c.file + ":" + std::to_string(c.pattern.line) + ": pattern." + key + ": ";
}

/* The pattern's flows in the file's order (pattern.flows names them). */
std::vector<const FlowConf *> templates(const PipelineConf &c)
{
	std::vector<const FlowConf *> t;
	for (const FlowConf &f : c.flows)
		if (c.pattern.has(f.name))
			t.push_back(&f);
	return t;
}

/* Where (s -> d) of template k listens: on d's address, at d's ports. */
std::string endpoint(const RankInfo &d, uint32_t k, uint32_t s, uint32_t n)
{
	return d.addr + ":" + std::to_string(d.port + k * n + s);
}

/* pool_0to2: the template's pool cloned for one pair, so that the file's sizing (one
 * flow's buffers in flight) holds for every pair. "" stays "" (sized by the builder). */
std::string clone_pool(const PipelineConf &c, const std::string &pool, RankPair p, PipelineConf *out)
{
	if (pool.empty())
		return pool;
	for (const PoolConf &pc : c.pools)
		if (pc.name == pool) {
			PoolConf x = pc;
			x.name = job_flow_name(pool, p);
			out->pools.push_back(x);
			return x.name;
		}
	return pool;
}

/* One end here of template f between pair p: the client's (sender) or the server's. */
void add_end(const PipelineConf &c, const FlowConf &f, uint32_t k, RankPair p, bool client,
	     const std::vector<RankInfo> &ranks, PipelineConf *out)
{
	const uint32_t n = static_cast<uint32_t>(ranks.size());
	FlowConf x = f;
	x.name = job_flow_name(f.name, p);
	x.pool = clone_pool(c, f.pool, p, out);
	x.src_rank = static_cast<int>(p.from);
	x.dst_rank = static_cast<int>(p.to);
	bool echo = false;
	for (const StageConf &st : c.stages)
		echo |= st.flow == f.name && st.kind->end == FlowEnd::echo;
	if (client) {
		x.peer = endpoint(ranks[p.to], k, p.from, n);
		x.local = ranks[p.from].addr;
		x.echoed = echo;
	} else {
		x.peer.clear();
		x.listen = endpoint(ranks[p.to], k, p.from, n);
	}
	out->flows.push_back(x);
	for (const StageConf &st : c.stages) {
		if (st.flow != f.name || (st.kind->end == FlowEnd::requester) != client)
			continue;
		StageConf y = st;
		y.name = job_flow_name(st.name, p);
		y.flow = x.name;
		out->stages.push_back(y);
	}
}

} // namespace

std::string job_flow_name(const std::string &tmpl, RankPair p)
{
	return tmpl + "_" + std::to_string(p.from) + "to" + std::to_string(p.to);
}

int pattern_pairs(const PipelineConf &c, uint32_t n, std::vector<RankPair> *out, std::string *err)
{
	const PatternConf &p = c.pattern;
	const char *kind = pattern_kind_name(p.kind);
	out->clear();
	if (n < 2) {
		*err = at(c, "kind") + "the pattern '" + kind + "' needs two ranks or more, the job has " + std::to_string(n) +
		       " (launch it with mpirun -np N)";
		return -1;
	}
	switch (p.kind) {
	case PatternKind::none:
		break;
	case PatternKind::pairs:
		if (n % 2) {
			*err = at(c, "kind") + "pairs joins rank i and i + N/2: it needs an even number of ranks, the job has " +
			       std::to_string(n);
			return -1;
		}
		for (uint32_t i = 0; i < n / 2; i++)
			out->push_back({i, i + n / 2});
		for (uint32_t i = 0; i < n / 2; i++)
			out->push_back({i + n / 2, i});
		break;
	case PatternKind::ring:
		for (uint32_t i = 0; i < n; i++)
			out->push_back({i, (i + 1) % n});
		break;
	case PatternKind::all_to_all:
		for (uint32_t i = 0; i < n; i++)
			for (uint32_t j = 0; j < n; j++)
				if (i != j)
					out->push_back({i, j});
		break;
	case PatternKind::incast:
		if (p.root >= n) {
			*err = at(c, "root") + "rank " + std::to_string(p.root) + " is not in the job (ranks 0.." + std::to_string(n - 1) + ")";
			return -1;
		}
		for (uint32_t i = 0; i < n; i++)
			if (i != p.root)
				out->push_back({i, p.root});
		break;
	case PatternKind::list:
		for (const RankPair &x : p.pairs)
			if (x.from >= n || x.to >= n) {
				*err = at(c, "pairs") + "[" + std::to_string(x.from) + ", " + std::to_string(x.to) + "] names rank " +
				       std::to_string(std::max(x.from, x.to)) + ", the job has ranks 0.." + std::to_string(n - 1);
				return -1;
			}
		*out = p.pairs;
		break;
	}
	return 0;
}

std::vector<JobFlow> job_flows(const PipelineConf &c, const std::vector<RankPair> &pairs)
{
	std::vector<JobFlow> v;
	const std::vector<const FlowConf *> t = templates(c);
	for (uint32_t k = 0; k < t.size(); k++)
		for (const RankPair &p : pairs)
			v.push_back({job_flow_name(t[k]->name, p), t[k]->name, k, p});
	return v;
}

std::string rank_device(const PipelineConf &c, uint32_t local)
{
	const std::vector<std::string> &d = c.pattern.devices;
	if (!d.empty())
		return d[local % d.size()];
	return c.io_contexts.empty() ? (c.devices.empty() ? "" : c.devices[0].name) : c.io_contexts[0].device;
}

int rank_port(const PipelineConf &c, uint32_t n, uint32_t local, uint32_t *port, std::string *err)
{
	const uint64_t per_rank = static_cast<uint64_t>(templates(c).size()) * n;
	const uint64_t first = c.pattern.port + local * per_rank;
	if (first + per_rank - 1 > 65535) {
		*err = at(c, "port") + "the ranks on one host need " + std::to_string(per_rank) + " ports each (pattern flows x ranks) from " +
		       std::to_string(c.pattern.port) + ": rank " + std::to_string(local) + " of its host would pass 65535; lower port";
		return -1;
	}
	*port = static_cast<uint32_t>(first);
	return 0;
}

int pattern_expand(const PipelineConf &c, uint32_t me, const std::vector<RankInfo> &ranks, PipelineConf *out,
		   std::string *err)
{
	std::vector<RankPair> pairs;
	if (pattern_pairs(c, static_cast<uint32_t>(ranks.size()), &pairs, err) != 0)
		return -1;
	PipelineConf x = c;
	x.flows.clear();
	x.stages.clear();
	for (const FlowConf &f : c.flows)
		if (!c.pattern.has(f.name))
			x.flows.push_back(f);
	for (const StageConf &st : c.stages)
		if (st.flow.empty() || !c.pattern.has(st.flow))
			x.stages.push_back(st);
	const std::vector<const FlowConf *> t = templates(c);
	for (uint32_t k = 0; k < t.size(); k++)
		for (const RankPair &p : pairs)
			if (p.from == me || p.to == me)
				add_end(c, *t[k], k, p, p.from == me, ranks, &x);
	if (x.flows.size() > 255) {
		*err = at(c, "kind") + "rank " + std::to_string(me) + " would run " + std::to_string(x.flows.size()) +
		       " flows; at most 255 (fewer ranks, or fewer pattern flows)";
		return -1;
	}
	/* Only the pools something still uses (the templates' are cloned per pair). */
	std::set<std::string> used;
	for (const FlowConf &f : x.flows)
		used.insert(f.pool);
	std::erase_if(x.pools, [&](const PoolConf &p) { return !used.count(p.name); });
	/* The rank's device for every io context (pattern.devices), declared once. */
	const std::string dev = ranks[me].device;
	if (!c.pattern.devices.empty()) {
		DeviceConf d = c.devices[0];
		for (const DeviceConf &e : c.devices)
			if (e.name == dev)
				d = e;
		d.name = dev;
		x.devices = {d};
		for (IoContextConf &io : x.io_contexts)
			io.device = dev;
	}
	x.pattern = PatternConf{};   // what this rank runs is plain two-host flows now
	x.run.json.clear();
	x.run.csv.clear();
	*out = std::move(x);
	return 0;
}

int pattern_expand_alone(const PipelineConf &c, uint32_t me, const std::vector<RankInfo> &ranks, const std::string &tmpl,
			 RankPair pair, PipelineConf *out, std::string *err)
{
	PipelineConf x;
	if (pattern_expand(c, me, ranks, &x, err) != 0)
		return -1;
	const std::string name = job_flow_name(tmpl, pair);
	std::erase_if(x.flows, [&](const FlowConf &f) { return f.name != name; });
	std::erase_if(x.stages, [&](const StageConf &st) { return st.flow != name; });
	std::set<std::string> used;
	for (const FlowConf &f : x.flows)
		used.insert(f.pool);
	std::erase_if(x.pools, [&](const PoolConf &p) { return !used.count(p.name); });
	*out = std::move(x);
	return 0;
}

} // namespace rp
