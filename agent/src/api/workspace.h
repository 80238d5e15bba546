#pragma once
// The workspace root of `takt agent serve` and every file access below it (PROTOCOLS.md):
// paths are resolved by the kernel with openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS), or,
// where openat2 is unavailable, by an equivalent component walk (O_NOFOLLOW per component,
// symbolic links expanded by hand, `..` never above the root). No string-prefix checks.
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace takt::agent {

class Workspace {
public:
    enum class Status : std::uint8_t {
        Ok,
        Escapes,  // -32001: the path leaves the root (or is absolute, has a NUL, …)
        Invalid,  // -32602: not a usable path (empty, names no file)
        NotFound, // -32002
        Failed    // -32002: any other I/O failure
    };
    struct Result {
        Status status = Status::Ok;
        std::string message;
        [[nodiscard]] bool ok() const { return status == Status::Ok; }
    };

    Workspace() = default;
    ~Workspace();
    Workspace(const Workspace&) = delete;
    Workspace& operator=(const Workspace&) = delete;

    // Opens the root directory (empty: the current directory).
    [[nodiscard]] Result open(const std::filesystem::path& root);
    [[nodiscard]] const std::filesystem::path& root() const { return root_; }
    // Tests: resolve by the component walk even where openat2 works.
    void forceComponentWalk(bool on) { forceWalk_ = on; }

    // Opens `rel` (relative to the root) with `flags` (O_PATH, O_RDONLY, O_DIRECTORY…).
    [[nodiscard]] Result openBeneath(std::string_view rel, int flags, int& fd) const;
    // Reads a regular file of at most `cap` bytes.
    [[nodiscard]] Result readFile(std::string_view rel, std::size_t cap, std::string& text) const;
    // Replaces (or creates) a file atomically: a temporary sibling, fsync, rename, fsync of the
    // directory. With createParents missing directories are created, each one beneath the root.
    [[nodiscard]] Result writeFile(std::string_view rel, std::string_view text, bool createParents,
                                   bool& created) const;
    // The canonical absolute path of an existing directory (or file) below the root.
    [[nodiscard]] Result resolve(std::string_view rel, bool directory, std::filesystem::path& abs) const;
    // True when `rel` names something that exists below the root.
    [[nodiscard]] bool exists(std::string_view rel) const;
    // `abs` relative to the root ("." for the root); `abs` must be canonical and inside.
    [[nodiscard]] std::string relative(const std::filesystem::path& abs) const;

    // Structural checks done before any system call: NUL bytes, absolute paths, backslashes,
    // `..` above the root.
    [[nodiscard]] static Result checkSyntax(std::string_view rel);

private:
    [[nodiscard]] Result walk(std::string_view rel, int flags, int& fd) const;
    [[nodiscard]] Result openDirForCreate(const std::vector<std::string>& parts, bool createParents, int& fd) const;

    std::filesystem::path root_;
    int rootFd_ = -1;
    bool forceWalk_ = false;
};

} // namespace takt::agent
