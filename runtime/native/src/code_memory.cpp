#include "code_memory.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>

#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

namespace takt::native {

CodeMemory::~CodeMemory() {
    freeWorkingCopies();
}

void CodeMemory::freeWorkingCopies() noexcept {
    for (Section& s : sections_) {
        ::operator delete(s.working, std::align_val_t(s.alignment));
        s.working = nullptr;
    }
}

std::uint8_t* CodeMemory::allocate(SectionKind kind, std::uintptr_t size, unsigned alignment) {
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
    return allocate(SectionKind::Code, size, alignment);
}

std::uint8_t* CodeMemory::allocateDataSection(std::uintptr_t size, unsigned alignment, unsigned /*sectionId*/,
                                              llvm::StringRef /*name*/, bool readOnly) {
    return allocate(readOnly ? SectionKind::ReadOnly : SectionKind::ReadWrite, size, alignment);
}

// Every section is allocated by now (RuntimeDyld calls this after loading, before it applies a
// relocation): place each in the arena and tell RuntimeDyld to relocate for that address. A
// section the arena has no room for keeps its working address; finalizeMemory reports it.
void CodeMemory::notifyObjectLoaded(llvm::RuntimeDyld& dyld, const llvm::object::ObjectFile& /*object*/) {
    for (Section& s : sections_) {
        s.final = arena_->place(s.kind, s.size, s.alignment);
        if (s.final != nullptr) {
            dyld.mapSectionAddress(s.working, reinterpret_cast<std::uintptr_t>(s.final));
        }
    }
}

bool CodeMemory::finalizeMemory(std::string* error) {
    bool ok = true;
    for (const Section& s : sections_) {
        ok = ok && s.final != nullptr && arena_->fill(s.kind, s.final, s.working, s.size);
    }
    freeWorkingCopies();
    if (!ok && error != nullptr) {
        *error = arena_->error();
    }
    return !ok; // RuntimeDyld's convention: true on error
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
