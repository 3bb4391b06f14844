#include "conf/stage_kinds.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace rp {

namespace {

/* Made on first use: the kinds' constructors run before main, in no order with this
 * file's statics. */
std::vector<const StageKindInfo *> &registry()
{
	static std::vector<const StageKindInfo *> kinds;
	return kinds;
}

} // namespace

void stage_kind_register(const StageKindInfo *k)
{
	const char *why = k->name == nullptr || k->name[0] == '\0' ? "it has no name"
			  : k->ops == nullptr                       ? "it has no hooks (StageKindOps)"
			  : stage_kind_named(k->name) != nullptr    ? "a kind of that name is registered already"
								    : nullptr;
	if (why != nullptr) {
		fprintf(stderr, "rdmapipe: stage kind '%s' cannot be registered: %s\n", k->name ? k->name : "", why);
		abort();
	}
	registry().push_back(k);
}

const std::vector<const StageKindInfo *> &stage_kinds()
{
	return registry();
}

const StageKindInfo *stage_kind_named(const std::string &name)
{
	for (const StageKindInfo *k : registry())
		if (name == k->name)
			return k;
	return nullptr;
}

const StageKindInfo *stage_kind_of_end(FlowEnd end)
{
	for (const StageKindInfo *k : registry())
		if (k->end == end)
			return k;
	return nullptr;
}

std::string ring_count_text(RingCount c, bool input)
{
	if (c.max == 0)
		return input ? "no input" : "no output";
	const std::string ring = input ? " input ring" : " output ring";
	return (c.min == 0 ? "at most one" : "exactly one") + ring;
}

} // namespace rp
