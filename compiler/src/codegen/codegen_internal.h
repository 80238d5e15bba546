#pragma once
// Private state of the back end, shared by the layout (layout.cpp), initial values
// (init_image.cpp) and the entry point (generate.cpp).
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "sema/context.h"
#include "takt/bytecode/module.h"
#include "takt/compiler/codegen.h"
#include "takt/compiler/sema/model.h"

namespace takt::compiler::codegen {

// Where a POU's instance member lives, relative to the start of the instance.
struct MemberSlot {
    std::uint32_t offset = 0;
    std::uint32_t size = 0;
    bool byReference = false; // VAR_IN_OUT: an 8-byte image offset of the actual argument
};

// Where an initialiser is evaluated: its scope, and for members the POU and instance they belong to.
struct InitContext {
    const Scope* scope = nullptr;
    const Symbol* pou = nullptr;    // the FB/PROGRAM whose member is initialised (null: global)
    std::uint32_t instanceBase = 0; // image offset of that instance
};

// An initialiser that reads variables: the init code evaluates it once at cold start.
struct DeferredInit {
    const Type* type;
    const ast::Expr* init;
    std::uint32_t at;
    InitContext cx;
};

// Whether `pou` is a standard FB the VM runs natively (TON, CTU, R_TRIG…). The other standard
// FBs (OpenPLC's PID, RAMP…) have ST bodies in the prelude and compile like user FBs.
[[nodiscard]] bool isNativeFb(const Symbol* pou);

class Generator {
public:
    Generator(const SemanticModel& model, std::vector<ast::CompilationUnit>& units, const SourceManager& sm,
              const CodegenOptions& options, bytecode::Module& out, DiagnosticSink& diags)
        : model_(model), units_(units), sm_(sm), options_(options), out_(out), diags_(diags) {}

    bool run();

    // ---- layout.cpp ----
    std::uint32_t typeIndex(const Type* type);
    std::uint32_t pouIndex(const Symbol* pou);
    // Offsets of every instance member of an FB/PROGRAM (base members first), as sema lays them out.
    const std::unordered_map<const Symbol*, MemberSlot>& members(const Symbol* pou);
    // The instance members of an FB/PROGRAM in layout order (inherited ones first).
    std::vector<const Symbol*> memberList(const Symbol* pou);
    void layoutConstants();
    void layoutGlobals();
    void layoutPrograms();
    void layoutTasks();
    void layoutAccess();

    // ---- init_image.cpp ----
    // Writes the initial value of a `type` object at image offset `at`: the declared initialiser
    // when it is constant, else the type's default now and a deferred assignment for the init code.
    void writeInitial(const Type* type, const ast::Expr* init, std::uint32_t at, const InitContext& cx);
    std::optional<sema::ConstValue> constant(const ast::Expr& expr, const Scope* scope);
    void collectTypeInits();
    bool writeConstant(const Type* type, const sema::ConstValue& v, std::uint32_t at);
    const StringType* stringType(bool wide, std::uint32_t length) {
        return const_cast<TypeTable&>(model_.types).string(wide, length);
    }
    std::vector<DeferredInit> deferredInits;

    [[nodiscard]] const SemanticModel& model() const { return model_; }
    [[nodiscard]] bytecode::Module& out() { return out_; }
    [[nodiscard]] const CodegenOptions& options() const { return options_; }
    [[nodiscard]] const SourceManager& sources() const { return sm_; }
    [[nodiscard]] DiagnosticSink& diags() { return diags_; }

    std::unordered_map<const Symbol*, std::uint32_t> globalOffset; // VAR_GLOBAL -> image offset
    std::unordered_map<const Symbol*, std::uint32_t>
        instanceOffset; // program instance (or implicit program) -> image offset
    std::unordered_map<std::string, std::uint32_t> stringConstants; // literal bytes -> image offset
    // Variable table paths (upper-cased) -> index in out.variables (VAR_ACCESS resolution).
    std::unordered_map<std::string, std::uint32_t> variableByPath;
    std::vector<const Symbol*> programPous; // the PROGRAM of each out.programs entry

    // Constants: bytes [8, 8 + pool.size()) of the image (bytes 0..7 stay unused so that an
    // image offset of 0 is NULL). Globals are laid out at provisional offsets starting at 8 and
    // shifted past the constants at the end; `globalFixups` lists the code words to shift.
    std::vector<std::uint8_t> pool;
    std::unordered_map<std::uint64_t, std::uint32_t> pool64;
    std::unordered_map<std::string, std::uint32_t> poolStrings;
    std::vector<std::uint32_t> globalFixups;
    std::uint32_t poolAlloc(std::uint32_t size, std::uint32_t align);
    std::vector<std::uint8_t>* image = nullptr; // where writeInitial writes (initImage or a frame template)

    // Frame layout of a FUNCTION/METHOD (result at 0, outputs, locals, then inputs and in-outs)
    // or of the VAR_TEMP block of an FB/PROGRAM body.
    struct FrameLayout {
        std::unordered_map<const Symbol*, std::uint32_t> offsets;
        std::uint32_t reinitEnd = 0;     // [0, reinitEnd) is re-initialised by the callee on entry
        std::uint32_t size = 0;          // parameters and locals
        std::uint32_t templ = 0;         // image offset of the initial frame bytes in the constants
        std::vector<DeferredInit> inits; // non-constant initialisers of locals (frame-relative `at`)
        // METHODs keep their parameters ahead of their locals (so every implementation of an
        // INTERFACE method agrees with the prototype on where the arguments go); their locals
        // [localsBegin, localsEnd) are re-initialised on entry too.
        std::uint32_t localsBegin = 0;
        std::uint32_t localsEnd = 0;
    };
    const FrameLayout& frameLayout(const Symbol* pou);
    std::unordered_map<const Symbol*, FrameLayout> frames;
    // The named variables of `pou`'s frame (its layout) for the debugger, by offset.
    std::vector<bytecode::FrameVar> frameVars(const Symbol* pou);
    // The type a variable is stored as: REF_TO its declared type for a VAR_IN_OUT (a reference).
    std::uint32_t storedTypeIndex(const Symbol* var);
    void error(Span span, std::string message);
    bool failed = false;

    // ---- lower_iface.cpp ----
    // The dispatch slot of an INTERFACE method prototype: one numbering over every interface of
    // the program, so one table per FB type serves all the interfaces it implements.
    std::uint32_t interfaceSlot(const Symbol* prototype);
    // Image offset (in the constants) of the dispatch table of FB type `fb`: u32 POU indices of
    // its implementations by slot, kNone where it has none.
    std::uint32_t dispatchTable(const Symbol* fb);
    // The FB at the root of `fb`'s EXTENDS chain carries the table offset when it reserves a
    // header; 0 when instances of `fb` have no header.
    static std::uint32_t dispatchHeaderOf(const Symbol* fb);
    // The dispatch slot of a call of METHOD (or property accessor) `method` on an instance
    // whose declared type is `fb`, when some FB extending `fb` overrides it (CODESYS methods
    // are virtual); none when every instance of that type runs `method` itself.
    std::optional<std::uint32_t> virtualSlot(const Symbol* method, const Symbol* fb);
    void numberSlots();

    // ---- lower_direct.cpp ----
    // Image offset (globals region, provisional like every global) of the cell that stands for
    // a direct address used in a statement; registers its I/O binding on first use.
    std::uint32_t directAddressCell(const ast::Address& address, const Type* type, Span span);

    // ---- lower_progargs.cpp ----
    // Gives every program instance with arguments its entry POU (after the bodies are lowered).
    void lowerProgramArguments();

    // ---- lower*.cpp ----
    void generateCode();
    // TaskEntry::io of every task, once every I/O binding exists (direct addresses get theirs
    // while code is generated).
    void assignTaskIo();
    void finish(const std::vector<std::uint8_t>& globals);

private:
    std::uint32_t allocGlobal(std::uint32_t size, std::uint32_t align);
    void addInstanceVariables(const Symbol* pou, const std::string& prefix, std::uint32_t base,
                              std::vector<const Symbol*>& symbolPath, bool retain);
    void addVariable(const Symbol* var, const std::string& path, std::uint32_t offset, bytecode::VarKind kind,
                     bool retain, std::vector<const Symbol*>& symbolPath);
    void addIo(const Symbol* var, const std::string& path, std::uint32_t offset,
               const std::vector<const Symbol*>& symbolPath);
    // Per Module::io entry, what a task must reach to use it: the variable as tasks share it
    // (task_data.h), or for a direct address used as a value its text.
    struct IoOwner {
        TaskVariable var;
        std::string direct;
    };
    std::vector<IoOwner> ioOwners_;
    std::string signature(const Type* type);

    const SemanticModel& model_;
    std::vector<ast::CompilationUnit>& units_;
    const SourceManager& sm_;
    const CodegenOptions& options_;
    bytecode::Module& out_;
    DiagnosticSink& diags_;
    std::uint32_t globalEnd_ = 0; // next free byte of the globals region (absolute image offset)
    std::unordered_map<const Type*, std::uint32_t> types_;
    std::unordered_map<const Type*, const ast::Expr*> typeInit_;
    DiagnosticSink scratch_;          // constant evaluation without reporting
    AnalysisOptions analysisOptions_; // for sema's constant evaluator
    std::unordered_map<const Symbol*, std::uint32_t> pous_;
    std::unordered_map<const Symbol*, std::unordered_map<const Symbol*, MemberSlot>> members_;
    std::unordered_map<const Symbol*, std::uint32_t> interfaceSlots_; // prototype -> slot
    bool interfaceSlotsNumbered_ = false;
    // (FB, upper-cased method name) for every method some FB extending that FB overrides.
    std::set<std::pair<const Symbol*, std::string>> overridden_;
    std::unordered_map<const Symbol*, std::uint32_t> dispatchTables_; // FB -> image offset
    std::unordered_map<std::string, std::uint32_t> directCells_;      // "%IX0.1" -> image offset
};

[[nodiscard]] inline std::uint32_t alignUp(std::uint32_t v, std::uint32_t a) {
    return a <= 1 ? v : (v + a - 1) / a * a;
}

// The FB/PROGRAM symbol of an instance type (null for other types).
[[nodiscard]] const Symbol* instancePou(const Type* type);
// The call statement or `x := f(…)` whose call carries EN or ENO (lower_enable.cpp), or null.
[[nodiscard]] const ast::CallExpr* enabledCall(const ast::Stmt& s);

// A one-character text constant as a CHAR/WCHAR (`ch`) constant: the first byte for CHAR, the
// first UTF-16 code unit of the UTF-8 text for WCHAR; 0 for an empty text.
[[nodiscard]] sema::ConstValue charConstant(const sema::ConstValue& text, const Type* ch);

} // namespace takt::compiler::codegen
