#include "control/hw_counters.h"

#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace rp {

HwCounters hw_counters_read(const std::string &dev, unsigned port, const std::string &sysfs)
{
	HwCounters out;
	const std::string dir = sysfs + "/" + dev + "/ports/" + std::to_string(port) + "/hw_counters";
	DIR *d = opendir(dir.c_str());
	if (d == nullptr)
		return out;
	while (dirent *e = readdir(d)) {
		if (e->d_name[0] == '.' || std::string(e->d_name) == "lifespan")   // lifespan: a setting, not a count
			continue;
		FILE *f = fopen((dir + "/" + e->d_name).c_str(), "r");
		if (f == nullptr)
			continue;
		char buf[64] = {};
		if (fgets(buf, sizeof(buf), f)) {
			char *end = nullptr;
			unsigned long long v = strtoull(buf, &end, 10);
			if (end != buf)
				out.emplace_back(e->d_name, v);
		}
		fclose(f);
	}
	closedir(d);
	std::sort(out.begin(), out.end());
	return out;
}

HwCounters hw_counters_delta(const HwCounters &base, const HwCounters &now)
{
	HwCounters out;
	for (const auto &[name, v] : now) {
		uint64_t b = 0;
		auto it = std::lower_bound(base.begin(), base.end(), std::make_pair(name, uint64_t{0}));
		if (it != base.end() && it->first == name)
			b = it->second;
		if (v > b)
			out.emplace_back(name, v - b);
	}
	return out;
}

} // namespace rp
