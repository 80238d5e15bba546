#include "code_memory.h"

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
#include <cstdio>
#include <cstring>
#include <new>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
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

CodeMappings::~CodeMappings() {
    for (const auto& [base, bytes] : regions_) {
        ::munmap(base, bytes);
    }
}

void CodeMappings::add(void* base, std::size_t bytes) {
    const std::lock_guard<std::mutex> lock(mutex_);
    regions_.emplace_back(base, bytes);
}

CodeMemory::~CodeMemory() {
    for (Section& s : sections_) {
        ::operator delete(s.working, std::align_val_t(s.alignment));
    }
}

std::uint8_t* CodeMemory::allocate(Kind kind, std::uintptr_t size, unsigned alignment) {
    const std::size_t align = std::max<std::size_t>(alignment, 16);
    const std::size_t bytes = std::max<std::size_t>(size, 1);
    auto* working = static_cast<std::uint8_t*>(::operator new(bytes, std::align_val_t(align), std::nothrow));
    if (working == nullptr) {
        return nullptr;
    }
    std::memset(working, 0, bytes);
    sections_.push_back(Section{kind, bytes, align, working});
    return working;
}

std::uint8_t* CodeMemory::allocateCodeSection(std::uintptr_t size, unsigned alignment, unsigned /*sectionId*/,
                                              llvm::StringRef /*name*/) {
    return allocate(Kind::Code, size, alignment);
}

std::uint8_t* CodeMemory::allocateDataSection(std::uintptr_t size, unsigned alignment, unsigned /*sectionId*/,
                                              llvm::StringRef /*name*/, bool readOnly) {
    return allocate(readOnly ? Kind::ReadOnly : Kind::ReadWrite, size, alignment);
}

// Every section is allocated by now (RuntimeDyld calls this after loading, before it applies a
// relocation): lay them out code, read-only, writable, each kind on pages of its own, reserve the
// addresses and tell RuntimeDyld to relocate for them.
void CodeMemory::notifyObjectLoaded(llvm::RuntimeDyld& dyld, const llvm::object::ObjectFile& /*object*/) {
    std::size_t offset = 0;
    for (const Kind kind : {Kind::Code, Kind::ReadOnly, Kind::ReadWrite}) {
        for (Section& s : sections_) {
            if (s.kind == kind) {
                offset = roundUp(offset, s.alignment);
                s.offset = offset;
                offset += s.size;
            }
        }
        offset = roundUp(offset, pageSize());
        (kind == Kind::Code ? codeBytes_ : kind == Kind::ReadOnly ? readOnlyEnd_ : totalBytes_) = offset;
    }
    totalBytes_ = std::max(totalBytes_, pageSize());
    void* base = ::mmap(nullptr, totalBytes_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) {
        return; // finalizeMemory reports it
    }
    reservation_ = static_cast<std::uint8_t*>(base);
    mappings_->add(base, totalBytes_);
    for (const Section& s : sections_) {
        dyld.mapSectionAddress(s.working, reinterpret_cast<std::uintptr_t>(reservation_ + s.offset));
    }
}

bool CodeMemory::fail(std::string* error, const char* what) {
    if (error != nullptr) {
        *error = std::string(what) + ": " + std::strerror(errno);
    }
    return true;
}

bool CodeMemory::finalizeMemory(std::string* error) {
    if (reservation_ == nullptr) {
        return fail(error, "reserving address space for native code");
    }
    if (codeBytes_ != 0) {
        const int fd = codeFile();
        if (fd < 0) {
            return fail(error, "memfd_create for native code");
        }
        bool ok = ::ftruncate(fd, static_cast<off_t>(codeBytes_)) == 0;
        for (const Section& s : sections_) {
            ok = ok && (s.kind != Kind::Code || writeAll(fd, s.working, s.size, s.offset));
        }
        // Sealed: the file can never change again, whoever holds it.
        ok = ok && ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) == 0;
        ok = ok && ::mmap(reservation_, codeBytes_, PROT_READ | PROT_EXEC, MAP_SHARED | MAP_FIXED, fd, 0) != MAP_FAILED;
        const int saved = errno;
        ::close(fd);
        errno = saved;
        if (!ok) {
            return fail(error, "mapping native code read+execute from its memfd");
        }
        llvm::sys::Memory::InvalidateInstructionCache(reservation_, codeBytes_);
    }
    if (totalBytes_ > codeBytes_) {
        std::uint8_t* data = reservation_ + codeBytes_;
        if (::mmap(data, totalBytes_ - codeBytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
                   0) == MAP_FAILED) {
            return fail(error, "mapping native code's data");
        }
        for (const Section& s : sections_) {
            if (s.kind != Kind::Code) {
                std::memcpy(reservation_ + s.offset, s.working, s.size);
            }
        }
        if (readOnlyEnd_ > codeBytes_ && ::mprotect(data, readOnlyEnd_ - codeBytes_, PROT_READ) != 0) {
            return fail(error, "making native code's constants read-only");
        }
    }
    for (Section& s : sections_) {
        ::operator delete(s.working, std::align_val_t(s.alignment));
        s.working = nullptr;
    }
    return false;
}

void releaseLibraryCode(const void* inLibrary) noexcept {
    Dl_info info{};
    struct stat file {};
    if (::dladdr(inLibrary, &info) == 0 || info.dli_fname == nullptr || ::stat(info.dli_fname, &file) != 0) {
        return;
    }
    std::FILE* maps = std::fopen("/proc/self/maps", "re");
    if (maps == nullptr) {
        return;
    }
    char line[4096];
    while (std::fgets(line, sizeof line, maps) != nullptr) {
        unsigned long start = 0;
        unsigned long end = 0;
        char perms[5] = {};
        unsigned major = 0;
        unsigned minor = 0;
        unsigned long inode = 0;
        if (std::sscanf(line, "%lx-%lx %4s %*s %x:%x %lu", &start, &end, perms, &major, &minor, &inode) == 6 &&
            std::strcmp(perms, "r-xp") == 0 && inode == file.st_ino && ::makedev(major, minor) == file.st_dev) {
            ::madvise(reinterpret_cast<void*>(start), end - start, MADV_DONTNEED);
        }
    }
    std::fclose(maps);
}

} // namespace takt::native
