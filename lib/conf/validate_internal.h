/* Private to the validator's files (validate.cpp, validate_io.cpp): where a refusal
 * points and how it is written, and what the checks share. */
#pragma once

#include "conf/check_order.h"
#include "conf/cli_pipeline.h"
#include "conf/config.h"
#include "conf/options_table.h"

#include <algorithm>
#include <string>
#include <vector>

namespace rp::check {

/* What a message points at: an object ("flows.[0]", "run") with the lines of its keys,
 * and its place in the order of checks. */
struct Where {
	std::string path;
	int line = 0;
	const KeyLines *keys = nullptr;
	int section = 0, index = 0;
};

template <typename T>
Where where(int section, const char *list, size_t i, const T &obj)
{
	return {std::string(list) + ".[" + std::to_string(i) + "]", obj.line, &obj.keys, section, static_cast<int>(i)};
}

/* Stops before the reader's first refusal (`limit`), or at its own first, written as
 * "FILE:LINE: PATH: message". */
class Errors {
public:
	Errors(const std::string &file, ConfPos limit, std::string *err) : file_(file), limit_(limit), err_(err) {}

	bool failed() const { return failed_; }

	/* Whether checks at this place come before the reader's refusal. */
	bool reach(int section, int index, int step) const { return ConfPos{section, index, step} < limit_; }
	bool reach(const Where &w, int step) const { return reach(w.section, w.index, step); }

	/* "FILE:LINE: PATH: what"; the command line's pipeline has no lines: "the command
	 * line's pipeline (--dump-conf prints it): PATH: what". */
	bool fail_at(int line, const std::string &path, const std::string &msg)
	{
		*err_ = file_ == kCliPipeline ? "the command line's pipeline (--dump-conf prints it): " + path + ": " + msg
					      : file_ + ":" + std::to_string(line) + ": " + path + ": " + msg;
		failed_ = true;
		return false;
	}

	/* At the object itself. */
	bool fail(const Where &w, const std::string &msg) { return fail_at(w.line, w.path, msg); }

	/* At the object's key when the file set it (the command line: the option that set
	 * it, "-Q/--qps: what"), else at the object. */
	bool fail(const Where &w, const char *key, const std::string &msg)
	{
		if (w.keys == nullptr || !w.keys->has(key))
			return fail(w, msg);
		if (file_ == kCliPipeline)
			if (const std::string opt = option_of_key(key); !opt.empty()) {
				*err_ = opt + ": " + msg;
				failed_ = true;
				return false;
			}
		return fail_at(w.keys->line(key), w.path + "." + key, msg);
	}

private:
	const std::string &file_;
	ConfPos limit_;
	std::string *err_;
	bool failed_ = false;
};

template <typename T>
std::vector<std::string> names_of(const std::vector<T> &v)
{
	std::vector<std::string> n;
	for (const T &x : v)
		n.push_back(x.name);
	return n;
}

inline bool known(const std::vector<std::string> &names, const std::string &n)
{
	return std::find(names.begin(), names.end(), n) != names.end();
}

inline bool unknown_ref(Errors &e, const Where &w, const char *key, const char *what, const std::string &name,
		 const std::vector<std::string> &names)
{
	std::string hint = closest_name(name, names);
	return e.fail(w, key, std::string("no ") + what + " named '" + name + "'" + (hint.empty() ? "" : "; did you mean '" + hint + "'?"));
}

/* "a gen stage", "an echo stage". */
inline std::string a_stage(const StageKindInfo *k)
{
	return std::string(k->article) + " " + k->name + " stage";
}

inline std::string joined(const std::vector<std::string> &v)
{
	std::string s;
	for (const std::string &x : v)
		s += (s.empty() ? "" : ", ") + x;
	return s;
}

/* A flow's stages by the end they play. */
struct FlowEnds {
	unsigned tx = 0, rx = 0, echo = 0;
};

inline FlowEnds flow_ends(const PipelineConf &c, const FlowConf &f)
{
	FlowEnds n;
	for (const StageConf &st : c.stages) {
		if (st.flow != f.name)
			continue;
		const FlowEnd end = st.kind->end;
		n.tx += end == FlowEnd::requester;
		n.rx += end == FlowEnd::responder;
		n.echo += end == FlowEnd::echo;
	}
	return n;
}

/* validate_io.cpp: io context i's CQs and SRQ against what its lcore's stages keep
 * outstanding on them. */
bool check_cqs(Errors &e, const PipelineConf &c, size_t i);

} // namespace rp::check
