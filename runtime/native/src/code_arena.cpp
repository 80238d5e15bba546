#include "code_arena.h"

#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Weverything"
#endif
#include <llvm/Support/Memory.h>
#if defined(__clang__)
#pragma clang diagnostic pop
#endif

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U // Linux 6.3: executable memfd where vm.memfd_noexec asks for the flag
#endif

namespace takt::native {

namespace {

std::size_t pageSize() {
    static const std::size_t size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    return size;
}

std::size_t roundUp(std::size_t value, std::size_t to) {
    return (value + to - 1) / to * to;
}

// Per object, beyond its file's size: RuntimeDyld's stubs and GOT entries, alignment. And for the
// compile: the program module, compiled by the JIT itself (dispatch tables of every POU).
constexpr std::size_t kMarginPerObject = 64 * 1024;
constexpr std::size_t kMarginPerCompile = 16 * 1024 * 1024;
// x86-64's small code model reaches data from code PC-relative within ±2 GiB: the three areas
// together stay below that.
constexpr std::size_t kMostBytes = std::size_t{1536} * 1024 * 1024;

// A memfd for the code: executable (MFD_EXEC, which kernels before 6.3 do not know) and sealable.
int codeFile() {
    int fd = ::memfd_create("takt-native-code", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
    if (fd < 0 && errno == EINVAL) {
        fd = ::memfd_create("takt-native-code", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    }
    return fd;
}

bool writeAll(int fd, const std::uint8_t* data, std::size_t size, std::size_t offset) {
    while (size != 0) {
        const ssize_t n = ::pwrite(fd, data, size, static_cast<off_t>(offset));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        data += n;
        size -= static_cast<std::size_t>(n);
        offset += static_cast<std::size_t>(n);
    }
    return true;
}

} // namespace

CodeArena::CodeArena(std::size_t objectBytes, std::size_t objects) {
    const std::size_t each =
        roundUp(2 * objectBytes + (objects + 1) * kMarginPerObject + kMarginPerCompile, pageSize());
    if (each > kMostBytes / areas_.size()) {
        error_ =
            "the program's native code needs more than " + std::to_string(kMostBytes >> 20) + " MiB of address space";
        return;
    }
    void* base = ::mmap(nullptr, each * areas_.size(), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) {
        fail("reserving address space for native code");
        return;
    }
    base_ = static_cast<std::uint8_t*>(base);
    for (std::size_t a = 0; a < areas_.size(); ++a) {
        areas_[a].start = a * each;
        areas_[a].capacity = each;
    }
    file_ = codeFile();
    if (file_ < 0) {
        fail("memfd_create for native code");
    }
}

CodeArena::~CodeArena() {
    if (file_ >= 0) {
        ::close(file_);
    }
    if (base_ != nullptr) {
        for (const Area& a : areas_) {
            if (a.capacity != 0) {
                ::munmap(base_ + a.start, a.capacity);
            }
        }
    }
}

bool CodeArena::fail(const char* what) {
    error_ = std::string(what) + ": " + std::strerror(errno);
    return false;
}

std::uint8_t* CodeArena::place(SectionKind kind, std::size_t size, std::size_t alignment) {
    const std::lock_guard lock(mutex_);
    if (base_ == nullptr || file_ < 0 || sealed_) {
        return nullptr;
    }
    Area& a = area(kind);
    const std::size_t at = roundUp(a.used, std::max<std::size_t>(alignment, 1));
    if (at + size > a.capacity) {
        error_ = "the native code's address space is full";
        return nullptr;
    }
    a.used = at + size;
    return base_ + a.start + at;
}

bool CodeArena::fill(SectionKind kind, std::uint8_t* at, const std::uint8_t* bytes, std::size_t size) {
    const std::lock_guard lock(mutex_);
    if (file_ < 0 || sealed_) {
        error_ = "native code filled after its arena was sealed";
        return false;
    }
    Area& a = area(kind);
    const auto offset = static_cast<std::size_t>(at - (base_ + a.start));
    if (kind == SectionKind::Code) {
        return writeAll(file_, bytes, size, offset) || fail("writing native code to its memfd");
    }
    // Data pages are mapped writable as the sections are filled, from the area's start up.
    const std::size_t need = roundUp(offset + size, pageSize());
    if (need > a.mapped) {
        if (::mmap(base_ + a.start + a.mapped, need - a.mapped, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) {
            return fail("mapping native code's data");
        }
        a.mapped = need;
    }
    std::memcpy(at, bytes, size);
    return true;
}

bool CodeArena::seal() {
    const std::lock_guard lock(mutex_);
    if (base_ == nullptr || file_ < 0) {
        return false; // error_ says why
    }
    sealed_ = true;
    const std::size_t codeBytes = roundUp(area(SectionKind::Code).used, pageSize());
    if (codeBytes != 0) {
        // Sealed: the file can never change again, whoever holds it.
        bool ok = ::ftruncate(file_, static_cast<off_t>(codeBytes)) == 0 &&
                  ::fcntl(file_, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) == 0;
        ok = ok && ::mmap(base_, codeBytes, PROT_READ | PROT_EXEC, MAP_SHARED | MAP_FIXED, file_, 0) != MAP_FAILED;
        if (!ok) {
            return fail("mapping native code read+execute from its memfd");
        }
        llvm::sys::Memory::InvalidateInstructionCache(base_, codeBytes);
    }
    ::close(file_);
    file_ = -1;
    const Area& constants = area(SectionKind::ReadOnly);
    if (constants.mapped != 0 && ::mprotect(base_ + constants.start, constants.mapped, PROT_READ) != 0) {
        return fail("making native code's constants read-only");
    }
    // The address space no section took goes back: the code's pages past its end, each data
    // area's past its written pages.
    for (Area& a : areas_) {
        const std::size_t kept = &a == &area(SectionKind::Code) ? codeBytes : a.mapped;
        if (kept < a.capacity) {
            ::munmap(base_ + a.start + kept, a.capacity - kept);
            a.capacity = kept;
        }
    }
    return true;
}

} // namespace takt::native
