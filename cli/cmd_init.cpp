// `takt init DIR [--template blank|motor|modbus|gpio]`: a new project that runs and tests at once
// — runtime.toml and io.toml with comments, src/ with a program, its CONFIGURATION and a
// TEST_PROGRAM, a .gitignore for what takt writes. An existing non-empty DIR is left alone.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <unistd.h>

#include "commands.h"
#include "init_templates.h"

namespace takt::cli {

namespace {

namespace fs = std::filesystem;

struct InitOptions {
    std::string dir;
    std::string templateName = "blank";
};

void replaceAll(std::string& text, std::string_view from, const std::string& to) {
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
        text.replace(at, from.size(), to);
    }
}

// The project's control socket: under its .takt/ while the path fits a socket address (108
// bytes), else in /tmp under the project's name and the user.
std::string controlEndpoint(const fs::path& dir) {
    const std::string inProject = (dir / ".takt" / "control.sock").string();
    if (inProject.size() < 100) {
        return "unix://" + inProject;
    }
    return fmt::format("unix:///tmp/takt-{}-{}.sock", dir.filename().string(), getuid());
}

// A resource name from the directory's: letters, digits and '_' only.
std::string resourceName(const fs::path& dir) {
    std::string name;
    for (const char c : dir.filename().string()) {
        name += std::isalnum(static_cast<unsigned char>(c)) != 0 ? c : '_';
    }
    return name.empty() ? std::string("plc") : name;
}

int runInit(const InitOptions& o) {
    const ProjectTemplate* chosen = nullptr;
    std::string names;
    for (const ProjectTemplate& t : projectTemplates()) {
        names += fmt::format("{}{}", names.empty() ? "" : ", ", t.name);
        if (t.name == o.templateName) {
            chosen = &t;
        }
    }
    if (chosen == nullptr) {
        std::fprintf(stderr, "takt init: --template '%s': expected one of %s\n", o.templateName.c_str(), names.c_str());
        return kExitInvalidProject;
    }
    std::error_code ec;
    const fs::path dir = fs::absolute(o.dir, ec).lexically_normal();
    if (fs::exists(dir, ec) && !(fs::is_directory(dir, ec) && fs::is_empty(dir, ec))) {
        std::fprintf(stderr, "takt init: %s exists and is not an empty directory; nothing was written\n", dir.c_str());
        return kExitInvalidProject;
    }
    const std::string endpoint = controlEndpoint(dir.filename().empty() ? dir.parent_path() : dir);
    const auto write = [&](const TemplateFile& f) {
        const fs::path path = dir / f.path;
        fs::create_directories(path.parent_path(), ec);
        std::string text(f.text);
        replaceAll(text, "@ENDPOINT@", endpoint);
        replaceAll(text, "@NAME@", resourceName(dir));
        std::ofstream out(path, std::ios::binary);
        out << text;
        out.close();
        if (!out) {
            std::fprintf(stderr, "takt init: cannot write %s\n", path.c_str());
            return false;
        }
        return true;
    };
    for (const TemplateFile& f : commonTemplateFiles()) {
        if (!write(f)) {
            return kExitInternal;
        }
    }
    for (const TemplateFile& f : chosen->files) {
        if (!write(f)) {
            return kExitInternal;
        }
    }
    std::printf("created %s from the %s template: %s\n", dir.c_str(), std::string(chosen->name).c_str(),
                std::string(chosen->summary).c_str());
    std::printf("next:\n  cd %s\n  takt test              # the TEST_PROGRAMs in src/tests.st\n"
                "  takt run               # Ctrl-C stops it; in a second shell:\n"
                "  takt status            # state, cycle timing, drivers\n"
                "  takt vars              # every variable, its type and address\n"
                "  takt watch Main.<var>  # live values\n",
                dir.c_str());
    return kExitOk;
}

} // namespace

void registerInit(CLI::App& app, int& exitCode) {
    auto options = std::make_shared<InitOptions>();
    CLI::App* cmd = app.add_subcommand("init", "Create a new project that runs and tests at once");
    cmd->add_option("dir", options->dir, "Directory of the new project (created; must not hold anything)")->required();
    cmd->add_option("--template", options->templateName, "blank (default), motor, modbus or gpio");
    cmd->callback([options, &exitCode] { exitCode = runInit(*options); });
}

} // namespace takt::cli
