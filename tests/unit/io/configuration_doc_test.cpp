// docs/configuration.md is the reference of io.toml: every io.toml example there loads with the
// diagnostics the page shows and every driver in it accepts its params, and the key tables list
// exactly the keys the io.toml reader asks for (its own "known here" lists).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/config_doc.h"
#include "takt/engine/config.h"
#include "takt/io/driver.h"
#include "takt/io/io_config.h"

namespace takt::io {
namespace {

using test::DocExample;
using test::DocTable;

std::vector<std::string> section() {
    return test::docSection(test::readDocPage("configuration.md"), "io.toml");
}

TEST(ConfigurationDoc, IoExamplesLoadAndTheirDriversInitialise) {
    const std::vector<DocExample> examples = test::docExamples(section(), "# io.toml");
    ASSERT_GE(examples.size(), 2U); // the driver list and the single driver
    for (const DocExample& e : examples) {
        IoConfigResult r = parseIoConfig(e.text, "io.toml", false);
        std::vector<std::string> rendered;
        for (const engine::ConfigDiagnostic& d : r.diagnostics) {
            rendered.push_back(engine::formatDiagnostic(d));
        }
        EXPECT_EQ(rendered, e.expected) << "the example at line " << e.line << " of the io.toml section";
        ASSERT_TRUE(r.config.has_value()) << "the example at line " << e.line;
        EXPECT_FALSE(r.config->drivers.empty());
        for (const DriverSpec& spec : r.config->drivers) {
            std::unique_ptr<Driver> driver = createDriver(spec.name);
            ASSERT_NE(driver, nullptr) << spec.name;
            std::string error;
            EXPECT_TRUE(driver->init(spec, error)) << spec.name << ": " << error;
        }
    }
}

// The reader's list of the keys of table `t`: the "known here" of the error a probe key gets.
std::optional<std::vector<std::string>> parserKeys(const DocTable& t) {
    const IoConfigResult r = parseIoConfig(test::probeDocument(t), "io.toml", false);
    for (const engine::ConfigDiagnostic& d : r.diagnostics) {
        if (d.key == test::probeKeyPath(t)) {
            return test::knownHere(d.message);
        }
    }
    return std::nullopt;
}

TEST(ConfigurationDoc, IoKeyTablesListExactlyTheKeysTheReaderReads) {
    const std::vector<DocTable> tables = test::docTables(section());
    ASSERT_GE(tables.size(), 3U); // [io], [[io.drivers]], [[io.safe_state]]
    test::expectTablesMatchParser(tables, parserKeys, {}, "io.toml");
}

} // namespace
} // namespace takt::io
