// var.* and io.* on the live runtime: paths and addresses are resolved and values decoded and
// range-checked here, off the cycle; the scan thread only copies bytes at the cycle boundary.
#include <fmt/format.h>

#include "control/control_runtime_internal.h"
#include "takt/agent/iec_literal.h"
#include "takt/bytecode/address.h"
#include "takt/engine/values.h"

namespace takt::agent {

using ctl::encodeFor;
using ctl::resolveVar;
using ctl::Target;

namespace {

// The most variables one var.writeMany writes, as many as one var.read reads.
constexpr rapidjson::SizeType kMaxWriteItems = 1024;

engine::ImageArea imageArea(bytecode::IoArea a) {
    switch (a) {
    case bytecode::IoArea::Input: return engine::ImageArea::Input;
    case bytecode::IoArea::Output: return engine::ImageArea::Output;
    default: return engine::ImageArea::Memory;
    }
}

// The names a read lists: `names` (array of strings) or one `name`; for io, `addresses`/`address`.
bool nameList(const rapidjson::Value& params, const char* plural, const char* singular, std::vector<std::string>& out,
              ControlAnswer& error) {
    if (const rapidjson::Value* list = ctl::member(params, plural)) {
        if (!list->IsArray() || list->Empty() || list->Size() > 1024) {
            error = ctl::badParam(plural, "expected an array of 1 to 1024 strings");
            return false;
        }
        for (const rapidjson::Value& v : list->GetArray()) {
            if (!v.IsString()) {
                error = ctl::badParam(plural, "expected an array of strings");
                return false;
            }
            out.emplace_back(v.GetString(), v.GetStringLength());
        }
        return true;
    }
    if (const rapidjson::Value* one = ctl::member(params, singular); one != nullptr && one->IsString()) {
        out.emplace_back(one->GetString(), one->GetStringLength());
        return true;
    }
    error = ctl::badParam(plural, fmt::format("missing: give \"{}\" (array) or \"{}\" (string)", plural, singular));
    return false;
}

} // namespace

namespace ctl {

bool resolveVar(const engine::PathIndex& paths, const std::string& name, Target& t, ControlAnswer& error,
                std::string_view member) {
    const bytecode::Module& m = paths.module();
    engine::VarRef ref;
    std::string why;
    if (!paths.resolve(name, ref, why)) {
        error = ctl::badParam(member, why);
        return false;
    }
    t = targetOf(m, name, ref);
    return true;
}

Target targetOf(const bytecode::Module& m, const std::string& name, const engine::VarRef& ref) {
    Target t;
    t.name = name;
    t.type = ref.type;
    t.readOnly = ref.constant;
    t.range = engine::ImageRange{engine::ImageArea::Data, false, 0, ref.offset, m.types[ref.type].size};
    return t;
}

} // namespace ctl

namespace {

bool resolveAddress(const std::string& text, bool byteAddressing, Target& t, ControlAnswer& error, const char* member) {
    bytecode::DirectAddress a;
    std::string why;
    if (!bytecode::parseDirectAddress(text, a, why)) {
        error = ctl::badParam(member, why);
        return false;
    }
    const std::uint64_t offset = a.byteOffset(byteAddressing);
    if (offset + a.bytes() > 0xFFFF'FFFFu) {
        error = ctl::badParam(member, fmt::format("'{}' is outside the process image", text));
        return false;
    }
    t.name = bytecode::formatDirectAddress(a);
    t.kind = bytecode::addressValueKind(a.width);
    t.range = engine::ImageRange{imageArea(a.area), a.isBit(), a.bit, static_cast<std::uint32_t>(offset), a.bytes()};
    return true;
}

// Decodes params.value for `t` into `out` (t.range.valueBytes() bytes).
bool decodeFor(const bytecode::Module& m, const Target& t, const rapidjson::Value& params,
               std::vector<std::uint8_t>& out, ControlAnswer& error) {
    const rapidjson::Value* value = ctl::member(params, "value");
    if (value == nullptr) {
        error = ctl::badParam("value", "missing: a typed value such as {\"type\":\"INT\",\"value\":3} or IEC "
                                       "literal text such as \"T#330ms\"");
        return false;
    }
    out.assign(t.range.valueBytes(), 0);
    std::string why;
    // A JSON string is IEC literal text ("T#330ms", "16#00FF", "Mode#Auto"): typed values are
    // always objects, so the two never overlap.
    rapidjson::Document literal;
    if (value->IsString()) {
        const std::string_view text(value->GetString(), value->GetStringLength());
        const bool parsed = t.type != bytecode::kNone
                                ? parseIecLiteral(m, t.type, text, literal, literal.GetAllocator(), why)
                                : parseIecLiteral(t.kind, text, literal, literal.GetAllocator(), why);
        if (!parsed) {
            error = ctl::badParam("value", why);
            return false;
        }
        value = &literal;
    }
    const bool ok = t.type != bytecode::kNone ? engine::decodeValue(m, t.type, *value, out.data(), why)
                                              : engine::decodeElementary(t.kind, t.range.isBit ? 0 : t.range.size, 0,
                                                                         *value, out.data(), why);
    if (!ok) {
        error = ctl::badParam("value", why);
        return false;
    }
    return true;
}

} // namespace

namespace ctl {

void encodeTyped(const bytecode::Module& m, const Target& t, const std::uint8_t* data, rapidjson::Value& v,
                 engine::JsonAllocator& alloc) {
    if (t.type != bytecode::kNone) {
        engine::encodeValue(m, t.type, data, v, alloc);
    } else {
        engine::encodeElementary(t.kind, data, v, alloc);
    }
}

std::string renderTyped(const rapidjson::Value& v, bool iec) {
    return iec ? ctl::quoted(formatIecLiteral(v)) : ctl::jsonText(v);
}

std::string encodeFor(const bytecode::Module& m, const Target& t, const std::uint8_t* data, bool iec) {
    rapidjson::Document doc;
    rapidjson::Value v;
    encodeTyped(m, t, data, v, doc.GetAllocator());
    return renderTyped(v, iec);
}

} // namespace ctl

void RuntimeControl::varRead(const rapidjson::Value& params, ControlReplyFn& reply) {
    readTargets(params, false, reply);
}

void RuntimeControl::ioRead(const rapidjson::Value& params, ControlReplyFn& reply) {
    readTargets(params, true, reply);
}

// var.read / io.read: every name resolved first (one bad name fails the request, nothing is
// read), then one Read command copies all of them at the same cycle boundary.
void RuntimeControl::readTargets(const rapidjson::Value& params, bool io, ControlReplyFn& reply) {
    const char* plural = io ? "addresses" : "names";
    std::vector<std::string> names;
    ControlAnswer error;
    if (!nameList(params, plural, io ? "address" : "name", names, error)) {
        reply(std::move(error));
        return;
    }
    auto targets = std::make_shared<std::vector<Target>>(names.size());
    auto p = std::make_unique<Pending>();
    std::size_t bytes = 0;
    for (std::size_t i = 0; i < names.size(); ++i) {
        Target& t = (*targets)[i];
        const bool ok = io ? resolveAddress(names[i], options_.byteAddressing, t, error, plural)
                           : resolveVar(paths(), names[i], t, error, plural);
        if (!ok) {
            reply(std::move(error));
            return;
        }
        p->ranges.push_back(t.range);
        bytes += t.range.valueBytes();
    }
    p->bytes.assign(bytes, 0);
    p->command.kind = engine::ScanCommandKind::Read;
    p->command.readBytes = p->bytes.data();
    p->module = module_;
    const rapidjson::Value* format = ctl::member(params, "format");
    const bool iec = format != nullptr && format->IsString() && std::string_view(format->GetString()) == "iec";
    p->finish = [targets, iec](Pending& done) {
        std::string values;
        std::size_t at = 0;
        for (const Target& t : *targets) {
            values += fmt::format("{}{}:{}", values.empty() ? "" : ",", ctl::quoted(t.name),
                                  encodeFor(*done.module, t, done.bytes.data() + at, iec));
            at += t.range.valueBytes();
        }
        return ControlAnswer::result(fmt::format("{{\"cycle\":{},\"values\":{{{}}}}}", done.result.cycle, values));
    };
    submit(std::move(p), reply);
}

namespace {

// The checks of one write (var.write, io.write, each item of var.writeMany) once its target is
// resolved: not a constant, and a value of the target's type that fits it, decoded into `out`.
bool decodeWrite(const bytecode::Module& m, const Target& t, const rapidjson::Value& params,
                 std::vector<std::uint8_t>& out, ControlAnswer& error, std::string_view member = "name") {
    if (t.readOnly) {
        error = ctl::badParam(member, fmt::format("'{}' is a constant and cannot be written", t.name));
        return false;
    }
    return decodeFor(m, t, params, out, error);
}

} // namespace

// One write (var.write / io.write): target resolved, value decoded, then a Write command.
bool ctl::prepareWrite(const bytecode::Module& m, const Target& t, const rapidjson::Value& params,
                       RuntimeControl::Pending& p, ControlAnswer& error, std::string_view member) {
    if (!decodeWrite(m, t, params, p.bytes, error, member)) {
        return false;
    }
    p.ranges.push_back(t.range);
    p.command.kind = engine::ScanCommandKind::Write;
    p.command.writeBytes = p.bytes.data();
    return true;
}

// The answer to a write names the target and the value written, decoded back from the bytes the
// scan thread copied: what the runtime took the literal to mean, not a later read of the
// variable (which the next input copy or the program may already have overwritten).
ControlAnswer ctl::writeAnswer(const char* key, const Target& t, RuntimeControl::Pending& done) {
    return ControlAnswer::result(fmt::format("{{\"{}\":{},\"cycle\":{},\"value\":{}}}", key, ctl::quoted(t.name),
                                             done.result.cycle, encodeFor(*done.module, t, done.bytes.data())));
}

void RuntimeControl::varWrite(const rapidjson::Value& params, ControlReplyFn& reply) {
    const rapidjson::Value* name = ctl::member(params, "name"); // a string: the schema has checked it
    ControlAnswer error;
    Target t;
    auto p = std::make_unique<Pending>();
    if (!resolveVar(paths(), name->GetString(), t, error, "name") || !prepareWrite(*module_, t, params, *p, error)) {
        reply(std::move(error));
        return;
    }
    p->module = module_;
    p->finish = [t](Pending& done) { return writeAnswer("name", t, done); };
    submit(std::move(p), reply);
}

// var.writeMany: each item is checked as var.write checks it (path, constant, the value's type and
// range); a refused item is answered with the error var.write would have answered and changes
// nothing, and the others are written by one Write command, so they all apply at the same cycle
// boundary (an OPC UA Write of many nodes is one call). Each item is an audit line of its own.
void RuntimeControl::varWriteMany(const rapidjson::Value& params, ControlReplyFn& reply) {
    const rapidjson::Value& items = *ctl::member(params, "items"); // an array of {name, value}: the schema checked it
    if (items.Empty() || items.Size() > kMaxWriteItems) {
        reply(ctl::badParam("items", fmt::format("expected 1 to {} items", kMaxWriteItems)));
        return;
    }
    struct Item {
        Target target;
        bool ok = false;
        std::size_t at = 0; // where its bytes are in the command's
        ControlAnswer error;
    };
    auto list = std::make_shared<std::vector<Item>>(items.Size());
    auto p = std::make_unique<Pending>();
    std::vector<std::uint8_t> value;
    for (rapidjson::SizeType i = 0; i < items.Size(); ++i) {
        Item& item = (*list)[i];
        const std::string name(items[i]["name"].GetString(), items[i]["name"].GetStringLength());
        item.target.name = name; // named in the answer also when it does not resolve
        if (!resolveVar(paths(), name, item.target, item.error, "name") ||
            !decodeWrite(*module_, item.target, items[i], value, item.error)) {
            continue;
        }
        item.ok = true;
        item.at = p->bytes.size();
        p->bytes.insert(p->bytes.end(), value.begin(), value.end());
        p->ranges.push_back(item.target.range);
    }
    p->command.kind = engine::ScanCommandKind::Write;
    p->command.writeBytes = p->bytes.data();
    p->module = module_;
    p->finish = [list](Pending& done) {
        std::string results;
        std::vector<std::pair<std::string, int>> audited;
        for (const Item& item : *list) {
            const std::string name = ctl::quoted(item.target.name);
            results += results.empty() ? "" : ",";
            if (item.ok) {
                results += fmt::format(R"({{"name":{},"value":{}}})", name,
                                       encodeFor(*done.module, item.target, done.bytes.data() + item.at));
            } else {
                results += fmt::format(R"({{"name":{},"error":{{"code":{},"message":{}}}}})", name, item.error.code,
                                       ctl::quoted(item.error.message));
            }
            audited.emplace_back(item.target.name, item.ok ? 0 : item.error.code);
        }
        ControlAnswer answer =
            ControlAnswer::result(fmt::format(R"({{"cycle":{},"results":[{}]}})", done.result.cycle, results));
        answer.items = std::move(audited);
        return answer;
    };
    submit(std::move(p), reply);
}

void RuntimeControl::ioWrite(const rapidjson::Value& params, ControlReplyFn& reply) {
    const rapidjson::Value* address = ctl::member(params, "address"); // a string: the schema has checked it
    ControlAnswer error;
    Target t;
    auto p = std::make_unique<Pending>();
    if (!resolveAddress(address->GetString(), options_.byteAddressing, t, error, "address") ||
        !prepareWrite(*module_, t, params, *p, error)) {
        reply(std::move(error));
        return;
    }
    p->module = module_;
    p->finish = [t](Pending& done) { return writeAnswer("address", t, done); };
    submit(std::move(p), reply);
}

std::unique_ptr<engine::ForceTable> RuntimeControl::buildForces(const bytecode::Module& module,
                                                                std::vector<std::string>* lost) const {
    auto table = std::make_unique<engine::ForceTable>();
    for (const Forced& f : forced_) {
        engine::ImageRange range = f.range;
        if (!f.address) {
            // Re-resolved by path: after an online change the variable may have moved, changed
            // type (the forced bytes would be meaningless) or gone.
            engine::VarRef ref;
            std::string why;
            if (!engine::resolvePath(module, f.name, ref, why) ||
                engine::typeSignature(module, ref.type) != f.signature) {
                if (lost != nullptr) {
                    lost->push_back(f.name);
                }
                continue;
            }
            range.offset = ref.offset;
        }
        table->entries.push_back(engine::ForceEntry{range, static_cast<std::uint32_t>(table->values.size())});
        table->values.insert(table->values.end(), f.value.begin(), f.value.end());
    }
    table->sizeFieldScratch();
    return table;
}

void RuntimeControl::force(const std::string& method, const rapidjson::Value& params, ControlReplyFn& reply) {
    const bool io = method.starts_with("io.");
    const bool add = method.ends_with(".force");
    const char* key = io ? "address" : "name";
    const rapidjson::Value* name = ctl::member(params, key); // a string: the schema has checked it
    if (reloadInFlight_) {
        reply(ControlAnswer::error(rpc::kCommandFailed, "a reload is in progress; retry when it is answered"));
        return;
    }
    ControlAnswer error;
    Target t;
    const bool resolved = io ? resolveAddress(name->GetString(), options_.byteAddressing, t, error, key)
                             : resolveVar(paths(), name->GetString(), t, error, key);
    if (!resolved) {
        reply(std::move(error));
        return;
    }
    std::vector<Forced> next = forced_;
    const auto same = [&](const Forced& f) {
        return f.address == io && (io ? f.name == t.name : f.range.offset == t.range.offset && f.type == t.type);
    };
    std::erase_if(next, same);
    if (add) {
        Forced f;
        f.name = t.name;
        f.address = io;
        f.range = t.range;
        f.type = t.type;
        if (!io) {
            f.signature = engine::typeSignature(*module_, t.type);
        }
        if (!decodeFor(*module_, t, params, f.value, error)) {
            reply(std::move(error));
            return;
        }
        next.push_back(std::move(f));
    } else if (next.size() == forced_.size()) {
        reply(ctl::badParam(key, fmt::format("'{}' is not forced", t.name)));
        return;
    }
    // The list changes now, so the next request sees it; the table reaches the scan thread with
    // the command (if the command cannot be submitted, the list is put back).
    std::swap(forced_, next);
    auto p = std::make_unique<Pending>();
    p->forces = buildForces(*module_, nullptr);
    p->command.kind = engine::ScanCommandKind::SetForces;
    p->command.forces = p->forces.get();
    p->finish = [n = t.name, add, this](Pending& done) {
        return ControlAnswer::result(fmt::format("{{\"name\":{},\"forced\":{},\"count\":{},\"cycle\":{}}}",
                                                 ctl::quoted(n), add ? "true" : "false", forced_.size(),
                                                 done.result.cycle));
    };
    if (!submit(std::move(p), reply)) {
        std::swap(forced_, next);
    }
}

void RuntimeControl::listForced(ControlReplyFn& reply) {
    std::string list;
    for (const Forced& f : forced_) {
        Target t;
        t.range = f.range;
        t.type = f.address ? bytecode::kNone : f.type;
        if (f.address) {
            t.kind = bytecode::addressValueKind(f.range.isBit ? bytecode::AddressWidth::Bit
                                                              : bytecode::addressWidthOfBytes(f.range.size));
        }
        list += fmt::format("{}{{\"name\":{},\"kind\":\"{}\",\"value\":{}}}", list.empty() ? "" : ",",
                            ctl::quoted(f.name), f.address ? "io" : "var", encodeFor(*module_, t, f.value.data()));
    }
    reply(ControlAnswer::result("{\"forced\":[" + list + "]}"));
}

} // namespace takt::agent
