// io.toml loader: both driver forms, driver names, safe-state addresses and typed values in
// word and byte address mode, safeOutputImage(); and every board file under boards/.
#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "support/paths.h"
#include "takt/engine/config.h"
#include "takt/io/board.h"
#include "takt/io/io_config.h"

namespace takt::io {
namespace {

using engine::ConfigDiagnostic;

IoConfigResult parse(const std::string& text, bool byteAddressing = false) {
    return parseIoConfig(text, "io.toml", byteAddressing);
}

std::string dump(const std::vector<ConfigDiagnostic>& diagnostics) {
    std::string s;
    for (const ConfigDiagnostic& d : diagnostics) {
        s += engine::formatDiagnostic(d) + "\n";
    }
    return s;
}

const ConfigDiagnostic* find(const IoConfigResult& r, const std::string& key) {
    auto it = std::find_if(r.diagnostics.begin(), r.diagnostics.end(),
                           [&](const ConfigDiagnostic& d) { return d.key == key; });
    return it == r.diagnostics.end() ? nullptr : &*it;
}

IoConfigResult safe(const std::string& address, const std::string& value, bool byteAddressing = false) {
    return parse("[io]\ndriver = \"loopback\"\n[[io.safe_state]]\naddress = \"" + address + "\"\nvalue = " + value +
                     "\n",
                 byteAddressing);
}

TEST(IoConfig, SingleDriverForm) {
    IoConfigResult r = parse("[io]\ndriver = \"simulated\"\n\n[io.params]\nplant = \"filling_line\"\ncycle_ms = 10\n");
    ASSERT_TRUE(r.config) << dump(r.diagnostics);
    ASSERT_EQ(r.config->drivers.size(), 1U);
    const DriverSpec& d = r.config->drivers[0];
    EXPECT_EQ(d.name, "simulated");
    EXPECT_EQ(d.source.file, "io.toml");
    EXPECT_EQ(d.source.keyPrefix, "io.params");
    EXPECT_EQ(d.line, 2U);
    EXPECT_EQ(d.params["plant"].value_or(std::string()), "filling_line");
    // The params keep their source positions, so a driver can name the line of a bad value.
    EXPECT_EQ(d.params["cycle_ms"].node()->source().begin.line, 6U);
}

TEST(IoConfig, DriversInheritTheProjectAddressMode) {
    const std::string text = "[io]\ndrivers = [ { name = \"loopback\" }, { name = \"gpio\" } ]\n";
    for (const bool byteMode : {false, true}) {
        IoConfigResult r = parse(text, byteMode);
        ASSERT_TRUE(r.config) << dump(r.diagnostics);
        ASSERT_EQ(r.config->drivers.size(), 2U);
        for (const DriverSpec& d : r.config->drivers) {
            EXPECT_EQ(d.byteAddressing, byteMode) << d.name;
        }
    }
}

TEST(IoConfig, ListForm) {
    IoConfigResult r = parse(R"([io]
drivers = [
  { name = "modbus-tcp", params = { address = "10.0.0.2:502" } },
  { name = "gpio" },
]
)");
    ASSERT_TRUE(r.config) << dump(r.diagnostics);
    ASSERT_EQ(r.config->drivers.size(), 2U);
    EXPECT_EQ(r.config->drivers[0].name, "modbus-tcp");
    EXPECT_EQ(r.config->drivers[0].source.keyPrefix, "io.drivers[0].params");
    EXPECT_EQ(r.config->drivers[0].params["address"].value_or(std::string()), "10.0.0.2:502");
    EXPECT_EQ(r.config->drivers[1].source.keyPrefix, "io.drivers[1].params");
    EXPECT_EQ(r.config->drivers[1].line, 4U);
    EXPECT_TRUE(r.config->drivers[1].params.empty());
}

TEST(IoConfig, ArrayOfTablesIsTheSameListForm) {
    IoConfigResult r = parse("[[io.drivers]]\nname = \"mqtt\"\n[io.drivers.params]\nbroker = \"127.0.0.1:1883\"\n");
    ASSERT_TRUE(r.config) << dump(r.diagnostics);
    EXPECT_EQ(r.config->drivers.at(0).params["broker"].value_or(std::string()), "127.0.0.1:1883");
}

TEST(IoConfig, EveryDesignedDriverNameIsAccepted) {
    for (const char* name : {"loopback", "simulated", "modbus-tcp", "modbus-rtu", "modbus-server", "mqtt", "gpio"}) {
        EXPECT_TRUE(parse(std::string("[io]\ndriver = \"") + name + "\"\n").config) << name;
    }
}

TEST(IoConfig, UnknownDriverListsTheKnownOnes) {
    IoConfigResult r = parse("[io]\ndriver = \"profinet\"\n");
    EXPECT_FALSE(r.config);
    const ConfigDiagnostic* d = find(r, "io.driver");
    ASSERT_NE(d, nullptr) << dump(r.diagnostics);
    EXPECT_EQ(d->line, 2U);
    EXPECT_NE(d->message.find("modbus-tcp"), std::string::npos) << d->message;
    r = parse("[io]\ndrivers = [{ name = \"canopen\" }]\n");
    EXPECT_NE(find(r, "io.drivers[0].name"), nullptr) << dump(r.diagnostics);
}

// truST projects may name an EtherCAT driver: one error says takt has none, in both forms.
TEST(IoConfig, EthercatIsNamedAsNotSupported) {
    for (const char* text : {"[io]\ndriver = \"ethercat\"\n", "[io]\ndrivers = [{ name = \"ethercat\" }]\n"}) {
        IoConfigResult r = parse(text);
        EXPECT_FALSE(r.config);
        ASSERT_EQ(r.diagnostics.size(), 1U) << dump(r.diagnostics);
        EXPECT_NE(r.diagnostics[0].message.find("\"ethercat\" is not supported by takt"), std::string::npos)
            << dump(r.diagnostics);
        EXPECT_EQ(r.diagnostics[0].line, 2U);
    }
}

// truST's gpio backend and sysfs_base: a warning at each key, and the gpio driver never sees them;
// a backend other than truST's "sysfs" is an error.
TEST(IoConfig, TrustGpioSysfsKeysAreIgnoredWithAWarning) {
    IoConfigResult r = parse("[io]\ndriver = \"gpio\"\n[io.params]\nchip = \"gpiochip0\"\nbackend = \"sysfs\"\n"
                             "sysfs_base = \"/sys/class/gpio\"\n");
    ASSERT_TRUE(r.config) << dump(r.diagnostics);
    ASSERT_EQ(r.diagnostics.size(), 2U) << dump(r.diagnostics);
    EXPECT_EQ(dump(r.diagnostics).find("error"), std::string::npos) << dump(r.diagnostics);
    const ConfigDiagnostic* backend = find(r, "io.params.backend");
    ASSERT_NE(backend, nullptr) << dump(r.diagnostics);
    EXPECT_EQ(backend->line, 5U);
    EXPECT_NE(backend->message.find("character device"), std::string::npos) << backend->message;
    const ConfigDiagnostic* base = find(r, "io.params.sysfs_base");
    ASSERT_NE(base, nullptr) << dump(r.diagnostics);
    EXPECT_EQ(base->line, 6U);
    const toml::table& params = r.config->drivers[0].params;
    EXPECT_FALSE(params.contains("backend"));
    EXPECT_FALSE(params.contains("sysfs_base"));
    EXPECT_TRUE(params.contains("chip"));

    IoConfigResult bad = parse("[io]\ndrivers = [{ name = \"gpio\", params = { backend = \"mmap\" } }]\n");
    EXPECT_FALSE(bad.config);
    const ConfigDiagnostic* e = find(bad, "io.drivers[0].params.backend");
    ASSERT_NE(e, nullptr) << dump(bad.diagnostics);
    EXPECT_EQ(e->severity, ConfigDiagnostic::Severity::Error);
    EXPECT_EQ(e->line, 2U);
    // Another driver's `backend` is that driver's business (an unknown key there).
    IoConfigResult other = parse("[io]\ndriver = \"loopback\"\n[io.params]\nbackend = \"sysfs\"\n");
    EXPECT_TRUE(other.diagnostics.empty()) << dump(other.diagnostics);
}

TEST(IoConfig, StructureErrors) {
    EXPECT_NE(find(parse("[io]\n"), "io"), nullptr);
    EXPECT_NE(find(parse(""), "io"), nullptr);
    EXPECT_NE(find(parse("[io]\ndriver = \"gpio\"\ndrivers = [{name = \"mqtt\"}]\n"), "io.drivers"), nullptr);
    EXPECT_NE(find(parse("[io]\ndriver = \"gpio\"\nparams = 3\n"), "io.params"), nullptr);
    EXPECT_NE(find(parse("[io]\ndriver = \"gpio\"\n[extra]\n"), "extra"), nullptr);
    EXPECT_NE(find(parse("[io]\ndriver = \"gpio\"\nsafe = []\n"), "io.safe"), nullptr);
    EXPECT_NE(find(parse("[io]\ndrivers = [{ name = \"gpio\", parms = {} }]\n"), "io.drivers[0].parms"), nullptr);
    EXPECT_NE(find(parse("[io]\ndrivers = []\n"), "io.drivers"), nullptr);
}

TEST(IoConfig, SafeStateBitsAndBytesInWordMode) {
    IoConfigResult r = parse(R"([io]
driver = "loopback"
[[io.safe_state]]
address = "%QX0.3"
value = "TRUE"
[[io.safe_state]]
address = "%QW1"
value = "16#BEEF"
[[io.safe_state]]
address = "%QB4"
value = "2#1010_0101"
[[io.safe_state]]
address = "%QD2"
value = "-2"
)");
    ASSERT_TRUE(r.config) << dump(r.diagnostics);
    const auto& s = r.config->safeState;
    ASSERT_EQ(s.size(), 4U);
    EXPECT_TRUE(s[0].isBit);
    EXPECT_EQ(s[0].bit, 3);
    EXPECT_EQ(s[0].range.first, 0U);
    EXPECT_EQ(s[1].range.first, 2U); // word mode: %QW1 is bytes 2..3
    EXPECT_EQ(s[1].range.count, 2U);
    EXPECT_EQ(s[1].value, 0xBEEFU);
    EXPECT_EQ(s[2].range.first, 4U);
    EXPECT_EQ(s[2].value, 0xA5U);
    EXPECT_EQ(s[3].range.first, 8U); // %QD2 is bytes 8..11
    EXPECT_EQ(s[3].value, 0xFFFFFFFEU);

    const std::vector<std::uint8_t> image = safeOutputImage(*r.config, 12);
    EXPECT_EQ(image, (std::vector<std::uint8_t>{0x08, 0, 0xEF, 0xBE, 0xA5, 0, 0, 0, 0xFE, 0xFF, 0xFF, 0xFF}));
    // A smaller image gets what fits and nothing beyond it.
    EXPECT_EQ(safeOutputImage(*r.config, 3), (std::vector<std::uint8_t>{0x08, 0, 0xEF}));
}

TEST(IoConfig, ByteModeUsesTheIndexAsByteOffset) {
    IoConfigResult r = safe("%QW3", "\"1\"", true);
    ASSERT_TRUE(r.config) << dump(r.diagnostics);
    EXPECT_EQ(r.config->safeState.at(0).range.first, 3U);
    r = safe("%QW3", "\"1\"", false);
    ASSERT_TRUE(r.config);
    EXPECT_EQ(r.config->safeState.at(0).range.first, 6U);
}

TEST(IoConfig, OverlapDependsOnAddressMode) {
    const std::string text = "[io]\ndriver = \"loopback\"\n"
                             "[[io.safe_state]]\naddress = \"%QW0\"\nvalue = \"0\"\n"
                             "[[io.safe_state]]\naddress = \"%QB1\"\nvalue = \"0\"\n";
    // Word mode: %QW0 is bytes 0..1 and %QB1 is byte 1.
    IoConfigResult r = parse(text, false);
    EXPECT_FALSE(r.config);
    const ConfigDiagnostic* d = find(r, "io.safe_state[1].address");
    ASSERT_NE(d, nullptr) << dump(r.diagnostics);
    EXPECT_NE(d->message.find("%QW0"), std::string::npos);
    EXPECT_EQ(d->line, 7U);
    // Byte mode: %QW0 is bytes 0..1 as well: still an overlap.
    EXPECT_FALSE(parse(text, true).config);
    // Two different bits of one byte do not overlap; the same bit twice does.
    EXPECT_TRUE(parse("[io]\ndriver = \"loopback\"\n[[io.safe_state]]\naddress = \"%QX0.0\"\nvalue = \"1\"\n"
                      "[[io.safe_state]]\naddress = \"%QX0.1\"\nvalue = \"0\"\n")
                    .config);
    EXPECT_FALSE(parse("[io]\ndriver = \"loopback\"\n[[io.safe_state]]\naddress = \"%QX0.0\"\nvalue = \"1\"\n"
                       "[[io.safe_state]]\naddress = \"%Q0.0\"\nvalue = \"0\"\n")
                     .config);
}

TEST(IoConfig, SafeStateValueForms) {
    struct Case {
        const char* address;
        const char* value;
        std::uint64_t expected;
    };
    for (const Case& c : {Case{"%QX0.0", "\"false\"", 0}, Case{"%QX0.0", "true", 1}, Case{"%QX0.0", "\"1\"", 1},
                          Case{"%QB0", "255", 0xFF}, Case{"%QB0", "\"-128\"", 0x80}, Case{"%QW0", "\"0xFFFF\"", 0xFFFF},
                          Case{"%QW0", "\"INT#-1\"", 0xFFFF}, Case{"%QW0", "\"WORD#16#12_34\"", 0x1234},
                          Case{"%QD0", "\"REAL#1.5\"", 0x3FC00000}, Case{"%QL0", "\"-1\"", ~std::uint64_t{0}},
                          Case{"%QX0.0", "\"BOOL#TRUE\"", 1}, Case{"%QB0", "\"8#17\"", 15}}) {
        IoConfigResult r = safe(c.address, c.value);
        ASSERT_TRUE(r.config) << c.address << " = " << c.value << "\n" << dump(r.diagnostics);
        EXPECT_EQ(r.config->safeState.at(0).value, c.expected) << c.address << " = " << c.value;
    }
}

TEST(IoConfig, SafeStateErrorsNameTheEntry) {
    struct Case {
        const char* address;
        const char* value;
        const char* key;
        const char* text;
    };
    for (const Case& c : {
             Case{"%IX0.0", "\"TRUE\"", "io.safe_state[0].address", "not an output"},
             Case{"%MW0", "\"0\"", "io.safe_state[0].address", "not an output"},
             Case{"%QX0.8", "\"TRUE\"", "io.safe_state[0].address", "outside 0..7"},
             Case{"QX0.0", "\"TRUE\"", "io.safe_state[0].address", "must start with '%'"},
             Case{"%QW", "\"0\"", "io.safe_state[0].address", "needs a number"},
             Case{"%QX0.0", "\"ON\"", "io.safe_state[0].value", "not a BOOL value"},
             Case{"%QX0.0", "\"2\"", "io.safe_state[0].value", "not a BOOL value"},
             Case{"%QB0", "\"256\"", "io.safe_state[0].value", "does not fit"},
             Case{"%QB0", "\"-129\"", "io.safe_state[0].value", "does not fit"},
             Case{"%QW0", "\"UINT#-1\"", "io.safe_state[0].value", "does not fit"},
             Case{"%QW0", "\"INT#40000\"", "io.safe_state[0].value", "does not fit"},
             Case{"%QW0", "\"DINT#1\"", "io.safe_state[0].value", "does not fit"},
             Case{"%QW0", "\"16#GG\"", "io.safe_state[0].value", "not an integer"},
             Case{"%QW0", "true", "io.safe_state[0].value", "bit address"},
             Case{"%QW0", "1.5", "io.safe_state[0].value", "expected a string"},
         }) {
        IoConfigResult r = safe(c.address, c.value);
        EXPECT_FALSE(r.config) << c.address << " = " << c.value;
        const ConfigDiagnostic* d = find(r, c.key);
        ASSERT_NE(d, nullptr) << c.address << " = " << c.value << "\n" << dump(r.diagnostics);
        EXPECT_NE(d->message.find(c.text), std::string::npos) << d->message;
        EXPECT_GT(d->line, 0U);
    }
    IoConfigResult r = parse("[io]\ndriver = \"loopback\"\n[[io.safe_state]]\naddress = \"%QX0.0\"\n");
    EXPECT_FALSE(r.config);
    EXPECT_NE(find(r, "io.safe_state[0]"), nullptr) << dump(r.diagnostics);
}

TEST(IoConfig, DemoIoIsClean) {
    IoConfigResult r = loadIoConfig(std::string(TAKT_SOURCE_DIR) + "/examples/demo/io.toml", false);
    ASSERT_TRUE(r.config) << dump(r.diagnostics);
    EXPECT_TRUE(r.diagnostics.empty()) << dump(r.diagnostics);
    EXPECT_EQ(r.config->drivers.at(0).name, "simulated");
    EXPECT_EQ(r.config->safeState.size(), 6U);
    // The alarm lamp (%QX0.3) is the one output on in the safe state.
    EXPECT_EQ(safeOutputImage(*r.config, 4), (std::vector<std::uint8_t>{0x08, 0, 0, 0}));
}

TEST(IoConfig, SyntaxErrorCarriesPosition) {
    IoConfigResult r = parse("[io]\ndriver = \"gpio\n");
    EXPECT_FALSE(r.config);
    ASSERT_EQ(r.diagnostics.size(), 1U);
    EXPECT_EQ(r.diagnostics[0].line, 2U);
}

// --- boards ----------------------------------------------------------------------------

class BoardFile : public ::testing::TestWithParam<const char*> {};

TEST_P(BoardFile, LoadsWithoutDiagnostics) {
    BoardResult r = loadBoard(GetParam());
    ASSERT_TRUE(r.board) << dump(r.diagnostics);
    EXPECT_TRUE(r.diagnostics.empty()) << dump(r.diagnostics);
    const Board& b = *r.board;
    EXPECT_EQ(b.name, GetParam());
    EXPECT_FALSE(b.description.empty());
    EXPECT_FALSE(b.installNotes.empty());
    EXPECT_FALSE(b.io.drivers.empty());
    // Every board drives its outputs to a defined state, with the alarm lamp on.
    ASSERT_FALSE(b.io.safeState.empty());
    EXPECT_EQ(safeOutputImage(b.io, 1).at(0), 0x08);
    for (const DriverSpec& d : b.io.drivers) {
        EXPECT_EQ(d.source.file, b.file.string());
        EXPECT_GT(d.line, 0U);
    }
}

INSTANTIATE_TEST_SUITE_P(Boards, BoardFile,
                         ::testing::Values("host-sim", "raspberry-pi-4", "raspberry-pi-5", "beaglebone-black",
                                           "x86-ipc-modbus"),
                         [](const ::testing::TestParamInfo<const char*>& param) {
                             std::string name = param.param;
                             std::replace(name.begin(), name.end(), '-', '_');
                             return name;
                         });

TEST(Boards, ListingHasEveryBoardFile) {
    std::vector<BoardSummary> boards = listBoards();
    std::vector<std::string> names;
    for (const BoardSummary& b : boards) {
        names.push_back(b.name);
        EXPECT_TRUE(b.valid) << b.name;
        EXPECT_FALSE(b.description.empty()) << b.name;
    }
    EXPECT_EQ(names, (std::vector<std::string>{"beaglebone-black", "host-sim", "raspberry-pi-4", "raspberry-pi-5",
                                               "x86-ipc-modbus"}));
}

TEST(Boards, RealTargetsRecommendFifo) {
    for (const char* name : {"raspberry-pi-4", "raspberry-pi-5", "beaglebone-black", "x86-ipc-modbus"}) {
        BoardResult r = loadBoard(name);
        ASSERT_TRUE(r.board) << name;
        ASSERT_TRUE(r.board->realtime) << name;
        EXPECT_TRUE(r.board->realtime->fifo) << name;
    }
    BoardResult sim = loadBoard("host-sim");
    ASSERT_TRUE(sim.board);
    EXPECT_FALSE(sim.board->realtime);
}

TEST(Boards, RecommendedRealtimeAppliesOnlyWhenRuntimeTomlHasNone) {
    BoardResult pi = loadBoard("raspberry-pi-4");
    ASSERT_TRUE(pi.board);
    engine::RuntimeConfigResult plain = engine::parseRuntimeConfig("[resource]\nname = \"x\"\n", "runtime.toml");
    ASSERT_TRUE(plain.config);
    EXPECT_FALSE(plain.config->realtimeGiven);
    EXPECT_TRUE(applyBoardRealtime(*pi.board, *plain.config));
    EXPECT_TRUE(plain.config->realtime.fifo);
    EXPECT_EQ(plain.config->realtime.priority, 80);
    EXPECT_EQ(plain.config->realtime.cpuAffinity, std::vector<int>{3});
    EXPECT_TRUE(plain.config->realtime.lockMemory);

    engine::RuntimeConfigResult own =
        engine::parseRuntimeConfig("[runtime.realtime]\nscheduler = \"other\"\n", "runtime.toml");
    ASSERT_TRUE(own.config);
    EXPECT_TRUE(own.config->realtimeGiven);
    EXPECT_FALSE(applyBoardRealtime(*pi.board, *own.config));
    EXPECT_FALSE(own.config->realtime.fifo);

    BoardResult sim = loadBoard("host-sim");
    ASSERT_TRUE(sim.board);
    engine::RuntimeConfigResult again = engine::parseRuntimeConfig("", "runtime.toml");
    ASSERT_TRUE(again.config);
    EXPECT_FALSE(applyBoardRealtime(*sim.board, *again.config));
}

TEST(Boards, UnknownBoardListsTheKnownOnes) {
    BoardResult r = loadBoard("commodore-64");
    EXPECT_FALSE(r.board);
    ASSERT_EQ(r.diagnostics.size(), 1U);
    EXPECT_NE(r.diagnostics[0].message.find("raspberry-pi-4"), std::string::npos) << r.diagnostics[0].message;
    EXPECT_FALSE(loadBoard("../etc/passwd").board);
}

TEST(Boards, NameMustMatchTheFileAndKeysAreChecked) {
    BoardResult r = parseBoard("name = \"pi\"\ndescription = \"d\"\narch = \"aarch64\"\n[io]\ndriver = \"gpio\"\n",
                               "boards/raspberry-pi-4.toml");
    EXPECT_FALSE(r.board);
    r = parseBoard("name = \"x\"\ndescription = \"d\"\narch = \"sparc\"\ncolour = 1\n[io]\ndriver = \"gpio\"\n",
                   "x.toml");
    EXPECT_FALSE(r.board);
    EXPECT_EQ(r.diagnostics.size(), 2U) << dump(r.diagnostics);
    r = parseBoard("name = \"x\"\ndescription = \"d\"\narch = \"any\"\n[runtime.realtime]\npriority = 5\n"
                   "[io]\ndriver = \"gpio\"\n",
                   "x.toml");
    EXPECT_FALSE(r.board) << "a priority without fifo is rejected in a board as in runtime.toml";
}

} // namespace
} // namespace takt::io
