/* Points made into pipeline files through libconfig's tree of the base pipeline: any
 * pipeline file the space names is a base, and every setting goes where the file's
 * schema has it (each flow's, each io context's), checked by config_load. */
#include "explore/point_conf.h"

#include <libconfig.h++>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

namespace rp::explore {

namespace {

using libconfig::Setting;

std::string default_base(unsigned tx, unsigned rx)
{
	const std::string t = std::to_string(tx), r = std::to_string(rx);
	return "version = 1;\n"
	       "devices = ( { name = \"rxe0\"; } );\n"
	       "io_contexts = ( { lcore = " + t + "; device = \"rxe0\"; }, { lcore = " + r + "; device = \"rxe0\"; } );\n"
	       "flows = ( { name = \"flow0\"; peer = \"loopback\"; verb = \"write_imm\"; } );\n"
	       "stages = ( { name = \"flow0_tx\"; kind = \"rdma_tx\"; lcore = " + t + "; flow = \"flow0\"; },\n"
	       "           { name = \"flow0_rx\"; kind = \"rdma_rx\"; lcore = " + r + "; flow = \"flow0\"; } );\n"
	       "run = { };\n";
}

/* key = value in group g, typed by the value's text (number, boolean or name). */
void set_value(Setting &g, const std::string &key, const std::string &value)
{
	if (g.exists(key))
		g.remove(key);
	char *end = nullptr;
	const double n = strtod(value.c_str(), &end);
	const bool number = !value.empty() && *end == '\0' && (isdigit(static_cast<unsigned char>(value[0])) || value[0] == '-');
	if (value == "true" || value == "false") {
		g.add(key, Setting::TypeBoolean) = value == "true";
	} else if (number && n == std::floor(n) && std::fabs(n) <= 2147483647.0) {
		g.add(key, Setting::TypeInt) = static_cast<int>(n);
	} else if (number && n == std::floor(n)) {
		g.add(key, Setting::TypeInt64) = static_cast<long long>(n);
	} else if (number) {
		g.add(key, Setting::TypeFloat) = n;
	} else {
		g.add(key, Setting::TypeString) = value;
	}
}

Setting &list_at(libconfig::Config &cfg, const char *name)
{
	Setting &root = cfg.getRoot();
	return root.exists(name) ? root[name] : root.add(name, Setting::TypeList);
}

/* A deep copy of src into parent (a list's element when name is null). */
void copy_into(const Setting &src, Setting &parent, const char *name)
{
	Setting &dst = name ? parent.add(name, src.getType()) : parent.add(src.getType());
	if (src.isAggregate()) {
		for (int i = 0; i < src.getLength(); i++)
			copy_into(src[i], dst, src.isGroup() ? src[i].getName() : nullptr);
		return;
	}
	switch (src.getType()) {
	case Setting::TypeInt: dst = static_cast<int>(src); break;
	case Setting::TypeInt64: dst = static_cast<long long>(src); break;
	case Setting::TypeFloat: dst = static_cast<double>(src); break;
	case Setting::TypeBoolean: dst = static_cast<bool>(src); break;
	case Setting::TypeString: dst = static_cast<const char *>(src); break;
	default: break;
	}
}

std::string str(const Setting &g, const char *key)
{
	std::string v;
	g.lookupValue(key, v);
	return v;
}

/* The lcores of the stages at each end of the flows: requesters' and responders'. */
void end_lcores(libconfig::Config &cfg, std::set<int> *tx, std::set<int> *rx)
{
	const Setting &st = list_at(cfg, "stages");
	for (int i = 0; i < st.getLength(); i++) {
		int lc = 0;
		st[i].lookupValue("lcore", lc);
		const std::string kind = str(st[i], "kind");
		if (kind == "rdma_tx")
			tx->insert(lc);
		else if (kind == "rdma_rx" || kind == "echo")
			rx->insert(lc);
	}
}

/* Every lcore with an RDMA stage gets an io context (so its device can be named). */
Setting &io_context(libconfig::Config &cfg, int lcore)
{
	Setting &io = list_at(cfg, "io_contexts");
	for (int i = 0; i < io.getLength(); i++) {
		int lc = -1;
		io[i].lookupValue("lcore", lc);
		if (lc == lcore)
			return io[i];
	}
	Setting &g = io.add(Setting::TypeGroup);
	g.add("lcore", Setting::TypeInt) = lcore;
	return g;
}

/* "rxe0": every io context on it; "rxeA>rxeB": requesters on A, responders on B. */
int apply_device(libconfig::Config &cfg, const std::string &value, std::string *why)
{
	const size_t gt = value.find('>');
	const std::string a = value.substr(0, gt), b = gt == std::string::npos ? a : value.substr(gt + 1);
	if (a.empty() || b.empty()) {
		*why = "device: \"" + value + "\" is not DEV or DEV>DEV";
		return -1;
	}
	Setting &root = cfg.getRoot();
	if (root.exists("devices"))
		root.remove("devices");
	Setting &dl = root.add("devices", Setting::TypeList);
	for (const std::string &d : a == b ? std::vector<std::string>{a} : std::vector<std::string>{a, b})
		dl.add(Setting::TypeGroup).add("name", Setting::TypeString) = d;
	std::set<int> tx, rx;
	end_lcores(cfg, &tx, &rx);
	for (int lc : tx)
		set_value(io_context(cfg, lc), "device", a);
	for (int lc : rx)
		set_value(io_context(cfg, lc), "device", b);
	Setting &io = list_at(cfg, "io_contexts");
	for (int i = 0; i < io.getLength(); i++)
		if (!io[i].exists("device"))
			set_value(io[i], "device", a);
	return 0;
}

/* flows = N: N copies of the first flow, each with copies of its stages. */
int apply_flows(libconfig::Config &cfg, const std::string &value, std::string *why)
{
	const int n = atoi(value.c_str());
	Setting &fl = list_at(cfg, "flows");
	if (n < 1 || n > 64 || fl.getLength() < 1) {
		*why = "flows: " + value + " is not 1..64 copies of a flow";
		return -1;
	}
	Setting &st = list_at(cfg, "stages");
	const std::string first = str(fl[0], "name");
	std::vector<int> own;
	for (int i = 0; i < st.getLength(); i++)
		if (str(st[i], "flow") == first)
			own.push_back(i);
	for (int k = 1; k < n; k++) {
		const std::string name = first + "_" + std::to_string(k);
		copy_into(fl[0], fl, nullptr);
		set_value(fl[fl.getLength() - 1], "name", name);
		for (int i : own) {
			copy_into(st[i], st, nullptr);
			Setting &s = st[st.getLength() - 1];
			set_value(s, "name", str(s, "name") + "_" + std::to_string(k));
			set_value(s, "flow", name);
		}
	}
	return 0;
}

/* "same": as the base places them; "crossing": every other flow's two ends swap lcores. */
int apply_placement(libconfig::Config &cfg, const std::string &value, std::string *why)
{
	if (value == "same")
		return 0;
	if (value != "crossing") {
		*why = "placement: \"" + value + "\" is not same or crossing";
		return -1;
	}
	const Setting &fl = list_at(cfg, "flows");
	Setting &st = list_at(cfg, "stages");
	for (int f = 1; f < fl.getLength(); f += 2) {
		const std::string name = str(fl[f], "name");
		std::vector<Setting *> ends;
		for (int i = 0; i < st.getLength(); i++)
			if (str(st[i], "flow") == name)
				ends.push_back(&st[i]);
		if (ends.size() != 2)
			continue;   // not a plain requester-responder pair: left as it is
		int a = 0, b = 0;
		ends[0]->lookupValue("lcore", a);
		ends[1]->lookupValue("lcore", b);
		set_value(*ends[0], "lcore", std::to_string(b));
		set_value(*ends[1], "lcore", std::to_string(a));
	}
	return 0;
}

/* A larger message needs larger buffers: a flow's named pool grows to hold its size. */
void fit_pools(libconfig::Config &cfg, const std::string &size)
{
	const int bytes = atoi(size.c_str());
	Setting &pools = list_at(cfg, "pools");
	const Setting &fl = list_at(cfg, "flows");
	for (int f = 0; f < fl.getLength(); f++)
		for (int i = 0; i < pools.getLength(); i++) {
			int elt = 0;
			if (str(pools[i], "name") == str(fl[f], "pool") && pools[i].lookupValue("elt_size", elt) && elt < bytes)
				set_value(pools[i], "elt_size", size);
		}
}

void set_in_each(Setting &list, const std::string &key, const std::string &value)
{
	for (int i = 0; i < list.getLength(); i++) {
		if (key == "size" && list[i].exists("sizes"))
			list[i].remove("sizes");
		if (key == "messages" && list[i].exists("duration"))
			list[i].remove("duration");
		if (key == "duration" && list[i].exists("messages"))
			list[i].remove("messages");
		set_value(list[i], key, value);
	}
}

} // namespace

std::vector<std::pair<std::string, std::string>> point_settings(const Space &s, const Point &p)
{
	std::vector<std::pair<std::string, std::string>> todo = s.fixed;
	for (size_t i = 0; i < s.dims.size() && i < p.size(); i++)
		todo.emplace_back(s.dims[i].name, s.dims[i].values[p[i]]);
	const auto flows = std::stable_partition(todo.begin(), todo.end(), [](const auto &kv) { return kv.first == "flows"; });
	std::stable_partition(flows, todo.end(), [](const auto &kv) { return kv.first == "placement" || kv.first == "device"; });
	return todo;
}

PointConf::PointConf() = default;
PointConf::~PointConf() = default;

int PointConf::init(const Space &s, const LcoreSet &lcores, unsigned tx, unsigned rx, std::string *err)
{
	space_ = &s;
	lcores_ = lcores;
	if (s.pipeline.empty()) {
		base_text_ = default_base(tx, rx);
		return 0;
	}
	std::string path = s.pipeline;
	const size_t slash = s.file.rfind('/');
	if (path[0] != '/' && slash != std::string::npos)
		path = s.file.substr(0, slash + 1) + path;
	std::ifstream in(path);
	if (!in) {
		*err = s.file + ": pipeline: cannot read " + path;
		return -1;
	}
	std::stringstream ss;
	ss << in.rdbuf();
	base_text_ = ss.str();
	PipelineConf c;
	if (config_load(path, lcores_, &c, err) != 0)
		return -1;
	if (c.pattern.on()) {
		*err = s.file + ": pipeline: " + path + " is a job (pattern): explore runs pipelines of one process";
		return -1;
	}
	return 0;
}

int PointConf::apply(libconfig::Config &cfg, const std::string &setting, const std::string &value, std::string *why)
{
	if (setting == "device")
		return apply_device(cfg, value, why);
	if (setting == "flows")
		return apply_flows(cfg, value, why);
	if (setting == "placement")
		return apply_placement(cfg, value, why);
	const auto &io = conf_io_keys();
	if (std::find(io.begin(), io.end(), setting) != io.end()) {
		std::set<int> tx, rx;
		end_lcores(cfg, &tx, &rx);
		for (int lc : tx)
			io_context(cfg, lc);
		for (int lc : rx)
			io_context(cfg, lc);
		set_in_each(list_at(cfg, "io_contexts"), setting, value);
	} else {
		set_in_each(list_at(cfg, "flows"), setting, value);
		if (setting == "size")
			fit_pools(cfg, value);
	}
	return 0;
}

int PointConf::make(const Point &p, const std::string &conf_path, const std::string &results_path, std::string *why,
		    PipelineConf *out)
{
	libconfig::Config cfg;
	try {
		cfg.readString(base_text_);
		bool count_given = false;
		for (const auto &kv : point_settings(*space_, p)) {
			count_given |= kv.first == "messages" || kv.first == "duration";
			if (apply(cfg, kv.first, kv.second, why) != 0)
				return -1;
		}
		if (!count_given)
			set_in_each(list_at(cfg, "flows"), "duration", std::to_string(space_->search.point_seconds));
		Setting &root = cfg.getRoot();
		Setting &run = root.exists("run") ? root["run"] : root.add("run", Setting::TypeGroup);
		if (run.exists("output"))
			run.remove("output");
		run.add("output", Setting::TypeGroup).add("json", Setting::TypeString) = results_path;
		cfg.writeFile(conf_path.c_str());
	} catch (const libconfig::ConfigException &ex) {
		*why = std::string("cannot make the point's pipeline: ") + ex.what();
		return -1;
	}
	PipelineConf c;
	return config_load(conf_path, lcores_, out ? out : &c, why) == 0 ? 0 : -1;
}

} // namespace rp::explore
