#include "takt/agent/applied_program.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <ctime>
#include <fstream>
#include <iterator>
#include <system_error>
#include <vector>

#include <openssl/evp.h>
#include <toml++/toml.h>

#include <fmt/format.h>

#include "takt/bytecode/container.h"
#include "takt/bytecode/verifier.h"

namespace takt::agent {

namespace fs = std::filesystem;

namespace {

constexpr const char* kRecord = "applied.toml";

// A program's file name is its hash: 64 lower-case hex digits, nothing a path could hide in.
bool isHash(std::string_view text) {
    return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
               return std::isdigit(static_cast<unsigned char>(c)) != 0 || (c >= 'a' && c <= 'f');
           });
}

std::string nowUtc() {
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    ::gmtime_r(&now, &tm);
    std::array<char, 32> text{};
    const std::size_t n = std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
    return {text.data(), n};
}

// The program.stbc bytes of `module` and their hash (the loader's, which names the file).
struct Serialized {
    std::vector<std::uint8_t> bytes;
    std::string hash;
};

Serialized serializeProgram(const bytecode::Module& module) {
    Serialized s;
    s.bytes = bytecode::serialize(module);
    s.hash = bytecode::hashHex(bytecode::deserialize(s.bytes).hash);
    return s;
}

std::string writeProgram(const fs::path& dir, const Serialized& program) {
    const fs::path file = dir / (program.hash + ".stbc");
    std::vector<std::uint8_t> there;
    std::string error;
    if (bytecode::readFileBytes(file, there, error) && there == program.bytes) {
        return {}; // kept by an earlier change, intact (a rollback trades the two places)
    }
    return bytecode::writeFileAtomically(file, program.bytes);
}

// One kept program: verified like any program.stbc, and the very one the record names.
bool readProgram(const fs::path& dir, const std::string& hash, KeptProgram& out, std::string& error) {
    const fs::path file = dir / (hash + ".stbc");
    bytecode::VerifiedProgram loaded = bytecode::loadVerifiedFile(file);
    if (!loaded.ok()) {
        error = fmt::format("{}: {}", file.string(), loaded.error);
        return false;
    }
    if (loaded.hashHex() != hash) {
        error = fmt::format("{}: holds program {}, not the {} its name says", file.string(), loaded.hashHex(), hash);
        return false;
    }
    out.module = std::move(loaded.module);
    out.hash = hash;
    return true;
}

// A string member of the record: a missing or mistyped one names the key and its place.
bool member(const toml::table& record, const std::string& file, const char* key, bool required, bool hash,
            std::string& out, std::string& error) {
    const toml::node* node = record.get(key);
    if (node == nullptr) {
        if (required) {
            error = fmt::format("{}: key '{}' is missing", file, key);
        }
        return !required;
    }
    const auto* text = node->as_string();
    if (text == nullptr || (hash && !isHash(text->get()))) {
        error = fmt::format("{}:{}:{}: key '{}': expected {}", file, node->source().begin.line,
                            node->source().begin.column, key, hash ? "a program hash (64 hex digits)" : "a string");
        return false;
    }
    out = text->get();
    return true;
}

} // namespace

bool parseAppliedRecord(std::string_view text, const std::string& file, AppliedRecord& out, std::string& error) {
    toml::table record;
    try {
        record = toml::parse(text, file);
    } catch (const toml::parse_error& e) {
        error = fmt::format("{}:{}:{}: {}", file, e.source().begin.line, e.source().begin.column, e.description());
        return false;
    } catch (const std::exception& e) {
        error = fmt::format("{}: cannot parse: {}", file, e.what());
        return false;
    }
    return member(record, file, "project", true, false, out.project, error) &&
           member(record, file, "program", true, true, out.program, error) &&
           member(record, file, "replaced", false, true, out.replaced, error) &&
           member(record, file, "applied_at", true, false, out.appliedAt, error);
}

std::string projectFingerprint(std::span<const SourceText> sources) {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned int length = 0;
    bool ok = ctx != nullptr && EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) == 1;
    for (const SourceText& s : sources) {
        // Path and size before the text, so no two different lists hash the same bytes.
        const std::string head = fmt::format("{}\n{}\n", s.path, s.text.size());
        ok = ok && EVP_DigestUpdate(ctx, head.data(), head.size()) == 1 &&
             EVP_DigestUpdate(ctx, s.text.data(), s.text.size()) == 1;
    }
    ok = ok && EVP_DigestFinal_ex(ctx, digest.data(), &length) == 1;
    EVP_MD_CTX_free(ctx);
    std::string hex;
    for (unsigned int i = 0; ok && i < length; ++i) {
        hex += fmt::format("{:02x}", digest[i]);
    }
    return hex; // empty only with a broken OpenSSL: then nothing is kept (save refuses)
}

AppliedProgramStore::AppliedProgramStore(const fs::path& stateDir, std::function<std::string()> fingerprint,
                                         std::string projectProgram)
    : dir_(stateDir / ".takt" / "applied"), fingerprint_(std::move(fingerprint)),
      projectProgram_(std::move(projectProgram)) {}

// One rename: the record and its programs leave together, and stay there to look at.
std::string AppliedProgramStore::moveAside(const char* name) const {
    const fs::path aside = dir_.parent_path() / name;
    std::error_code ec;
    fs::remove_all(aside, ec);
    fs::rename(dir_, aside, ec);
    // Best effort: a move lost to a power loss is made again at the next start.
    (void)bytecode::syncDirectory(dir_.parent_path());
    return ec ? fmt::format(" (could not move {} aside: {})", dir_.string(), ec.message())
              : fmt::format("; it was moved to {}", aside.string());
}

AppliedLoad AppliedProgramStore::load() const {
    AppliedLoad out;
    const fs::path recordPath = dir_ / kRecord;
    std::error_code ec;
    const std::string file = recordPath.string();
    const auto unreadable = [&](const std::string& why) {
        out.outcome = AppliedOutcome::Unreadable;
        out.message = fmt::format("the program the last online change applied cannot run: {}; running the "
                                  "project's program instead{}",
                                  why, moveAside("applied.unreadable"));
        return out;
    };
    if (!fs::exists(recordPath, ec)) {
        return ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory
                   ? unreadable(fmt::format("{}: {}", file, ec.message()))
                   : out;
    }
    std::string text;
    std::ifstream in(recordPath, std::ios::binary);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    AppliedRecord record;
    std::string error;
    if (!in.good() && !in.eof()) {
        return unreadable(fmt::format("{}: cannot read", file));
    }
    if (!parseAppliedRecord(text, file, record, error)) {
        return unreadable(error);
    }
    out.programs.appliedAt = record.appliedAt;
    const std::string& running = record.program;
    const std::string& replaced = record.replaced;
    if (record.project != fingerprint_() && record.program != projectProgram_) {
        // Edited or copied onto the box after the change: the project is what the user wants.
        out.outcome = AppliedOutcome::ProjectChanged;
        out.message = fmt::format("the project's sources or [build] options changed since program {:.16} was "
                                  "applied by an online change at {}: running the project's program{}",
                                  running, out.programs.appliedAt, moveAside("applied.discarded"));
        return out;
    }
    if (!readProgram(dir_, running, out.programs.running, error)) {
        return unreadable(error);
    }
    if (!replaced.empty() && !readProgram(dir_, replaced, out.programs.replaced, error)) {
        // The program runs; only the way back is lost.
        out.message = fmt::format("the program to roll back to cannot be read: {}; nothing to roll back to", error);
    }
    out.outcome = AppliedOutcome::Kept;
    return out;
}

std::string AppliedProgramStore::save(const bytecode::Module& running, const bytecode::Module* replaced) const {
    const std::string project = fingerprint_();
    if (project.empty()) {
        return "cannot read the project's sources to remember what the change was applied over";
    }
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (ec) {
        return fmt::format("cannot create {}: {}", dir_.string(), ec.message());
    }
    // The folder is on the disk only once its parent's entry is: else a restart after a power loss
    // would not find the change this store says is kept. Synced at every save, not only when made
    // now: a save whose sync failed leaves the folder for the next one.
    for (const fs::path& parent : {dir_.parent_path(), dir_.parent_path().parent_path()}) {
        if (const std::error_code synced = bytecode::syncDirectory(parent);
            synced && !bytecode::cannotSyncDirectories(synced)) {
            return fmt::format("cannot sync {}: {}", parent.string(), synced.message());
        }
    }
    const Serialized now = serializeProgram(running);
    Serialized before;
    if (replaced != nullptr) {
        before = serializeProgram(*replaced);
    }
    std::string error = writeProgram(dir_, now);
    if (error.empty() && replaced != nullptr) {
        error = writeProgram(dir_, before);
    }
    if (!error.empty()) {
        return error;
    }
    std::string text = fmt::format("# The program the last online change applied, run at the next start of takt\n"
                                   "# while the project's sources are the ones it was applied over (docs/runtime-"
                                   "control.md). Written by takt.\nproject = \"{}\"\nprogram = \"{}\"\n",
                                   project, now.hash);
    if (replaced != nullptr) {
        text += fmt::format("replaced = \"{}\"\n", before.hash);
    }
    text += fmt::format("applied_at = \"{}\"\n", nowUtc());
    error = bytecode::writeFileAtomically(dir_ / kRecord,
                                          std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
    if (!error.empty()) {
        return error;
    }
    // What the record no longer names: earlier programs, a crashed write's temporary file.
    std::vector<fs::path> stale;
    for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name != kRecord && name != now.hash + ".stbc" && (replaced == nullptr || name != before.hash + ".stbc")) {
            stale.push_back(it->path());
        }
    }
    for (const fs::path& file : stale) {
        fs::remove(file, ec); // left behind, it only takes room: the record never names it
    }
    return {};
}

} // namespace takt::agent
