#pragma once
// The project templates of `takt init`: each a set of files (path relative to the new project,
// text). "@ENDPOINT@" in a text is replaced by the project's control socket.
#include <span>
#include <string_view>

namespace takt::cli {

struct TemplateFile {
    std::string_view path;
    std::string_view text;
};

struct ProjectTemplate {
    std::string_view name;
    std::string_view summary;
    std::span<const TemplateFile> files; // besides runtime.toml and .gitignore, which all share
};

[[nodiscard]] std::span<const ProjectTemplate> projectTemplates();
// runtime.toml and .gitignore of every template.
[[nodiscard]] std::span<const TemplateFile> commonTemplateFiles();

} // namespace takt::cli
