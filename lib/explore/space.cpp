/* The space file's reader: dimensions, fixed settings and the search's own. */
#include "explore/space.h"

#include "conf/config.h"

#include <libconfig.h++>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace rp::explore {

namespace {

using libconfig::Setting;

const std::vector<std::string> kRootKeys = {"version", "pipeline", "fixed", "dimensions", "search"};
const std::vector<std::string> kDimKeys = {"setting", "values", "range", "scale", "extra", "simplest"};
const std::vector<std::string> kSearchKeys = {"strategy", "budget", "seed", "perf_flag", "repeats", "need",
					      "restart_every", "temperature", "cooling", "point_seconds",
					      "point_timeout", "stall_timeout", "counters", "bare_reference",
					      "bare_flag"};

/* The first refusal, with its place. */
struct Errors {
	std::string file;
	std::string *err;
	bool fail(const Setting &s, const std::string &what)
	{
		*err = file + ":" + std::to_string(s.getSourceLine()) + ": " + (s.isRoot() ? "(top)" : s.getPath()) + ": " + what;
		return false;
	}
};

std::vector<std::string> settable()
{
	std::vector<std::string> all = special_settings();
	for (const auto *keys : {&conf_flow_keys(), &conf_io_keys()})
		for (const std::string &k : *keys)
			if (k != "name" && k != "lcore" && k != "pool" && k != "peer" && k != "listen" && k != "local")
				all.push_back(k);
	return all;
}

bool keys_known(Errors &e, const Setting &g, const std::vector<std::string> &known)
{
	for (int i = 0; i < g.getLength(); i++) {
		const std::string name = g[i].getName() ? g[i].getName() : "";
		if (std::find(known.begin(), known.end(), name) == known.end()) {
			const std::string hint = closest_name(name, known);
			return e.fail(g[i], "unknown setting '" + name + "'" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
		}
	}
	return true;
}

/* libconfig casts strictly: an int is read as an int. */
double num_of(const Setting &v)
{
	switch (v.getType()) {
	case Setting::TypeInt: return static_cast<int>(v);
	case Setting::TypeInt64: return static_cast<double>(static_cast<long long>(v));
	default: return static_cast<double>(v);
	}
}

std::string number_text(double v)
{
	char b[64];
	if (v == std::floor(v) && std::fabs(v) < 1e18)
		snprintf(b, sizeof b, "%lld", static_cast<long long>(v));
	else
		snprintf(b, sizeof b, "%g", v);
	return b;
}

/* One value of a list as canonical text; *num says whether it is a number. */
bool value_text(Errors &e, const Setting &v, std::string *text, double *num, bool *numeric)
{
	switch (v.getType()) {
	case Setting::TypeInt:
	case Setting::TypeInt64:
	case Setting::TypeFloat:
		*num = num_of(v);
		*text = number_text(*num);
		*numeric = true;
		return true;
	case Setting::TypeBoolean:
		*text = static_cast<bool>(v) ? "true" : "false";
		*numeric = false;
		return true;
	case Setting::TypeString:
		*text = static_cast<const char *>(v);
		*numeric = false;
		return !text->empty() || e.fail(v, "an empty value");
	default:
		return e.fail(v, "a value must be a number, a boolean or a string");
	}
}

bool read_list(Errors &e, const Setting &list, Dim *d, std::vector<bool> *numeric)
{
	if (!list.isArray() && !list.isList())
		return e.fail(list, "a list of values, [a, b, ...]");
	for (int i = 0; i < list.getLength(); i++) {
		std::string t;
		double n = 0;
		bool isnum = false;
		if (!value_text(e, list[i], &t, &n, &isnum))
			return false;
		d->values.push_back(t);
		d->numbers.push_back(n);
		numeric->push_back(isnum);
	}
	return true;
}

/* range = [lo, hi] with scale "log2" (powers of two, lo and hi included) or "linear"
 * (every integer: at most 64 of them). */
bool read_range(Errors &e, const Setting &g, Dim *d, std::vector<bool> *numeric)
{
	const Setting &r = g["range"];
	if (!r.isArray() || r.getLength() != 2 || !r[0].isNumber() || !r[1].isNumber())
		return e.fail(r, "a range is [lo, hi], two numbers");
	const double lo = num_of(r[0]), hi = num_of(r[1]);
	if (!(lo <= hi))
		return e.fail(r, "an empty range: " + number_text(lo) + " > " + number_text(hi));
	std::string scale = "log2";
	if (g.exists("scale"))
		g.lookupValue("scale", scale);
	std::vector<double> v;
	if (scale == "log2") {
		if (lo < 1)
			return e.fail(r, "a log2 range starts at 1 or more");
		for (double x = lo; x < hi; x *= 2)
			v.push_back(x);
		v.push_back(hi);
	} else if (scale == "linear") {
		if (hi - lo > 63)
			return e.fail(r, "a linear range has at most 64 values: use scale = \"log2\" or values = [...]");
		for (double x = lo; x <= hi; x += 1)
			v.push_back(x);
	} else {
		return e.fail(g["scale"], "scale is \"log2\" or \"linear\", not \"" + scale + "\"");
	}
	for (double x : v) {
		d->values.push_back(number_text(x));
		d->numbers.push_back(x);
		numeric->push_back(true);
	}
	return !g.exists("extra") || read_list(e, g["extra"], d, numeric);
}

/* Numbers ascending, each once; anything else in the file's order. */
void order_values(Dim *d, bool numeric)
{
	if (!numeric) {
		d->numbers.clear();
		return;
	}
	std::vector<std::pair<double, std::string>> v;
	for (size_t i = 0; i < d->values.size(); i++)
		v.emplace_back(d->numbers[i], d->values[i]);
	std::sort(v.begin(), v.end());
	v.erase(std::unique(v.begin(), v.end(), [](const auto &a, const auto &b) { return a.first == b.first; }), v.end());
	d->values.clear();
	d->numbers.clear();
	for (const auto &x : v) {
		d->numbers.push_back(x.first);
		d->values.push_back(x.second);
	}
}

bool read_simplest(Errors &e, const Setting &g, Dim *d)
{
	if (!g.exists("simplest"))
		return e.fail(g, "missing setting 'simplest' (the value minimisation moves this dimension to)");
	std::string t;
	double n = 0;
	bool isnum = false;
	if (!value_text(e, g["simplest"], &t, &n, &isnum))
		return false;
	for (uint32_t i = 0; i < d->values.size(); i++)
		if (d->numeric() ? isnum && d->numbers[i] == n : d->values[i] == t) {
			d->simplest = i;
			return true;
		}
	return e.fail(g["simplest"], "simplest value " + t + " is not among the dimension's values");
}

bool read_dim(Errors &e, const Setting &g, Space *s)
{
	if (!g.isGroup())
		return e.fail(g, "a dimension is a group { setting = ...; values = [...]; simplest = ...; }");
	if (!keys_known(e, g, kDimKeys))
		return false;
	Dim d;
	d.line = static_cast<int>(g.getSourceLine());
	if (!g.lookupValue("setting", d.name))
		return e.fail(g, "missing setting 'setting' (what this dimension varies, a string)");
	const std::vector<std::string> known = settable();
	if (std::find(known.begin(), known.end(), d.name) == known.end()) {
		const std::string hint = closest_name(d.name, known);
		return e.fail(g["setting"], "unknown setting '" + d.name + "'" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
	}
	for (const Dim &o : s->dims)
		if (o.name == d.name)
			return e.fail(g["setting"], "setting '" + d.name + "' is a dimension already (line " + std::to_string(o.line) + ")");
	if (g.exists("values") == g.exists("range"))
		return e.fail(g, "give either values = [...] or range = [lo, hi]");
	std::vector<bool> numeric;
	if (!(g.exists("values") ? read_list(e, g["values"], &d, &numeric) : read_range(e, g, &d, &numeric)))
		return false;
	if (d.values.empty())
		return e.fail(g, "an empty dimension: no values");
	const bool all_num = std::all_of(numeric.begin(), numeric.end(), [](bool b) { return b; });
	if (!all_num && std::any_of(numeric.begin(), numeric.end(), [](bool b) { return b; }))
		return e.fail(g, "values mix numbers with names");
	order_values(&d, all_num);
	d.reference = !setting_paces(d.name);
	if (!read_simplest(e, g, &d))
		return false;
	s->dims.push_back(std::move(d));
	return true;
}

bool read_fixed(Errors &e, const Setting &g, Space *s)
{
	if (!g.isGroup())
		return e.fail(g, "fixed is a group { setting = value; ... }");
	if (!keys_known(e, g, settable()))
		return false;
	for (int i = 0; i < g.getLength(); i++) {
		std::string t;
		double n = 0;
		bool isnum = false;
		if (!value_text(e, g[i], &t, &n, &isnum))
			return false;
		s->fixed.emplace_back(g[i].getName(), t);
		s->fixed_lines.push_back(static_cast<int>(g[i].getSourceLine()));
	}
	return true;
}

bool number(Errors &e, const Setting &g, const char *key, double lo, double hi, double *out)
{
	if (!g.exists(key))
		return true;
	const Setting &v = g[key];
	if (!v.isNumber())
		return e.fail(v, "a number");
	const double x = num_of(v);
	if (x < lo || x > hi)
		return e.fail(v, number_text(x) + " is outside " + number_text(lo) + ".." + number_text(hi));
	*out = x;
	return true;
}

bool read_counters(Errors &e, const Setting &g, SearchConf *sc)
{
	if (!g.isGroup())
		return e.fail(g, "counters is a group { COUNTER = per-message threshold; ... }");
	for (int i = 0; i < g.getLength(); i++) {
		double x = 0;
		if (!number(e, g, g[i].getName(), 0, 1e9, &x))
			return false;
		sc->counter_flags.emplace_back(g[i].getName(), x);
	}
	return true;
}

bool read_search(Errors &e, const Setting &g, SearchConf *sc)
{
	if (!g.isGroup() || !keys_known(e, g, kSearchKeys))
		return g.isGroup() || e.fail(g, "search is a group");
	sc->line = static_cast<int>(g.getSourceLine());
	std::string text;
	if (g.lookupValue("strategy", text) && !strategy_from_name(text, &sc->strategy))
		return e.fail(g["strategy"], "strategy is anneal, random or grid, not \"" + text + "\"");
	if (g.exists("budget")) {
		const Setting &b = g["budget"];
		text = b.getType() == Setting::TypeString ? static_cast<const char *>(b) : b.isNumber() ? number_text(num_of(b)) : "";
		if (!parse_budget(text, sc))
			return e.fail(b, "budget is a number of points (200) or a time (90s, 10m, 2h)");
	}
	double seed = static_cast<double>(sc->seed), repeats = sc->repeats, need = sc->need, restart = sc->restart_every;
	if (!number(e, g, "seed", 0, 9e15, &seed) || !number(e, g, "perf_flag", 0.01, 1, &sc->perf_flag) ||
	    !number(e, g, "repeats", 1, 20, &repeats) || !number(e, g, "need", 1, 20, &need) ||
	    !number(e, g, "restart_every", 1, 1e6, &restart) || !number(e, g, "temperature", 0, 100, &sc->temperature) ||
	    !number(e, g, "cooling", 0.01, 1, &sc->cooling) || !number(e, g, "point_seconds", 0.05, 3600, &sc->point_seconds) ||
	    !number(e, g, "point_timeout", 1, 36000, &sc->point_timeout_s) ||
	    !number(e, g, "stall_timeout", 0.5, 3600, &sc->stall_timeout_s) ||
	    !number(e, g, "bare_flag", 0.001, 1, &sc->bare_flag))
		return false;
	if (g.exists("bare_reference") && g["bare_reference"].getType() != Setting::TypeBoolean)
		return e.fail(g["bare_reference"], "bare_reference is true or false (the bare-verbs grid measured at start)");
	g.lookupValue("bare_reference", sc->bare_reference);
	if (!sc->bare_reference && g.exists("bare_flag"))
		return e.fail(g["bare_flag"], "bare_flag has no effect with bare_reference = false");
	sc->seed = static_cast<uint64_t>(seed);
	sc->repeats = static_cast<uint32_t>(repeats);
	sc->need = static_cast<uint32_t>(need);
	sc->restart_every = static_cast<uint32_t>(restart);
	if (sc->need > sc->repeats)
		return e.fail(g, "need (" + std::to_string(sc->need) + ") is more than repeats (" + std::to_string(sc->repeats) + ")");
	if (sc->point_timeout_s < sc->point_seconds + sc->stall_timeout_s + 1)
		return e.fail(g, "point_timeout must leave a point its point_seconds, a stall_timeout and start-up");
	return !g.exists("counters") || read_counters(e, g["counters"], sc);
}

/* search.bare_reference: a grid of at most kMaxBarePoints, measured unpaced (at the
 * simplest rate: a rate cap is no reference). */
bool bare_grid_fits(Errors &e, const Setting &root, const Space &s)
{
	const Setting &at = root.exists("search") ? root["search"] : root;
	uint64_t n = 1;
	std::string how;
	for (const Dim &d : s.dims)
		if (setting_bare_key(d.name)) {
			n *= d.values.size();
			how += (how.empty() ? "" : " x ") + d.name + " " + std::to_string(d.values.size());
		}
	if (n > kMaxBarePoints)
		return e.fail(at, "bare_reference: the bare-verbs grid has " + std::to_string(n) + " points (" + how +
					 "), over " + std::to_string(kMaxBarePoints) + ": fewer values, or bare_reference = false");
	for (const Dim &d : s.dims)
		if (setting_paces(d.name) && atof(d.values[d.simplest].c_str()) > 0)
			return e.fail(at, "bare_reference: the simplest " + d.name + " (" + d.values[d.simplest] +
						 ") paces the bare-verbs grid: a simplest of 0, or bare_reference = false");
	for (const auto &[k, v] : s.fixed)
		if (setting_paces(k) && atof(v.c_str()) > 0)
			return e.fail(at, "bare_reference: fixed " + k + " = " + v +
						 " paces every point: nothing to judge against plain verbs; bare_reference = false");
	return true;
}

bool read_space(Errors &e, const Setting &root, Space *s)
{
	if (!keys_known(e, root, kRootKeys))
		return false;
	int version = 0;
	if (!root.lookupValue("version", version) || version != kSpaceVersion)
		return e.fail(root, "version = " + std::to_string(kSpaceVersion) + "; is required (the space schema)");
	root.lookupValue("pipeline", s->pipeline);
	if (root.exists("fixed") && !read_fixed(e, root["fixed"], s))
		return false;
	if (!root.exists("dimensions"))
		return e.fail(root, "missing setting 'dimensions'");
	const Setting &dims = root["dimensions"];
	if (!dims.isList() || dims.getLength() == 0)
		return e.fail(dims, "dimensions is a non-empty list ( { setting = ...; ... }, ... )");
	for (int i = 0; i < dims.getLength(); i++)
		if (!read_dim(e, dims[i], s))
			return false;
	for (size_t i = 0; i < s->fixed.size(); i++)
		for (const Dim &d : s->dims)
			if (d.name == s->fixed[i].first) {
				*e.err = e.file + ":" + std::to_string(s->fixed_lines[i]) + ": fixed." + d.name +
					 ": is a dimension too (line " + std::to_string(d.line) + ")";
				return false;
			}
	if (root.exists("search") && !read_search(e, root["search"], &s->search))
		return false;
	return !s->search.bare_reference || bare_grid_fits(e, root, *s);
}

} // namespace

const std::vector<std::string> &special_settings()
{
	static const std::vector<std::string> k = {"device", "flows", "placement"};
	return k;
}

bool strategy_from_name(const std::string &name, Strategy *s)
{
	for (Strategy x : {Strategy::anneal, Strategy::random, Strategy::grid})
		if (name == strategy_name(x)) {
			*s = x;
			return true;
		}
	return false;
}

bool parse_budget(const std::string &text, SearchConf *s)
{
	char *end = nullptr;
	const double v = strtod(text.c_str(), &end);
	if (text.empty() || end == text.c_str() || !(v > 0))
		return false;
	const std::string unit = end;
	const double mul = unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : 0;
	if (unit.empty()) {
		if (v != std::floor(v))
			return false;
		s->budget_points = static_cast<uint64_t>(v);
		s->budget_s = 0;
		return true;
	}
	if (mul == 0)
		return false;
	s->budget_s = v * mul;
	s->budget_points = 0;
	return true;
}

int space_load(const std::string &path, Space *s, std::string *err)
{
	libconfig::Config cfg;
	try {
		cfg.readFile(path.c_str());
	} catch (const libconfig::FileIOException &) {
		*err = path + ": cannot read the file";
		return -1;
	} catch (const libconfig::ParseException &ex) {
		*err = path + ":" + std::to_string(ex.getLine()) + ": " + ex.getError();
		return -1;
	}
	*s = Space{};
	s->file = path;
	Errors e{path, err};
	try {
		return read_space(e, cfg.getRoot(), s) ? 0 : -1;
	} catch (const libconfig::SettingException &ex) {
		*err = path + ": " + ex.getPath() + ": " + ex.what();
		return -1;
	}
}

} // namespace rp::explore
