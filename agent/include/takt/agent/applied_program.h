#pragma once
// The program an online change applied, kept for the next start of `takt run`, as CODESYS
// updates its boot application on an online change: a program deployed to a box (`takt reload`,
// `takt deploy --fleet`, `runtime.rollback`) is still the one running after a power cut, and the
// program it replaced is still there to roll back to.
//
// <state>/.takt/applied/ holds applied.toml, which names the programs, and one <hash>.stbc per
// program named. applied.toml is written last (a temporary file renamed over it), so a crash at
// any point leaves either the former record with its files or the new one with its files.
//
// The record remembers the project as it was when the change was applied (a fingerprint of its
// sources and [build] options, taken then). At the next start the kept program runs only if the
// project is still that one, or now builds that very program: a project edited or copied onto the
// box since then is what the user wants to run, and wins. What cannot run (a damaged file, a
// program of another takt version) is moved aside and the project's program runs, with an error
// in the log: a box that cannot run what it kept still starts and stays reachable.
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "takt/bytecode/module.h"

namespace takt::agent {

struct KeptProgram {
    std::shared_ptr<const bytecode::Module> module;
    std::string hash; // hex, as runtime.status reports it
};

struct AppliedPrograms {
    KeptProgram running;   // what the last online change applied
    KeptProgram replaced;  // what it replaced (runtime.rollback); module null when none
    std::string appliedAt; // UTC, ISO 8601
};

enum class AppliedOutcome {
    None,           // nothing kept: run the project's program
    Kept,           // run `programs.running`; `programs.replaced` is the rollback (`message`: why none)
    ProjectChanged, // kept over another project: run the project's program (warn `message`)
    Unreadable,     // damaged or of another takt: run the project's program (`message` is an error)
};

struct AppliedLoad {
    AppliedOutcome outcome = AppliedOutcome::None;
    AppliedPrograms programs;
    std::string message;
};

// applied.toml: what names the kept programs.
struct AppliedRecord {
    std::string project;  // projectFingerprint of the project the change was applied over
    std::string program;  // hash of the program applied (its file: <hash>.stbc)
    std::string replaced; // hash of the program it replaced; empty when none
    std::string appliedAt;
};

// Reads applied.toml's text. False with `error` naming the file, line, column and key: a hash
// must be 64 lower-case hex digits (it names a file), the other keys strings.
[[nodiscard]] bool parseAppliedRecord(std::string_view text, const std::string& file, AppliedRecord& out,
                                      std::string& error);

class AppliedProgramStore {
public:
    // `stateDir`: the run's state directory (the project, or --state-dir); `fingerprint`: the
    // project's projectFingerprint as its files are at the moment of the call (empty: unreadable);
    // `projectProgram`: the hash of the program the project built at start.
    AppliedProgramStore(const std::filesystem::path& stateDir, std::function<std::string()> fingerprint,
                        std::string projectProgram);

    // At start, before the first cycle. A project that builds the kept program now is no change:
    // Kept. ProjectChanged and Unreadable move the folder aside (applied.discarded/,
    // applied.unreadable/, replacing an older one), so each is said once and nothing is lost.
    [[nodiscard]] AppliedLoad load() const;

    // After an applied online change: keeps `running` and `replaced` (null: nothing to roll back
    // to) for the next start. Returns the error (naming the file), empty when kept. Runs on the
    // control thread; writes with fsync.
    [[nodiscard]] std::string save(const bytecode::Module& running, const bytecode::Module* replaced) const;

    [[nodiscard]] const std::filesystem::path& directory() const { return dir_; }

private:
    [[nodiscard]] std::string moveAside(const char* name) const;

    std::filesystem::path dir_;
    std::function<std::string()> fingerprint_;
    std::string projectProgram_;
};

// A project's fingerprint: hex SHA-256 over each source's display path and text, in order.
// Equal sources give equal fingerprints whatever takt version compiles them.
struct SourceText {
    std::string path;
    std::string_view text;
};
[[nodiscard]] std::string projectFingerprint(std::span<const SourceText> sources);

} // namespace takt::agent
