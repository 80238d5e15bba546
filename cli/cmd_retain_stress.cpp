// `takt retain-stress --path P` (hidden): the retain writer saving as fast as it can, for the
// kill -9 test of retain crash safety. A program of --vars RETAIN DINTs is restored from P (all
// variables must hold the same value, else exit 20), then every variable is set to the next
// counter value each iteration and handed to a RetainWriter that saves every --interval-ms.
// Prints "loaded <counter> <sequence>" once restored; runs until killed or --seconds passed.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "commands.h"
#include "takt/engine/retain.h"

namespace takt::cli {

namespace {

struct RetainStressOptions {
    std::string path;
    std::uint32_t vars = 1024;
    std::int64_t intervalMs = 1;
    double seconds = 30.0;
};

std::shared_ptr<const bytecode::Module> stressModule(std::uint32_t vars) {
    auto m = std::make_shared<bytecode::Module>();
    bytecode::TypeDesc dint;
    dint.kind = bytecode::ValueKind::DInt;
    dint.name = "DINT";
    dint.signature = "DINT";
    dint.size = 4;
    dint.align = 4;
    m->types.push_back(dint);
    for (std::uint32_t i = 0; i < vars; ++i) {
        m->variables.push_back(
            bytecode::VarEntry{"v" + std::to_string(i), 0, 4 * i, 4, bytecode::VarKind::Global, true, false});
    }
    m->globalSize = 4 * vars;
    m->initImage.assign(m->globalSize, 0);
    return m;
}

int runRetainStress(const RetainStressOptions& options) {
    engine::LoadedProgram program(stressModule(options.vars), "");
    program.resetToInitialImage();
    engine::RetainStore store(options.path);
    const engine::RetainLoadResult loaded = store.load();
    std::int32_t counter = 0;
    if (loaded.found) {
        (void)engine::applyRetainImage(loaded.image, program);
        std::memcpy(&counter, program.image(), sizeof counter);
        for (std::uint32_t i = 1; i < options.vars; ++i) {
            std::int32_t v = 0;
            std::memcpy(&v, program.image() + 4 * i, sizeof v);
            if (v != counter) {
                std::fprintf(stderr, "takt retain-stress: mixed image: v0 = %d, v%u = %d\n", counter, i, v);
                return kExitInternal;
            }
        }
    }
    std::printf("loaded %d %llu\n", counter, static_cast<unsigned long long>(loaded.image.sequence));
    std::fflush(stdout);

    engine::RetainWriter writer(store, engine::RetainLayout(program.module()), options.intervalMs);
    writer.start();
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(options.seconds);
    while (std::chrono::steady_clock::now() < end) {
        ++counter;
        for (std::uint32_t i = 0; i < options.vars; ++i) {
            std::memcpy(program.image() + 4 * i, &counter, sizeof counter);
        }
        writer.submit(program.image());
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    writer.stop();
    const engine::RetainWriter::Stats stats = writer.stats();
    std::printf("saved %llu failed %llu\n", static_cast<unsigned long long>(stats.saves),
                static_cast<unsigned long long>(stats.failures));
    return stats.failures == 0 ? kExitOk : kExitInternal;
}

} // namespace

void registerRetainStress(CLI::App& app, int& exitCode) {
    auto options = std::make_shared<RetainStressOptions>();
    CLI::App* cmd = app.add_subcommand("retain-stress", "Save retain images in a loop (crash-safety tests)");
    cmd->group(""); // not for users: hidden from --help
    cmd->add_option("--path", options->path, "Retain path (slots PATH.a / PATH.b)")->required();
    cmd->add_option("--vars", options->vars, "RETAIN DINT variables")->check(CLI::Range(1U, 1U << 20));
    cmd->add_option("--interval-ms", options->intervalMs, "Save interval")->check(CLI::Range(1, 60'000));
    cmd->add_option("--seconds", options->seconds, "Stop after this long")->check(CLI::Range(0.0, 3600.0));
    cmd->callback([options, &exitCode] { exitCode = runRetainStress(*options); });
}

} // namespace takt::cli
