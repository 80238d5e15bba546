#pragma once
// `takt export plcopen`: a checked ST project written as PLCopen XML (TC6 2.01), the way the
// OpenPLC Editor and CODESYS import it. Declarations are structured XML (`<interface>`,
// `<variable>`, `<type>`, `<initialValue>`), ST bodies go into `<ST><xhtml:p><![CDATA[…]]>`
// as written. The export is made for a round trip: `takt import plcopen` (plcopen.h) of the XML
// compiles to the same program (everything in program.stbc but its source file list and line
// table). What the XML cannot say so that the reader reads it back is an error E0027 at the
// declaration, never a silent loss; nothing is written then.
#include <cstdint>
#include <string>
#include <vector>

#include "takt/compiler/diagnostics.h"
#include "takt/compiler/project.h"

namespace takt::compiler {

struct PlcopenExportOptions {
    std::string projectName;          // contentHeader name (the project folder's name)
    std::string creationDateTime;     // fileHeader creationDateTime, xsd:dateTime ("2026-11-29T17:00:00")
    std::string productVersion = "1"; // fileHeader productVersion (takt's version)
    // runtime.toml's [resource]: for a project without a CONFIGURATION, the configuration written
    // for the editors (one task at the base cycle running every PROGRAM); 0: none is written.
    std::string resourceName = "takt";
    std::uint32_t cycleIntervalMs = 0;
};

struct PlcopenExport {
    std::string xml;                  // the document; empty when `problems` holds an error
    std::vector<Diagnostic> problems; // E0027, at the declarations that cannot be written
    std::size_t pous = 0;
    std::size_t dataTypes = 0;
    std::size_t tasks = 0;
};

// Writes the POUs, types, global variable lists and configurations of `project`, which must be
// checked without errors (Project::ok()). The sources are not changed.
[[nodiscard]] PlcopenExport exportPlcopen(const Project& project, const PlcopenExportOptions& options);

} // namespace takt::compiler
