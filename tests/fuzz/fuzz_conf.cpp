/* A pipeline file as a user writes it, through the libconfig loader and every check
 * behind it. Asserted: no crash, no hang, and a refusal always says why (a file:line
 * error, as rdmapipe --check prints it). */
#include "conf/config.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* One in-memory file for every input: libconfig reads a path. */
	static const int fd = memfd_create("fuzz.conf", 0);
	static const std::string path = "/proc/self/fd/" + std::to_string(fd);
	static rp::LcoreSet lcores;
	static const bool ready = rp::lcore_set_from_list("0-7", &lcores);
	if (fd < 0 || !ready || ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size))
		abort();
	rp::PipelineConf conf;
	std::string err;
	if (rp::config_load(path, lcores, &conf, &err) != 0 && err.empty())
		abort();
	return 0;
}
