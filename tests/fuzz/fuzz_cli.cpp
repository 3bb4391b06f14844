/* The command line as a user types it (the options after `--`, one a line of the
 * input), through the option parser, its cross-checks and, when it takes them, the
 * pipeline they make, its file (what --dump-conf prints) and the one validator (what a
 * run checks it with): no device, no EAL.
 * Asserted: no crash, no uncaught exception, no sanitizer report, and a refusal always
 * says why. */
#include "conf/cli_pipeline.h"
#include "conf/options.h"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	constexpr size_t kMaxArgs = 32;
	std::vector<std::string> args{"rdmapipe"};
	std::string a;
	for (size_t i = 0; i < size && args.size() <= kMaxArgs; i++) {
		const char c = static_cast<char>(data[i]);
		if (c == '\n' || c == '\0') {
			args.push_back(a);
			a.clear();
		} else {
			a += c;
		}
	}
	if (!a.empty() && args.size() <= kMaxArgs)
		args.push_back(a);
	std::vector<char *> argv;
	for (auto &s : args)
		argv.push_back(s.data());
	argv.push_back(nullptr);

	rp::RunOptions o;
	std::string err;
	const rp::ParseResult r = rp::parse_options(static_cast<int>(args.size()), argv.data(), &o, &err);
	if (r == rp::ParseResult::error && err.empty())
		abort();
	if (r != rp::ParseResult::ok || o.points || !o.config_file.empty())
		return 0;
	/* What --dump-conf prints, with the requester on lcore 1 and the responder on 0. */
	const rp::PipelineConf c = rp::pipeline_from_options(o, 1, 0);
	if (rp::pipeline_to_text(c, o).empty())
		abort();
	/* Then the one validator, as a run takes it: it may refuse (a rule lives there
	 * only), saying why. */
	rp::PipelineConf v = c;
	err.clear();
	if (rp::conf_validate(&v, &err) != 0 && err.empty())
		abort();
	return 0;
}
