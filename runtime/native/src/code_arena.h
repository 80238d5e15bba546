#pragma once
// One compile's machine code and data in one reservation of address space: the code of all its
// objects (one per POU body, and the program module) in one file mapped once, read+execute, so a
// program of a thousand POUs has one code mapping rather than a thousand (each with its own
// memfd and at least a page of code and one of data), and its POUs' code lies together in as few
// pages as it needs.
//
// The rule it keeps (takt.service's MemoryDenyWriteExecute=yes, the kernel's PR_SET_MDWE): no page
// is ever writable and executable at once, nor made executable after being writable. The code
// goes into a memfd with pwrite() while its addresses are still reserved PROT_NONE; seal() seals
// the file and maps it read+execute over them once the last object is linked, before anything
// runs. Data sections get ordinary writable pages as they are filled; the read-only ones are made
// read-only at seal() (dropping a permission, which the rule allows).
#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

namespace takt::native {

// What a section holds: it decides the area the section lies in and the protection it ends with.
enum class SectionKind : std::uint8_t { Code, ReadOnly, ReadWrite };

class CodeArena {
public:
    // Address space for the objects of one compile: `objectBytes`, the sizes of their files in
    // all, and `objects` of them, bound what their sections take (a section is no larger than its
    // object, RuntimeDyld's stubs and GOT add a little per relocation, the margins cover that and
    // the program module the JIT compiles itself). Only reserved: no memory is committed.
    CodeArena(std::size_t objectBytes, std::size_t objects);
    CodeArena(const CodeArena&) = delete;
    CodeArena& operator=(const CodeArena&) = delete;
    ~CodeArena();

    // Where a section of `size` bytes aligned to `alignment` will finally be; nullptr when its
    // area is full or the reservation failed (error() says which).
    std::uint8_t* place(SectionKind kind, std::size_t size, std::size_t alignment);
    // Puts the final, relocated bytes of a section placed at `at`: code into the code file, data
    // into its pages. false: error() says why.
    bool fill(SectionKind kind, std::uint8_t* at, const std::uint8_t* bytes, std::size_t size);
    // After the last object: maps the code read+execute from its sealed file, makes the constants
    // read-only and gives back the address space no section took. false: error() says why.
    bool seal();
    [[nodiscard]] const std::string& error() const noexcept { return error_; }

private:
    struct Area {
        std::size_t start = 0;    // from base_
        std::size_t capacity = 0; // page-aligned; after seal() only the pages in use
        std::size_t used = 0;     // the sections placed, from start
        std::size_t mapped = 0;   // a data area's writable pages, from start
    };
    bool fail(const char* what);
    Area& area(SectionKind kind) noexcept { return areas_[static_cast<std::size_t>(kind)]; }

    std::mutex mutex_;
    std::uint8_t* base_ = nullptr;
    int file_ = -1; // the code's memfd until seal()
    bool sealed_ = false;
    std::array<Area, 3> areas_{};
    std::string error_;
};

} // namespace takt::native
