// `takt fmt [--check] FILE…`: rewrites Structured Text files in canonical layout. Files are
// replaced atomically (temporary file in the same directory, fsync, rename), so an
// interrupted run never leaves a half-written source; a file with errors is never touched.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "commands.h"
#include "takt/bytecode/container.h"
#include "takt/common/fd_io.h"
#include "takt/compiler/diagnostics.h"
#include "takt/compiler/formatter.h"
#include "takt/compiler/plcopen.h"
#include "takt/compiler/source.h"

namespace takt::cli {

namespace {

struct FmtOptions {
    bool check = false;
    std::vector<std::string> files;
};

std::string directoryOf(const std::string& path) {
    auto slash = path.rfind('/');
    if (slash == std::string::npos) {
        return ".";
    }
    return slash == 0 ? "/" : path.substr(0, slash);
}

// Replaces `path` by `text` so that readers see either the old or the new file, never a
// mix: write a sibling temporary, flush it to disk, rename it over the original, then flush
// the directory entry. Keeps the original file's permission bits.
bool replaceFile(const std::string& givenPath, const std::string& text, std::string& error) {
    // Replace the file a symbolic link points to, not the link itself.
    std::unique_ptr<char, decltype(&std::free)> real(::realpath(givenPath.c_str(), nullptr), &std::free);
    if (!real) {
        error = std::strerror(errno);
        return false;
    }
    std::string path = real.get();
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        error = std::strerror(errno);
        return false;
    }
    std::string dir = directoryOf(path);
    std::string tmpl = path + ".takt-fmt-XXXXXX";
    std::vector<char> tmpName(tmpl.begin(), tmpl.end());
    tmpName.push_back('\0');
    int fd = ::mkstemp(tmpName.data());
    if (fd < 0) {
        error = fmt::format("cannot create a temporary file in '{}': {}", dir, std::strerror(errno));
        return false;
    }
    bool ok = common::writeAll(fd, text) && ::fchmod(fd, st.st_mode & 07777) == 0 && ::fsync(fd) == 0;
    if (!ok) {
        error = std::strerror(errno);
    }
    if (::close(fd) != 0 && ok) {
        error = std::strerror(errno);
        ok = false;
    }
    if (ok && ::rename(tmpName.data(), path.c_str()) != 0) {
        error = std::strerror(errno);
        ok = false;
    }
    if (!ok) {
        ::unlink(tmpName.data());
        return false;
    }
    int dirFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
    if (dirFd >= 0) {
        ::fsync(dirFd); // best effort: the rename itself has already happened
        ::close(dirFd);
    }
    return true;
}

int runFmt(const FmtOptions& opts) {
    compiler::SourceManager sources;
    bool missing = false;
    bool failed = false;
    bool needsFormat = false;
    for (const std::string& path : opts.files) {
        std::string error;
        struct stat st {};
        if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
            fmt::print(stderr, "takt fmt: '{}' is not a regular file\n", path);
            missing = true;
            continue;
        }
        if (compiler::isPlcopenPath(path)) {
            // takt compiles PLCopen XML but does not write it: the editor that made it owns its layout.
            fmt::print(stderr, "takt fmt: '{}' is PLCopen XML: takt formats ST files only\n", path);
            missing = true;
            continue;
        }
        compiler::FileId id = sources.load(path, error);
        if (id == compiler::kNoFile) {
            fmt::print(stderr, "takt fmt: cannot read '{}': {}\n", path, error);
            missing = true;
            continue;
        }
        compiler::DiagnosticSink diags;
        compiler::FormatResult result = compiler::formatSource(sources.file(id), diags);
        if (!result.ok) {
            diags.sort();
            std::fputs(compiler::renderHuman(diags.diagnostics(), sources).c_str(), stderr);
            failed = true;
            continue;
        }
        if (!result.changed) {
            continue;
        }
        if (opts.check) {
            fmt::print("would reformat {}\n", path);
            needsFormat = true;
            continue;
        }
        if (!replaceFile(path, result.text, error)) {
            fmt::print(stderr, "takt fmt: cannot write '{}': {}\n", path, error);
            failed = true;
            continue;
        }
        fmt::print("reformatted {}\n", path);
    }
    std::fflush(stdout);
    if (missing) {
        return kExitInvalidProject;
    }
    if (failed) {
        return kExitBuildFailure;
    }
    return needsFormat ? kExitFormatNeeded : kExitOk;
}

} // namespace

void registerFmt(CLI::App& app, int& exitCode) {
    auto opts = std::make_shared<FmtOptions>();
    CLI::App* cmd = app.add_subcommand("fmt", "Rewrite Structured Text files in canonical layout");
    cmd->add_flag("--check", opts->check,
                  "Write nothing; list the files that would change and exit with 1 if there are any");
    cmd->add_option("files", opts->files, "Structured Text files (.st, .pou)")->required();
    cmd->callback([opts, &exitCode] { exitCode = runFmt(*opts); });
}

} // namespace takt::cli
