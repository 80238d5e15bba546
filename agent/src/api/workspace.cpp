// Confined file access below the workspace root. The kernel does the resolution (openat2 with
// RESOLVE_BENEATH); the component walk is the fallback for kernels or sandboxes without
// openat2 and follows the same rules, so both give the same answers (tests run both).
#include "api/workspace.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fmt/format.h>

#include "takt/bytecode/container.h"
#include "takt/common/fd_io.h"

namespace takt::agent {

namespace {

constexpr int kMaxSymlinks = 40; // as the kernel's own limit

using Result = Workspace::Result;
using Status = Workspace::Status;

Result make(Status s, std::string message) {
    return Result{s, std::move(message)};
}

// Closes a descriptor at scope exit.
struct Fd {
    int fd = -1;
    Fd() = default;
    explicit Fd(int f) : fd(f) {}
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() {
        if (fd >= 0) {
            ::close(fd);
        }
    }
    int release() {
        const int f = fd;
        fd = -1;
        return f;
    }
};

std::vector<std::string> splitPath(std::string_view rel) {
    std::vector<std::string> parts;
    std::size_t i = 0;
    while (i <= rel.size()) {
        const std::size_t slash = rel.find('/', i);
        const std::size_t end = slash == std::string_view::npos ? rel.size() : slash;
        if (end > i) {
            parts.emplace_back(rel.substr(i, end - i));
        }
        if (slash == std::string_view::npos) {
            break;
        }
        i = slash + 1;
    }
    return parts;
}

Result fromErrno(int err, std::string_view rel) {
    switch (err) {
    case EXDEV: return make(Status::Escapes, fmt::format("path '{}' escapes the workspace root", rel));
    case ELOOP:
        return make(Status::Escapes,
                    fmt::format("path '{}' cannot be resolved inside the workspace root (symbolic links)", rel));
    case ENOENT: return make(Status::NotFound, fmt::format("'{}' does not exist", rel));
    case ENOTDIR: return make(Status::NotFound, fmt::format("a component of '{}' is not a directory", rel));
    default: return make(Status::Failed, fmt::format("cannot open '{}': {}", rel, std::strerror(err)));
    }
}

std::atomic<unsigned> tempCounter{0};

} // namespace

Workspace::~Workspace() {
    if (rootFd_ >= 0) {
        ::close(rootFd_);
    }
}

Result Workspace::open(const std::filesystem::path& root) {
    std::error_code ec;
    const std::filesystem::path dir = root.empty() ? std::filesystem::current_path(ec) : root;
    const std::filesystem::path canonical = std::filesystem::canonical(dir, ec);
    if (ec) {
        return make(Status::Failed, fmt::format("workspace '{}': {}", dir.string(), ec.message()));
    }
    const int fd = ::open(canonical.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        return make(Status::Failed, fmt::format("workspace '{}': {}", canonical.string(), std::strerror(errno)));
    }
    if (rootFd_ >= 0) {
        ::close(rootFd_);
    }
    rootFd_ = fd;
    root_ = canonical;
    return {};
}

Result Workspace::checkSyntax(std::string_view rel) {
    if (rel.find('\0') != std::string_view::npos) {
        return make(Status::Escapes, "path contains a NUL byte");
    }
    if (rel.empty()) {
        return make(Status::Invalid, "path is empty");
    }
    if (rel.front() == '/') {
        return make(Status::Escapes, fmt::format("absolute path '{}' is outside the workspace root", rel));
    }
    // A backslash is an ordinary file-name byte on Linux, but paths written for another system
    // ("..\\..\\etc") must not quietly become odd file names inside the workspace.
    if (rel.find('\\') != std::string_view::npos) {
        return make(Status::Escapes, fmt::format("path '{}' contains a backslash", rel));
    }
    int depth = 0;
    for (const std::string& part : splitPath(rel)) {
        if (part == "..") {
            if (--depth < 0) {
                return make(Status::Escapes, fmt::format("path '{}' escapes the workspace root", rel));
            }
        } else if (part != ".") {
            ++depth;
        }
    }
    return {};
}

Result Workspace::walk(std::string_view rel, int flags, int& outFd) const {
    std::deque<std::string> todo;
    for (std::string& p : splitPath(rel)) {
        todo.push_back(std::move(p));
    }
    std::vector<int> stack{::dup(rootFd_)}; // directory descriptors from the root down
    auto closeAll = [&stack] {
        for (int f : stack) {
            ::close(f);
        }
    };
    if (stack.back() < 0) {
        return fromErrno(errno, rel);
    }
    int links = 0;
    while (!todo.empty()) {
        const std::string part = todo.front();
        todo.pop_front();
        if (part == ".") {
            continue;
        }
        if (part == "..") {
            if (stack.size() == 1) {
                closeAll();
                return fromErrno(EXDEV, rel);
            }
            ::close(stack.back());
            stack.pop_back();
            continue;
        }
        const bool last = todo.empty();
        Fd fd(::openat(stack.back(), part.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
        if (fd.fd < 0) {
            const int err = errno;
            closeAll();
            return fromErrno(err, rel);
        }
        struct stat st {};
        if (::fstat(fd.fd, &st) != 0) {
            const int err = errno;
            closeAll();
            return fromErrno(err, rel);
        }
        if (S_ISLNK(st.st_mode) && (!last || (flags & O_NOFOLLOW) == 0)) {
            if (++links > kMaxSymlinks) {
                closeAll();
                return fromErrno(ELOOP, rel);
            }
            std::string target(PATH_MAX, '\0');
            const ssize_t n = ::readlinkat(stack.back(), part.c_str(), target.data(), target.size());
            if (n < 0) {
                const int err = errno;
                closeAll();
                return fromErrno(err, rel);
            }
            target.resize(static_cast<std::size_t>(n));
            if (target.empty() || target.front() == '/') {
                closeAll(); // an absolute target is outside by definition (RESOLVE_BENEATH)
                return fromErrno(EXDEV, rel);
            }
            std::vector<std::string> expanded = splitPath(target);
            todo.insert(todo.begin(), expanded.begin(), expanded.end());
            continue;
        }
        if (!last) {
            if (!S_ISDIR(st.st_mode)) {
                closeAll();
                return fromErrno(ENOTDIR, rel);
            }
            const int dir = ::openat(stack.back(), part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (dir < 0) {
                const int err = errno;
                closeAll();
                return fromErrno(err, rel);
            }
            stack.push_back(dir);
            continue;
        }
        const int opened = ::openat(stack.back(), part.c_str(), flags | O_NOFOLLOW | O_CLOEXEC);
        const int err = errno;
        closeAll();
        if (opened < 0) {
            return fromErrno(err, rel);
        }
        outFd = opened;
        return {};
    }
    // The path named a directory on the stack (the root, "a/..", …): reopen it with the flags.
    const int opened = ::openat(stack.back(), ".", flags | O_CLOEXEC);
    const int err = errno;
    closeAll();
    if (opened < 0) {
        return fromErrno(err, rel);
    }
    outFd = opened;
    return {};
}

Result Workspace::openBeneath(std::string_view rel, int flags, int& fd) const {
    if (Result r = checkSyntax(rel); !r.ok()) {
        return r;
    }
    const std::string path(rel);
    if (!forceWalk_) {
        open_how how{};
        how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC);
        how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
        for (;;) {
            const long r = ::syscall(SYS_openat2, rootFd_, path.c_str(), &how, sizeof how);
            if (r >= 0) {
                fd = static_cast<int>(r);
                return {};
            }
            if (errno == EINTR || errno == EAGAIN) {
                continue;
            }
            if (errno != ENOSYS && errno != EPERM) {
                return fromErrno(errno, rel);
            }
            break; // no openat2 here (old kernel, seccomp): the component walk decides
        }
    }
    return walk(rel, flags, fd);
}

Result Workspace::readFile(std::string_view rel, std::size_t cap, std::string& text) const {
    int raw = -1;
    if (Result r = openBeneath(rel, O_RDONLY | O_NONBLOCK | O_NOCTTY, raw); !r.ok()) {
        return r;
    }
    Fd fd(raw);
    struct stat st {};
    if (::fstat(fd.fd, &st) != 0) {
        return fromErrno(errno, rel);
    }
    if (!S_ISREG(st.st_mode)) {
        return make(Status::Failed, fmt::format("'{}' is not a regular file", rel));
    }
    if (static_cast<std::uint64_t>(st.st_size) > cap) {
        return make(Status::Failed, fmt::format("'{}' is larger than {} bytes", rel, cap));
    }
    text.clear();
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(fd.fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return fromErrno(errno, rel);
        }
        if (n == 0) {
            break;
        }
        text.append(buf, static_cast<std::size_t>(n));
        if (text.size() > cap) {
            return make(Status::Failed, fmt::format("'{}' is larger than {} bytes", rel, cap));
        }
    }
    return {};
}

Result Workspace::resolve(std::string_view rel, bool directory, std::filesystem::path& abs) const {
    int raw = -1;
    if (Result r = openBeneath(rel, O_PATH | (directory ? O_DIRECTORY : 0), raw); !r.ok()) {
        return r;
    }
    Fd fd(raw);
    std::error_code ec;
    const std::filesystem::path real = std::filesystem::read_symlink(fmt::format("/proc/self/fd/{}", fd.fd), ec);
    if (ec) {
        return make(Status::Failed, fmt::format("cannot resolve '{}': {}", rel, ec.message()));
    }
    // The kernel resolved it beneath the root; this only guards against a root that moved.
    const std::string r = real.string();
    const std::string base = root_.string();
    if (r != base &&
        !(r.size() > base.size() && r.compare(0, base.size(), base) == 0 && (base == "/" || r[base.size()] == '/'))) {
        return make(Status::Escapes, fmt::format("path '{}' escapes the workspace root", rel));
    }
    abs = real;
    return {};
}

bool Workspace::exists(std::string_view rel) const {
    int fd = -1;
    if (!openBeneath(rel, O_PATH, fd).ok()) {
        return false;
    }
    ::close(fd);
    return true;
}

std::string Workspace::relative(const std::filesystem::path& abs) const {
    const std::filesystem::path rel = abs.lexically_relative(root_);
    return rel.empty() ? std::string(".") : rel.generic_string();
}

Result Workspace::openDirForCreate(const std::vector<std::string>& parts, bool createParents, int& outFd) const {
    std::string prefix;
    int current = ::dup(rootFd_);
    if (current < 0) {
        return fromErrno(errno, ".");
    }
    for (const std::string& part : parts) {
        const std::string next = prefix.empty() ? part : prefix + "/" + part;
        int fd = -1;
        Result r = openBeneath(next, O_RDONLY | O_DIRECTORY, fd);
        if (r.status == Status::NotFound && createParents && part != "." && part != "..") {
            if (::mkdirat(current, part.c_str(), 0777) != 0 && errno != EEXIST) {
                const int err = errno;
                ::close(current);
                return make(Status::Failed, fmt::format("cannot create directory '{}': {}", next, std::strerror(err)));
            }
            r = openBeneath(next, O_RDONLY | O_DIRECTORY, fd);
        }
        ::close(current);
        if (!r.ok()) {
            return r;
        }
        current = fd;
        prefix = next;
    }
    outFd = current;
    return {};
}

Result Workspace::writeFile(std::string_view rel, std::string_view text, bool createParents, bool& created) const {
    if (Result r = checkSyntax(rel); !r.ok()) {
        return r;
    }
    std::vector<std::string> parts = splitPath(rel);
    if (parts.empty() || parts.back() == "." || parts.back() == ".." || rel.back() == '/') {
        return make(Status::Invalid, fmt::format("path '{}' does not name a file", rel));
    }
    // Writing through a symbolic link replaces the file it points to, if that is inside.
    std::string target(rel);
    {
        int linkFd = -1;
        if (openBeneath(rel, O_PATH | O_NOFOLLOW, linkFd).ok()) {
            Fd link(linkFd);
            struct stat st {};
            if (::fstat(link.fd, &st) == 0 && S_ISLNK(st.st_mode)) {
                std::filesystem::path real;
                Result r = resolve(rel, false, real);
                if (r.status == Status::NotFound) {
                    return make(Status::Failed, fmt::format("'{}' is a dangling symbolic link", rel));
                }
                if (!r.ok()) {
                    return r;
                }
                target = relative(real);
                parts = splitPath(target);
            }
        }
    }
    const std::string name = parts.back();
    parts.pop_back();
    int dirRaw = -1;
    if (Result r = openDirForCreate(parts, createParents, dirRaw); !r.ok()) {
        if (r.status == Status::NotFound && !createParents) {
            r.message += " (set create_parents to create missing directories)";
        }
        return r;
    }
    Fd dir(dirRaw);
    struct stat old {};
    const bool exists = ::fstatat(dir.fd, name.c_str(), &old, AT_SYMLINK_NOFOLLOW) == 0;
    if (exists && !S_ISREG(old.st_mode)) {
        return make(Status::Failed, fmt::format("'{}' exists and is not a regular file", rel));
    }
    const std::string tmp = fmt::format(".{}.takt-{}-{}.tmp", name.substr(0, 64), ::getpid(), tempCounter.fetch_add(1));
    Fd out(::openat(dir.fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666));
    if (out.fd < 0) {
        return make(Status::Failed,
                    fmt::format("cannot create a temporary file for '{}': {}", rel, std::strerror(errno)));
    }
    bool ok = common::writeAll(out.fd, text) && (!exists || ::fchmod(out.fd, old.st_mode & 07777) == 0) &&
              ::fsync(out.fd) == 0;
    int err = errno;
    if (::close(out.release()) != 0 && ok) {
        ok = false;
        err = errno;
    }
    if (ok && ::renameat(dir.fd, tmp.c_str(), dir.fd, name.c_str()) != 0) {
        ok = false;
        err = errno;
    }
    if (!ok) {
        ::unlinkat(dir.fd, tmp.c_str(), 0);
        return make(Status::Failed, fmt::format("cannot write '{}': {}", rel, std::strerror(err)));
    }
    ::fsync(dir.fd); // best effort: the rename has happened
    created = !exists;
    return {};
}

} // namespace takt::agent
