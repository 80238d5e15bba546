#pragma once
// The deterministic harness (`takt harness`, seed 001, PROTOCOLS.md): NDJSON requests on one
// line each, one response line each, a virtual clock, and the engine underneath. The same
// object serves the agent API's harness.* methods through handle().
#include <cstdint>
#include <functional>
#include <istream>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "takt/agent/rpc_limits.h"
#include "takt/agent/rpc_method.h"
#include "takt/bytecode/module.h"
#include "takt/compiler/project.h"
#include "takt/engine/engine.h"
#include "takt/engine/vm_runner.h"

namespace takt::agent {

// The result of compiling in-memory sources into a runnable Module.
struct CompileOutcome {
    enum class Status : std::uint8_t { Ok, CompileError, Failure } status = Status::Failure;
    std::shared_ptr<const bytecode::Module> module;
    std::string hash;            // program hash (hex SHA-256), may be empty
    std::string diagnosticsJson; // CompileError: JSON array in the compile_error shape
    std::string message;         // Failure: why
    compiler::AddressMode addressMode = compiler::AddressMode::Word;
};

// `build`: the [build] options the sources compile with (overflow, address mode, dialect).
using CompileFn =
    std::function<CompileOutcome(const std::vector<compiler::SourceText>&, const compiler::BuildOptions& build)>;
using RunnerFactory = std::function<std::unique_ptr<engine::CodeRunner>()>;

struct HarnessDeps {
    CompileFn compile;
    RunnerFactory makeRunner;
};

// The project's compiler and the VM.
// `execution`: the tier program bodies run on (--execution; engine/vm_runner.h).
[[nodiscard]] HarnessDeps defaultHarnessDeps(engine::Execution execution = engine::Execution::Interpreter);

// Error kinds (seed 001).
enum class ErrorKind : std::uint8_t {
    InvalidRequest,
    InvalidArgument,
    NotLoaded,
    CompileError,
    RuntimeError,
    RuntimeCycleError,
    RunUntilTimeout
};
[[nodiscard]] std::string_view errorKindName(ErrorKind kind);

// A command's outcome: data on success, or an error with kind, message and data.
struct HarnessResult {
    bool ok = true;
    ErrorKind kind = ErrorKind::InvalidRequest;
    std::string message;
    rapidjson::Document payload; // data (success) or error data (null when none)
};

// How `load` compiles and starts a program (optional members of load; PROTOCOLS.md defaults).
struct LoadOptions {
    compiler::BuildOptions build; // overflow "trap" | "wrap" and the rest of [build]
    bool initialCycle = true;     // false: no cycle yet, so the first cycle sees inputs set after load
};

class Harness {
public:
    explicit Harness(HarnessDeps deps);
    ~Harness();
    Harness(const Harness&) = delete;
    Harness& operator=(const Harness&) = delete;

    // Executes one command given as a parsed request object ({"cmd":…, params…}).
    [[nodiscard]] HarnessResult handle(const rapidjson::Value& request);
    // Executes one command with its parameters in `params` (other members are ignored): the
    // per-command entry the agent API's harness.* methods share with the NDJSON protocol.
    [[nodiscard]] HarnessResult handle(std::string_view cmd, const rapidjson::Value& params);
    // load / reload from sources already read (the agent API reads them from the workspace).
    // reload: an online change (warm: warm-restart semantics); not_loaded without a program.
    // `overflow` in `params` ("trap" | "wrap"), when given, overrides options.build.overflow;
    // `initial_cycle` (boolean) overrides options.initialCycle.
    [[nodiscard]] HarnessResult load(const std::vector<compiler::SourceText>& sources, LoadOptions options,
                                     const rapidjson::Value& params);
    // `build`: the options to compile with (a project's); none: those of the last load. An
    // `overflow` in `params` overrides either.
    [[nodiscard]] HarnessResult reload(const std::vector<compiler::SourceText>& sources, bool warm,
                                       const std::optional<compiler::BuildOptions>& build,
                                       const rapidjson::Value& params);
    [[nodiscard]] bool loaded() const;
    // One NDJSON line in, one response line out (without the newline); a blank line is
    // invalid_request.
    [[nodiscard]] std::string handleLine(std::string_view line);
    // Serves until end of input. Lines longer than kMaxLineBytes get invalid_request and the
    // rest of the line is skipped; blank lines get invalid_request too.
    void serve(std::istream& in, std::ostream& out);

    [[nodiscard]] static std::string render(const HarnessResult& result);

    struct CommandFacts; // a command's name, summary and schemas (the table without handlers)
    // The command table as facts, for docs/harness.md and the schema tests (harness_support.h).
    [[nodiscard]] static std::span<const CommandFacts> commandFacts();

private:
    struct State;
    struct Command;
    // The commands, one table (name, summary, handler).
    [[nodiscard]] static std::span<const MethodSpec<Command>> commands();
    std::unique_ptr<State> state_;
};

} // namespace takt::agent
