// Forces on inputs a driver owns, through a running `takt run`, its control endpoint (`takt ctl`)
// and a real Modbus master: a force overrides what the program reads, never the field's value,
// so an unforce gives the program what the master wrote last.
#include "support/io_test_support.h"
#include "support/modbus_peer.h"
#include "support/takt_cli.h"

namespace takt::io::test {
namespace {

// Coils 0..7 written by the master are %IX0.0..%IX0.7; the program echoes %IX0.0 into holding
// register 0 (%QW0), which the master reads back.
constexpr const char* kProgram = R"(PROGRAM Main
VAR
    cmd AT %IX0.0 : BOOL;
    echo AT %QW0 : WORD;
END_VAR
IF cmd THEN
    echo := 1;
ELSE
    echo := 0;
END_IF;
END_PROGRAM
)";

class ForceRig {
public:
    ForceRig() : port_(freeTcpPort()), master_(port_) {
        std::filesystem::create_directories(dir_.path() / "src");
        dir_.write("runtime.toml", fmt::format("[bundle]\nversion = 1\n\n[resource]\nname = \"cell\"\n"
                                               "cycle_interval_ms = 5\n\n[runtime.control]\nendpoint = \"{}\"\n",
                                               endpoint()));
        dir_.write("io.toml",
                   fmt::format("[io]\ndriver = \"modbus-server\"\n\n[io.params]\nlisten = \"127.0.0.1:{}\"\n"
                               "map = [{{ table = \"coils\", start = 0, count = 8, address = \"%IX0.0\" }}]\n",
                               port_));
        dir_.write("src/main.st", kProgram);
        takt_ =
            std::make_unique<Process>(takt::test::taktArgv({"run", "--project", dir_.path().string(), "--for", "60s"}),
                                      takt::test::ProcessOptions{.log = dir_.path() / "run.log"});
    }

    [[nodiscard]] std::string endpoint() const { return "unix://" + (dir_.path() / "ctl.sock").string(); }
    Process& takt() { return *takt_; }
    Master& master() { return master_; }

    // `takt ctl METHOD PARAMS`: its exit code, the reply in `out`.
    int ctl(const std::string& method, const std::string& params, std::string* out = nullptr) {
        const takt::test::RunResult r =
            takt::test::runTaktMerged("ctl --endpoint " + takt::test::shellQuote(endpoint()) + " " + method + " " +
                                      takt::test::shellQuote(params));
        if (out != nullptr) {
            *out = r.out;
        }
        return r.exitCode;
    }

    // The program's echo of %IX0.0 reaches `v` at the master.
    bool echoIs(std::uint16_t v) {
        return takt_->waitFor([&] { return master_.holding(0) == std::optional<std::uint16_t>(v); });
    }

private:
    TempDir dir_;
    std::uint16_t port_;
    Master master_;
    std::unique_ptr<Process> takt_;
};

TEST(RunForce, UnforceGivesBackWhatTheMasterWroteToADriverOwnedInput) {
    ForceRig rig;
    ASSERT_TRUE(rig.takt().started());
    ASSERT_TRUE(rig.takt().waitFor([&] { return rig.master().writeCoil(0, true); })) << rig.takt().log();
    ASSERT_TRUE(rig.echoIs(1)) << rig.takt().log();
    ASSERT_TRUE(rig.master().writeCoil(0, false));
    ASSERT_TRUE(rig.echoIs(0)) << rig.takt().log();

    // Forced TRUE: the program reads TRUE, the master's FALSE is still the field's value.
    std::string reply;
    ASSERT_EQ(rig.ctl("io.force", R"({"address":"%IX0.0","value":{"type":"BOOL","value":true}})", &reply), 0) << reply;
    EXPECT_TRUE(rig.echoIs(1)) << rig.takt().log();
    ASSERT_EQ(rig.ctl("io.unforce", R"({"address":"%IX0.0"})", &reply), 0) << reply;
    EXPECT_TRUE(rig.echoIs(0)) << "after io.unforce the program reads the master's FALSE again\n" << rig.takt().log();

    // Forced FALSE while the master writes TRUE: the program keeps reading FALSE, and the
    // master's write is what it reads once the force is gone.
    ASSERT_EQ(rig.ctl("io.force", R"({"address":"%IX0.0","value":{"type":"BOOL","value":false}})", &reply), 0) << reply;
    ASSERT_TRUE(rig.master().writeCoil(0, true));
    ASSERT_EQ(rig.ctl("io.read", R"({"addresses":["%IX0.0"]})", &reply), 0) << reply;
    EXPECT_NE(reply.find("false"), std::string::npos) << "io.read shows the forced value: " << reply;
    EXPECT_TRUE(rig.echoIs(0)) << rig.takt().log();
    ASSERT_EQ(rig.ctl("io.unforce", R"({"address":"%IX0.0"})", &reply), 0) << reply;
    EXPECT_TRUE(rig.echoIs(1)) << "the master's TRUE written while forced\n" << rig.takt().log();
    EXPECT_EQ(rig.takt().terminate(), 0) << rig.takt().log();
}

} // namespace
} // namespace takt::io::test
