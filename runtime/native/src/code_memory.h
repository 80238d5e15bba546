#pragma once
// Where the native tier's machine code lives: memory that is never writable and executable at
// once, and never made executable after being writable, so the tier runs under the kernel's
// memory-deny-write-execute rule (prctl PR_SET_MDWE) and systemd's MemoryDenyWriteExecute=yes
// (a seccomp filter refusing mmap with PROT_WRITE|PROT_EXEC and mprotect adding PROT_EXEC).
//
// LLVM's RuntimeDyld writes each section and applies relocations in ordinary heap buffers (the
// working copy) while it is told the addresses the sections will finally have (a PROT_NONE
// reservation, RuntimeDyld::mapSectionAddress, as for code run in another process). At
// finalisation the code is written with pwrite() into a sealed memfd, which is then mapped once
// PROT_READ|PROT_EXEC over the reservation: no mapping of those pages was ever writable. Data
// sections get ordinary memory there (read-only ones made read-only, which the rule allows).
#include "takt/native/native.h"

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
#include <mutex>
#include <string>
#include <vector>

namespace takt::native {

// The final mappings of every object a compile loaded: they outlive the JIT that linked them
// (CompiledModule keeps this, the JIT and its memory managers are freed after the compile).
class CodeMappings {
public:
    CodeMappings() = default;
    CodeMappings(const CodeMappings&) = delete;
    CodeMappings& operator=(const CodeMappings&) = delete;
    ~CodeMappings();
    void add(void* base, std::size_t bytes);

private:
    std::mutex mutex_;
    std::vector<std::pair<void*, std::size_t>> regions_;
};

class CodeMemory final : public llvm::RuntimeDyld::MemoryManager {
public:
    explicit CodeMemory(std::shared_ptr<CodeMappings> mappings) : mappings_(std::move(mappings)) {}
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
    enum class Kind : std::uint8_t { Code, ReadOnly, ReadWrite };
    struct Section {
        Kind kind;
        std::size_t size;
        std::size_t alignment;
        std::uint8_t* working;  // the heap copy RuntimeDyld writes and relocates
        std::size_t offset = 0; // from the start of the reservation
    };
    std::uint8_t* allocate(Kind kind, std::uintptr_t size, unsigned alignment);
    bool fail(std::string* error, const char* what);

    std::shared_ptr<CodeMappings> mappings_;
    std::vector<Section> sections_;
    std::uint8_t* reservation_ = nullptr; // where the sections finally are
    std::size_t codeBytes_ = 0;           // the code's pages, from the reservation's start
    std::size_t readOnlyEnd_ = 0;         // then read-only data up to here, writable data after
    std::size_t totalBytes_ = 0;
};

// Drops this process's pages of the machine code of the shared library holding `inLibrary` (libLLVM,
// after a compile): a compile touches tens of MiB of LLVM's code, which would otherwise stay
// resident for as long as the program runs natively, although nothing runs it until the next
// compile, which reads it back from the page cache. Only read+execute mappings of the file: code
// is never written (no text relocations in a shared library), so nothing is lost; the library's
// data and relocated pointers stay.
void releaseLibraryCode(const void* inLibrary) noexcept;

} // namespace takt::native
