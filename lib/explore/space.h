/* Space files (docs/explore.md, conf/explore-default.conf): libconfig, read and
 * checked whole before anything runs, every refusal "FILE:LINE: PATH: what". */
#pragma once

#include "explore/explore.h"

#include <string>
#include <vector>

namespace rp::explore {

inline constexpr int kSpaceVersion = 1;

/* The settings a dimension (or a fixed setting) may name besides a flow's or an io
 * context's keys: "device" (one device, or "A>B": the requester's lcore on A, the
 * responder's on B), "flows" (how many copies of the pipeline's first flow) and
 * "placement" ("same": every flow's requester on one lcore; "crossing": every other
 * flow runs the other way). */
const std::vector<std::string> &special_settings();

/* A setting whose values above 0 slow a run on purpose (rate): a point with one has no
 * fair performance reference, and no neighbour across it is one. */
inline bool setting_paces(const std::string &setting)
{
	return setting == "rate";
}

/* The settings the bare-verbs reference is measured for (search.bare_reference): what
 * the verbs themselves do and where (the other settings are the engine's choices, at
 * their simplest in the grid). A grid of more points than kMaxBarePoints is refused. */
inline bool setting_bare_key(const std::string &setting)
{
	return setting == "verb" || setting == "transport" || setting == "size" || setting == "device";
}
inline constexpr uint64_t kMaxBarePoints = 256;

/* Reads and checks `path` into *s. Returns 0, or -1 with *err. */
int space_load(const std::string &path, Space *s, std::string *err);

/* "10m", "90s", "2h" (wall time) or "200" (points) into *s's budget. */
bool parse_budget(const std::string &text, SearchConf *s);

bool strategy_from_name(const std::string &name, Strategy *s);

} // namespace rp::explore
