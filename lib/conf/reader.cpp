/* The Reader's typed reads of libconfig settings (reader.h). */
#include "conf/reader.h"

#include <algorithm>
#include <cmath>

namespace rp {

using libconfig::Setting;

long long as_ll(const Setting &s)
{
	if (s.getType() == Setting::TypeInt)
		return static_cast<int>(s);
	return static_cast<long long>(s);
}

double as_double(const Setting &s)
{
	return s.getType() == Setting::TypeFloat ? static_cast<double>(s) : static_cast<double>(as_ll(s));
}

bool Reader::fail(const Setting &s, const std::string &msg)
{
	return fail_at(static_cast<int>(s.getSourceLine()), s.isRoot() ? std::string("(top)") : s.getPath(), msg);
}

bool Reader::fail_at(int line, const std::string &path, const std::string &msg)
{
	if (!failed_) {
		*err_ = file_ + ":" + std::to_string(line) + ": " + path + ": " + msg;
		failed_ = true;
		failed_pos_ = pos_;
	}
	return false;
}

bool Reader::keys(const Setting &group, const std::vector<std::string> &known, KeyLines *lines)
{
	for (int i = 0; i < group.getLength(); i++) {
		const Setting &c = group[i];
		std::string name = c.getName() ? c.getName() : "";
		if (std::find(known.begin(), known.end(), name) != known.end()) {
			if (lines)
				lines->set(name, static_cast<int>(c.getSourceLine()));
			continue;
		}
		std::string hint = closest_name(name, known);
		return fail(c, "unknown setting" + (hint.empty() ? std::string() : "; did you mean '" + hint + "'?"));
	}
	return true;
}

const Setting *Reader::find(const Setting &group, const char *key)
{
	return group.exists(key) ? &group[key] : nullptr;
}

bool Reader::missing(const Setting &group, const char *key)
{
	return fail(group, std::string("missing setting '") + key + "'");
}

bool Reader::uint(const Setting &group, const char *key, uint64_t lo, uint64_t hi, uint64_t *out, bool required)
{
	const Setting *s = find(group, key);
	if (s == nullptr)
		return required ? missing(group, key) : true;
	uint64_t v = 0;
	if (s->getType() == Setting::TypeInt || s->getType() == Setting::TypeInt64) {
		long long x = as_ll(*s);
		if (x < 0 || static_cast<uint64_t>(x) < lo || static_cast<uint64_t>(x) > hi)
			return fail(*s, std::to_string(x) + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
		v = static_cast<uint64_t>(x);
	} else if (s->getType() == Setting::TypeString) {
		const char *str = *s;
		if (!parse_size(str, 0, UINT64_MAX, &v))
			return fail(*s, std::string("'") + str + "' is not an integer (K, M, G suffixes allowed)");
		if (v < lo || v > hi)
			return fail(*s, std::string(str) + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
	} else {
		return fail(*s, "expected an integer");
	}
	*out = v;
	return true;
}

bool Reader::seconds(const Setting &group, const char *key, double *out, bool allow_zero)
{
	const Setting *s = find(group, key);
	if (s == nullptr)
		return true;
	if (!s->isNumber())
		return fail(*s, "expected a number of seconds");
	double v = as_double(*s);
	if (!std::isfinite(v) || v < 0 || (!allow_zero && v == 0) || v > 1e6)
		return fail(*s, std::to_string(v) + " is not a number of seconds in " + (allow_zero ? "[0" : "(0") + ", 1e6]");
	*out = v;
	return true;
}

bool Reader::boolean(const Setting &group, const char *key, bool *out)
{
	const Setting *s = find(group, key);
	if (s == nullptr)
		return true;
	if (s->getType() != Setting::TypeBoolean)
		return fail(*s, "expected true or false");
	*out = *s;
	return true;
}

bool Reader::string(const Setting &group, const char *key, std::string *out, bool required)
{
	const Setting *s = find(group, key);
	if (s == nullptr)
		return required ? missing(group, key) : true;
	if (s->getType() != Setting::TypeString)
		return fail(*s, "expected a string");
	*out = static_cast<const char *>(*s);
	if (out->empty())
		return fail(*s, "must not be empty");
	return true;
}

bool Reader::choice(const Setting &group, const char *key, const std::vector<std::string> &names, int *index,
			  bool required)
{
	std::string v;
	const Setting *s = find(group, key);
	if (s == nullptr)
		return required ? missing(group, key) : true;
	if (!string(group, key, &v))
		return false;
	for (size_t i = 0; i < names.size(); i++)
		if (names[i] == v) {
			*index = static_cast<int>(i);
			return true;
		}
	std::string all;
	for (const std::string &n : names)
		all += (all.empty() ? "" : ", ") + n;
	std::string hint = closest_name(v, names);
	return fail(*s, "'" + v + "' is not one of " + all + (hint.empty() ? "" : "; did you mean '" + hint + "'?"));
}

bool Reader::names(const Setting &group, const char *key, std::vector<std::string> *out, const std::string &what)
{
	const Setting *s = find(group, key);
	if (s == nullptr)
		return true;
	if (s->getType() == Setting::TypeString) {
		std::string v;
		if (!string(group, key, &v))
			return false;
		out->push_back(v);
		return true;
	}
	if (!s->isArray() && !s->isList())
		return fail(*s, "expected a " + what + " or a list of " + what + "s");
	for (int i = 0; i < s->getLength(); i++) {
		const Setting &e = (*s)[i];
		if (e.getType() != Setting::TypeString || static_cast<const char *>(e)[0] == '\0')
			return fail(e, "expected a " + what + " (a string)");
		out->push_back(static_cast<const char *>(e));
	}
	return true;
}

const Setting *Reader::list(const Setting &root, const char *key, bool required)
{
	const Setting *s = find(root, key);
	if (s == nullptr) {
		if (required)
			missing(root, key);
		return nullptr;
	}
	if (!s->isList()) {
		fail(*s, "expected a list of groups: ( { ... }, { ... } )");
		return nullptr;
	}
	for (int i = 0; i < s->getLength(); i++)
		if (!(*s)[i].isGroup()) {
			fail((*s)[i], "expected a group { ... }");
			return nullptr;
		}
	return s;
}

} // namespace rp
