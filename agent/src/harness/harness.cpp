// The harness commands (seed 001; data shapes in PROTOCOLS.md).
#include "takt/agent/harness.h"

#include <cmath>
#include <cstring>
#include <unordered_map>

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "harness/harness_support.h"
#include "rpc/method_table.h"
#include "rpc/rpc_json.h"
#include "rpc/transfer_report_json.h"
#include "takt/engine/values.h"

namespace takt::agent {
namespace {

using bytecode::IoArea;
using rapidjson::Value;

HarnessResult success() {
    HarnessResult r;
    r.payload.SetObject();
    return r;
}

HarnessResult failure(ErrorKind kind, std::string message) {
    HarnessResult r;
    r.ok = false;
    r.kind = kind;
    r.message = std::move(message);
    r.payload.SetNull();
    return r;
}

const Value* param(const Value& req, const char* name) {
    auto it = req.FindMember(name);
    return it == req.MemberEnd() || it->value.IsNull() ? nullptr : &it->value;
}

bool stringParam(const Value& req, const char* name, std::string& out, HarnessResult& err) {
    const Value* v = param(req, name);
    if (v == nullptr || !v->IsString()) {
        err = failure(ErrorKind::InvalidArgument, fmt::format("parameter '{}' must be a string", name));
        return false;
    }
    out.assign(v->GetString(), v->GetStringLength());
    return true;
}

// Non-negative milliseconds as nanoseconds (fractions allowed); absent gives `fallback`.
bool msParam(const Value& req, const char* name, std::int64_t fallback, std::int64_t& outNs, HarnessResult& err) {
    const Value* v = param(req, name);
    if (v == nullptr) {
        outNs = fallback;
        return true;
    }
    if (!v->IsNumber() || v->GetDouble() < 0 || v->GetDouble() > 9.2e12) {
        err = failure(ErrorKind::InvalidArgument, fmt::format("parameter '{}' must be a non-negative number", name));
        return false;
    }
    outNs = v->IsInt64() ? v->GetInt64() * 1'000'000 : std::llround(v->GetDouble() * 1e6);
    return true;
}

bool countParam(const Value& req, const char* name, std::uint64_t fallback, std::uint64_t& out, HarnessResult& err) {
    const Value* v = param(req, name);
    if (v == nullptr) {
        out = fallback;
        return true;
    }
    if (!v->IsUint64()) {
        err = failure(ErrorKind::InvalidArgument, fmt::format("parameter '{}' must be a non-negative integer", name));
        return false;
    }
    out = v->GetUint64();
    return true;
}

} // namespace

std::string_view errorKindName(ErrorKind kind) {
    switch (kind) {
    case ErrorKind::InvalidRequest: return "invalid_request";
    case ErrorKind::InvalidArgument: return "invalid_argument";
    case ErrorKind::NotLoaded: return "not_loaded";
    case ErrorKind::CompileError: return "compile_error";
    case ErrorKind::RuntimeError: return "runtime_error";
    case ErrorKind::RuntimeCycleError: return "runtime_cycle_error";
    case ErrorKind::RunUntilTimeout: return "run_until_timeout";
    }
    return "invalid_request";
}

// load's and reload's optional `overflow` ("trap" | "wrap") into `build`; absent keeps it.
bool overflowParam(const Value& req, compiler::BuildOptions& build, HarnessResult& err) {
    const Value* v = param(req, "overflow");
    if (v == nullptr) {
        return true;
    }
    if (!v->IsString() || (std::strcmp(v->GetString(), "trap") != 0 && std::strcmp(v->GetString(), "wrap") != 0)) {
        err = failure(ErrorKind::InvalidArgument, "parameter 'overflow' must be \"trap\" or \"wrap\"");
        return false;
    }
    build.overflow =
        std::strcmp(v->GetString(), "trap") == 0 ? compiler::OverflowMode::Trap : compiler::OverflowMode::Wrap;
    return true;
}

bool loadOptions(const Value& req, LoadOptions& options, HarnessResult& err) {
    if (!overflowParam(req, options.build, err)) {
        return false;
    }
    if (const Value* v = param(req, "initial_cycle"); v != nullptr) {
        if (!v->IsBool()) {
            err = failure(ErrorKind::InvalidArgument, "parameter 'initial_cycle' must be a boolean");
            return false;
        }
        options.initialCycle = v->GetBool();
    }
    return true;
}

struct Harness::State {
    HarnessDeps deps;
    compiler::BuildOptions build; // of the last load: reload compiles with the same
    engine::VirtualClock clock;
    std::int64_t wallAtLoad = engine::kVirtualWallEpochNs; // the last set_wall_clock
    std::unique_ptr<engine::Engine> engine;
    compiler::AddressMode addressMode = compiler::AddressMode::Word;
    std::vector<std::uint8_t> scratch; // decode target for values before they are committed

    [[nodiscard]] const bytecode::Module& module() const { return engine->program().module(); }

    bool resolve(const std::string& name, engine::VarRef& ref, HarnessResult& err) const {
        std::string why;
        if (!engine::resolvePath(module(), name, ref, why)) {
            err = failure(ErrorKind::InvalidArgument, why);
            return false;
        }
        return true;
    }

    // Validates every watch name before any work is done.
    bool watchRefs(const Value& req, std::vector<std::pair<std::string, engine::VarRef>>& out, HarnessResult& err) {
        const Value* w = param(req, "watch");
        if (w == nullptr) {
            return true;
        }
        if (!w->IsArray()) {
            err = failure(ErrorKind::InvalidArgument, "parameter 'watch' must be an array of names");
            return false;
        }
        for (const Value& n : w->GetArray()) {
            if (!n.IsString()) {
                err = failure(ErrorKind::InvalidArgument, "parameter 'watch' must be an array of names");
                return false;
            }
            engine::VarRef ref;
            if (!resolve(n.GetString(), ref, err)) {
                return false;
            }
            out.emplace_back(n.GetString(), ref);
        }
        return true;
    }

    void encode(const engine::VarRef& ref, Value& out, engine::JsonAllocator& a) const {
        engine::encodeValue(module(), ref.type, engine->program().image() + ref.offset, out, a);
    }

    HarnessResult progress(const std::vector<std::pair<std::string, engine::VarRef>>& watch) const {
        HarnessResult r = success();
        auto& a = r.payload.GetAllocator();
        r.payload.AddMember("cycle", Value().SetUint64(engine->cycleCount()), a);
        r.payload.AddMember("time_nanos", Value().SetInt64(clock.now()), a);
        Value obj(rapidjson::kObjectType);
        for (const auto& [name, ref] : watch) {
            Value v;
            encode(ref, v, a);
            obj.AddMember(Value(name.c_str(), a), v, a);
        }
        r.payload.AddMember("watch", obj, a);
        return r;
    }

    // Each task's runs so far, by Module::tasks index: what a cycle or run_until request counts from.
    [[nodiscard]] std::vector<std::uint64_t> taskRuns() const {
        std::vector<std::uint64_t> runs(module().tasks.size());
        for (std::size_t t = 0; t < runs.size(); ++t) {
            runs[t] = engine->taskRuns(t);
        }
        return runs;
    }

    // `tasks`: how many times each task ran in this request, in declaration order.
    void addTaskCycles(HarnessResult& r, const std::vector<std::uint64_t>& before) const {
        auto& a = r.payload.GetAllocator();
        Value tasks(rapidjson::kArrayType);
        const std::vector<std::uint64_t> now = taskRuns();
        for (std::size_t t = 0; t < now.size(); ++t) {
            Value task(rapidjson::kObjectType);
            task.AddMember("name", Value(module().tasks[t].name.c_str(), a), a);
            task.AddMember("cycles", Value().SetUint64(now[t] - (t < before.size() ? before[t] : 0)), a);
            tasks.PushBack(task, a);
        }
        r.payload.AddMember("tasks", tasks, a);
    }

    HarnessResult cycleFault(const engine::FaultReport& f) const { return cycleFault(*engine, f); }
    // `faulted`: the engine that ran the cycle (a load's new engine is not `engine` yet).
    static HarnessResult cycleFault(const engine::Engine& faulted, const engine::FaultReport& f) {
        HarnessResult r = failure(ErrorKind::RuntimeCycleError,
                                  fmt::format("runtime fault in cycle {}: {}", faulted.cycleCount(), f.message));
        r.payload.SetObject();
        auto& a = r.payload.GetAllocator();
        r.payload.AddMember("cycle", Value().SetUint64(faulted.cycleCount()), a);
        Value e(rapidjson::kObjectType);
        e.AddMember("message", Value(f.message.c_str(), a), a);
        e.AddMember("pou", Value(f.pou.c_str(), a), a);
        e.AddMember("path", Value(f.path.c_str(), a), a);
        e.AddMember("line", f.line, a);
        e.AddMember("column", f.column, a);
        Value errors(rapidjson::kArrayType);
        errors.PushBack(e, a);
        r.payload.AddMember("errors", errors, a);
        return r;
    }

    bool sources(const Value& req, std::vector<compiler::SourceText>& out, HarnessResult& err) const {
        if (const Value* s = param(req, "source"); s != nullptr) {
            if (!s->IsString()) {
                err = failure(ErrorKind::InvalidArgument, "parameter 'source' must be a string");
                return false;
            }
            out.push_back({"source.st", s->GetString()});
            return true;
        }
        const Value* list = param(req, "sources");
        if (list == nullptr || !list->IsArray() || list->Empty()) {
            err = failure(ErrorKind::InvalidArgument, "expected 'source' (string) or 'sources' (non-empty array)");
            return false;
        }
        for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
            if (!(*list)[i].IsString()) {
                err = failure(ErrorKind::InvalidArgument, "every entry of 'sources' must be a string");
                return false;
            }
            out.push_back({fmt::format("source{}.st", i), (*list)[i].GetString()});
        }
        return true;
    }

    bool compile(const std::vector<compiler::SourceText>& texts, CompileOutcome& outcome, HarnessResult& err) const {
        outcome = deps.compile(texts, build);
        if (outcome.status == CompileOutcome::Status::CompileError) {
            err = failure(ErrorKind::CompileError, "compilation failed");
            err.payload.SetObject();
            rapidjson::Document diags(&err.payload.GetAllocator());
            diags.Parse(outcome.diagnosticsJson.c_str());
            Value arr(rapidjson::kArrayType);
            if (!diags.HasParseError() && diags.IsArray()) {
                arr.CopyFrom(diags, err.payload.GetAllocator());
            }
            // The message names the first error: the list is in source order, and a warning
            // earlier in the file is not why the load failed.
            for (const Value& d : arr.GetArray()) {
                auto severity = d.FindMember("severity");
                auto message = d.FindMember("message");
                if (severity != d.MemberEnd() && severity->value == "error" && message != d.MemberEnd() &&
                    message->value.IsString()) {
                    err.message = fmt::format("compilation failed: {}", message->value.GetString());
                    break;
                }
            }
            err.payload.AddMember("diagnostics", arr, err.payload.GetAllocator());
            return false;
        }
        if (outcome.status != CompileOutcome::Status::Ok || outcome.module == nullptr) {
            err = failure(ErrorKind::RuntimeError, outcome.message.empty() ? "compilation failed" : outcome.message);
            return false;
        }
        return true;
    }

    void programNames(HarnessResult& r) const {
        auto& a = r.payload.GetAllocator();
        Value list(rapidjson::kArrayType);
        for (const bytecode::ProgramInstance& p : module().programs) {
            if (bytecode::isTestPou(module().pous[p.pou].kind)) {
                continue;
            }
            list.PushBack(Value(p.name.c_str(), a), a);
        }
        r.payload.AddMember("programs", list, a);
    }

    bool decodeInto(const engine::VarRef& ref, const Value& v, HarnessResult& err) {
        const bytecode::Module& m = module();
        const std::uint32_t size = ref.type < m.types.size() ? m.types[ref.type].size : 0;
        scratch.assign(static_cast<std::size_t>(size) + 8, 0);
        std::memcpy(scratch.data(), engine->program().image() + ref.offset, size);
        std::string why;
        if (!engine::decodeValue(m, ref.type, v, scratch.data(), why)) {
            err = failure(ErrorKind::InvalidArgument, why);
            return false;
        }
        std::memcpy(engine->program().image() + ref.offset, scratch.data(), size);
        return true;
    }

    HarnessResult load(const std::vector<compiler::SourceText>& texts, const LoadOptions& options);
    HarnessResult reload(const std::vector<compiler::SourceText>& texts, bool warm, const compiler::BuildOptions& with);
    HarnessResult cycle(const Value& req);
    HarnessResult runUntil(const Value& req);
    HarnessResult setInput(const Value& req, bool access);
    HarnessResult getOutput(const Value& req, bool access);
    HarnessResult bindDirect(const Value& req);
    HarnessResult setDirect(const Value& req, IoArea want);
    HarnessResult getDirectOutput(const Value& req);
    HarnessResult restart(const Value& req);
    const bytecode::AccessEntry* accessEntry(const std::string& name, HarnessResult& err) const;
};

HarnessResult Harness::State::load(const std::vector<compiler::SourceText>& texts, const LoadOptions& options) {
    HarnessResult err;
    CompileOutcome outcome;
    const compiler::BuildOptions previous = build;
    build = options.build;
    if (!compile(texts, outcome, err)) {
        build = previous; // a failed load changes nothing: the loaded program reloads as before
        return err;
    }
    std::unique_ptr<engine::CodeRunner> runner = deps.makeRunner ? deps.makeRunner() : nullptr;
    if (runner == nullptr) {
        build = previous;
        return failure(ErrorKind::RuntimeError, "no bytecode interpreter is available in this build");
    }
    // A fresh harness: a new engine and virtual time 0; the wall clock at the date last set
    // (kVirtualWallEpochNs if none). The program loaded before stays, with its time, until the new
    // one has initialised and run its initial cycle: a load that fails there changes nothing.
    const std::int64_t nowBefore = clock.now();
    const std::int64_t wallBefore = clock.wall();
    const auto failed = [&](HarnessResult r) {
        clock.set(nowBefore);
        clock.setWall(wallBefore);
        build = previous;
        return r;
    };
    clock.set(0);
    clock.setWall(wallAtLoad);
    auto next = std::make_unique<engine::Engine>(std::move(runner), clock);
    engine::FaultReport fault;
    if (!next->load(std::make_unique<engine::LoadedProgram>(outcome.module, outcome.hash), fault)) {
        return failed(failure(ErrorKind::RuntimeError, fmt::format("initialisation failed: {}", fault.message)));
    }
    // Without the initial cycle the program has run only its initialisation: inputs set now are
    // what its first cycle sees.
    if (options.initialCycle && !next->runCycle(fault)) {
        return failed(cycleFault(*next, fault));
    }
    engine = std::move(next);
    addressMode = outcome.addressMode;
    HarnessResult r = progress({});
    r.payload.RemoveMember("watch");
    programNames(r);
    return r;
}

HarnessResult Harness::State::reload(const std::vector<compiler::SourceText>& texts, bool warm,
                                     const compiler::BuildOptions& with) {
    HarnessResult err;
    CompileOutcome outcome;
    const compiler::BuildOptions previous = build;
    build = with;
    if (!compile(texts, outcome, err)) {
        build = previous;
        return err; // the old program stays loaded
    }
    engine::PreparedChange change =
        engine->prepareChange(std::make_unique<engine::LoadedProgram>(outcome.module, outcome.hash), warm);
    if (!change.ok()) {
        build = previous;
        return failure(ErrorKind::RuntimeError, fmt::format("online change rejected: {}", change.fault.message));
    }
    engine::TransferReport rep = engine->applyChange(change);
    engine::settleTransferReport(change.plan, rep);
    HarnessResult r = progress({});
    r.payload.RemoveMember("watch");
    programNames(r);
    auto& a = r.payload.GetAllocator();
    rapidjson::Document report;
    report.Parse(("{" + transferReportMembers(rep) + "}").c_str());
    for (auto& m : report.GetObject()) {
        r.payload.AddMember(Value(m.name, a), Value(m.value, a), a);
    }
    r.payload.AddMember("old_hash", Value(rep.oldHash.c_str(), a), a);
    r.payload.AddMember("new_hash", Value(rep.newHash.c_str(), a), a);
    return r;
}

HarnessResult Harness::State::cycle(const Value& req) {
    HarnessResult err;
    std::uint64_t count = 1;
    std::int64_t dt = 0;
    std::vector<std::pair<std::string, engine::VarRef>> watch;
    if (!countParam(req, "count", 1, count, err) || !msParam(req, "dt_ms", 0, dt, err) || !watchRefs(req, watch, err)) {
        return err;
    }
    const std::vector<std::uint64_t> before = taskRuns();
    engine::FaultReport fault;
    for (std::uint64_t i = 0; i < count; ++i) {
        clock.advance(dt);
        if (!engine->runCycle(fault)) {
            return cycleFault(fault);
        }
    }
    HarnessResult r = progress(watch);
    addTaskCycles(r, before);
    return r;
}

HarnessResult Harness::State::runUntil(const Value& req) {
    HarnessResult err;
    std::string name;
    std::uint64_t maxCycles = 0;
    std::int64_t dt = 0;
    std::vector<std::pair<std::string, engine::VarRef>> watch;
    engine::VarRef ref;
    const Value* equals = param(req, "equals");
    if (!stringParam(req, "name", name, err) || !countParam(req, "max_cycles", 1000, maxCycles, err) ||
        !msParam(req, "dt_ms", 0, dt, err) || !watchRefs(req, watch, err) || !resolve(name, ref, err)) {
        return err;
    }
    if (equals == nullptr) {
        return failure(ErrorKind::InvalidArgument, "parameter 'equals' is required");
    }
    // The expected value, normalised through the variable's type so the comparison is typed.
    const bytecode::Module& m = module();
    std::vector<std::uint8_t> expectedBytes(m.types[ref.type].size + 8, 0);
    std::string why;
    if (!engine::decodeValue(m, ref.type, *equals, expectedBytes.data(), why)) {
        return failure(ErrorKind::InvalidArgument, why);
    }
    rapidjson::Document scratchDoc;
    Value expected;
    engine::encodeValue(m, ref.type, expectedBytes.data(), expected, scratchDoc.GetAllocator());
    const std::vector<std::uint64_t> before = taskRuns();
    engine::FaultReport fault;
    for (std::uint64_t i = 1; i <= maxCycles; ++i) {
        clock.advance(dt);
        if (!engine->runCycle(fault)) {
            return cycleFault(fault);
        }
        Value actual;
        encode(ref, actual, scratchDoc.GetAllocator());
        if (actual == expected) {
            HarnessResult r = progress(watch);
            r.payload.AddMember("cycles_run", Value().SetUint64(i), r.payload.GetAllocator());
            addTaskCycles(r, before);
            return r;
        }
    }
    HarnessResult r =
        failure(ErrorKind::RunUntilTimeout,
                fmt::format("run_until exceeded {} cycles before '{}' matched the expected value", maxCycles, name));
    r.payload.SetObject();
    auto& a = r.payload.GetAllocator();
    r.payload.AddMember("name", Value(name.c_str(), a), a);
    r.payload.AddMember("max_cycles", Value().SetUint64(maxCycles), a);
    r.payload.AddMember("expected", Value(*equals, a), a);
    return r;
}

const bytecode::AccessEntry* Harness::State::accessEntry(const std::string& name, HarnessResult& err) const {
    for (const bytecode::AccessEntry& e : module().access) {
        if (e.name.size() == name.size() && std::equal(e.name.begin(), e.name.end(), name.begin(), [](char x, char y) {
                return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
            })) {
            return &e;
        }
    }
    err = failure(ErrorKind::InvalidArgument, fmt::format("unknown VAR_ACCESS name '{}'", name));
    return nullptr;
}

HarnessResult Harness::State::setInput(const Value& req, bool access) {
    HarnessResult err;
    std::string name;
    if (!stringParam(req, "name", name, err)) {
        return err;
    }
    const Value* value = param(req, "value");
    if (value == nullptr) {
        return failure(ErrorKind::InvalidArgument, "parameter 'value' is required");
    }
    engine::VarRef ref;
    if (access) {
        const bytecode::AccessEntry* e = accessEntry(name, err);
        if (e == nullptr) {
            return err;
        }
        if (e->readOnly) {
            return failure(ErrorKind::InvalidArgument, fmt::format("VAR_ACCESS '{}' is READ_ONLY", e->name));
        }
        ref = engine::VarRef{e->offset, e->type, false};
    } else {
        if (!resolve(name, ref, err)) {
            return err;
        }
        if (ref.constant) {
            return failure(ErrorKind::InvalidArgument, fmt::format("'{}' is a CONSTANT and cannot be written", name));
        }
    }
    if (!decodeInto(ref, *value, err)) {
        return err;
    }
    return success();
}

HarnessResult Harness::State::getOutput(const Value& req, bool access) {
    HarnessResult err;
    std::string name;
    if (!stringParam(req, "name", name, err)) {
        return err;
    }
    engine::VarRef ref;
    if (access) {
        const bytecode::AccessEntry* e = accessEntry(name, err);
        if (e == nullptr) {
            return err;
        }
        ref = engine::VarRef{e->offset, e->type, e->readOnly};
    } else if (!resolve(name, ref, err)) {
        return err;
    }
    HarnessResult r = success();
    auto& a = r.payload.GetAllocator();
    r.payload.AddMember("name", Value(name.c_str(), a), a);
    Value v;
    encode(ref, v, a);
    r.payload.AddMember("value", v, a);
    return r;
}

HarnessResult Harness::State::bindDirect(const Value& req) {
    HarnessResult err;
    std::string name;
    std::string address;
    engine::VarRef ref;
    if (!stringParam(req, "name", name, err) || !stringParam(req, "address", address, err) ||
        !resolve(name, ref, err)) {
        return err;
    }
    detail::DirectAddress addr;
    std::string why;
    if (!detail::parseDirectAddress(address, addressMode, addr, why)) {
        return failure(ErrorKind::InvalidArgument, why);
    }
    const bytecode::TypeDesc& t = module().types[ref.type];
    const bool isBool = t.kind == bytecode::ValueKind::Bool;
    if ((addr.size == 0) != isBool || (!isBool && t.size != addr.size)) {
        return failure(ErrorKind::InvalidArgument,
                       fmt::format("'{}' ({}) does not match the size of address '{}'", name, t.name, address));
    }
    engine->addBinding(engine::DirectBinding{addr.area, addr.byteOffset, addr.bit, addr.size, ref.offset});
    return success();
}

// set_direct_input (%I) and set_direct_memory (%M): the process image the next cycle copies in.
HarnessResult Harness::State::setDirect(const Value& req, IoArea want) {
    HarnessResult err;
    std::string address;
    if (!stringParam(req, "address", address, err)) {
        return err;
    }
    const Value* value = param(req, "value");
    if (value == nullptr) {
        return failure(ErrorKind::InvalidArgument, "parameter 'value' is required");
    }
    detail::DirectAddress addr;
    std::string why;
    if (!detail::parseDirectAddress(address, addressMode, addr, why)) {
        return failure(ErrorKind::InvalidArgument, why);
    }
    if (addr.area != want) {
        return failure(ErrorKind::InvalidArgument, want == IoArea::Input
                                                       ? fmt::format("'{}' is not an input address (%I…)", address)
                                                       : fmt::format("'{}' is not a memory address (%M…)", address));
    }
    std::uint8_t buf[8] = {};
    if (!engine::decodeElementary(bytecode::addressValueKind(addr.width), addr.size, 0, *value, buf, why)) {
        return failure(ErrorKind::InvalidArgument, why);
    }
    engine->ensureArea(want, static_cast<std::size_t>(addr.byteOffset) + std::max<std::uint32_t>(addr.size, 1));
    std::vector<std::uint8_t>& in = engine->area(want);
    if (addr.size == 0) {
        const auto mask = static_cast<std::uint8_t>(1u << addr.bit);
        in[addr.byteOffset] =
            static_cast<std::uint8_t>(buf[0] != 0 ? (in[addr.byteOffset] | mask) : (in[addr.byteOffset] & ~mask));
    } else {
        std::memcpy(in.data() + addr.byteOffset, buf, addr.size);
    }
    return success();
}

HarnessResult Harness::State::getDirectOutput(const Value& req) {
    HarnessResult err;
    std::string address;
    if (!stringParam(req, "address", address, err)) {
        return err;
    }
    detail::DirectAddress addr;
    std::string why;
    if (!detail::parseDirectAddress(address, addressMode, addr, why)) {
        return failure(ErrorKind::InvalidArgument, why);
    }
    engine->ensureArea(addr.area, static_cast<std::size_t>(addr.byteOffset) + std::max<std::uint32_t>(addr.size, 1));
    const std::vector<std::uint8_t>& area = engine->area(addr.area);
    std::uint8_t buf[8] = {};
    if (addr.size == 0) {
        buf[0] = static_cast<std::uint8_t>((area[addr.byteOffset] >> addr.bit) & 1u);
    } else {
        std::memcpy(buf, area.data() + addr.byteOffset, addr.size);
    }
    HarnessResult r = success();
    auto& a = r.payload.GetAllocator();
    r.payload.AddMember("address", Value(address.c_str(), a), a);
    Value v;
    engine::encodeElementary(bytecode::addressValueKind(addr.width), buf, v, a);
    r.payload.AddMember("value", v, a);
    return r;
}

HarnessResult Harness::State::restart(const Value& req) {
    HarnessResult err;
    std::string mode;
    if (!stringParam(req, "mode", mode, err)) {
        return err;
    }
    if (mode != "cold" && mode != "warm") {
        return failure(ErrorKind::InvalidArgument, "parameter 'mode' must be \"cold\" or \"warm\"");
    }
    engine::FaultReport fault;
    if (!engine->restart(mode == "cold" ? engine::RestartMode::Cold : engine::RestartMode::Warm, fault)) {
        engine.reset();
        return failure(ErrorKind::RuntimeError, fmt::format("restart failed: {}", fault.message));
    }
    HarnessResult r = success();
    r.payload.AddMember("mode", Value(mode.c_str(), r.payload.GetAllocator()), r.payload.GetAllocator());
    return r;
}

Harness::Harness(HarnessDeps deps) : state_(std::make_unique<State>()) {
    state_->deps = std::move(deps);
}

HarnessResult Harness::load(const std::vector<compiler::SourceText>& sources, LoadOptions options,
                            const Value& params) {
    HarnessResult err;
    if (!loadOptions(params, options, err)) {
        return err;
    }
    return state_->load(sources, options);
}

Harness::~Harness() = default;

HarnessResult Harness::handle(const Value& req) {
    if (!req.IsObject()) {
        return failure(ErrorKind::InvalidRequest, "request must be a JSON object");
    }
    const Value* cmdValue = param(req, "cmd");
    if (cmdValue == nullptr || !cmdValue->IsString()) {
        return failure(ErrorKind::InvalidRequest, "request needs a string 'cmd'");
    }
    return handle(std::string_view(cmdValue->GetString(), cmdValue->GetStringLength()), req);
}

HarnessResult Harness::reload(const std::vector<compiler::SourceText>& sources, bool warm,
                              const std::optional<compiler::BuildOptions>& build, const Value& params) {
    if (state_->engine == nullptr) {
        return failure(ErrorKind::NotLoaded, "no program is loaded; send 'load' first");
    }
    compiler::BuildOptions with = build ? *build : state_->build;
    if (HarnessResult err; !overflowParam(params, with, err)) {
        return err;
    }
    return state_->reload(sources, warm, with);
}

bool Harness::loaded() const {
    return state_->engine != nullptr;
}

// The harness commands (seed 001), one table of the kind the JSON-RPC surfaces use. The schemas
// describe the request's members beside "cmd" and the `data` of the answer: they give
// docs/testing.md its command table and are checked against every request of the seed replay
// and the conformance scripts. The NDJSON protocol itself ignores unknown members (seed 001), so
// the handlers check what they read instead of the schema refusing the request.
struct Harness::Command {
    HarnessResult (*run)(State& s, const Value& req);
    bool needsProgram = true; // not_loaded until a program is loaded
};

std::span<const MethodSpec<Harness::Command>> Harness::commands() {
    using S = State&;
    using V = const Value&;
// The schemas, built from a few shared members.
#define TAKT_H_OBJ(props, req) R"({"type":"object","properties":{)" props R"(},"required":[)" req "]}"
#define TAKT_H_WATCH R"("watch":{"type":"array","items":{"type":"string"},"description":"variables to return"})"
#define TAKT_H_DT R"("dt_ms":{"type":"number","minimum":0,"description":"virtual time per cycle"})"
#define TAKT_H_VALUE R"("value":{"description":"typed value {type, value}"})"
#define TAKT_H_NAME R"("name":{"type":"string","description":"variable path"})"
#define TAKT_H_ADDRESS R"("address":{"type":"string","description":"direct address such as %IX0.0"})"
#define TAKT_H_SOURCES                                                                                                 \
    R"("source":{"type":"string","description":"one ST source"},"sources":{"type":"array","items":{"type":"string"}})"
#define TAKT_H_OVERFLOW                                                                                                \
    R"("overflow":{"type":"string","enum":["trap","wrap"],"description":"integer overflow: fault or wrap"})"
#define TAKT_H_LOAD TAKT_H_OVERFLOW R"(,"initial_cycle":{"type":"boolean","description":"false: run no cycle on load"})"
#define TAKT_H_PROGRESS                                                                                                \
    TAKT_H_OBJ(R"("cycle":{"type":"integer"},"time_nanos":{"type":"integer"},"watch":{"type":"object"})",              \
               R"("cycle","time_nanos")")
#define TAKT_H_TASKS                                                                                                   \
    R"("tasks":{"type":"array","description":"times each task ran in this request","items":{"type":"object",)"         \
    R"("required":["name","cycles"],"properties":{"name":{"type":"string"},"cycles":{"type":"integer"}}}})"
    static constexpr std::string_view kNone = R"({"type":"object","properties":{}})";
    static constexpr std::string_view kLoaded =
        TAKT_H_OBJ(R"("cycle":{"type":"integer"},"time_nanos":{"type":"integer"},"programs":{"type":"array"})",
                   R"("cycle","time_nanos","programs")");
    static constexpr std::string_view kNamed = TAKT_H_OBJ(TAKT_H_NAME, R"("name")");
    static constexpr std::string_view kSet = TAKT_H_OBJ(TAKT_H_NAME "," TAKT_H_VALUE, R"("name","value")");
    static constexpr std::string_view kValue =
        TAKT_H_OBJ(R"("name":{"type":"string"},"value":{"type":"object"})", R"("value")");
    static constexpr std::string_view kAddressed = TAKT_H_OBJ(TAKT_H_ADDRESS, R"("address")");
    static constexpr std::string_view kAddressValue =
        TAKT_H_OBJ(R"("address":{"type":"string"},"value":{"type":"object"})", R"("address","value")");
    static constexpr std::string_view kProgress = TAKT_H_PROGRESS;
    static constexpr std::string_view kCycled = TAKT_H_OBJ(
        R"("cycle":{"type":"integer"},"time_nanos":{"type":"integer"},"watch":{"type":"object"},)" TAKT_H_TASKS,
        R"("cycle","time_nanos","tasks")");
    static const MethodSpec<Command> kTable[] = {
        {"load",
         "Load sources; runs one initial cycle at virtual time 0 unless initial_cycle is false",
         TAKT_H_OBJ(TAKT_H_SOURCES "," TAKT_H_LOAD, ""),
         kLoaded,
         std::nullopt,
         {[](S s, V req) {
              HarnessResult err;
              std::vector<compiler::SourceText> texts;
              LoadOptions options;
              if (!loadOptions(req, options, err) || !s.sources(req, texts, err)) {
                  return err;
              }
              return s.load(texts, options);
          },
          false}},
        {"reload",
         "Online change at the cycle boundary (mode warm: warm-restart semantics)",
         TAKT_H_OBJ(TAKT_H_SOURCES R"(,"mode":{"type":"string","enum":["online","warm"]},)" TAKT_H_OVERFLOW, ""),
         TAKT_H_OBJ(
             R"("cycle":{"type":"integer"},"time_nanos":{"type":"integer"},"programs":{"type":"array"},)"
             R"("kept":{"type":"integer"},"converted":{"type":"integer"},"reinitialised":{"type":"integer"},)"
             R"("dropped":{"type":"integer"},"added":{"type":"integer"},"loses_state":{"type":"boolean"},)"
             R"("variables":{"type":"array"},"initialised":{"type":"integer"},)"
             R"("retyped":{"type":"integer"},"retyped_paths":{"type":"array"},"old_hash":{"type":"string"},)"
             R"("new_hash":{"type":"string"})",
             R"("cycle","time_nanos","programs","kept","converted","reinitialised","dropped","added","loses_state",)"
             R"("variables","initialised","retyped","retyped_paths","old_hash","new_hash")"),
         std::nullopt,
         {[](S s, V req) {
             bool warm = false;
             if (const Value* mode = param(req, "mode"); mode != nullptr) {
                 if (!mode->IsString() ||
                     (std::strcmp(mode->GetString(), "warm") != 0 && std::strcmp(mode->GetString(), "online") != 0)) {
                     return failure(ErrorKind::InvalidArgument, "parameter 'mode' must be \"warm\" or \"online\"");
                 }
                 warm = std::strcmp(mode->GetString(), "warm") == 0;
             }
             HarnessResult err;
             std::vector<compiler::SourceText> texts;
             compiler::BuildOptions build = s.build;
             if (!overflowParam(req, build, err) || !s.sources(req, texts, err)) {
                 return err;
             }
             return s.reload(texts, warm, build);
         }}},
        {"cycle",
         "Advance virtual time by dt_ms, then run one cycle, count times",
         TAKT_H_OBJ(R"("count":{"type":"integer","minimum":0},)" TAKT_H_DT "," TAKT_H_WATCH, ""),
         kCycled,
         std::nullopt,
         {[](S s, V req) { return s.cycle(req); }}},
        {"set_input", "Write any variable", kSet, kNone, std::nullopt, {[](S s, V req) {
             return s.setInput(req, false);
         }}},
        {"get_output", "Read any variable", kNamed, kValue, std::nullopt, {[](S s, V req) {
             return s.getOutput(req, false);
         }}},
        {"set_access", "Write a VAR_ACCESS path", kSet, kNone, std::nullopt, {[](S s, V req) {
             return s.setInput(req, true);
         }}},
        {"get_access", "Read a VAR_ACCESS path", kNamed, kValue, std::nullopt, {[](S s, V req) {
             return s.getOutput(req, true);
         }}},
        {"bind_direct",
         "Bind a variable to a direct address",
         TAKT_H_OBJ(TAKT_H_NAME "," TAKT_H_ADDRESS, R"("name","address")"),
         kNone,
         std::nullopt,
         {[](S s, V req) { return s.bindDirect(req); }}},
        {"set_direct_input",
         "Write an input address",
         TAKT_H_OBJ(TAKT_H_ADDRESS "," TAKT_H_VALUE, R"("address","value")"),
         kNone,
         std::nullopt,
         {[](S s, V req) { return s.setDirect(req, IoArea::Input); }}},
        {"set_direct_memory",
         "Write a memory address (%M)",
         TAKT_H_OBJ(TAKT_H_ADDRESS "," TAKT_H_VALUE, R"("address","value")"),
         kNone,
         std::nullopt,
         {[](S s, V req) { return s.setDirect(req, IoArea::Memory); }}},
        {"get_direct_output", "Read an output address", kAddressed, kAddressValue, std::nullopt, {[](S s, V req) {
             return s.getDirectOutput(req);
         }}},
        {"advance_time",
         "Advance virtual time without a cycle",
         TAKT_H_OBJ(R"("duration_ms":{"type":"number","minimum":0})", R"("duration_ms")"),
         kNone,
         std::nullopt,
         {[](S s, V req) {
              HarnessResult err;
              std::int64_t ns = 0;
              if (param(req, "duration_ms") == nullptr) {
                  return failure(ErrorKind::InvalidArgument, "parameter 'duration_ms' is required");
              }
              if (!msParam(req, "duration_ms", 0, ns, err)) {
                  return err;
              }
              s.clock.advance(ns);
              return success();
          },
          false}},
        {"set_wall_clock",
         "Set the virtual date and time NOW_DT() and RTC read; it runs on with virtual time",
         TAKT_H_OBJ(R"("value":{"description":"typed value {type: DT or LDT, nanos}"})", R"("value")"),
         kNone,
         std::nullopt,
         {[](S s, V req) {
              const Value* value = param(req, "value");
              if (value == nullptr) {
                  return failure(ErrorKind::InvalidArgument, "parameter 'value' is required");
              }
              std::uint8_t buf[8] = {};
              std::string why;
              if (!engine::decodeElementary(bytecode::ValueKind::Ldt, 8, 0, *value, buf, why)) {
                  return failure(ErrorKind::InvalidArgument, why);
              }
              std::int64_t ns = 0;
              std::memcpy(&ns, buf, sizeof ns);
              s.clock.setWall(ns);
              s.wallAtLoad = ns;
              return success();
          },
          false}},
        {"run_until",
         "Cycle until name equals a value",
         TAKT_H_OBJ(TAKT_H_NAME
                    R"(,"equals":{"description":"typed value"},"max_cycles":{"type":"integer","minimum":1},)" TAKT_H_DT
                    "," TAKT_H_WATCH,
                    R"("name","equals")"),
         TAKT_H_OBJ(R"("cycle":{"type":"integer"},"time_nanos":{"type":"integer"},"cycles_run":{"type":"integer"},)"
                    R"("watch":{"type":"object"},)" TAKT_H_TASKS,
                    R"("cycle","time_nanos","tasks")"),
         std::nullopt,
         {[](S s, V req) { return s.runUntil(req); }}},
        {"restart",
         "Cold or warm restart; runs no cycle",
         TAKT_H_OBJ(R"("mode":{"type":"string","enum":["cold","warm"]})", R"("mode")"),
         TAKT_H_OBJ(R"("mode":{"type":"string"})", R"("mode")"),
         std::nullopt,
         {[](S s, V req) { return s.restart(req); }}},
        {"snapshot",
         "Cycle, time and watch values; no work is done",
         TAKT_H_OBJ(TAKT_H_WATCH, ""),
         kProgress,
         std::nullopt,
         {[](S s, V req) {
             HarnessResult err;
             std::vector<std::pair<std::string, engine::VarRef>> watch;
             if (!s.watchRefs(req, watch, err)) {
                 return err;
             }
             return s.progress(watch);
         }}},
    };
    return kTable;
}
#undef TAKT_H_OBJ
#undef TAKT_H_WATCH
#undef TAKT_H_DT
#undef TAKT_H_VALUE
#undef TAKT_H_NAME
#undef TAKT_H_ADDRESS
#undef TAKT_H_SOURCES
#undef TAKT_H_PROGRESS
#undef TAKT_H_TASKS
#undef TAKT_H_OVERFLOW
#undef TAKT_H_LOAD

std::span<const Harness::CommandFacts> Harness::commandFacts() {
    static const std::vector<CommandFacts> kFacts = [] {
        std::vector<CommandFacts> out;
        for (const MethodSpec<Command>& c : commands()) {
            out.push_back({rpc::factsOf(c)});
        }
        return out;
    }();
    return kFacts;
}

HarnessResult Harness::handle(std::string_view cmd, const Value& req) {
    const MethodSpec<Command>* command = rpc::findMethod(commands(), cmd);
    if (command == nullptr) {
        return failure(ErrorKind::InvalidRequest, fmt::format("unknown cmd '{}'", cmd));
    }
    if (command->handler.needsProgram && state_->engine == nullptr) {
        return failure(ErrorKind::NotLoaded, "no program is loaded; send 'load' first");
    }
    return command->handler.run(*state_, req);
}

// The NDJSON envelope of seed 001, written with the same writer as the JSON-RPC responses.
std::string Harness::render(const HarnessResult& r) {
    rapidjson::StringBuffer buf;
    rpc::JsonWriter w(buf);
    w.StartObject();
    w.Key("ok");
    w.Bool(r.ok);
    if (r.ok) {
        w.Key("data");
        r.payload.Accept(w);
    } else {
        w.Key("error");
        w.StartObject();
        w.Key("kind");
        rpc::writeString(w, errorKindName(r.kind));
        w.Key("message");
        rpc::writeString(w, r.message);
        w.Key("data");
        r.payload.Accept(w);
        w.EndObject();
    }
    w.EndObject();
    return {buf.GetString(), buf.GetSize()};
}

std::string Harness::handleLine(std::string_view line) {
    if (line.size() > kMaxLineBytes) {
        return render(failure(ErrorKind::InvalidRequest, std::string(kOversizeLineMessage)));
    }
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
        return render(failure(ErrorKind::InvalidRequest, std::string(kBlankLineMessage)));
    }
    // The agent API's bounded parser: iterative, UTF-8 checked, depth capped while parsing.
    rpc::ParsedLine parsed;
    rpc::parseLine(line, kMaxJsonDepth, parsed);
    if (parsed.status != rpc::ParsedLine::Status::Ok) {
        return render(failure(ErrorKind::InvalidRequest, parsed.error));
    }
    const rapidjson::Document& doc = parsed.doc;
    return render(handle(doc));
}

} // namespace takt::agent
