// bytecode.reload on the live runtime (ARCHITECTURE.md "Online change"): decode, verify,
// initialise and plan the new program here, on the control thread, while the old one keeps
// running. The result is one engine::PreparedChange that the Reload command carries to the scan
// thread, which only executes the plan and swaps pointers at a cycle boundary and hands the
// replaced state back in it. Any failure before the hand-over leaves the running program
// bit-identical.
#include <algorithm>
#include <chrono>

#include <openssl/evp.h>

#include <fmt/format.h>

#include "control/control_runtime_internal.h"
#include "rpc/transfer_report_json.h"
#include "takt/bytecode/verifier.h"
#include "takt/engine/values.h"

namespace takt::agent {

namespace {

constexpr std::size_t kIdempotencyKeys = 32;
constexpr std::size_t kMaxKeyBytes = 128;

// Standard base64 with padding (what `takt reload` and base64(1) produce). EVP_DecodeBlock
// rejects characters outside the alphabet but counts padding as zero bytes, so those are
// trimmed by hand.
bool decodeBase64(std::string_view text, std::vector<std::uint8_t>& out) {
    if (text.empty() || text.size() % 4 != 0) {
        return false;
    }
    out.assign(text.size() / 4 * 3, 0);
    const int n =
        EVP_DecodeBlock(out.data(), reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
    if (n < 0) {
        return false;
    }
    std::size_t size = static_cast<std::size_t>(n);
    size -= text.ends_with("==") ? 2 : text.ends_with("=") ? 1 : 0;
    out.resize(size);
    return true;
}

std::string stringArray(const std::vector<std::string>& items) {
    std::string out = "[";
    for (const std::string& s : items) {
        out += (out.size() > 1 ? "," : "") + ctl::quoted(s);
    }
    return out + "]";
}

} // namespace

// The answer to a reload the scan loop applied: the transfer report, and the forces re-resolved in
// the new program.
ControlAnswer RuntimeControl::finishReload(Pending& done) {
    engine::TransferReport& r = done.result.change;
    previous_ = done.moduleBefore;
    previousHash_ = done.hashBefore;
    // Which ENUM values had no match is known only now that the scan thread applied the plan.
    engine::settleTransferReport(done.change.plan, r);
    if (options_.changeLog) {
        options_.changeLog(transferReportLogLine(r));
    }
    // Kept for the next start, as CODESYS updates its boot application: the change is applied
    // already, so a failure to keep it is reported with it, never as its failure.
    std::string keepError;
    if (options_.keepApplied) {
        keepError = options_.keepApplied(*done.module, previous_.get());
    }
    // The forced variables now live where the new program put them (or are gone).
    std::erase_if(forced_, [&](const Forced& f) {
        return std::find(done.forcesLost.begin(), done.forcesLost.end(), f.name) != done.forcesLost.end();
    });
    for (Forced& f : forced_) {
        engine::VarRef ref;
        std::string why;
        if (!f.address && engine::resolvePath(*done.module, f.name, ref, why)) {
            f.range.offset = ref.offset;
            f.type = ref.type;
        }
    }
    const RuntimeControlOptions::NativeCompileView native =
        options_.nativeCompile ? options_.nativeCompile() : RuntimeControlOptions::NativeCompileView{};
    ControlAnswer answer = ControlAnswer::result(
        fmt::format("{{\"old_hash\":{},\"new_hash\":{},\"dry_run\":false,{},"
                    "\"forces_dropped\":{},\"swap_pause_us\":{:.3f},\"cycle\":{},\"execution\":{},"
                    "\"native_compile_ms\":{:.3f},\"native_pous_compiled\":{},\"native_pous_reused\":{},"
                    "\"kept_for_restart\":{}{}}}",
                    ctl::quoted(r.oldHash), ctl::quoted(r.newHash), transferReportMembers(r),
                    stringArray(done.forcesLost), static_cast<double>(r.pauseNs) / 1000.0, done.result.cycle,
                    ctl::quoted(options_.execution ? options_.execution() : "interpreter"), native.ms,
                    native.pousCompiled, native.pousReused, options_.keepApplied && keepError.empty(),
                    keepError.empty() ? "" : ",\"keep_error\":" + ctl::quoted(keepError)));
    if (!done.idempotencyKey.empty()) {
        if (idempotentOrder_.size() == kIdempotencyKeys) {
            idempotent_.erase(idempotentOrder_.front());
            idempotentOrder_.pop_front();
        }
        idempotent_.emplace(done.idempotencyKey, answer);
        idempotentOrder_.push_back(done.idempotencyKey);
    }
    return answer;
}

bool RuntimeControl::changeParams(const rapidjson::Value& params, ChangeRequest& out, ControlReplyFn& reply) const {
    if (const rapidjson::Value* d = ctl::member(params, "dry_run")) {
        if (!d->IsBool()) {
            reply(ctl::badParam("dry_run", "expected true or false"));
            return false;
        }
        out.dryRun = d->GetBool();
    }
    if (const rapidjson::Value* e = ctl::member(params, "expected_hash")) {
        if (!e->IsString()) {
            reply(ctl::badParam("expected_hash", "expected the program hash as a string"));
            return false;
        }
        out.expectedHash = e->GetString();
        out.expected = true;
    }
    if (const rapidjson::Value* k = out.dryRun ? nullptr : ctl::member(params, "idempotency_key")) {
        if (!k->IsString() || k->GetStringLength() == 0 || k->GetStringLength() > kMaxKeyBytes) {
            reply(ctl::badParam("idempotency_key", "expected a string of 1 to 128 bytes"));
            return false;
        }
        out.key = k->GetString();
    }
    return true;
}

void RuntimeControl::rejectChange(const ChangeRequest& request, const std::string& why, ControlReplyFn& reply) {
    if (!request.dryRun) { // a preview sends no event
        localEvents_.push_back(fmt::format(
            "{{\"type\":\"reload_rejected\",\"ts\":{},\"reason\":{},\"program_hash\":{}}}",
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
                .count(),
            ctl::quoted(why), ctl::quoted(hash_)));
    }
    reply(ControlAnswer::error(rpc::kCommandFailed, "reload rejected: " + why,
                               fmt::format("{{\"program_hash\":{}}}", ctl::quoted(hash_))));
}

// What refuses any change before its program is looked at: an answer already given for its key,
// one in flight, a halted task, another program running than the one previewed.
bool RuntimeControl::changeRefused(const ChangeRequest& request, ControlReplyFn& reply) {
    if (!request.key.empty()) {
        if (const auto it = idempotent_.find(request.key); it != idempotent_.end()) {
            reply(it->second); // the same request again: the first answer, nothing applied twice
            return true;
        }
    }
    if (reloadInFlight_) {
        reply(ControlAnswer::error(rpc::kCommandFailed, "a reload is already in progress; retry when it is answered"));
        return true;
    }
    if (!request.dryRun && anyHalted()) {
        // The change waits for every task to reach its cycle boundary, which a halted one does not.
        reply(ControlAnswer::error(rpc::kCommandFailed,
                                   "a task is halted in the debugger; continue it (debug.continue) before an online "
                                   "change"));
        return true;
    }
    if (request.expected && request.expectedHash != hash_) {
        // Previewed against another program (someone else reloaded since): the preview no longer
        // describes this change.
        rejectChange(request,
                     fmt::format("the running program is {}, not the expected {}; preview the change again", hash_,
                                 request.expectedHash),
                     reply);
        return true;
    }
    return false;
}

void RuntimeControl::reload(const rapidjson::Value& params, ControlReplyFn& reply) {
    const rapidjson::Value* bytes = ctl::member(params, "bytes");
    if (bytes == nullptr || !bytes->IsString()) {
        reply(ctl::badParam("bytes", "missing: program.stbc as a base64 string"));
        return;
    }
    ChangeRequest request;
    if (!changeParams(params, request, reply) || changeRefused(request, reply)) {
        return;
    }
    std::vector<std::uint8_t> stbc;
    if (!decodeBase64(std::string_view(bytes->GetString(), bytes->GetStringLength()), stbc)) {
        reply(ctl::badParam("bytes", "not valid base64"));
        return;
    }
    bytecode::VerifiedProgram loaded = bytecode::loadVerified(stbc);
    if (!loaded.ok()) {
        rejectChange(request,
                     loaded.stage == bytecode::VerifiedProgram::Stage::Verify
                         ? "program.stbc rejected by the verifier: " + loaded.error
                         : "program.stbc: " + loaded.error,
                     reply);
        return;
    }
    const std::string hash = loaded.hashHex();
    applyChange(request, std::move(loaded.module), hash, reply);
}

// runtime.rollback: the program the last online change replaced, back as an online change of its
// own. The two then trade places, so a second rollback undoes the first.
void RuntimeControl::rollback(const rapidjson::Value& params, ControlReplyFn& reply) {
    ChangeRequest request;
    if (!changeParams(params, request, reply) || changeRefused(request, reply)) {
        return;
    }
    if (previous_ == nullptr) {
        reply(ControlAnswer::error(rpc::kCommandFailed, "no program to roll back to: no online change has been applied",
                                   fmt::format("{{\"program_hash\":{}}}", ctl::quoted(hash_))));
        return;
    }
    applyChange(request, previous_, previousHash_, reply);
}

void RuntimeControl::applyChange(const ChangeRequest& request, std::shared_ptr<const bytecode::Module> module,
                                 const std::string& hash, ControlReplyFn& reply) {
    auto p = std::make_unique<Pending>();
    p->change = engine_.prepareChange(std::make_unique<engine::LoadedProgram>(module, hash), false, request.dryRun);
    if (!p->change.ok() && !(request.dryRun && p->change.fault.message.empty())) {
        const engine::FaultReport& fault = p->change.fault;
        rejectChange(
            request,
            fmt::format("the new program faulted while initialising: {}{}", fault.message,
                        fault.path.empty() ? "" : fmt::format(" ({}:{}:{})", fault.path, fault.line, fault.column)),
            reply);
        return;
    }
    if (loop_.taskThreads() && !engine::sameTasks(*module_, *module)) {
        rejectChange(request, engine::kTasksChangedRefusal, reply);
        return;
    }
    if (request.dryRun) {
        // The preview: the plan the change would apply, computed exactly as for the change, and
        // dropped here. Nothing reaches the scan thread; the running program is untouched.
        engine::TransferReport& r = p->change.plan.report;
        reply(ControlAnswer::result(fmt::format("{{\"old_hash\":{},\"new_hash\":{},\"dry_run\":true,{}}}",
                                                ctl::quoted(hash_), ctl::quoted(hash), transferReportMembers(r))));
        return;
    }
    p->forces = buildForces(*module, &p->forcesLost);
    p->stopsBefore = stops_;
    carryBreakpoints(*module, p->change.program->stops());
    p->command.kind = engine::ScanCommandKind::Reload;
    p->command.forces = p->forces.get();
    p->command.change = &p->change;
    p->module = module;
    p->hash = hash;
    p->idempotencyKey = request.key;
    p->moduleBefore = module_;
    p->hashBefore = hash_;
    // Requests after this one are resolved against the new program: the queue applies them after
    // the swap. A refusal puts the running one back (complete()).
    module_ = std::move(module);
    hash_ = hash;
    reloadInFlight_ = true;
    traceLayouts(p->traces);
    p->command.traces = p->traces.data();
    vm::StopMap* const stopsBefore = p->stopsBefore;
    std::shared_ptr<const bytecode::Module> moduleBefore = p->moduleBefore;
    std::string hashBefore = p->hashBefore;
    if (!submit(std::move(p), reply)) {
        module_ = std::move(moduleBefore);
        hash_ = std::move(hashBefore);
        stops_ = stopsBefore;
        reloadInFlight_ = false;
    }
}

} // namespace takt::agent
