#pragma once
// A small, valid Module built by hand for verifier and disassembler tests, and an assembler
// that encodes instructions through the opcode tables.
#include <initializer_list>

#include "takt/bytecode/module.h"
#include "takt/bytecode/opcodes.h"

namespace takt::bytecode::test {

inline std::uint32_t g(std::uint32_t off) {
    return address(kTagAbsolute, off);
}
inline std::uint32_t self(std::uint32_t off) {
    return address(kTagThis, off);
}
inline std::uint32_t fp(std::uint32_t off) {
    return address(kTagFrame, off);
}

// Appends one instruction; returns its code offset.
inline std::uint32_t emit(Module& m, Opcode op, std::initializer_list<std::uint32_t> operands) {
    auto at = static_cast<std::uint32_t>(m.code.size());
    m.code.push_back(static_cast<std::uint32_t>(op));
    m.code.insert(m.code.end(), operands.begin(), operands.end());
    return at;
}

inline TypeDesc scalar(ValueKind kind, const char* name, std::uint32_t size) {
    TypeDesc t;
    t.kind = kind;
    t.name = name;
    t.signature = name;
    t.size = size;
    t.align = size;
    return t;
}

// Offsets of the instructions in validModule() that tests patch.
struct Layout {
    std::uint32_t movi = 0;   // MOVI_32 this+0, 1          (Main)
    std::uint32_t add = 0;    // ADD_I32 g:8, g:8, this+0   (Main)
    std::uint32_t jmpF = 0;   // JMP_F this+4, <ret>        (Main)
    std::uint32_t callFn = 0; // CALL_FN Add, 16            (Main)
    std::uint32_t callFb = 0; // CALL_FB Fb, this+8, 16     (Main)
    std::uint32_t native = 0; // CALL_NATIVE Len, fp+0      (Main)
    std::uint32_t mainRet = 0;
    std::uint32_t fnAdd = 0; // ADD_I32 fp+0, fp+4, fp+8   (Add)
    std::uint32_t fbMov = 0; // MOVI_32 this+4, 7          (Fb)
};

// constants [0, 8), globals [8, 40): counter DINT at 8, program instance Main at 16 (16 bytes:
// count DINT at 0, flag BOOL at 4, fb Fb at 8).
inline Module validModule(Layout* layout = nullptr) {
    Module m;
    Layout l;
    m.constSize = 8;
    m.globalSize = 32;
    m.stackSize = 128;
    m.initImage.assign(40, 0);
    m.types = {scalar(ValueKind::DInt, "DINT", 4), scalar(ValueKind::Bool, "BOOL", 1)};
    TypeDesc fb;
    fb.kind = ValueKind::FunctionBlock;
    fb.name = "Fb";
    fb.signature = "FB Fb{a:DINT,b:DINT}";
    fb.size = 8;
    fb.align = 4;
    fb.fields = {{"a", 0, 0, false}, {"b", 0, 4, false}};
    fb.pou = 2;
    TypeDesc main;
    main.kind = ValueKind::Program;
    main.name = "Main";
    main.signature = "PROGRAM Main{count:DINT,flag:BOOL,fb:Fb}";
    main.size = 16;
    main.align = 4;
    main.fields = {{"count", 0, 0, true}, {"flag", 1, 4, false}, {"fb", 2, 8, false}};
    main.pou = 0;
    m.types.push_back(fb);   // 2
    m.types.push_back(main); // 3

    l.movi = emit(m, Opcode::MOVI_32, {self(0), 1});
    l.add = emit(m, Opcode::ADD_I32, {g(8), g(8), self(0)});
    l.jmpF = emit(m, Opcode::JMP_F, {self(4), 0}); // target patched below
    l.callFn = emit(m, Opcode::CALL_FN, {1, 16});
    l.callFb = emit(m, Opcode::CALL_FB, {2, self(8), 16});
    l.native = emit(m, Opcode::CALL_NATIVE, {static_cast<std::uint32_t>(Native::Len), fp(0)});
    l.mainRet = emit(m, Opcode::RET, {});
    m.code[l.jmpF + 2] = l.mainRet;
    std::uint32_t mainEnd = static_cast<std::uint32_t>(m.code.size());
    l.fnAdd = emit(m, Opcode::ADD_I32, {fp(0), fp(4), fp(8)});
    emit(m, Opcode::RET, {});
    std::uint32_t addEnd = static_cast<std::uint32_t>(m.code.size());
    l.fbMov = emit(m, Opcode::MOVI_32, {self(4), 7});
    emit(m, Opcode::RET, {});
    std::uint32_t fbEnd = static_cast<std::uint32_t>(m.code.size());

    m.pous = {{"Main", PouKind::Program, 0, mainEnd, 48, 3, kNone},
              {"Add", PouKind::Function, mainEnd, addEnd, 12, kNone, kNone},
              {"Fb", PouKind::FunctionBlock, addEnd, fbEnd, 0, 2, kNone}};
    m.variables = {{"counter", 0, 8, 4, VarKind::Global, false, false},
                   {"Main", 3, 16, 16, VarKind::ProgramVar, false, false},
                   {"Main.count", 0, 16, 4, VarKind::ProgramVar, true, false},
                   {"Main.flag", 1, 20, 1, VarKind::ProgramVar, false, false},
                   {"Main.fb", 2, 24, 8, VarKind::ProgramVar, false, false}};
    m.tasks = {{"Fast", 10'000'000, 1, kNone, {0}}};
    m.programs = {{"Main", 0, 16, 0}};
    m.io = {{IoArea::Input, 0, 0, 0, 20, 1, "%IX0.0", "Main.flag"}};
    m.access = {{"COUNT", "Main.count", 0, 16, true}};
    m.files = {"src/main.st"};
    m.debug = {{l.movi, 0, 5, 3}, {l.add, 0, 6, 3}, {l.fnAdd, 0, 20, 5}};
    if (layout != nullptr) {
        *layout = l;
    }
    return m;
}

} // namespace takt::bytecode::test
