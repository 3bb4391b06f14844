/* rdmapipe: EAL arguments, then ours after "--". The only place that exits. */
#include "conf/options.h"
#include "loopback.h"
#include "pingpong.h"

#include <rte_eal.h>
#include <rte_errno.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

void app_usage(const char * /*prgname*/)
{
	fputs("\n", stderr);
	fputs(rp::options_usage(), stderr);
}

void on_signal(int)
{
	rp::request_stop();
}

} // namespace

int main(int argc, char **argv)
{
	/* Our arguments are parsed before EAL starts: a typo costs no hugepages. */
	int eal_argc = argc;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			eal_argc = i;
			break;
		}
	for (int i = 1; i < eal_argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			printf("%s", rp::options_usage());
			printf("\nEAL options come before \"--\" (see 'rdmapipe --eal-help' or DPDK's EAL guide),\n"
			       "for example: -l 0-1 --in-memory, or -l 0-1 --no-huge -m 512.\n");
			return rp::kExitOk;
		}
		if (strcmp(argv[i], "--version") == 0) {
			printf("rdmapipe %s\n", RDMAPIPE_VERSION);
			return rp::kExitOk;
		}
		if (strcmp(argv[i], "--eal-help") == 0)
			argv[i] = const_cast<char *>("--help");   // let EAL print its own usage
	}

	rp::RunOptions opts;
	std::string err;
	int app_argc = argc - eal_argc;
	char **app_argv = argv + eal_argc;
	rp::ParseResult pr = rp::ParseResult::ok;
	if (app_argc > 0) {
		char *saved = app_argv[0];
		app_argv[0] = argv[0];   // getopt wants a program name first
		pr = rp::parse_options(app_argc, app_argv, &opts, &err);
		app_argv[0] = saved;
	} else {
		char *only[] = {argv[0], nullptr};
		pr = rp::parse_options(1, only, &opts, &err);
	}
	switch (pr) {
	case rp::ParseResult::help:
		printf("%s", rp::options_usage());
		return rp::kExitOk;
	case rp::ParseResult::version:
		printf("rdmapipe %s\n", RDMAPIPE_VERSION);
		return rp::kExitOk;
	case rp::ParseResult::error:
		fprintf(stderr, "rdmapipe: %s\n\n%s", err.c_str(), rp::options_usage());
		return rp::kExitUsage;
	case rp::ParseResult::ok:
		break;
	}

	rte_set_application_usage_hook(app_usage);
	if (rte_eal_init(eal_argc, argv) < 0) {
		int e = rte_errno;
		fprintf(stderr, "rdmapipe: EAL initialisation failed: %s%s\n", rte_strerror(e),
			e == EINVAL ? " (bad EAL arguments: see the usage above)" : "");
		return e == EINVAL ? rp::kExitUsage : rp::kExitSetup;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	int rc = opts.mode == rp::Mode::pingpong ? rp::run_pingpong(opts) : rp::run_loopback(opts);
	rte_eal_cleanup();
	return rc;
}
