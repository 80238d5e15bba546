#pragma once
// PLCopen XML (IEC 61131-10 / TC6 XML 2.0 and 2.01) as a source kind of the one front end. A
// `.xml` file in a project's sources is translated to Structured Text that keeps the XML's lines:
// every declaration, body and configuration item lands on the line (and where it fits, the
// column) of the element it comes from, so a diagnostic about the translated text names the XML
// file and the element's line as they are. What the reader cannot translate is a coded
// diagnostic (E0026 malformed, E0027 not supported yet) naming the POU and the element's localId.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "takt/compiler/diagnostics.h"

namespace takt::compiler {

// A problem the reader found, at a byte offset into the translated text (on the XML's line).
struct PlcopenProblem {
    DiagCode code{};
    std::uint32_t offset = 0;
    std::uint32_t line = 0; // the XML line and column (1-based), for tools that show the XML itself
    std::uint32_t column = 0;
    std::string message;
};

// The codes of the reader's own problems, which name their element (line and localId) already.
[[nodiscard]] constexpr bool isPlcopenReaderCode(DiagCode code) {
    return code == DiagCode::PlcopenInvalid || code == DiagCode::PlcopenUnsupported ||
           code == DiagCode::PlcopenLoopReadsLastCycle;
}

// A TASK of a configuration's resource, as the XML gives it.
struct PlcopenTask {
    std::string name;
    std::string interval;         // an ST TIME literal ("T#20ms"); empty for an event task
    std::string single;           // the event variable of a SINGLE task; empty otherwise
    std::string priority;         // as written; empty when absent
    std::uint32_t intervalMs = 0; // the interval in whole milliseconds (at least 1 when set)
    std::uint32_t line = 0;
};

struct PlcopenResource {
    std::string configuration;
    std::string name;
    std::vector<PlcopenTask> tasks;
    // Of the configuration `takt export plcopen` makes for a project without one: translated to no
    // ST (every PROGRAM runs each base cycle), read only for runtime.toml's [resource].
    bool implicit = false;
};

// A variable with an address (`%IX0.0`), wherever it is declared.
struct PlcopenLocated {
    std::string path; // "Main.Start" or "Config.Res.Lamp"
    std::string address;
    std::string type; // the ST type text
    std::uint32_t line = 0;
};

// The text of one graphical element (a contact's variable, a coil's, a block's instance) inside a
// statement of an FBD or LD body, which is written on the line of the statement's last element:
// a compiler diagnostic inside [begin, end) names the element's own line (`target`, an offset in
// the translated text, when that line is written already) and its localId.
struct PlcopenOrigin {
    std::uint32_t begin = 0;
    std::uint32_t end = 0;
    std::uint32_t target = 0;
    bool hasTarget = false;
    std::string localId;
};

struct PlcopenTranslation {
    std::string text; // the ST, line for line with the XML
    std::vector<PlcopenProblem> problems;
    std::vector<PlcopenResource> resources;
    std::vector<PlcopenLocated> located;
    std::vector<PlcopenOrigin> origins; // in text order
    std::string projectName;            // contentHeader name, or fileHeader's; may be empty
};

// Whether `path` is read as PLCopen XML (the extension `.xml`, any case).
[[nodiscard]] bool isPlcopenPath(const std::filesystem::path& path);

// Translates one PLCopen XML document. Never throws; hostile input (not XML, another root, a
// document nested deeper than the reader follows) gives problems and whatever translated before.
[[nodiscard]] PlcopenTranslation translatePlcopen(std::string_view xml);

// An interval as PLCopen files write it — an ST literal (`T#20ms`, `TIME#1s500ms`) or an XML
// duration as CODESYS exports it (`PT0.02S`, `PT1M`) — in whole milliseconds; false when neither.
[[nodiscard]] bool plcopenIntervalMs(std::string_view text, std::uint32_t& ms);

} // namespace takt::compiler
