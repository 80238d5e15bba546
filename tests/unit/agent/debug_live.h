#pragma once
// A live runtime for the debug.* tests of the control endpoint: a compiled ST program on a real
// scan loop (interpreted or native), its RuntimeControl called directly as the server calls it.
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../engine/scan_test_support.h"
#include "rpc/method_table.h"
#include "rpc/rpc_json.h"
#include "takt/agent/control_runtime.h"
#include "takt/compiler/compile_program.h"
#include "takt/compiler/diagnostics.h"
#include "takt/engine/vm_runner.h"

namespace takt::agent::debug_test {

constexpr std::int64_t kMs = 1'000'000;

inline compiler::CompiledProgram compileText(const char* text) {
    compiler::Project project = compiler::checkSources({{"src/main.st", text}});
    compiler::CompiledProgram compiled = compiler::compileProgram(project);
    EXPECT_TRUE(compiled.ok()) << compiler::renderHuman(compiled.diagnostics, *project.sources) << compiled.failure;
    return compiled;
}

struct Live {
    explicit Live(const char* program, bool debugEnabled = true,
                  engine::Execution execution = engine::Execution::Interpreter, bool safeOutputsWhileHalted = false) {
        auto base = std::make_unique<engine::VmRunner>(0, execution);
        runner = base.get();
        engine = std::make_unique<engine::Engine>(std::move(base), clock);
        const compiler::CompiledProgram p = compileText(program);
        engine::FaultReport f;
        EXPECT_TRUE(engine->load(std::make_unique<engine::LoadedProgram>(p.module, p.hash), f));
        engine::ScanOptions o;
        o.periodNs = 2 * kMs;
        o.watchdog.enabled = true; // a halted task's watchdog does not count
        o.watchdog.timeoutMs = 100;
        o.safeOutputsWhileHalted = safeOutputsWhileHalted;
        loop = std::make_unique<engine::ScanLoop>(*engine, clock, io, o);
        std::string error;
        EXPECT_TRUE(loop->start(error)) << error;
        RuntimeControlOptions options;
        options.debugEnabled = debugEnabled;
        options.execution = [r = runner] { return r->executionStatus(); };
        control = std::make_unique<RuntimeControl>(*loop, *engine, options);
    }
    ~Live() {
        // The sessions' ends release the debugger (no task stays halted); the loop stops before the
        // control goes, as in takt run: the scan thread uses the force table the control owns.
        for (std::uint64_t session = 1; session <= 2; ++session) {
            control->sessionClosed(session);
        }
        loop->stop();
        control.reset();
    }

    // Calls a method as session `session` does (params checked against the method's schema
    // first) and polls until it is answered.
    ControlAnswer call(const std::string& method, const std::string& params = "{}", std::uint64_t session = 1) {
        rapidjson::Document doc;
        doc.Parse(params.c_str());
        std::optional<ControlAnswer> answer;
        const ControlMethod* m = rpc::findMethod(control->methods(), method);
        rpc::ParamsSchemas schemas;
        rpc::Error e;
        if (m == nullptr) {
            answer = ControlAnswer::error(-32601, "not listed");
        } else if (schemas.add(rpc::factsOf(*m)); !schemas.check(method, doc, e)) {
            answer = ControlAnswer::error(e.code, e.message, e.data);
        } else {
            control->setCallerSession(session);
            m->handler(*control, m->name, doc, [&answer](ControlAnswer a) { answer = std::move(a); });
            control->setCallerSession(0);
        }
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!answer && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::microseconds(500));
            pollEvents();
        }
        EXPECT_TRUE(answer.has_value()) << method << " was not answered";
        return answer.value_or(ControlAnswer::error(0, "no answer"));
    }

    rapidjson::Document result(const std::string& method, const std::string& params = "{}", std::uint64_t session = 1) {
        const ControlAnswer a = call(method, params, session);
        EXPECT_TRUE(a.ok) << method << ": " << a.code << " " << a.message;
        rapidjson::Document d;
        d.Parse(a.ok ? a.json.c_str() : "{}");
        return d;
    }

    void pollEvents() {
        std::vector<std::string> ev;
        control->poll(ev);
        for (const std::string& e : ev) {
            rapidjson::Document d;
            d.Parse(e.c_str());
            if (d.IsObject() && d.HasMember("type") && std::string_view(d["type"].GetString()) == "debug_stopped") {
                stops.push_back(e);
            }
            if (d.IsObject() && d.HasMember("type") && std::string_view(d["type"].GetString()) == "debug_output") {
                outputs.push_back(d["output"].GetString());
            }
        }
    }

    // The next debug_stopped event (polled within 10 s), parsed; an empty object when none came.
    rapidjson::Document nextStop() {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (stops.size() <= stopsTaken && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            pollEvents();
        }
        rapidjson::Document d;
        d.Parse(stops.size() > stopsTaken ? stops[stopsTaken++].c_str() : "{}");
        EXPECT_TRUE(d.HasMember("line")) << "no debug_stopped event";
        return d;
    }

    std::int64_t readInt(const std::string& name) {
        rapidjson::Document d = result("var.read", "{\"names\":[\"" + name + "\"]}");
        return d.HasMember("values") ? d["values"][name.c_str()]["value"].GetInt64() : -1;
    }

    // The variable `name` of a debug.variables answer, as its value text ("" when not listed).
    static std::string valueOf(const rapidjson::Document& d, const char* name) {
        if (!d.HasMember("variables")) {
            return {};
        }
        for (const rapidjson::Value& v : d["variables"].GetArray()) {
            if (std::string_view(v["name"].GetString()) == name) {
                return v["value"].GetString();
            }
        }
        return {};
    }

    engine::CycleClock clock;
    engine::VmRunner* runner = nullptr; // the base cycle's, owned by `engine`
    takt::testing::FakeIo io;
    std::unique_ptr<engine::Engine> engine;
    std::unique_ptr<engine::ScanLoop> loop;
    std::unique_ptr<RuntimeControl> control;
    std::vector<std::string> stops;
    std::size_t stopsTaken = 0;
    std::vector<std::string> outputs; // debug_output events' texts
};

inline std::string lines(int line) {
    return R"({"file":"/home/me/project/src/main.st","lines":[)" + std::to_string(line) + "]}";
}

// The value of `name` (read or written) on `line` of a debug.flowValues answer (its typed JSON's
// number; -1 when the line has none).
inline std::int64_t flowValue(const rapidjson::Document& d, int line, const char* name, const char* access) {
    for (const rapidjson::Value& l : d["lines"].GetArray()) {
        for (const rapidjson::Value& v : l["values"].GetArray()) {
            if (l["line"].GetInt() == line && std::string(v["name"].GetString()) == name &&
                std::string(v["access"].GetString()) == access) {
                EXPECT_STREQ(v["type"].GetString(), "DINT");
                return v["value"]["value"].GetInt64();
            }
        }
    }
    ADD_FAILURE() << "line " << line << " has no " << access << " of " << name << ": " << rpc::toJson(d);
    return -1;
}

inline rapidjson::Document flowRecorded(Live& live) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    rapidjson::Document d;
    while (std::chrono::steady_clock::now() < end) {
        d = live.result("debug.flowValues");
        if (d.HasMember("run") && d["run"].GetUint64() > 0) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return d;
}

} // namespace takt::agent::debug_test
