#pragma once
// Variable paths resolved through an index of one loaded program: the roots (globals, program
// instances, the first program's variables) and the members of every STRUCT, FB and PROGRAM type
// by name, case-insensitive. Resolving a path is then O(its depth), where resolvePath over the
// bare Module searches each level's members one by one (10,000 paths of a 10,000-variable
// program: 100 million comparisons, seconds). Built once per program, off the scan thread, by
// whoever resolves many paths (the control endpoint); the Module it indexes is kept alive by it.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "takt/bytecode/module.h"
#include "takt/engine/values.h"

namespace takt::engine {

class PathIndex {
public:
    explicit PathIndex(std::shared_ptr<const bytecode::Module> module);

    [[nodiscard]] const bytecode::Module& module() const { return *module_; }
    [[nodiscard]] const std::shared_ptr<const bytecode::Module>& modulePtr() const { return module_; }

    // What resolvePath(module(), path, …) answers, with the same messages.
    [[nodiscard]] bool resolve(std::string_view path, VarRef& out, std::string& error) const;

    // Case-insensitive (ASCII) hashing and comparison of IEC names.
    struct FoldHash {
        std::size_t operator()(std::string_view s) const noexcept;
    };
    struct FoldEqual {
        bool operator()(std::string_view a, std::string_view b) const noexcept;
    };

private:
    using Names = std::unordered_map<std::string_view, std::uint32_t, FoldHash, FoldEqual>;

    std::shared_ptr<const bytecode::Module> module_;
    std::unordered_map<std::string_view, VarRef, FoldHash, FoldEqual> roots_;
    std::vector<Names> members_; // per type: member name -> index into TypeDesc::fields
};

} // namespace takt::engine
