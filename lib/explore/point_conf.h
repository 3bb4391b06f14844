/* A point of the space as a pipeline file: the base pipeline (the space's, or one
 * loopback flow) with the fixed settings and the point's values applied, written where
 * the child rdmapipe reads it and validated first by the one reader and validator
 * (config_load: conf_validate). */
#pragma once

#include "conf/config.h"
#include "explore/explore.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace libconfig {
class Config;
}

namespace rp::explore {

/* Every setting of point p as PointConf::make applies them: the space's fixed ones, then
 * p's dimensions, with the structure first (flows, then placement and device), so that
 * copies of flows carry every setting that follows. */
std::vector<std::pair<std::string, std::string>> point_settings(const Space &s, const Point &p);

class PointConf {
public:
	PointConf();
	~PointConf();
	/* The base pipeline: s.pipeline (relative to the space file's folder), else a
	 * loopback flow from a requester on lcore tx to a responder on rx. */
	int init(const Space &s, const LcoreSet &lcores, unsigned tx, unsigned rx, std::string *err);
	/* Writes p's pipeline to conf_path (its results to results_path) and validates it,
	 * into *out when given (its flows as the engine will run them). Returns 0, or -1
	 * with *why (the validator's refusal: an invalid point). */
	int make(const Point &p, const std::string &conf_path, const std::string &results_path, std::string *why,
		 PipelineConf *out = nullptr);

private:
	int apply(libconfig::Config &cfg, const std::string &setting, const std::string &value, std::string *why);
	const Space *space_ = nullptr;
	LcoreSet lcores_;
	std::string base_text_;
};

} // namespace rp::explore
