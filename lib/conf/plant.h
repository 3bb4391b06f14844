/* --plant EFFECT:COND[,COND...]: a test hook that acts only on the flows in one corner
 * of the workload space, so that a test can prove a search over that space finds it.
 *   --plant 'corrupt:size>=8K,qps>=4' --plant 'slow:batch<=2,inline=true'
 *   --plant 'wedge:size>=8K' (the kernel hangs: only where SOFTROCE=vm, tools/softroce's guest)
 * COND is KEY OP VALUE over a flow's settings as docs/configuration.md names them;
 * numbers compare as numbers (4K, 64K suffixes), enums and booleans as names (= and !=
 * only). Parsed once before EAL; matched per flow once the plan derived its settings.
 * Plain data, no DPDK or verbs. */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rp {

enum class PlantEffect : uint8_t {
	corrupt,   // one byte of an early message flipped: the receiver's verification fails the run
	slow,      // the flow paced at kPlantSlowPps at most
	wedge,     // the kernel it runs on crashed and left hanging: only in tools/softroce's VM
};

/* A slow plant's pace, messages per second per flow (a quarter of the flow's own rate
 * when it has a lower one): rxe alone reaches tens of thousands. */
inline constexpr double kPlantSlowPps = 1000;
/* The message (of the flow's first QP) a corrupt plant flips a byte of. */
inline constexpr uint64_t kPlantCorruptMsg = 0;

/* The keys a condition may name, in plant_key_names' order. */
enum class PlantKey : uint8_t {
	size, qps, batch, signal_every, sq_depth, window, flow_window, inline_send, fence, verb, transport,
	post_api, rate, messages, reliability, verify, count
};
inline constexpr size_t kPlantKeys = static_cast<size_t>(PlantKey::count);

enum class PlantOp : uint8_t { lt, le, gt, ge, eq, ne };

struct PlantCond {
	PlantKey key = PlantKey::size;
	PlantOp op = PlantOp::eq;
	double value = 0;   // a number, or an enum's or boolean's value (Verb, Transport, ... as a number)
};

struct PlantSpec {
	std::string text;   // as given, for the log line when it fires
	PlantEffect effect = PlantEffect::corrupt;
	std::vector<PlantCond> conds;   // all must hold
};

/* A flow's settings, indexed by PlantKey: numbers as they are, enums and booleans as
 * their values (static_cast of Verb, Transport, PostApi, Reliability; 0 or 1). */
struct PlantValues {
	double v[kPlantKeys] = {};
	void set(PlantKey k, double x) { v[static_cast<size_t>(k)] = x; }
	double get(PlantKey k) const { return v[static_cast<size_t>(k)]; }
};

/* Parses SPEC; returns 0, or -1 with *err naming the part refused and why. */
int plant_parse(const std::string &spec, PlantSpec *out, std::string *err);

/* Whether every condition of s holds for the flow's values. */
bool plant_matches(const PlantSpec &s, const PlantValues &v);

const char *plant_effect_name(PlantEffect e);

/* A wedge plant's act: kernel.panic = 0 (a panic then hangs, never reboots), then
 * sysrq's crash. Returns only when it could not (the reason). */
std::string plant_wedge_kernel();
const char *plant_key_name(PlantKey k);

} // namespace rp
