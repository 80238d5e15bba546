// The native tier's program compiler: a verified module's POU bodies, each translated
// (translator.cpp) into an LLVM module of its own, optimised at -O2 and turned into an object, or
// taken from the code cache when an earlier compile left one for the same translation
// (object_cache.h); then linked by LLVM's ORC JIT into code that is never writable and executable
// at once (code_arena.h, code_memory.h): in one go, or in waves, callees first, each handed over
// as soon as it is linked, so a program moves to native code a part at a time (wave_linker.h).
#include "takt/native/native.h"

#include "code_memory.h"
#include "compile_threads.h"
#include "instance_offsets.h"
#include "object_cache.h"
#include "plugin_api.h"
#include "pou_translator.h"
#include "standard_fbs.h"
#include "wave_linker.h"

#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Weverything"
#endif
#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassInstrumentation.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#if defined(__clang__)
#pragma clang diagnostic pop
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <malloc.h>

namespace takt::native {

namespace {

using bytecode::Opcode;
using llvm::Type;

// LLVM's own options, set once for the process (only the native tier uses LLVM in takt).
struct LlvmOption {
    const char* name;
    const char* value;
};
constexpr std::array kLlvmOptions = {
    // GVN's search for the store a load reads spans at most this many blocks (default 1000). A
    // generated straight-line program (200 TON calls inlined, each a few blocks) took 1.9 s to
    // optimise with the default, 0.5 s with 20, and ran as fast.
    LlvmOption{"memdep-block-number-limit", "20"},
};

void setLlvmOptions() {
    auto& options = llvm::cl::getRegisteredOptions();
    for (const LlvmOption& o : kLlvmOptions) {
        if (auto found = options.find(o.name); found != options.end()) {
            (void)found->second->addOccurrence(0, o.name, o.value);
        }
    }
}

void initialiseLlvm() {
    static std::once_flag once;
    std::call_once(once, [] {
        llvm::InitializeNativeTarget();
        llvm::InitializeNativeTargetAsmPrinter();
        setLlvmOptions();
    });
}

std::string errorText(llvm::Error err) {
    return llvm::toString(std::move(err));
}

// Above this many bytecode words a program's loops are not unrolled. Unrolling a large
// program's many short FOR loops doubled its code and with it the compile time (a generated
// 50,000-line project: 22 s without, 36 s with, once the temporaries were kept in registers),
// for a scan time that counts less than the wait at each online change.
constexpr std::size_t kUnrollCodeWords = 65536;

bool cancelled(const std::atomic<bool>* cancel) noexcept {
    return cancel != nullptr && cancel->load(std::memory_order_relaxed);
}

// A set `cancel` makes every optional pass still to run a no-op, so a cancelled compile leaves
// the optimiser within one pass (the code is thrown away: translate() reads the flag after).
void optimise(llvm::Module& mod, llvm::TargetMachine* tm, std::size_t codeWords, const std::atomic<bool>* cancel) {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PipelineTuningOptions tuning;
    tuning.LoopUnrolling = codeWords <= kUnrollCodeWords;
    llvm::PassInstrumentationCallbacks instrumentation;
    if (cancel != nullptr) {
        instrumentation.registerShouldRunOptionalPassCallback(
            [cancel](llvm::StringRef, const llvm::Any&) { return !cancelled(cancel); });
    }
    llvm::PassBuilder pb(tm, tuning, llvm::None, &instrumentation);
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    pb.registerPeepholeEPCallback(
        [](llvm::FunctionPassManager& fpm, llvm::OptimizationLevel) { fpm.addPass(InstanceOffsets()); });
    pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2).run(mod, mam);
}

// TAKT_NATIVE_DUMP=PREFIX writes the program's IR as the translator emitted it (PREFIX.ll, every
// POU's module) and after the optimisation (PREFIX.opt.ll, the modules compiled, not those taken
// from the cache), for reading the code a program gets (`llc-14 -O2 -mattr=-avx PREFIX.opt.ll`
// gives its machine code). Each compile overwrites the files: `append` after its first module.
void dumpIr(const llvm::Module& mod, const char* suffix, bool append) {
    const char* prefix = std::getenv("TAKT_NATIVE_DUMP");
    if (prefix == nullptr || *prefix == '\0') {
        return;
    }
    std::error_code ec;
    llvm::raw_fd_ostream out(std::string(prefix) + suffix, ec,
                             append ? llvm::sys::fs::OF_Text | llvm::sys::fs::OF_Append : llvm::sys::fs::OF_Text);
    if (!ec) {
        mod.print(out, nullptr);
    }
}

} // namespace

namespace tier {

namespace {

// The result of a compile its cancel flag ended.
CompileResult cancelledResult() {
    CompileResult result;
    result.cancelled = true;
    result.error = "the compile was cancelled";
    return result;
}

// The POUs a POU body calls directly (CALL_FN, CALL_FB, CALL_FB_IND), in the order of the calls.
// The walk follows instruction boundaries, as the verifier does.
std::vector<std::uint32_t> calleesOf(const bytecode::Module& module, const bytecode::PouEntry& pou) {
    std::vector<std::uint32_t> callees;
    if (pou.code == bytecode::kNone) {
        return callees;
    }
    for (std::uint32_t pc = pou.code; pc < pou.codeEnd; pc += bytecode::kOpcodeInfo[module.code[pc]].length) {
        const auto op = static_cast<Opcode>(module.code[pc]);
        if ((op == Opcode::CALL_FN || op == Opcode::CALL_FB || op == Opcode::CALL_FB_IND) &&
            module.code[pc + 1] < module.pous.size()) {
            callees.push_back(module.code[pc + 1]);
        }
    }
    return callees;
}

// The POUs some POU body calls directly.
std::vector<bool> callTargets(const bytecode::Module& module) {
    std::vector<bool> called(module.pous.size(), false);
    for (const bytecode::PouEntry& pou : module.pous) {
        for (const std::uint32_t q : calleesOf(module, pou)) {
            called[q] = true;
        }
    }
    return called;
}

// The largest body (bytecode words) a caller's module carries a copy of: about what LLVM still
// inlines at -O2 when the callee has other callers (fb_calls' PID-like FB is 67 words). A larger
// copy would cost compile time and widen what an edit compiles again, and stay a call.
constexpr std::uint32_t kInlineCopyWords = 256;

// The bodies `p`'s module carries copies of: the small ones it calls, and the small ones they
// call, in the order first called.
std::vector<std::uint32_t> inlinedCallees(const bytecode::Module& module, std::uint32_t p,
                                          const std::vector<bool>& hasBody) {
    std::vector<std::uint32_t> copies;
    std::vector<bool> seen(module.pous.size(), false);
    seen[p] = true;
    std::vector<std::uint32_t> work = calleesOf(module, module.pous[p]);
    std::reverse(work.begin(), work.end());
    while (!work.empty()) {
        const std::uint32_t q = work.back();
        work.pop_back();
        const bytecode::PouEntry& pou = module.pous[q];
        if (seen[q] || !hasBody[q] || pou.codeEnd - pou.code > kInlineCopyWords) {
            continue;
        }
        seen[q] = true;
        copies.push_back(q);
        std::vector<std::uint32_t> more = calleesOf(module, pou);
        work.insert(work.end(), more.rbegin(), more.rend());
    }
    return copies;
}

// What a POU's object needs linked before it (WaveLinker): the bodies it may call (its own
// callees and those of the copies it carries, which stay calls where LLVM does not inline them),
// and whether it reaches the dispatch tables (a dispatched call in it or a copy).
struct LinkNeeds {
    std::vector<std::uint32_t> calls;
    bool tables = false;
};
LinkNeeds linkNeeds(const bytecode::Module& module, std::uint32_t p, const std::vector<bool>& hasBody) {
    LinkNeeds needs;
    std::vector<std::uint32_t> carried = inlinedCallees(module, p, hasBody);
    carried.push_back(p);
    for (const std::uint32_t q : carried) {
        const bytecode::PouEntry& pou = module.pous[q];
        for (const std::uint32_t c : calleesOf(module, pou)) {
            if (c != p && hasBody[c]) {
                needs.calls.push_back(c);
            }
        }
        for (std::uint32_t pc = pou.code; pc < pou.codeEnd; pc += bytecode::kOpcodeInfo[module.code[pc]].length) {
            const auto op = static_cast<Opcode>(module.code[pc]);
            needs.tables = needs.tables || op == Opcode::CALL_IFACE || op == Opcode::CALL_VIRT;
        }
    }
    return needs;
}

// Puts the bodies in an order they can be linked in: each after the bodies it calls (a walk of
// the calls, depth first, from each body in program order); bodies calling each other keep the
// order the walk met them in (they are linked together, in the last wave).
void orderCalleesFirst(const bytecode::Module& module, const std::vector<bool>& hasBody,
                       std::vector<std::pair<std::uint32_t, Reach>>& bodies) {
    std::vector<std::size_t> at(module.pous.size(), bodies.size());
    for (std::size_t i = 0; i < bodies.size(); ++i) {
        at[bodies[i].first] = i;
    }
    std::vector<char> seen(module.pous.size(), 0);
    std::vector<std::size_t> order;
    struct Open {
        std::uint32_t pou;
        std::vector<std::uint32_t> callees;
        std::size_t next = 0;
    };
    std::vector<Open> stack;
    for (const auto& body : bodies) {
        if (seen[body.first] != 0) {
            continue;
        }
        seen[body.first] = 1;
        stack.push_back({body.first, calleesOf(module, module.pous[body.first])});
        while (!stack.empty()) {
            Open& top = stack.back();
            if (top.next < top.callees.size()) {
                const std::uint32_t q = top.callees[top.next++];
                if (hasBody[q] && seen[q] == 0) {
                    seen[q] = 1;
                    stack.push_back({q, calleesOf(module, module.pous[q])});
                }
                continue;
            }
            order.push_back(at[top.pou]);
            stack.pop_back();
        }
    }
    std::vector<std::pair<std::uint32_t, Reach>> sorted;
    sorted.reserve(bodies.size());
    for (const std::size_t i : order) {
        sorted.push_back(std::move(bodies[i]));
    }
    bodies = std::move(sorted);
}

// A compile with a listener links its POUs in this many waves (fewer for fewer POUs): enough for
// a large program's POUs to move to native code a part at a time, few enough that the waits
// between them (each wave's slowest POU) cost the compile little.
constexpr std::size_t kWaves = 8;

// The symbols of the program's POUs: each by its name, which an online change that moves the
// POU in the code area keeps (so does its object), with its index only when two share a name.
std::vector<std::string> pouSymbols(const bytecode::Module& module) {
    std::vector<std::string> names;
    std::map<std::string, std::uint32_t> uses;
    for (const bytecode::PouEntry& pou : module.pous) {
        ++uses[pou.name];
    }
    for (std::uint32_t p = 0; p < module.pous.size(); ++p) {
        const std::string& name = module.pous[p].name;
        names.push_back(uses[name] == 1 ? name : name + "#" + std::to_string(p));
    }
    return names;
}
// What shapes a POU's object besides its IR (object_cache.h): the target and the passes run.
std::string codeOptions(const llvm::TargetMachine& tm, bool unroll) {
    return tm.getTargetTriple().str() + ' ' + tm.getTargetCPU().str() + ' ' + tm.getTargetFeatureString().str() +
           (unroll ? " unroll" : " no-unroll");
}

// TAKT_NATIVE_TIMES=1 prints where a compile's time went to stderr (translation, keys, -O2, code
// generation: each summed over the compile threads; linking), for telling an online change's
// compile time apart.
class PhaseTimes {
public:
    enum Phase : std::size_t { kTranslate, kKey, kOptimise, kCodegen, kLink, kPhases };
    // Ends the phase running and starts `phase`.
    void next(Phase phase) {
        const auto now = std::chrono::steady_clock::now();
        if (running_ != kPhases) {
            ms_[running_] += std::chrono::duration<double, std::milli>(now - since_).count();
        }
        running_ = phase;
        since_ = now;
    }
    // Adds another thread's times (a compile's POUs are compiled on several, compilePous()).
    void add(const PhaseTimes& other) {
        for (std::size_t i = 0; i < kPhases; ++i) {
            ms_[i] += other.ms_[i];
        }
    }
    void report(const CompileResult& result) {
        next(kPhases);
        const char* on = std::getenv("TAKT_NATIVE_TIMES");
        if (on == nullptr || *on == '\0') {
            return;
        }
        std::fprintf(stderr,
                     "takt-native: %.1f ms on %u threads: translate %.1f, keys %.1f, -O2 %.1f, codegen %.1f (thread "
                     "ms), link %.1f; %u POUs compiled, %u reused\n",
                     result.compileMs, result.compileThreads, ms_[kTranslate], ms_[kKey], ms_[kOptimise], ms_[kCodegen],
                     ms_[kLink], result.pousCompiled, result.pousReused);
    }

private:
    std::array<double, kPhases> ms_{};
    Phase running_ = kPhases;
    std::chrono::steady_clock::time_point since_{};
};

// One POU's module: its body, the copies of the bodies it may inline, and declarations of what
// else it calls; the program's tables and each POU's start are symbols of the program module.
struct Unit {
    llvm::LLVMContext& cx;
    llvm::Module& mod;
    const bytecode::Module& module;
    const std::vector<std::string>& names;
    const std::vector<bool>& hasBody;
    const std::vector<bool>& called;
    std::span<const DirectFb> directFbs;
    StandardFbs standardFbs{mod};
    std::vector<llvm::Function*> functions = std::vector<llvm::Function*>(module.pous.size(), nullptr);
    llvm::GlobalVariable* bodyTable = nullptr;
    llvm::GlobalVariable* frameTable = nullptr;

    llvm::GlobalVariable* external(Type* type, const std::string& name) {
        return new llvm::GlobalVariable(mod, type, true, llvm::GlobalValue::ExternalLinkage, nullptr, name);
    }
    // POU q's body in this module, declared where first named: a module names only what it uses.
    llvm::Function* bodyOf(std::uint32_t q) {
        if (!hasBody[q]) {
            return nullptr;
        }
        if (functions[q] == nullptr) {
            functions[q] =
                llvm::Function::Create(bodyType(cx), llvm::Function::ExternalLinkage, bodySymbol(names, q), &mod);
            functions[q]->addFnAttr(llvm::Attribute::NoUnwind);
            // The image is reached only through this argument while the code runs (host calls
            // get it passed, so LLVM knows they may touch it).
            functions[q]->addParamAttr(0, llvm::Attribute::NoAlias);
        }
        return functions[q];
    }
    // Translates POU q's body into bodyOf(q).
    void translate(std::uint32_t q, const Reach& reach) {
        if (bodyTable == nullptr) {
            bodyTable = external(llvm::ArrayType::get(llvm::Type::getInt8PtrTy(cx), 0), kBodyTable);
            frameTable = external(llvm::ArrayType::get(llvm::Type::getInt32Ty(cx), 0), kFrameTable);
        }
        const PouLinks links{module,       [this](std::uint32_t callee) { return bodyOf(callee); },        bodyTable,
                             frameTable,   external(llvm::Type::getInt32Ty(cx), startSymbol(names, q)),    directFbs,
                             &standardFbs, module.pous[q].kind == bytecode::PouKind::Program && !called[q]};
        translatePou(*bodyOf(q), q, reach, links);
    }
};

// What every POU's compile reads, shared by the compile threads (none writes it).
struct ProgramView {
    const bytecode::Module& module;
    std::span<const DirectFb> directFbs;
    const std::vector<std::string>& names;
    const std::vector<bool>& hasBody;
    const std::vector<bool>& called;
    const std::vector<const Reach*>& reaches;
    const std::string& options; // codeOptions(): part of every key
    const std::atomic<bool>* cancel;
};

// One POU's object, and how it came.
struct PouObject {
    ObjectFile object;
    std::string key;
    std::string error; // the translator's invalid IR, the code generator's failure
    bool compiled = false;
};

// The files TAKT_NATIVE_DUMP writes, shared by the compile threads: one module at a time, each
// compile's first module starting the file anew.
class IrDump {
public:
    void write(const llvm::Module& mod, const char* suffix, bool optimised) {
        const std::lock_guard<std::mutex> lock(mutex_);
        bool& started = optimised ? optimisedStarted_ : translatedStarted_;
        dumpIr(mod, suffix, started);
        started = true;
    }

private:
    std::mutex mutex_;
    bool translatedStarted_ = false;
    bool optimisedStarted_ = false;
};

// Translates POU p into an LLVM module of its own, then takes its object from the cache, or
// optimises the module and generates the object (with `tm`: each compile thread has its own).
PouObject compilePou(const ProgramView& program, std::uint32_t p, llvm::TargetMachine& tm, PhaseTimes& times,
                     IrDump& dump) {
    PouObject made;
    times.next(PhaseTimes::kTranslate);
    // A context per module: the standard FBs' bitcode linked into two modules of one context
    // gets its types renamed (NativeContext.0 …), which would tie a module's key to the modules
    // translated before it. It also frees each module's memory at once, and lets threads
    // translate side by side (an LLVM context is used by one thread at a time).
    llvm::LLVMContext cx;
    llvm::Module mod(program.names[p], cx);
    mod.setDataLayout(tm.createDataLayout());
    mod.setTargetTriple(tm.getTargetTriple().str());
    Unit unit{cx, mod, program.module, program.names, program.hasBody, program.called, program.directFbs};
    // The small bodies p calls, and theirs, come along as copies LLVM may inline (then drops),
    // as it did when the program was one module; translated first, so p's calls find them.
    for (const std::uint32_t q : inlinedCallees(program.module, p, program.hasBody)) {
        unit.translate(q, *program.reaches[q]);
        unit.bodyOf(q)->setLinkage(llvm::GlobalValue::AvailableExternallyLinkage);
    }
    unit.translate(p, *program.reaches[p]);
    dump.write(mod, ".ll", false);
    std::string invalid; // the verifier's text, not written to stderr from several threads at once
    llvm::raw_string_ostream invalidOut(invalid);
    if (llvm::verifyModule(mod, &invalidOut)) {
        invalidOut.flush();
        made.error = "the translator produced invalid IR for " + program.module.pous[p].name + ": " +
                     invalid.substr(0, invalid.find('\n'));
        return made;
    }
    times.next(PhaseTimes::kKey);
    made.key = objectKey(mod, program.options);
    made.object = objectCache().find(made.key);
    if (made.object == nullptr) {
        times.next(PhaseTimes::kOptimise);
        optimise(mod, &tm, program.module.code.size(), program.cancel);
        if (cancelled(program.cancel)) {
            return made; // no object: the caller answers cancelled
        }
        dump.write(mod, ".opt.ll", true);
        times.next(PhaseTimes::kCodegen);
        auto generated = llvm::orc::SimpleCompiler(tm)(mod);
        if (!generated) {
            made.error = errorText(generated.takeError());
            return made;
        }
        made.object = std::make_shared<const CompiledPou>(
            CompiledPou{(*generated)->getBuffer().str(), unit.standardFbs.linked()});
        objectCache().add(made.key, made.object);
        made.compiled = true;
    }
    return made;
}

// Compiles the POUs of `bodies` on `threads` threads (the caller's and helpers,
// compile_threads.h), each taking the next POU not taken: the modules are independent, a context
// and a target machine each. The objects come in the order of `bodies` whatever thread made
// them, so the link and the cache see the same program either way. `threads` becomes the number
// that ran; `error` a thread's own failure (no target machine, no memory).
std::vector<PouObject> compilePous(const ProgramView& program, std::span<const std::pair<std::uint32_t, Reach>> bodies,
                                   llvm::orc::JITTargetMachineBuilder& tmb, unsigned& threads, PhaseTimes& times,
                                   IrDump& dump, std::string& error) {
    std::vector<PouObject> made(bodies.size());
    std::atomic<std::size_t> next{0};
    std::atomic<bool> stop{false};
    std::vector<PhaseTimes> threadTimes(threads);
    std::vector<std::string> tmErrors(threads);
    std::vector<char> outOfMemory(threads, 0); // a flag: the catch below must not allocate
    const auto work = [&](unsigned t) noexcept {
        try {
            llvm::orc::JITTargetMachineBuilder own = tmb;
            auto tm = own.createTargetMachine();
            if (!tm) {
                tmErrors[t] = errorText(tm.takeError());
                stop.store(true);
            }
            while (tm && !stop.load() && !cancelled(program.cancel)) {
                const std::size_t i = next.fetch_add(1);
                if (i >= bodies.size()) {
                    break;
                }
                made[i] = compilePou(program, bodies[i].first, **tm, threadTimes[t], dump);
                if (!made[i].error.empty()) {
                    stop.store(true);
                }
            }
        } catch (...) { // an allocation that failed: the compile fails, the process goes on
            outOfMemory[t] = 1;
            stop.store(true);
        }
        threadTimes[t].next(PhaseTimes::kPhases);
    };
    // Made before the helpers start, so nothing below allocates while they run; destroyed (joined)
    // before what they use.
    std::vector<std::function<void()>> jobs;
    jobs.reserve(threads);
    for (unsigned t = 1; t < threads; ++t) {
        jobs.emplace_back([&work, t] { work(t); });
    }
    std::vector<CompileHelper> helpers(jobs.size());
    unsigned ran = 1;
    for (std::size_t h = 0; h < helpers.size(); ++h) {
        ran += helpers[h].start(jobs[h]) ? 1 : 0;
    }
    work(0);
    for (CompileHelper& helper : helpers) {
        helper.join();
    }
    threads = ran;
    for (unsigned t = 0; t < threadTimes.size(); ++t) {
        times.add(threadTimes[t]);
        if (error.empty() && outOfMemory[t] != 0) {
            error = "the compile ran out of memory";
        }
        if (error.empty() && !tmErrors[t].empty()) {
            error = tmErrors[t];
        }
    }
    return made;
}

CompileResult translate(const bytecode::Module& module, std::span<const DirectFb> directFbs,
                        std::span<const Opcode> leaveToInterpreter, const std::atomic<bool>* cancel, unsigned threads,
                        const PartListener* onPart) {
    const auto started = std::chrono::steady_clock::now();
    CompileResult result;
    std::vector<std::pair<std::uint32_t, Reach>> bodies;
    for (std::uint32_t p = 0; p < module.pous.size(); ++p) {
        const bytecode::PouEntry& pou = module.pous[p];
        if (pou.code == bytecode::kNone || pou.native != bytecode::kNone) {
            continue;
        }
        Reach reach = reachable(module, pou.code, leaveToInterpreter, directFbs);
        if (reach.unsupportedPc != bytecode::kNone) {
            result.unsupportedPc = reach.unsupportedPc;
            result.unsupportedOp = module.code[reach.unsupportedPc];
            return result;
        }
        bodies.emplace_back(p, std::move(reach));
    }

    initialiseLlvm();
    auto tmb = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!tmb) {
        result.error = errorText(tmb.takeError());
        return result;
    }
    tmb->setCodeGenOptLevel(llvm::CodeGenOpt::Default);
    if (tmb->getTargetTriple().isX86()) {
        // SSE encodings, not AVX: for the VEX forms of int-to-float conversion LLVM 14 picks as the
        // undefined upper source a register last written inside a called function (its reaching
        // definitions ignore call clobbers), which made every loop iteration after a SIN wait for
        // it to finish (real_math ran 1.8x its twin; with SSE 1.05x). Disabling AVX also drops
        // AVX2, FMA and AVX-512; the programs' loops gain little from wider vectors.
        tmb->getFeatures().AddFeature("avx", false);
    }
    auto tm = tmb->createTargetMachine();
    if (!tm) {
        result.error = errorText(tm.takeError());
        return result;
    }
    // One module per POU body, compiled on its own or taken from the cache (object_cache.h).
    // Calls between POUs go by symbol; what depends on where the POUs are (the dispatch tables,
    // each POU's code offset) the linker adds (wave_linker.h).
    const std::vector<std::string> names = pouSymbols(module);
    std::vector<bool> hasBody(module.pous.size(), false);
    for (const auto& body : bodies) {
        hasBody[body.first] = true;
    }
    orderCalleesFirst(module, hasBody, bodies);
    const std::vector<bool> called = callTargets(module);
    std::vector<const Reach*> reaches(module.pous.size(), nullptr);
    for (const auto& body : bodies) {
        reaches[body.first] = &body.second;
    }
    const std::string options = codeOptions(**tm, module.code.size() <= kUnrollCodeWords);
    const ProgramView program{module, directFbs, names, hasBody, called, reaches, options, cancel};
    WaveLinker linker(module, names, hasBody);
    if (!linker.start(*tmb)) {
        result.error = linker.error();
        return result;
    }
    // With a listener the POUs are compiled and linked in waves, callees first, and each wave's
    // code is handed over as soon as it is linked; without, in one.
    const std::size_t wave =
        onPart != nullptr ? std::max<std::size_t>(1, (bodies.size() + kWaves - 1) / kWaves) : bodies.size();
    PhaseTimes times;
    IrDump dump;
    std::vector<PouObject> made(bodies.size());
    std::vector<bool> linked(module.pous.size(), false);
    std::vector<std::size_t> waiting; // compiled, not linked: indices into bodies
    unsigned threadsRan = 1;
    for (std::size_t from = 0; from < bodies.size() || from == 0; from += wave) {
        const std::size_t count = std::min(wave, bodies.size() - from);
        unsigned ran = compileThreads(threads, count); // compilePous: those that ran
        std::vector<PouObject> part = count != 0 ? compilePous(program, std::span(bodies).subspan(from, count), *tmb,
                                                               ran, times, dump, result.error)
                                                 : std::vector<PouObject>();
        threadsRan = std::max(threadsRan, ran);
        if (cancelled(cancel)) {
            return cancelledResult();
        }
        for (std::size_t i = 0; i < count; ++i) {
            if (result.error.empty() && !part[i].error.empty()) {
                result.error = std::move(part[i].error); // the first in the order of the POUs compiled
            }
            made[from + i] = std::move(part[i]);
            waiting.push_back(from + i);
        }
        if (!result.error.empty()) {
            return result;
        }
        if (from + count >= bodies.size()) {
            break; // the last wave: linked below, with the tables
        }
        std::vector<std::uint32_t> pous;
        std::vector<ObjectFile> objects;
        std::vector<std::size_t> later;
        for (const std::size_t i : waiting) {
            const std::uint32_t p = bodies[i].first;
            const LinkNeeds needs = linkNeeds(module, p, hasBody);
            if (!needs.tables &&
                std::all_of(needs.calls.begin(), needs.calls.end(), [&linked](std::uint32_t q) { return linked[q]; })) {
                linked[p] = true;
                pous.push_back(p);
                objects.push_back(made[i].object);
            } else {
                later.push_back(i);
            }
        }
        waiting = std::move(later);
        if (!pous.empty()) {
            times.next(PhaseTimes::kLink);
            if (!linker.link(pous, objects, false, **tm)) {
                result.error = linker.error();
                return result;
            }
            times.next(PhaseTimes::kPhases);
            (*onPart)(std::shared_ptr<const CompiledModule>(linker.code()));
        }
    }
    // Not cancelled, no error: every POU is compiled. The counts go into the result only with its
    // code: a compile that fails in the link says it compiled nothing.
    std::uint32_t compiled = 0;
    bool standardFbsLinked = false;
    std::vector<ObjectFile> objects;
    std::vector<std::string> keys;
    for (PouObject& pou : made) {
        compiled += pou.compiled ? 1 : 0;
        standardFbsLinked = standardFbsLinked || pou.object->standardFbsLinked;
        objects.push_back(pou.object);
        keys.push_back(std::move(pou.key));
    }
    times.next(PhaseTimes::kLink);
    std::vector<std::uint32_t> pous;
    std::vector<ObjectFile> rest;
    for (const std::size_t i : waiting) {
        pous.push_back(bodies[i].first);
        rest.push_back(made[i].object);
    }
    if (!linker.link(pous, rest, true, **tm)) {
        result.error = linker.error();
        return result;
    }
    objectCache().compiled(keys, objects);
    result.compileThreads = threadsRan;
    result.pousCompiled = compiled;
    result.pousReused = static_cast<std::uint32_t>(bodies.size()) - compiled;
    result.standardFbsLinked = standardFbsLinked;
    result.code = linker.code();
    result.compileMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    times.report(result);
    return result;
}

} // namespace

CompileResult compile(const bytecode::Module& module, std::span<const DirectFb> directFbs,
                      std::span<const Opcode> leaveToInterpreter, const std::atomic<bool>* cancel, unsigned threads,
                      const PartListener* onPart) {
    CompileResult result = translate(module, directFbs, leaveToInterpreter, cancel, threads, onPart);
    // The JIT, the LLVM context and the module are freed by now; hand the heap they took back to
    // the system (glibc keeps freed memory in its arenas otherwise), so a native run's RSS after
    // the compile is the code and what the interpreter needs.
    ::malloc_trim(0);
    releaseLibraryCode(reinterpret_cast<const void*>(
        static_cast<bool (*)(const llvm::Module&, llvm::raw_ostream*, bool*)>(&llvm::verifyModule)));
    return result;
}

} // namespace tier

} // namespace takt::native
