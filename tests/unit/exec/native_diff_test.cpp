// Generated programs (tests/support/native_diff) on the interpreter and the native tier: the
// same image after every cycle, the same fault at the same place. A failure names the seed and
// prints the program and the first difference. TAKT_NATIVE_DIFF_SEEDS=first:count runs another
// range of seeds (thousands in a release build; docs/performance.md, "Native tier").
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <string>

#include "support/native_diff/st_gen.h"
#include "support/native_diff/tier_diff.h"
#include "takt/bytecode/opcodes.h"
#include "takt/native/native.h"

namespace takt::test {
namespace {

constexpr int kCycles = 25;

struct SeedRange {
    std::uint64_t first;
    std::uint64_t count;
};

SeedRange seeds(std::uint64_t first, std::uint64_t count) {
    if (const char* env = std::getenv("TAKT_NATIVE_DIFF_SEEDS"); env != nullptr) {
        char* end = nullptr;
        first = std::strtoull(env, &end, 10);
        if (end != nullptr && *end == ':') {
            count = std::strtoull(end + 1, nullptr, 10);
        }
    }
    return {first, count};
}

struct Tally {
    std::uint64_t runs = 0; // seeds that compiled and agreed
    std::uint64_t native = 0;
    std::uint64_t faulted = 0;
    std::uint64_t nanBits = 0;             // seeds where a NaN's sign or payload differed (not compared)
    std::map<std::string, int> fallbacks;  // unsupported opcode -> seeds
    std::map<std::string, int> faults;     // trap message -> seeds
    std::set<std::uint32_t> nativeOpcodes; // opcodes of the programs that ran native
};

// Runs the seeds of one profile, failing the test for each program that does not compile (a bug
// of the generator) or runs differently on the tiers; the first few are printed in full.
void runSeeds(const SeedRange& range, bool calls, Tally& tally) {
    int failures = 0;
    for (std::uint64_t seed = range.first; seed < range.first + range.count; ++seed) {
        SeedChoices choices(seed);
        GenOptions options;
        options.calls = calls;
        const GeneratedProgram program = generateProgram(choices, options);
        const TierDiff d = compareTiers(program.text, program.overflowTrap, kCycles, program.budget);
        const std::string name = "seed " + std::to_string(seed) + (calls ? "" : " (calls off)") +
                                 (program.overflowTrap ? ", overflow = \"trap\"" : "") +
                                 (program.budget != 0 ? ", budget " + std::to_string(program.budget) : "");
        const std::string text = ++failures <= 3 ? program.text : "";
        if (!d.compiled) {
            ADD_FAILURE() << name << ": the generated program does not compile (a bug of the generator)\n"
                          << d.compileErrors << "\n"
                          << text;
            continue;
        }
        if (!d.difference.empty()) {
            ADD_FAILURE() << name << ", tiers differ (" << d.status << "): " << d.difference << "\n" << text;
            continue;
        }
        --failures;
        ++tally.runs;
        if (d.ranNative()) {
            ++tally.native;
            tally.nativeOpcodes.insert(d.opcodes.begin(), d.opcodes.end());
        }
        tally.nanBits += d.nanBits ? 1 : 0;
        if (d.faulted) {
            ++tally.faulted;
            ++tally.faults[d.fault.substr(0, d.fault.find(" at "))];
        }
        if (const auto at = d.status.find("unsupported "); at != std::string::npos) {
            ++tally.fallbacks[d.status.substr(at + 12, d.status.find(' ', at + 12) - at - 12)];
        }
    }
}

std::string summary(const Tally& t) {
    std::string s = std::to_string(t.runs) + " seeds, " + std::to_string(t.native) + " ran native (" +
                    std::to_string(t.nativeOpcodes.size()) + " of the " + std::to_string(bytecode::kOpcodeCount) +
                    " opcodes); " + std::to_string(t.faulted) + " ended in a fault:";
    for (const auto& [message, n] : t.faults) {
        s += " [" + message + "] " + std::to_string(n);
    }
    s += "; NaN bits differed in " + std::to_string(t.nanBits) + "; on the interpreter for:";
    for (const auto& [op, n] : t.fallbacks) {
        s += " " + op + " " + std::to_string(n);
    }
    return s;
}

// Every feature of the generator: the tier translates all of it, so nearly every program must
// run native (a few may still fall back, and say why in the summary).
TEST(NativeTierGenerated, AllFeaturesRunNativeAndSameAsInterpreter) {
    if (!native::available()) {
        GTEST_SKIP() << "takt built without the native tier";
    }
    Tally tally;
    runSeeds(seeds(1, 40), true, tally);
    std::printf("all features: %s\n", summary(tally).c_str());
    EXPECT_GE(tally.native * 100, tally.runs * 80) << summary(tally);
}

// Programs without calls: the tier's first slice, and the bulk of the instructions.
TEST(NativeTierGenerated, CallFreeProgramsRunNativeAndSameAsInterpreter) {
    if (!native::available()) {
        GTEST_SKIP() << "takt built without the native tier";
    }
    Tally tally;
    runSeeds(seeds(1, 60), false, tally);
    std::printf("calls off: %s\n", summary(tally).c_str());
    EXPECT_GE(tally.native * 100, tally.runs * 80) << summary(tally);
}

} // namespace
} // namespace takt::test
