#include "conf/plant.h"

#include "conf/config.h"   // Transport
#include "conf/options.h"  // parse_size

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace rp {

namespace {

enum class KeyType : uint8_t { number, boolean, names };

struct KeyInfo {
	const char *name;   // as docs/configuration.md names the flow's setting
	KeyType type;
	const char *names;  // names: the words, space-separated, their values 0, 1, ... (verb: its own)
};

/* In PlantKey's order. */
constexpr KeyInfo kKeys[kPlantKeys] = {
	{"size", KeyType::number, nullptr},
	{"qps", KeyType::number, nullptr},
	{"batch", KeyType::number, nullptr},
	{"signal_every", KeyType::number, nullptr},
	{"sq_depth", KeyType::number, nullptr},
	{"window", KeyType::number, nullptr},
	{"flow_window", KeyType::number, nullptr},
	{"inline", KeyType::boolean, nullptr},
	{"fence", KeyType::boolean, nullptr},
	{"verb", KeyType::names, nullptr},
	{"transport", KeyType::names, "rc uc"},
	{"post_api", KeyType::names, "classic wr"},
	{"rate", KeyType::number, nullptr},
	{"messages", KeyType::number, nullptr},
	{"reliability", KeyType::names, "none software"},
	{"verify", KeyType::boolean, nullptr},
};
static_assert(static_cast<uint8_t>(Transport::uc) == 1 && static_cast<uint8_t>(PostApi::wr) == 1 &&
		      static_cast<uint8_t>(Reliability::software) == 1,
	      "kKeys' name lists follow the enums' values");

std::string key_list()
{
	std::string s;
	for (const KeyInfo &k : kKeys)
		s += (s.empty() ? "" : ", ") + std::string(k.name);
	return s;
}

/* The operator at the start of p (the longest that matches); its length in *len. */
bool parse_op(const char *p, PlantOp *op, size_t *len)
{
	static const struct { const char *s; PlantOp op; } ops[] = {
		{"<=", PlantOp::le}, {">=", PlantOp::ge}, {"!=", PlantOp::ne}, {"==", PlantOp::eq},
		{"<", PlantOp::lt}, {">", PlantOp::gt}, {"=", PlantOp::eq},
	};
	for (const auto &o : ops)
		if (strncmp(p, o.s, strlen(o.s)) == 0) {
			*op = o.op;
			*len = strlen(o.s);
			return true;
		}
	return false;
}

/* "64K", "1000", "2.5": an integer with a binary suffix, or a plain decimal. */
bool parse_number(const std::string &s, double *out)
{
	uint64_t u;
	if (parse_size(s.c_str(), 0, UINT64_MAX >> 1, &u)) {
		*out = static_cast<double>(u);
		return true;
	}
	errno = 0;
	char *end = nullptr;
	const double v = strtod(s.c_str(), &end);
	if (s.empty() || errno != 0 || *end != '\0' || !std::isfinite(v) || v < 0)
		return false;
	*out = v;
	return true;
}

/* The index of word among the space-separated words, -1: none. */
int word_index(const char *words, const std::string &word)
{
	int i = 0;
	for (const char *p = words; *p != '\0'; i++) {
		const size_t n = strcspn(p, " ");
		if (n == word.size() && strncmp(p, word.c_str(), n) == 0)
			return i;
		p += n + (p[n] == ' ');
	}
	return -1;
}

/* VALUE for key k; "" or what is wrong with it. */
std::string parse_value(const KeyInfo &k, PlantKey key, const std::string &val, double *out)
{
	switch (k.type) {
	case KeyType::number:
		return parse_number(val, out) ? "" : "is not a number (64, 4K, 2.5)";
	case KeyType::boolean:
		if (val == "true" || val == "false") {
			*out = val == "true";
			return "";
		}
		return "is not true or false";
	case KeyType::names:
		if (key == PlantKey::verb) {
			Verb v;
			if (!verb_from_name(val.c_str(), &v))
				return "is not one of " + verb_names_list();
			*out = static_cast<double>(static_cast<uint8_t>(v));
			return "";
		}
		if (int i = word_index(k.names, val); i >= 0) {
			*out = i;
			return "";
		}
		return std::string("is not one of: ") + k.names;
	}
	return "has no type";
}

/* One COND: KEY OP VALUE; "" or the error (without the spec). */
std::string parse_cond(const std::string &c, PlantCond *out)
{
	const size_t klen = strspn(c.c_str(), "abcdefghijklmnopqrstuvwxyz_");
	const std::string key = c.substr(0, klen);
	size_t k = 0;
	while (k < kPlantKeys && key != kKeys[k].name)
		k++;
	if (key.empty())
		return "condition '" + c + "' does not start with a key (" + key_list() + ")";
	if (k == kPlantKeys)
		return "unknown key '" + key + "' (one of " + key_list() + ")";
	size_t olen = 0;
	if (!parse_op(c.c_str() + klen, &out->op, &olen))
		return "condition '" + c + "': no operator after '" + key + "' (one of < <= > >= = !=)";
	const std::string val = c.substr(klen + olen);
	if (val.empty())
		return "condition '" + c + "': no value";
	out->key = static_cast<PlantKey>(k);
	const bool ordered = out->op != PlantOp::eq && out->op != PlantOp::ne;
	if (ordered && kKeys[k].type != KeyType::number)
		return "condition '" + c + "': " + key + " is a name, compared with = or != only";
	if (std::string why = parse_value(kKeys[k], out->key, val, &out->value); !why.empty())
		return "condition '" + c + "': '" + val + "' " + why;
	return "";
}

} // namespace

int plant_parse(const std::string &spec, PlantSpec *out, std::string *err)
{
	*out = PlantSpec{};
	out->text = spec;
	auto fail = [&](const std::string &why) {
		*err = "--plant '" + spec + "': " + why;
		return -1;
	};
	std::string s;
	for (char ch : spec)   // spaces are for the reader: 'slow: batch <= 2'
		if (ch != ' ')
			s += ch;
	const size_t colon = s.find(':');
	if (colon == std::string::npos)
		return fail("not EFFECT:COND[,COND...] (no ':')");
	const std::string effect = s.substr(0, colon);
	if (effect == "corrupt")
		out->effect = PlantEffect::corrupt;
	else if (effect == "slow")
		out->effect = PlantEffect::slow;
	else if (effect == "wedge")
		out->effect = PlantEffect::wedge;
	else
		return fail("unknown effect '" + effect + "' (corrupt, slow or wedge)");
	const char *vm = getenv("SOFTROCE");
	if (out->effect == PlantEffect::wedge && (vm == nullptr || strcmp(vm, "vm") != 0))
		return fail("wedge crashes the kernel it runs on: only in tools/softroce's VM (SOFTROCE=vm)");
	const std::string conds = s.substr(colon + 1);
	if (conds.empty())
		return fail("no condition after '" + effect + ":'");
	for (size_t at = 0; at <= conds.size();) {
		size_t comma = conds.find(',', at);
		if (comma == std::string::npos)
			comma = conds.size();
		const std::string one = conds.substr(at, comma - at);
		if (one.empty())
			return fail("an empty condition");
		PlantCond c;
		if (std::string why = parse_cond(one, &c); !why.empty())
			return fail(why);
		out->conds.push_back(c);
		at = comma + 1;
	}
	return 0;
}

bool plant_matches(const PlantSpec &s, const PlantValues &v)
{
	for (const PlantCond &c : s.conds) {
		const double x = v.get(c.key);
		bool ok = false;
		switch (c.op) {
		case PlantOp::lt: ok = x < c.value; break;
		case PlantOp::le: ok = x <= c.value; break;
		case PlantOp::gt: ok = x > c.value; break;
		case PlantOp::ge: ok = x >= c.value; break;
		case PlantOp::eq: ok = x == c.value; break;
		case PlantOp::ne: ok = x != c.value; break;
		}
		if (!ok)
			return false;
	}
	return true;
}

const char *plant_effect_name(PlantEffect e)
{
	return e == PlantEffect::slow ? "slow" : e == PlantEffect::wedge ? "wedge" : "corrupt";
}

std::string plant_wedge_kernel()
{
	for (const auto &[path, what] : {std::pair{"/proc/sys/kernel/panic", "0"}, std::pair{"/proc/sysrq-trigger", "c"}}) {
		FILE *f = fopen(path, "w");
		if (f == nullptr || fputs(what, f) < 0 || fclose(f) != 0)
			return std::string(path) + ": " + strerror(errno);
	}
	return "the kernel did not crash";
}

const char *plant_key_name(PlantKey k)
{
	return static_cast<size_t>(k) < kPlantKeys ? kKeys[static_cast<size_t>(k)].name : "?";
}

} // namespace rp
