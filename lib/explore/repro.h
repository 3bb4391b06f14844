/* Standalone reproducers (issue 49): a point's pipeline, as config_load resolved it (its
 * flows as the engine runs them, every default filled in by lib/conf), made into the
 * #defines that lib/explore/repro_template.c reads, so that repro.c = defines + template
 * does the point's traffic on plain libibverbs, never linking rdmapipe. Plain data code:
 * what the C program cannot model is refused, named, never ignored. */
#pragma once

#include "conf/config.h"
#include "explore/explore.h"

#include <string>
#include <utility>
#include <vector>

namespace rp::explore {

using Settings = std::vector<std::pair<std::string, std::string>>;   // point_settings (point_conf.h)

/* One point's struct params initializer ("{ .name = \"point\", .verb = V_SEND, ... }")
 * from c, the pipeline the point made of the default base and `set` (the settings it was
 * made from: each must be one the template models); or "" with *refused = "SETTING =
 * VALUE (why)". */
std::string repro_params(const PipelineConf &c, const Settings &set, const char *name, std::string *refused);

/* The pipelines a finding's repro.c is made of: its minimal point's and, for a
 * performance finding, its reference's (nullptr: not measured). */
struct ReproConfs {
	const PipelineConf *point = nullptr;
	const PipelineConf *reference = nullptr;
};

/* What repro.c leaves out of c's traffic, said beside every verdict of it ("": nothing):
 * UC's software reliability is rdmapipe's own protocol over the verbs, so repro.c runs
 * the UC traffic beneath it (the same QPs, verbs, sizes and checks) and tells whether a
 * finding needs the layer. */
std::string repro_caveat(const PipelineConf &c);
/* ... of a finding's repro.c: its point's, else its reference's. */
std::string repro_caveat(const ReproConfs &confs);

/* repro.c's #define block for finding f (its kind, counter and reference), or "" with
 * *refused. */
std::string repro_defines(const Space &s, const Finding &f, const ReproConfs &confs, std::string *refused);

/* What a finding failed with, in the words repro.c's line begins with ("KIND: what"):
 * performance "slow", counters "counter"; correctness by the outcome of the run that
 * showed it: "hang" (hung: its status), "crash", else the engine's failure: "stall",
 * "completion" (an error status), "data" (a message's content, order or count), or ""
 * when the explorer cannot tell. */
std::string finding_failure(const Finding &f);

/* What one repro.c run showed: its exit status rc and last line; "" (nothing: rc 0),
 * "hang" (killed at point_timeout: 124, 137), "crash" (another signal), or its line's
 * KIND. */
std::string repro_failure(int rc, const std::string &line);

/* Whether what a repro.c run showed is the finding's failure: the same kind; a hang
 * and a stall are one (no progress, whoever's timer noticed it); a finding whose
 * failure the explorer cannot tell takes any correctness failure. */
bool repro_shows(const std::string &finding, const std::string &repro);

/* The template's text (embedded at build time), and repro.c's whole text. */
const char *repro_template();
std::string repro_source(const std::string &defines);

/* How a program of the template (NAME.c: repro.c, the bare grid's bare.c) is compiled
 * in its folder. */
inline std::string repro_build_command(const std::string &name = "repro")
{
	return "cc -std=c11 -O2 -Wall -Wextra -o " + name + " " + name + ".c -libverbs";
}

} // namespace rp::explore
