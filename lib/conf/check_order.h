/* The order of a pipeline file's checks, shared by the reader (config.cpp) and
 * conf_validate (validate.cpp): each object's checks by step, in the order of the one
 * pass they were split from, so that of two mistakes in a file the one reported does
 * not depend on which side checks it. config_load reads until the reader's first
 * refusal, then validates what comes before it. Internal to lib/conf. */
#pragma once

#include "conf/config.h"

#include <compare>
#include <climits>
#include <string>

namespace rp {

enum ConfSection : int {
	kSecRoot, kSecDevices, kSecPools, kSecIoContexts, kSecFlows, kSecRings, kSecStages, kSecRun, kSecPattern,
	kSecAcross,   // the sections against each other, once every one read cleanly
};

/* An element of a list: its keys, its name, the name unique in the list, its values,
 * then what relates them (a flow's own steps: FlowStep). */
enum ObjStep : int { kStepKeys, kStepName, kStepUnique, kStepValues, kStepChecks };

/* A flow's steps after its values: R the reader's, V conf_validate's. */
enum FlowStep : int {
	kFlowPeer = kStepChecks,   // R: peer's format
	kFlowEndsRead,             // R: listen, local
	kFlowListenAndPeer,        // V
	kFlowListen,               // R: listen's format
	kFlowLocal,                // R: local's format
	kFlowEnds,                 // V: local without peer, UC verbs, settings of the other end; size with sizes
	kFlowSizes,                // R
	kFlowFixedSize,            // V
	kFlowRate,                 // R
	kFlowCounts,               // V: messages with duration, inline
	kFlowReliabilityRead,      // R
	kFlowReliability,          // V
	kFlowChunkRead,            // R
	kFlowChunk,                // V
	kFlowLossRead,             // R
	kFlowLoss,                 // V
	kFlowQueues,               // V: send queue, windows
};

/* The pattern's: R its values, V root and pairs against kind, R pairs, V its flows, R devices. */
enum PatternStep : int { kPatternValues, kPatternKind, kPatternPairs, kPatternFlows, kPatternDevices };

inline constexpr int kListHead = -1;          // the list itself, before its elements
inline constexpr int kListEnd = INT_MAX - 1;  // the list as a whole, after them

struct ConfPos {
	int section = 0, index = 0, step = 0;
	auto operator<=>(const ConfPos &) const = default;
};

inline constexpr ConfPos kConfEnd{INT_MAX, INT_MAX, INT_MAX};   // the reader refused nothing

/* conf_validate's checks that come before `limit` (the reader's first refusal there):
 * returns 0 when none refuses, else -1 with *err set when one does. */
int conf_validate_before(PipelineConf *c, ConfPos limit, std::string *err);

} // namespace rp
