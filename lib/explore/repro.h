/* Standalone reproducers (issue 49): a point's settings made into the #defines that
 * lib/explore/repro_template.c reads, so that repro.c = defines + template does the
 * point's traffic on plain libibverbs, never linking rdmapipe. Plain data code: what
 * the C program cannot model is refused, named, never ignored. */
#pragma once

#include "explore/explore.h"

#include <map>
#include <string>

namespace rp::explore {

/* Every setting of a point: the space's fixed ones, then the point's dimensions. */
std::map<std::string, std::string> point_settings(const Space &s, const Point &p);

/* One point's struct params initializer ("{ \"point\", V_SEND, ... }"), or "" with
 * *refused = "SETTING (why)" for what the template does not model. */
std::string repro_params(const std::map<std::string, std::string> &set, const char *name, std::string *refused);

/* repro.c's #define block for finding f (its kind, counter and reference), or "" with
 * *refused. */
std::string repro_defines(const Space &s, const Finding &f, std::string *refused);

/* The perftest command that does the same traffic, or "" where perftest cannot say it. */
std::string perftest_command(const std::map<std::string, std::string> &set, double seconds);

/* The template's text (embedded at build time), and repro.c's whole text. */
const char *repro_template();
std::string repro_source(const std::string &defines);

/* How repro.c is compiled in its folder. */
inline const char *repro_build_command()
{
	return "cc -std=c11 -O2 -Wall -Wextra -o repro repro.c -libverbs";
}

} // namespace rp::explore
