#pragma once
// The machine code of each compiled POU, kept for the program's next compile. A program is
// compiled one POU at a time (translator.cpp): each POU's LLVM module is translated (fast), then
// hashed with the options that shape its code, and optimised and turned into an object only when
// no earlier compile left one under that hash. An online change that edits one POU so
// re-translates all of them but generates code only for the POUs whose translation changed (the
// edited one, and those that inline it); the objects are linked again into fresh code memory.
//
// The hash covers the whole translated module (its body, the bodies it may inline, the layouts
// and offsets it uses as constants, the POUs it calls by name): what the code depends on is in
// it, so a hit is code the same translation would give. Code offsets are not in it (a trap's pc
// is the POU's base, a symbol of the program, plus the offset in the POU), so a POU moved in the
// code area by a change of another keeps its object.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace llvm {
class Module;
}

namespace takt::native {

struct CompiledPou {
    std::string object;             // relocatable, as the code generator wrote it
    bool standardFbsLinked = false; // the standard FBs' bitcode is in it (CompileResult)
};
using ObjectFile = std::shared_ptr<const CompiledPou>;

// The key of `mod` as translated (before optimisation): a SHA-1 of its bitcode and `options`.
[[nodiscard]] std::string objectKey(const llvm::Module& mod, std::string_view options);

class ObjectCache {
public:
    // The object compiled under `key`, null when there is none.
    [[nodiscard]] ObjectFile find(const std::string& key) const;
    // Keeps `object` under `key` (a compile cancelled later keeps what it compiled so far).
    void add(const std::string& key, ObjectFile object);
    // After a compile that made code, with the objects it linked: they are kept, with those of
    // the program compiled before it (the one an online change replaced, which a rollback brings
    // back; a compile of the same program again counts once); every other is dropped, so the
    // cache holds the code of at most two programs and of a compile still under way.
    void compiled(const std::vector<std::string>& keys, const std::vector<ObjectFile>& objects);

private:
    struct Entry {
        ObjectFile object;
        std::uint64_t used = 0; // the program (count of compiled()) that last used it
    };
    mutable std::mutex mutex_;
    std::map<std::string, Entry> objects_;
    std::uint64_t programs_ = 0;
    std::vector<std::string> lastKeys_; // of the last compiled(), sorted
};

// The process's cache (compiles run on background threads, one at a time per program).
[[nodiscard]] ObjectCache& objectCache();

} // namespace takt::native
