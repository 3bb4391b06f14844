/* The search's plain vocabulary: names, keys and texts of points. */
#include "explore/explore.h"

namespace rp::explore {

const char *strategy_name(Strategy s)
{
	switch (s) {
	case Strategy::anneal: return "anneal";
	case Strategy::random: return "random";
	case Strategy::grid: return "grid";
	}
	return "?";
}

const char *run_status_name(RunStatus s)
{
	switch (s) {
	case RunStatus::ran: return "ran";
	case RunStatus::invalid: return "invalid";
	case RunStatus::crashed: return "crashed";
	case RunStatus::hung: return "hung";
	case RunStatus::host_hung: return "host hung";
	}
	return "?";
}

const char *anomaly_kind_name(AnomalyKind k)
{
	switch (k) {
	case AnomalyKind::none: return "none";
	case AnomalyKind::correctness: return "correctness";
	case AnomalyKind::performance: return "performance";
	case AnomalyKind::counters: return "counters";
	}
	return "?";
}

std::string point_key(const Point &p)
{
	std::string k;
	for (size_t i = 0; i < p.size(); i++)
		k += (i ? "," : "") + std::to_string(p[i]);
	return k;
}

std::string point_text(const Space &s, const Point &p)
{
	std::string t;
	for (size_t i = 0; i < s.dims.size() && i < p.size(); i++)
		t += (i ? " " : "") + s.dims[i].name + "=" + s.dims[i].values[p[i]];
	return t;
}

Point simplest_point(const Space &s)
{
	Point p;
	for (const Dim &d : s.dims)
		p.push_back(d.simplest);
	return p;
}

} // namespace rp::explore
