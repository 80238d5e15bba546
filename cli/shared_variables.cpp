// The listing of `takt check --shared-variables` (docs/language-notes.md, "Data shared between
// tasks"): the pairs come from compiler::sharedVariables, the computation W0016 uses.
#include "shared_variables.h"

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "takt/compiler/sema/model.h"

namespace takt::cli {

namespace {

std::string variableName(const compiler::TaskVariable& v) {
    return v.instance != nullptr ? v.instance->name + "." + v.variable->name : v.variable->name;
}

std::string typeName(const compiler::TaskVariable& v) {
    return v.variable->type != nullptr ? v.variable->type->name() : "?";
}

// "read", "write" or "read, write".
std::string access(const compiler::TaskVariableUse& u) {
    if (u.read && u.written) {
        return "read, write";
    }
    return u.written ? "write" : "read";
}

// Whether the pair's use of the variable draws W0016.
bool warned(const compiler::SharedVariable& s) {
    return compiler::tornAccess(s).has_value();
}

} // namespace

std::string renderSharedVariables(const compiler::SemanticModel& model) {
    const std::vector<compiler::SharedTasks> pairs = compiler::sharedVariables(model.taskData);
    std::string out;
    if (model.taskData.size() < 2) {
        return "fewer than two tasks: no variable is shared between tasks\n";
    }
    if (pairs.empty()) {
        return "no two tasks share a variable\n";
    }
    for (const compiler::SharedTasks& p : pairs) {
        const std::string& a = p.first->task->name;
        const std::string& b = p.second->task->name;
        out += fmt::format("tasks {} and {} share {} variable{}:\n", a, b, p.variables.size(),
                           p.variables.size() == 1 ? "" : "s");
        for (const compiler::SharedVariable& s : p.variables) {
            out += fmt::format("  {} : {}  {} {}, {} {}{}\n", variableName(s.var), typeName(s.var), a, access(*s.first),
                               b, access(*s.second), warned(s) ? "  (not atomic: W0016)" : "");
        }
    }
    return out;
}

std::string renderSharedVariablesJson(const compiler::SemanticModel& model) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    auto use = [&](const compiler::TaskVariableUse& u) {
        w.StartObject();
        w.Key("read");
        w.Bool(u.read);
        w.Key("write");
        w.Bool(u.written);
        w.EndObject();
    };
    w.StartObject();
    w.Key("tasks");
    w.StartArray();
    for (const compiler::TaskData& t : model.taskData) {
        w.String(t.task->name.c_str());
    }
    w.EndArray();
    w.Key("shared");
    w.StartArray();
    for (const compiler::SharedTasks& p : compiler::sharedVariables(model.taskData)) {
        w.StartObject();
        w.Key("tasks");
        w.StartArray();
        w.String(p.first->task->name.c_str());
        w.String(p.second->task->name.c_str());
        w.EndArray();
        w.Key("variables");
        w.StartArray();
        for (const compiler::SharedVariable& s : p.variables) {
            w.StartObject();
            w.Key("name");
            w.String(variableName(s.var).c_str());
            w.Key("type");
            w.String(typeName(s.var).c_str());
            w.Key("atomic");
            w.Bool(compiler::sharedAtomically(s.var.variable->type));
            w.Key("first");
            use(*s.first);
            w.Key("second");
            use(*s.second);
            w.Key("warning");
            w.Bool(warned(s));
            w.EndObject();
        }
        w.EndArray();
        w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

} // namespace takt::cli
