#pragma once
// Hand-built Modules and a scripted CodeRunner for engine and harness tests: they exercise
// scheduling, paths, values and online change without depending on the code generator.
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "takt/bytecode/module.h"
#include "takt/engine/program.h"

namespace takt::testing {

using bytecode::FieldDesc;
using bytecode::Module;
using bytecode::TypeDesc;
using bytecode::ValueKind;

class ModuleBuilder {
public:
    std::uint32_t elementary(ValueKind kind, const std::string& name, std::uint32_t size) {
        TypeDesc t;
        t.kind = kind;
        t.name = name;
        t.signature = name;
        t.size = size;
        t.align = size == 0 ? 1 : size;
        return add(std::move(t));
    }
    std::uint32_t add(TypeDesc t) {
        if (t.signature.empty()) {
            t.signature = t.name;
        }
        m.types.push_back(std::move(t));
        return static_cast<std::uint32_t>(m.types.size() - 1);
    }
    std::uint32_t array(std::uint32_t element, std::vector<std::int64_t> bounds) {
        TypeDesc t;
        t.kind = ValueKind::Array;
        t.element = element;
        std::uint32_t count = 1;
        std::string dims;
        for (std::size_t i = 0; i + 1 < bounds.size(); i += 2) {
            count *= static_cast<std::uint32_t>(bounds[i + 1] - bounds[i] + 1);
            dims += (i == 0 ? "" : ",") + std::to_string(bounds[i]) + ".." + std::to_string(bounds[i + 1]);
        }
        t.bounds = std::move(bounds);
        t.size = count * m.types[element].size;
        t.name = "ARRAY [" + dims + "] OF " + m.types[element].name;
        return add(std::move(t));
    }
    // A struct / FB / program type with members laid out in order (8-byte aligned).
    std::uint32_t composite(ValueKind kind, const std::string& name,
                            const std::vector<std::pair<std::string, std::uint32_t>>& members,
                            const std::string& signature = {}) {
        TypeDesc t;
        t.kind = kind;
        t.name = name;
        std::uint32_t off = 0;
        for (const auto& [n, type] : members) {
            t.fields.push_back(FieldDesc{n, type, off, false});
            off += (m.types[type].size + 7) / 8 * 8;
        }
        t.size = off;
        t.signature = signature.empty() ? name : signature;
        return add(std::move(t));
    }
    // A global variable (and VarEntry); returns its offset.
    std::uint32_t global(const std::string& path, std::uint32_t type, bool retain = false) {
        const std::uint32_t off = allocate(m.types[type].size);
        m.variables.push_back(
            bytecode::VarEntry{path, type, off, m.types[type].size, bytecode::VarKind::Global, retain, false});
        return off;
    }
    // A PROGRAM type + POU + instance; VarEntries for every member (and FB members one level down).
    std::uint32_t program(const std::string& instName, std::uint32_t programType, std::uint32_t task = bytecode::kNone,
                          const std::vector<std::string>& retainMembers = {}) {
        bytecode::PouEntry pou;
        pou.name = m.types[programType].name;
        pou.kind = bytecode::PouKind::Program;
        pou.instanceType = programType;
        m.pous.push_back(pou);
        m.types[programType].pou = static_cast<std::uint32_t>(m.pous.size() - 1);
        const std::uint32_t off = allocate(m.types[programType].size);
        m.programs.push_back(
            bytecode::ProgramInstance{instName, static_cast<std::uint32_t>(m.pous.size() - 1), off, task});
        for (const FieldDesc& f : m.types[programType].fields) {
            bool retain = false;
            for (const std::string& r : retainMembers) {
                retain = retain || r == f.name;
            }
            addEntries(instName + "." + f.name, f.type, off + f.offset, retain);
        }
        return static_cast<std::uint32_t>(m.pous.size() - 1);
    }
    template <typename T> void init(std::uint32_t offset, T value) {
        std::memcpy(m.initImage.data() + offset, &value, sizeof(T));
    }
    std::uint32_t task(const std::string& name, std::int64_t intervalNs, std::uint32_t priority,
                       std::uint32_t singleOffset = bytecode::kNone) {
        m.tasks.push_back(bytecode::TaskEntry{name, intervalNs, priority, singleOffset, {}});
        return static_cast<std::uint32_t>(m.tasks.size() - 1);
    }
    std::shared_ptr<const Module> build() { return std::make_shared<const Module>(m); }

    Module m;

private:
    void addEntries(const std::string& path, std::uint32_t type, std::uint32_t offset, bool retain) {
        m.variables.push_back(
            bytecode::VarEntry{path, type, offset, m.types[type].size, bytecode::VarKind::ProgramVar, retain, false});
        if (m.types[type].kind == ValueKind::FunctionBlock) {
            const TypeDesc fb = m.types[type];
            for (const FieldDesc& f : fb.fields) {
                addEntries(path + "." + f.name, f.type, offset + f.offset, retain);
            }
        }
    }
    std::uint32_t allocate(std::uint32_t size) {
        const std::uint32_t off = m.constSize + m.globalSize;
        m.globalSize += (size + 7) / 8 * 8;
        m.initImage.resize(m.constSize + m.globalSize, 0);
        return off;
    }
};

// Runs C++ lambdas in place of POU bodies.
class ScriptedRunner final : public engine::CodeRunner {
public:
    using Body = std::function<bool(std::uint8_t* image, std::uint32_t instance, std::int64_t now, engine::Fault&)>;
    std::map<std::uint32_t, Body> bodies; // by POU index
    std::function<bool(std::uint8_t*, engine::Fault&)> init;
    std::vector<std::string>* log = nullptr;

    bool runInit(engine::LoadedProgram& p, engine::Fault& f) override { return !init || init(p.image(), f); }
    bool runProgram(engine::LoadedProgram& p, const bytecode::ProgramInstance& inst, std::int64_t now,
                    engine::Fault& f) override {
        if (log != nullptr) {
            log->push_back(inst.name);
        }
        auto it = bodies.find(inst.pou);
        return it == bodies.end() || it->second(p.image(), inst.offset, now, f);
    }
};

template <typename T> T peek(const std::uint8_t* image, std::uint32_t offset) {
    T v;
    std::memcpy(&v, image + offset, sizeof(T));
    return v;
}

template <typename T> void poke(std::uint8_t* image, std::uint32_t offset, T v) {
    std::memcpy(image + offset, &v, sizeof(T));
}

} // namespace takt::testing
