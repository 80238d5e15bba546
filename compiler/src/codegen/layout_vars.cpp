// Globals, PROGRAM instances (explicit through a CONFIGURATION, else one implicit instance per
// PROGRAM named after it), the variable table at every nesting level, I/O bindings of located
// variables (wildcards resolved through VAR_CONFIG per instance), tasks and VAR_ACCESS.
#include <algorithm>

#include "codegen/codegen_internal.h"
#include "takt/bytecode/address.h"
#include "takt/compiler/names.h"

namespace takt::compiler {

std::uint32_t addressByteOffset(const ast::Address& address, AddressMode mode) {
    const std::uint32_t index = address.indices.empty() ? 0 : address.indices[0];
    std::uint32_t width = 1; // bit and byte addresses name the byte directly
    switch (address.size) {
    case ast::AddressSize::Word: width = 2; break;
    case ast::AddressSize::DWord: width = 4; break;
    case ast::AddressSize::LWord: width = 8; break;
    default: break;
    }
    // The one address-mode rule shared with io.toml and the drivers (takt/bytecode/address.h).
    return static_cast<std::uint32_t>(bytecode::addressByteOffset(index, width, mode == AddressMode::Byte));
}

} // namespace takt::compiler

namespace takt::compiler::codegen {

namespace bc = bytecode;

std::uint32_t Generator::allocGlobal(std::uint32_t size, std::uint32_t align) {
    const std::uint32_t at = alignUp(globalEnd_, std::max<std::uint32_t>(align, 1));
    globalEnd_ = at + size;
    return at;
}

void Generator::layoutGlobals() {
    globalEnd_ = alignUp(out_.constSize, 8);
    for (const Symbol* g : model_.globals) {
        if (g->type == nullptr || globalOffset.count(g) != 0) {
            continue;
        }
        const std::uint32_t at = allocGlobal(g->type->size, g->type->align);
        globalOffset.emplace(g, at);
    }
}

void Generator::addIo(const Symbol* var, const std::string& path, std::uint32_t offset,
                      const std::vector<const Symbol*>& symbolPath) {
    const ast::Address* address = var->address ? &*var->address : nullptr;
    if (address == nullptr || address->wildcard) {
        // Per instance: the VAR_CONFIG entry whose path (resource and configuration names aside)
        // is this variable's path of instances.
        address = symbolPath.size() == 1 && var->resolvedAddress ? &*var->resolvedAddress : nullptr;
        for (const ConfigBinding& b : model_.configBindings) {
            std::vector<const Symbol*> bindingPath;
            for (const Symbol* s : b.path) {
                if (s->kind != SymbolKind::Resource && s->kind != SymbolKind::Configuration) {
                    bindingPath.push_back(s);
                }
            }
            if (bindingPath == symbolPath) {
                address = &b.address;
            }
        }
        if (address == nullptr) {
            return; // sema reports wildcards that no VAR_CONFIG entry resolves; a plain variable
                    // is located only in the instances VAR_CONFIG names
        }
    }
    bc::IoBinding io;
    io.area = address->area == ast::AddressArea::Input    ? bc::IoArea::Input
              : address->area == ast::AddressArea::Output ? bc::IoArea::Output
                                                          : bc::IoArea::Memory;
    io.byteOffset = addressByteOffset(*address, options_.addressMode);
    const bool bit = address->size == ast::AddressSize::Bit ||
                     (address->size == ast::AddressSize::None && address->indices.size() > 1);
    if (bit) {
        io.bit = static_cast<std::uint8_t>(address->indices.size() > 1 ? address->indices[1] : 0);
        io.size = 0;
    } else {
        io.size = var->type->size;
    }
    io.imageOffset = offset;
    io.type = typeIndex(var->type);
    io.address = address->text();
    io.path = path;
    out_.io.push_back(std::move(io));
    // A global (or a member of a global FB instance) is reached as the global; a variable of a
    // program instance as that instance's member at the top of the path.
    const Symbol* root = symbolPath.front();
    ioOwners_.push_back({root->kind == SymbolKind::Variable
                             ? TaskVariable{nullptr, root}
                             : TaskVariable{root, symbolPath.size() > 1 ? symbolPath[1] : nullptr},
                         {}});
}

std::uint32_t Generator::storedTypeIndex(const Symbol* var) {
    return typeIndex(var->section == ast::VarSection::InOut ? const_cast<TypeTable&>(model_.types).ref(var->type)
                                                            : var->type);
}

void Generator::addVariable(const Symbol* var, const std::string& path, std::uint32_t offset, bc::VarKind kind,
                            bool retain, std::vector<const Symbol*>& symbolPath) {
    symbolPath.push_back(var);
    bc::VarEntry e;
    e.path = path;
    e.type = storedTypeIndex(var);
    e.offset = offset;
    e.size = var->section == ast::VarSection::InOut ? 8 : var->type->size;
    e.kind = kind;
    e.retain = retain;
    e.constant = var->constant;
    variableByPath.emplace(upperName(path), static_cast<std::uint32_t>(out_.variables.size()));
    out_.variables.push_back(std::move(e));
    if (var->address || var->configLocated) {
        addIo(var, path, offset, symbolPath);
    }
    if (const Symbol* fb = instancePou(var->type); fb != nullptr && var->section != ast::VarSection::InOut) {
        addInstanceVariables(fb, path, offset, symbolPath, retain);
    }
    symbolPath.pop_back();
}

void Generator::addInstanceVariables(const Symbol* pou, const std::string& prefix, std::uint32_t base,
                                     std::vector<const Symbol*>& symbolPath, bool retain) {
    const auto& slots = members(pou);
    for (const Symbol* m : memberList(pou)) {
        bc::VarKind kind = bc::VarKind::ProgramVar;
        switch (m->section) {
        case ast::VarSection::Input: kind = bc::VarKind::Input; break;
        case ast::VarSection::Output: kind = bc::VarKind::Output; break;
        case ast::VarSection::InOut: kind = bc::VarKind::InOut; break;
        default: break;
        }
        // RETAIN on an instance retains all of it (IEC 61131-3 2.4.3.1).
        addVariable(m, prefix + "." + m->name, base + slots.at(m).offset, kind, retain || m->retain, symbolPath);
    }
}

void Generator::layoutPrograms() {
    std::vector<const Symbol*> symbolPath;
    // Globals first in the variable table, in declaration order.
    for (const Symbol* g : model_.globals) {
        if (g->type != nullptr && globalOffset.count(g) != 0) {
            // A VAR_STAT is listed under its POU's name: two POUs may each have a static `count`.
            const std::string name =
                g->section == ast::VarSection::Static && g->owner != nullptr ? g->owner->name + "." + g->name : g->name;
            addVariable(g, name, globalOffset.at(g), g->constant ? bc::VarKind::Constant : bc::VarKind::Global,
                        g->retain, symbolPath);
        }
    }
    auto addInstance = [&](const Symbol* instance, const Symbol* pou, bool retain) {
        if (pou == nullptr || pou->type == nullptr) {
            return;
        }
        const std::uint32_t at = allocGlobal(pou->type->size, pou->type->align);
        instanceOffset.emplace(instance, at);
        bc::ProgramInstance p;
        p.name = instance->name;
        p.pou = pouIndex(pou);
        p.offset = at;
        if (instance->taskSymbol != nullptr) {
            const auto it = std::find(model_.tasks.begin(), model_.tasks.end(), instance->taskSymbol);
            if (it != model_.tasks.end()) {
                p.task = static_cast<std::uint32_t>(it - model_.tasks.begin());
            }
        }
        out_.programs.push_back(std::move(p));
        programPous.push_back(pou);
        symbolPath.push_back(instance);
        addInstanceVariables(pou, instance->name, at, symbolPath, retain);
        symbolPath.pop_back();
    };
    if (!model_.configurations.empty()) {
        for (const Symbol* inst : model_.programInstances) {
            addInstance(inst, instancePou(inst->type), inst->retain);
        }
    }
    for (const Symbol* pou : model_.pous) {
        const bool program = pou->pouKind == ast::PouKind::Program && model_.configurations.empty();
        // Tests always get an implicit instance: `takt test` runs them, the scan cycle does not.
        const bool test = pou->pouKind == ast::PouKind::TestProgram || pou->pouKind == ast::PouKind::TestFunctionBlock;
        if ((program || test) && pou->span.file != kStdlibFile) {
            addInstance(pou, pou, false);
        }
    }
    out_.globalSize = alignUp(globalEnd_, 8) - out_.constSize;
}

void Generator::layoutTasks() {
    for (const Symbol* t : model_.tasks) {
        bc::TaskEntry e;
        e.name = t->name;
        e.intervalNs = t->taskInterval;
        e.priority = static_cast<std::uint32_t>(std::max<std::int64_t>(t->taskPriority, 0));
        if (t->taskSingle != nullptr) {
            if (auto it = globalOffset.find(t->taskSingle); it != globalOffset.end()) {
                e.singleOffset = it->second;
            }
        }
        out_.tasks.push_back(std::move(e));
    }
}

void Generator::assignTaskIo() {
    for (std::size_t t = 0; t < out_.tasks.size() && t < model_.tasks.size(); ++t) {
        const auto data = std::find_if(model_.taskData.begin(), model_.taskData.end(),
                                       [&](const TaskData& d) { return d.task == model_.tasks[t]; });
        if (data == model_.taskData.end()) {
            continue;
        }
        for (std::size_t i = 0; i < out_.io.size() && i < ioOwners_.size(); ++i) {
            const IoOwner& o = ioOwners_[i];
            const bool used = o.direct.empty() ? data->find(o.var) != nullptr
                                               : std::binary_search(data->directAddresses.begin(),
                                                                    data->directAddresses.end(), o.direct);
            if (used) {
                out_.tasks[t].io.push_back(static_cast<std::uint32_t>(i));
            }
        }
    }
}

void Generator::layoutAccess() {
    for (const Symbol* a : model_.accessPaths) {
        if (a->accessPath.empty() || a->target == nullptr) {
            continue;
        }
        std::string path;
        for (const Symbol* s : a->accessPath) {
            if (s->kind == SymbolKind::Resource || s->kind == SymbolKind::Configuration) {
                continue;
            }
            path += (path.empty() ? "" : ".") + s->name;
        }
        const auto it = variableByPath.find(upperName(path));
        if (it == variableByPath.end()) {
            error(a->span, "VAR_ACCESS path of '" + a->name + "' names no variable of the data image");
            continue;
        }
        const bc::VarEntry& v = out_.variables[it->second];
        out_.access.push_back({a->name, v.path, v.type, v.offset, a->readOnly});
    }
}

} // namespace takt::compiler::codegen
