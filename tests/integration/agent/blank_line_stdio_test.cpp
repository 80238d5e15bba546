// Blank lines on the stdin of `takt agent serve` and `takt harness`, through the real binary:
// each is answered as an invalid request (JSON-RPC -32600 with id null; the harness's
// invalid_request), the lines around it are served, and the end of input is not a line.
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "support/takt_cli.h"
#include "support/temp_dir.h"

namespace {

using takt::test::RunResult;
using takt::test::runTakt;
using takt::test::shellQuote;
using takt::test::TempDir;

std::vector<rapidjson::Document> lines(const std::string& out) {
    std::vector<rapidjson::Document> docs;
    std::istringstream in(out);
    for (std::string l; std::getline(in, l);) {
        docs.emplace_back().Parse(l.c_str());
        EXPECT_TRUE(docs.back().IsObject()) << l;
    }
    return docs;
}

TEST(BlankLineStdio, AgentAnswersEachBlankLineWithInvalidRequest) {
    TempDir dir;
    const std::string input =
        dir.write("in.ndjson", "\n   \r\n{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"agent.ping\"}\n"
                               "\t\n")
            .string();
    const RunResult r =
        runTakt("agent serve --workspace " + shellQuote(dir.path().string()) + " < " + shellQuote(input));
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const std::vector<rapidjson::Document> docs = lines(r.out);
    ASSERT_EQ(docs.size(), 5U) << r.out; // agent.ready, three blank lines, the ping
    EXPECT_STREQ(docs[0]["method"].GetString(), "agent.ready");
    for (const std::size_t i : {1U, 2U, 4U}) {
        SCOPED_TRACE(i);
        ASSERT_TRUE(docs[i].HasMember("error")) << r.out;
        EXPECT_EQ(docs[i]["error"]["code"].GetInt(), -32600);
        EXPECT_TRUE(docs[i]["id"].IsNull());
        EXPECT_NE(std::string(docs[i]["error"]["message"].GetString()).find("empty line"), std::string::npos);
    }
    EXPECT_EQ(docs[3]["id"].GetInt(), 7);
    EXPECT_TRUE(docs[3].HasMember("result")) << r.out;
}

TEST(BlankLineStdio, HarnessAnswersEachBlankLineWithInvalidRequest) {
    TempDir dir;
    const std::string input =
        dir.write("in.ndjson", "\n{\"cmd\":\"load\",\"source\":\"PROGRAM Main\\nEND_PROGRAM\\n\"}\n  \r\n").string();
    const RunResult r = runTakt("harness < " + shellQuote(input));
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const std::vector<rapidjson::Document> docs = lines(r.out);
    ASSERT_EQ(docs.size(), 3U) << r.out;
    for (const std::size_t i : {0U, 2U}) {
        SCOPED_TRACE(i);
        EXPECT_FALSE(docs[i]["ok"].GetBool());
        EXPECT_STREQ(docs[i]["error"]["kind"].GetString(), "invalid_request");
        EXPECT_NE(std::string(docs[i]["error"]["message"].GetString()).find("empty line"), std::string::npos);
        EXPECT_TRUE(docs[i]["error"]["data"].IsNull());
    }
    EXPECT_TRUE(docs[1]["ok"].GetBool()) << r.out;
}

} // namespace
