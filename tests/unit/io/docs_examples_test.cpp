// Every `[[io.drivers]]` example in docs/io-drivers.md (modbus-rtu, the board io sections) is valid TOML
// and every driver in it accepts its params.
#include <fstream>
#include <sstream>

#include "support/io_test_support.h"
#include "support/paths.h"

namespace takt::io::test {
namespace {

std::vector<std::string> tomlBlocks(const std::string& markdown) {
    std::vector<std::string> blocks;
    std::size_t at = 0;
    while ((at = markdown.find("```toml\n", at)) != std::string::npos) {
        at += 8;
        const std::size_t end = markdown.find("```", at);
        blocks.push_back(markdown.substr(at, end - at));
        at = end + 3;
    }
    return blocks;
}

TEST(DocsExamples, BoardIoSectionsInitialise) {
    std::ifstream in(std::string(TAKT_SOURCE_DIR) + "/docs/io-drivers.md");
    std::stringstream text;
    text << in.rdbuf();
    int drivers = 0;
    for (const std::string& block : tomlBlocks(text.str())) {
        if (block.find("[[io.drivers]]") == std::string::npos) {
            continue;
        }
        toml::table doc;
        try {
            doc = toml::parse(block);
        } catch (const toml::parse_error& e) {
            ADD_FAILURE() << e.description() << "\n" << block;
            continue;
        }
        const toml::array* list = doc["io"]["drivers"].as_array();
        ASSERT_NE(list, nullptr) << block;
        for (const toml::node& n : *list) {
            const toml::table& entry = *n.as_table();
            const std::string name(*entry["name"].value<std::string_view>());
            auto d = createDriver(name);
            ASSERT_NE(d, nullptr) << name;
            DriverSpec s;
            s.name = name;
            s.params = *entry["params"].as_table();
            s.source = {"io-drivers.md", "io.drivers.params"};
            std::string error;
            EXPECT_TRUE(d->init(s, error)) << error;
            ++drivers;
        }
    }
    EXPECT_EQ(drivers, 5); // modbus-rtu, raspberry-pi, two beaglebone chips, x86-ipc-modbus
}

} // namespace
} // namespace takt::io::test
