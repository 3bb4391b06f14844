/* Typed, range-checked reads of one libconfig file's settings (config.cpp's schema
 * uses it): each refusal names the place, "FILE:LINE: PATH: what", and the Reader
 * keeps the first. Checks of one key only; conf_validate checks keys against each
 * other. Internal to lib/conf. */
#pragma once

#include "conf/check_order.h"
#include "conf/config.h"

#include <libconfig.h++>

#include <cstdint>
#include <string>
#include <vector>

namespace rp {

/* libconfig converts between number types only with AutoConvert, which would also
 * let 1.5 pass as an integer: read each type as what it is. */
long long as_ll(const libconfig::Setting &s);
double as_double(const libconfig::Setting &s);

class Reader {
public:
	using Setting = libconfig::Setting;

	Reader(std::string file, std::string *err) : file_(std::move(file)), err_(err) {}

	bool failed() const { return failed_; }
	/* Where the first refusal was (check_order.h); kConfEnd when none. */
	ConfPos failed_pos() const { return failed_ ? failed_pos_ : kConfEnd; }
	/* What the reads that follow check: an object, then its steps. */
	void at(int section, int index, int step = 0) { pos_ = {section, index, step}; }
	void step(int step) { pos_.step = step; }
	bool fail(const Setting &s, const std::string &msg);
	bool fail_at(int line, const std::string &path, const std::string &msg);

	/* Every key of `group` must be one of `known`; *lines gets the line of each. */
	bool keys(const Setting &group, const std::vector<std::string> &known, KeyLines *lines = nullptr);
	const Setting *find(const Setting &group, const char *key);
	bool missing(const Setting &group, const char *key);

	/* Integer in lo..hi: a number, or a string with a K/M/G suffix ("64K"). */
	bool uint(const Setting &group, const char *key, uint64_t lo, uint64_t hi, uint64_t *out, bool required = false);

	template <typename T>
	bool uint_as(const Setting &group, const char *key, uint64_t lo, uint64_t hi, T *out, bool required = false)
	{
		uint64_t v = *out;
		if (!uint(group, key, lo, hi, &v, required))
			return false;
		*out = static_cast<T>(v);
		return true;
	}

	bool seconds(const Setting &group, const char *key, double *out, bool allow_zero = true);
	bool boolean(const Setting &group, const char *key, bool *out);
	/* A non-empty string. */
	bool string(const Setting &group, const char *key, std::string *out, bool required = false);
	/* One of `names` (a string); *index gets its position. */
	bool choice(const Setting &group, const char *key, const std::vector<std::string> &names, int *index,
		    bool required = false);
	/* A string, or a list/array of strings. */
	bool names(const Setting &group, const char *key, std::vector<std::string> *out, const std::string &what = "ring name");
	/* A list of groups, possibly absent (then `required` says whether that is an error). */
	const Setting *list(const Setting &root, const char *key, bool required);

private:
	std::string file_;
	std::string *err_;
	bool failed_ = false;
	ConfPos pos_, failed_pos_;
};

} // namespace rp
