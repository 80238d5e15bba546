// `takt reload`'s rendering of a bytecode.reload result (cli/reload_report.cpp).
#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "reload_report.h"

namespace takt::cli {
namespace {

rapidjson::Document parsed(const char* json) {
    rapidjson::Document d;
    d.Parse(json);
    return d;
}

TEST(ReloadReport, CountsAndChangedVariables) {
    const rapidjson::Document r = parsed(
        R"({"cycle":812,"swap_pause_us":14.2,"old_hash":"aaaaaaaaaaaaaaaaaaaa","new_hash":"bbbbbbbbbbbbbbbbbbbb",)"
        R"("kept":2,"converted":1,"reinitialised":0,"dropped":1,"added":0,"loses_state":true,)"
        R"("variables":[{"path":"Main.n","outcome":"kept"},{"path":"Main.k","outcome":"kept"},)"
        R"({"path":"Main.speed","outcome":"converted","from":"INT","to":"DINT"},)"
        R"({"path":"Main.old","outcome":"dropped","from":"BOOL"}]})");
    const std::string out = renderReloadReport(r);
    EXPECT_NE(out.find("Online change applied at cycle 812 (swap pause 14.2 us): program aaaaaaaaaaaaaaaa -> "
                       "bbbbbbbbbbbbbbbb"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("2 kept, 1 converted, 0 re-initialised, 1 dropped, 0 added"), std::string::npos) << out;
    EXPECT_NE(out.find("INT -> DINT"), std::string::npos) << out;
    EXPECT_NE(out.find("no longer declared (was BOOL)"), std::string::npos) << out;
    EXPECT_TRUE(reloadLosesState(r));
}

// An applied change the runtime could not keep for its next start says so: a restart would run
// the program from before it.
TEST(ReloadReport, AChangeNotKeptForTheNextStartIsAWarning) {
    const rapidjson::Document kept = parsed(R"({"cycle":1,"kept":1,"kept_for_restart":true})");
    EXPECT_EQ(renderReloadReport(kept).find("warning"), std::string::npos);
    const rapidjson::Document lost = parsed(
        R"({"cycle":1,"kept":1,"kept_for_restart":false,"keep_error":"cannot create /ro/.takt/applied: Read-only file system"})");
    const std::string out = renderReloadReport(lost);
    EXPECT_NE(out.find("  warning: not kept for the next start of takt run: cannot create /ro/.takt/applied: "
                       "Read-only file system\n"),
              std::string::npos)
        << out;
}

// A count that is not an integer is not read as one: RapidJSON's GetInt64 of a double returns
// the double's bits (a cycle of 4,615,063,718,147,915,776 for 3.5).
TEST(ReloadReport, ANonIntegerCountIsNotReadAsItsBits) {
    const rapidjson::Document r = parsed(R"({"cycle":3.5,"kept":1.5,"converted":0,"reinitialised":0,)"
                                         R"("dropped":0,"added":0})");
    const std::string out = renderReloadReport(r);
    EXPECT_NE(out.find("applied at cycle 0 "), std::string::npos) << out;
    EXPECT_NE(out.find("  0 kept, 0 converted"), std::string::npos) << out;
}

} // namespace
} // namespace takt::cli
