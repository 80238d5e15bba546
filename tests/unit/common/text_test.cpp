// The shared helpers: each replaced two to four copies, whose callers rely on these cases.
#include <string>

#include <gtest/gtest.h>

#include "takt/common/text.h"
#include "takt/common/toml_names.h"

namespace takt::common {
namespace {

TEST(CommonTrim, DropsTheGivenCharactersAtBothEndsOnly) {
    EXPECT_EQ(trim("  \t a b \r\n"), "a b");
    EXPECT_EQ(trim("\v\fx\f"), "x");
    EXPECT_EQ(trim(" \t\r\n "), "");
    EXPECT_EQ(trim(""), "");
    // An HTTP-style header value keeps a newline the caller did not list.
    EXPECT_EQ(trim(" 12\r", " \t\r"), "12");
    EXPECT_EQ(trim("\n12 ", " \t"), "\n12");
}

TEST(CommonUtf8, EncodesEveryLength) {
    std::string s;
    appendUtf8(s, 0x41);
    appendUtf8(s, 0xE9);
    appendUtf8(s, 0x20AC);
    appendUtf8(s, 0x1F600);
    EXPECT_EQ(s, "A\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
}

TEST(CommonToml, NamesEachTypeForMessages) {
    EXPECT_EQ(tomlTypeName(toml::node_type::table), "a table");
    EXPECT_EQ(tomlTypeName(toml::node_type::integer), "an integer");
    EXPECT_EQ(tomlTypeName(toml::node_type::date_time), "a date/time");
}

} // namespace
} // namespace takt::common
