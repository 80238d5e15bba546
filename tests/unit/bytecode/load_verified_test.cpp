// loadVerified: the one door from program.stbc bytes to a Module that may run. Every refusal
// says at which stage, so each caller words it the same way.
#include <gtest/gtest.h>

#include "bytecode_test_util.h"
#include "support/temp_dir.h"
#include "takt/bytecode/container.h"
#include "takt/bytecode/verifier.h"

namespace takt::bytecode {
namespace {

TEST(LoadVerified, AcceptsAValidFileAndReportsTheContainerHash) {
    const std::vector<std::uint8_t> bytes = serialize(test::validModule());
    const VerifiedProgram p = loadVerified(bytes);
    ASSERT_TRUE(p.ok()) << p.error;
    ASSERT_NE(p.module, nullptr);
    EXPECT_EQ(serialize(*p.module), bytes);
    EXPECT_EQ(p.hashHex(), hashHex(deserialize(bytes).hash));
    EXPECT_EQ(p.hashHex().size(), 64u);
}

TEST(LoadVerified, AFileThatDecodesButFailsVerificationIsRefusedAtTheVerifyStage) {
    Module m = test::validModule();
    m.initCode = static_cast<std::uint32_t>(m.code.size()) + 100; // not the entry of any POU
    const std::vector<std::uint8_t> bytes = serialize(m);
    ASSERT_TRUE(deserialize(bytes).ok());
    const VerifiedProgram p = loadVerified(bytes);
    EXPECT_FALSE(p.ok());
    EXPECT_EQ(p.stage, VerifiedProgram::Stage::Verify);
    EXPECT_EQ(p.module, nullptr);
    EXPECT_EQ(p.error, verify(m).message);
}

TEST(LoadVerified, DamagedOrMissingFilesAreRefusedAtTheDecodeStage) {
    std::vector<std::uint8_t> bytes = serialize(test::validModule());
    bytes[bytes.size() / 2] ^= 0x40;
    const VerifiedProgram damaged = loadVerified(bytes);
    EXPECT_EQ(damaged.stage, VerifiedProgram::Stage::Decode);
    EXPECT_EQ(damaged.module, nullptr);
    EXPECT_EQ(damaged.error, deserialize(bytes).error);

    takt::test::TempDir dir;
    const VerifiedProgram missing = loadVerifiedFile(dir.path() / "program.stbc");
    EXPECT_EQ(missing.stage, VerifiedProgram::Stage::Decode);
    EXPECT_NE(missing.error.find("cannot open"), std::string::npos) << missing.error;
}

} // namespace
} // namespace takt::bytecode
