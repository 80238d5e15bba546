#pragma once
// Shared helpers for the PLCopen XML reader's tests (plcopen_test.cpp, plcopen_flow_test.cpp).
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/paths.h"
#include "support/temp_dir.h"
#include "takt/compiler/plcopen.h"
#include "takt/compiler/project.h"

namespace takt::compiler::plcopen_testing {

using test::TempDir;

// The text of tests/plcopen/<name>.
inline std::string readFixture(const std::string& name) {
    std::ifstream in(std::filesystem::path(TAKT_SOURCE_DIR) / "tests/plcopen" / name, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// The 1-based line of the first occurrence of `needle` in `text`; 0 when absent.
inline std::uint32_t lineOf(const std::string& text, const std::string& needle) {
    const std::size_t at = text.find(needle);
    return at == std::string::npos ? 0
                                   : static_cast<std::uint32_t>(std::count(text.begin(), text.begin() + at, '\n') + 1);
}

// "path:line code" of each diagnostic, in order, then its message after " | ".
inline std::vector<std::string> diagnostics(const Project& p) {
    std::vector<std::string> out;
    for (const Diagnostic& d : p.diagnostics) {
        const SourceFile& f = p.sources->file(d.span.file);
        out.push_back(f.path() + ":" + std::to_string(f.lineCol(d.span.begin).line) + " " +
                      std::string(diagInfo(d.code).code) + " | " + d.message);
    }
    return out;
}

inline Project checkXml(TempDir& dir, const std::string& xml) {
    dir.write("src/plant.xml", xml);
    return checkProject({dir.path(), {}, false, {}, {}});
}

// A minimal TC6 2.01 document around `pous` (and `types` before them).
inline std::string document(const std::string& pous, const std::string& types = {}) {
    return "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
           "<project xmlns=\"http://www.plcopen.org/xml/tc6_0201\" xmlns:xhtml=\"http://www.w3.org/1999/xhtml\">\n"
           "  <fileHeader companyName=\"c\" productName=\"p\" productVersion=\"1\" "
           "creationDateTime=\"2024-01-01T00:00:00\"/>\n"
           "  <contentHeader name=\"plant\"/>\n"
           "  <types>\n"
           "    <dataTypes>" +
           types +
           "</dataTypes>\n"
           "    <pous>\n" +
           pous +
           "    </pous>\n"
           "  </types>\n"
           "</project>\n";
}

// An FBD POU `J` of the given elements, reading BOOLs A and B.
inline std::string fbdPou(const std::string& elements) {
    return document("      <pou name=\"J\" pouType=\"program\"><interface><localVars>"
                    "<variable name=\"A\"><type><BOOL/></type></variable>"
                    "<variable name=\"B\"><type><BOOL/></type></variable></localVars></interface>\n"
                    "        <body><FBD>\n"
                    "          <inVariable localId=\"1\"><expression>A</expression></inVariable>\n" +
                    elements + "        </FBD></body></pou>\n");
}

} // namespace takt::compiler::plcopen_testing
