// Vm: what is resolved once at load (native FB layouts, instance sizes) and the entry points
// the engine calls each cycle. The loop itself is interpreter.cpp.
#include "vm_internal.h"

#include "takt/bytecode/value_kind.h"
#include "takt/vm/debug.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

namespace takt::vm {

namespace {

constexpr auto kTrapNames = std::to_array<std::string_view>({
#define TAKT_VM_TRAP_NAME(name, msg) #name,
    TAKT_TRAPS(TAKT_VM_TRAP_NAME)
#undef TAKT_VM_TRAP_NAME
});
constexpr auto kTrapMessages = std::to_array<std::string_view>({
#define TAKT_VM_TRAP_MSG(name, msg) msg,
    TAKT_TRAPS(TAKT_VM_TRAP_MSG)
#undef TAKT_VM_TRAP_MSG
});

bool sameName(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::toupper(static_cast<unsigned char>(x)) == std::toupper(static_cast<unsigned char>(y));
           });
}

// Finds a member by a dotted path ("CU_T.M") in a type, adding up the offsets.
FbField findField(const bytecode::Module& module, std::uint32_t type, std::string_view path) {
    std::uint32_t offset = 0;
    while (type < module.types.size()) {
        const std::size_t dot = path.find('.');
        const std::string_view head = path.substr(0, dot);
        const bytecode::TypeDesc& desc = module.types[type];
        const auto it = std::find_if(desc.fields.begin(), desc.fields.end(),
                                     [&](const bytecode::FieldDesc& f) { return sameName(f.name, head); });
        if (it == desc.fields.end() || it->type >= module.types.size()) {
            return {};
        }
        offset += it->offset;
        if (dot == std::string_view::npos) {
            const bytecode::TypeDesc& ft = module.types[it->type];
            const std::uint32_t size = ft.size;
            if (size != 1 && size != 2 && size != 4 && size != 8) {
                return {};
            }
            return FbField{offset, static_cast<std::uint8_t>(size), bytecode::isSignedKind(ft.kind)};
        }
        type = it->type;
        path = path.substr(dot + 1);
    }
    return {};
}

struct RoleName {
    FbRole role;
    std::string_view path;
};

constexpr std::array<RoleName, kRoleCount> kRoleNames = {{
    {kIn, "IN"},           {kPt, "PT"},         {kQ, "Q"},        {kEt, "ET"},      {kStartTime, "StartTime"},
    {kRunning, "Running"}, {kPrevIn, "PrevIn"}, {kClk, "CLK"},    {kM, "M"},        {kCu, "CU"},
    {kCd, "CD"},           {kR, "R"},           {kLd, "LD"},      {kPv, "PV"},      {kQu, "QU"},
    {kQd, "QD"},           {kCv, "CV"},         {kCuM, "CU_T.M"}, {kCdM, "CD_T.M"}, {kS1, "S1"},
    {kR1, "R1"},           {kS, "S"},           {kQ1, "Q1"},      {kPdt, "PDT"},    {kCdt, "CDT"},
    {kOffset, "Offset"},
}};

} // namespace

std::string_view trapName(Trap trap) noexcept {
    const auto i = static_cast<std::size_t>(trap);
    return i < kTrapNames.size() ? kTrapNames[i] : std::string_view("Unknown");
}

std::string_view trapMessage(Trap trap) noexcept {
    const auto i = static_cast<std::size_t>(trap);
    return i < kTrapMessages.size() ? kTrapMessages[i] : std::string_view("unknown fault");
}

FbLayout resolveFbLayout(const bytecode::Module& module, const bytecode::PouEntry& pou) {
    FbLayout layout;
    layout.fn = pou.native < bytecode::kNativeCount ? nativeFb(static_cast<bytecode::Native>(pou.native)) : nullptr;
    for (const RoleName& rn : kRoleNames) {
        layout.fields[rn.role] = findField(module, pou.instanceType, rn.path);
    }
    return layout;
}

void resolveModule(const bytecode::Module& module, Vm::Resolved& out) {
    const std::size_t n = module.pous.size();
    out.fbLayouts.assign(n, FbLayout{});
    out.instanceSize.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
        const bytecode::PouEntry& pou = module.pous[i];
        if (pou.instanceType < module.types.size()) {
            out.instanceSize[i] = module.types[pou.instanceType].size;
        }
        if (pou.native != bytecode::kNone) {
            out.fbLayouts[i] = resolveFbLayout(module, pou);
        }
    }
}

Vm::Vm(const bytecode::Module& module, std::span<std::uint8_t> image)
    : module_(&module), image_(image), resolved_(std::make_unique<Resolved>()),
      stackBase_(module.constSize + module.globalSize) {
    resolveModule(module, *resolved_);
    resolved_->context =
        NativeContext{image_.data(), static_cast<std::uint32_t>(image_.size()), module.constSize, 0, 0};
}

void Vm::setCycleTime(std::int64_t nowNs) noexcept {
    nowNs_ = nowNs;
    resolved_->context.nowNs = nowNs;
}

void Vm::setWallTime(std::int64_t wallNs) noexcept {
    wallNs_ = wallNs;
    resolved_->context.wallNs = wallNs;
}

Vm::~Vm() = default;

std::size_t Vm::requiredImageSize(const bytecode::Module& module) noexcept {
    return static_cast<std::size_t>(module.constSize) + module.globalSize + module.stackSize;
}

void Vm::resetImage() noexcept {
    const std::size_t n = std::min(module_->initImage.size(), image_.size());
    std::copy_n(module_->initImage.begin(), n, image_.begin());
    std::fill(image_.begin() + static_cast<std::ptrdiff_t>(n), image_.end(), std::uint8_t{0});
}

namespace {

// A run on a thread with a debugger: counted while a session is attached (Debugger::enterRun), so
// that what the session unlinks from the stop map is freed only once no run can read it.
Trap runDebuggable(RunState& rs, Debugger& dbg, std::uint32_t entry, std::uint32_t thisOffset,
                   std::uint32_t frameOffset) noexcept {
    // Attached when asked, or not armed: a session attaching meanwhile waits for the next run.
    const bool attached = dbg.attached();
    if (attached) {
        dbg.enterRun();
    }
    Trap trap = Trap::None;
    if (attached && dbg.armed()) {
        rs.compiled = nullptr; // a halt needs every frame in the interpreter
        // Breakpoints alone: the plain loop on the code with the breakpoints patched in, which runs
        // at full speed until it reaches one. A step, a pause or flow control: the loop that looks
        // the stop map up before every instruction.
        if (const std::uint32_t* patched = dbg.plainCode()) {
            rs.code = patched;
            trap = execute<kDefaultSwitch, false>(rs, entry, thisOffset, frameOffset);
        } else {
            trap = execute<kDefaultSwitch, true>(rs, entry, thisOffset, frameOffset);
        }
    } else {
        trap = execute<kDefaultSwitch, false>(rs, entry, thisOffset, frameOffset);
    }
    if (dbg.inRun()) {
        dbg.leaveRun();
    }
    return trap;
}

} // namespace

Trap Vm::run(std::uint32_t entry, std::uint32_t thisOffset, std::uint32_t frameOffset) noexcept {
    trap_ = TrapInfo{};
    RunState rs{module_, resolved_.get(), image_.data(), static_cast<std::uint32_t>(image_.size()),
                nowNs_,  wallNs_,         budget_,       abort_,
                &trap_,  debugger_};
    rs.compiled = compiled_;
    if (debugger_ != nullptr) [[unlikely]] {
        return runDebuggable(rs, *debugger_, entry, thisOffset, frameOffset);
    }
    return execute<kDefaultSwitch, false>(rs, entry, thisOffset, frameOffset);
}

Trap Vm::runInit() noexcept {
    if (module_->initCode == bytecode::kNone) {
        trap_ = TrapInfo{};
        return Trap::None;
    }
    return run(module_->initCode, 0, module_->constSize + module_->globalSize);
}

Trap Vm::runPou(std::uint32_t pou, std::uint32_t instanceOffset) noexcept {
    const std::uint32_t stackBase = stackBase_;
    if (pou >= module_->pous.size() || module_->pous[pou].code == bytecode::kNone) {
        trap_ = TrapInfo{Trap::InvalidCall, bytecode::kNone, pou, 0};
        return Trap::InvalidCall;
    }
    if (static_cast<std::uint64_t>(stackBase) + module_->pous[pou].frameSize > image_.size()) {
        trap_ = TrapInfo{Trap::StackOverflow, module_->pous[pou].code, pou, 0};
        return Trap::StackOverflow;
    }
    return run(module_->pous[pou].code, instanceOffset, stackBase);
}

} // namespace takt::vm
