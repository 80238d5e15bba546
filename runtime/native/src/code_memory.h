#pragma once
// How LLVM's RuntimeDyld links one object of a compile into the compile's CodeArena
// (code_arena.h): it writes each section and applies relocations in ordinary heap buffers (the
// working copy) while it is told the addresses the sections will finally have in the arena (as
// for code run in another process, RuntimeDyld::mapSectionAddress); at finalisation the relocated
// bytes go to the arena, which maps the code once the compile's last object is linked.
#include "code_arena.h"

#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Weverything"
#endif
#include <llvm/ExecutionEngine/RuntimeDyld.h>
#if defined(__clang__)
#pragma clang diagnostic pop
#endif

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace takt::native {

class CodeMemory final : public llvm::RuntimeDyld::MemoryManager {
public:
    explicit CodeMemory(std::shared_ptr<CodeArena> arena) : arena_(std::move(arena)) {}
    CodeMemory(const CodeMemory&) = delete;
    CodeMemory& operator=(const CodeMemory&) = delete;
    ~CodeMemory() override;

    std::uint8_t* allocateCodeSection(std::uintptr_t size, unsigned alignment, unsigned sectionId,
                                      llvm::StringRef name) override;
    std::uint8_t* allocateDataSection(std::uintptr_t size, unsigned alignment, unsigned sectionId, llvm::StringRef name,
                                      bool readOnly) override;
    void notifyObjectLoaded(llvm::RuntimeDyld& dyld, const llvm::object::ObjectFile& object) override;
    // Nothing unwinds through compiled code (every body is nounwind), so its unwind tables are
    // not registered.
    void registerEHFrames(std::uint8_t* /*addr*/, std::uint64_t /*loadAddr*/, std::size_t /*size*/) override {}
    void deregisterEHFrames() override {}
    bool finalizeMemory(std::string* error) override;

private:
    struct Section {
        SectionKind kind;
        std::size_t size;
        std::size_t alignment;
        std::uint8_t* working;         // the heap copy RuntimeDyld writes and relocates
        std::uint8_t* final = nullptr; // where it lies in the arena
    };
    std::uint8_t* allocate(SectionKind kind, std::uintptr_t size, unsigned alignment);
    void freeWorkingCopies() noexcept;

    std::shared_ptr<CodeArena> arena_;
    std::vector<Section> sections_;
};

// Drops this process's pages of the machine code of the shared library holding `inLibrary` (libLLVM,
// after a compile): a compile touches tens of MiB of LLVM's code, which would otherwise stay
// resident for as long as the program runs natively, although nothing runs it until the next
// compile, which reads it back from the page cache. Only read+execute mappings of the file: code
// is never written (no text relocations in a shared library), so nothing is lost; the library's
// data and relocated pointers stay.
void releaseLibraryCode(const void* inLibrary) noexcept;

} // namespace takt::native
