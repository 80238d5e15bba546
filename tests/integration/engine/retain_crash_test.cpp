// Retain crash safety against the real binary: `takt retain-stress` saves images as fast as
// the disk allows and is killed with SIGKILL at random points, again and again. After every
// kill the store must load one complete snapshot (every variable holding the same counter
// value), never older than the one loaded before, and no slot may be damaged.
// TAKT_RETAIN_KILLS sets the number of kills (200 by default; 1000 for the nightly run).
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "support/paths.h"
#include "support/process.h"
#include "support/takt_cli.h"
#include "support/temp_dir.h"
#include "takt/engine/retain.h"

namespace takt::engine {
namespace {

constexpr int kVars = 2048;

int killCount() {
    const char* env = std::getenv("TAKT_RETAIN_KILLS");
    const int n = env != nullptr ? std::atoi(env) : 0;
    return n > 0 ? n : 200;
}

// `takt retain-stress`: it saves as fast as it can and ends itself after 60 s at the latest.
std::vector<std::string> stressArgv(const std::string& path) {
    return test::taktArgv(
        {"retain-stress", "--path", path, "--vars", std::to_string(kVars), "--interval-ms", "1", "--seconds", "60"});
}

// Every variable equal: the counter value of the one snapshot the image holds.
bool consistentCounter(const RetainImage& image, std::int32_t& counter, std::string& why) {
    if (image.payload.size() != 4U * kVars || image.layout.variables.size() != kVars) {
        why = "image of " + std::to_string(image.payload.size()) + " bytes";
        return false;
    }
    std::memcpy(&counter, image.payload.data(), 4);
    for (int i = 1; i < kVars; ++i) {
        std::int32_t v = 0;
        std::memcpy(&v, image.payload.data() + 4 * i, 4);
        if (v != counter) {
            why = "v0 = " + std::to_string(counter) + " but v" + std::to_string(i) + " = " + std::to_string(v);
            return false;
        }
    }
    return true;
}

TEST(RetainCrash, KillDuringSavesNeverYieldsACorruptOrMixedImage) {
    test::TempDir dir;
    const std::string path = (dir.path() / "retain").string();
    const int kills = killCount();
    const unsigned seed = std::random_device{}();
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    // The child starts saving within milliseconds of "loaded"; under qemu-user, 20 times later.
    std::uniform_int_distribution<int> delayUs(0, test::kUnderEmulator ? 500'000 : 25'000);

    std::int32_t lastCounter = 0;
    std::uint64_t lastSequence = 0;
    int advanced = 0;
    for (int k = 0; k < kills; ++k) {
        test::Process child(stressArgv(path), {.capture = test::Capture::Stdout});
        ASSERT_TRUE(child.started());
        std::string line;
        ASSERT_TRUE(child.readLine(line)) << "kill " << k << ": the child did not start";
        long long childCounter = -1;
        unsigned long long childSequence = 0;
        ASSERT_EQ(std::sscanf(line.c_str(), "loaded %lld %llu", &childCounter, &childSequence), 2) << line;
        // What the child restored is what the last kill left.
        EXPECT_EQ(childCounter, lastCounter) << "kill " << k;

        std::this_thread::sleep_for(std::chrono::microseconds(delayUs(rng)));
        child.signal(SIGKILL);
        ASSERT_EQ(child.waitForExit(std::chrono::seconds(30)), 128 + SIGKILL) << "kill " << k << ": the child exited";

        RetainStore store(path);
        const RetainLoadResult r = store.load();
        ASSERT_TRUE(r.rejected.empty()) << "kill " << k << ": " << r.rejected.front();
        if (!r.found) {
            ASSERT_EQ(lastSequence, 0U) << "kill " << k << ": every slot vanished";
            continue;
        }
        std::int32_t counter = 0;
        std::string why;
        ASSERT_TRUE(consistentCounter(r.image, counter, why)) << "kill " << k << ": mixed image: " << why;
        ASSERT_GE(r.image.sequence, lastSequence) << "kill " << k << ": an older image won";
        ASSERT_GE(counter, lastCounter) << "kill " << k;
        advanced += r.image.sequence > lastSequence ? 1 : 0;
        lastCounter = counter;
        lastSequence = r.image.sequence;
    }
    // The kills must have hit a process that was saving, not one that never got to it.
    EXPECT_GT(advanced, 0);
    RecordProperty("kills", kills);
    RecordProperty("kills_after_progress", advanced);
    RecordProperty("final_sequence", static_cast<int>(lastSequence));
}

} // namespace
} // namespace takt::engine
