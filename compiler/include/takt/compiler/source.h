#pragma once
// Source files and spans. Every AST node and diagnostic carries a Span: a byte range in one
// file. Line/column are computed on demand from a line-start table (1-based, columns in bytes).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace takt::compiler {

using FileId = std::uint32_t;
inline constexpr FileId kNoFile = 0xFFFFFFFFu;

struct Span {
    FileId file = kNoFile;
    std::uint32_t begin = 0; // byte offset of the first character
    std::uint32_t end = 0;   // byte offset one past the last character

    [[nodiscard]] bool valid() const { return file != kNoFile; }
    // The smallest span covering both (same file assumed).
    [[nodiscard]] Span to(const Span& other) const { return Span{file, begin, other.end > end ? other.end : end}; }
};

struct LineCol {
    std::uint32_t line = 1;   // 1-based
    std::uint32_t column = 1; // 1-based, in bytes
};

class SourceFile {
public:
    SourceFile(FileId id, std::string path, std::string text);

    [[nodiscard]] FileId id() const { return id_; }
    [[nodiscard]] const std::string& path() const { return path_; }
    [[nodiscard]] std::string_view text() const { return text_; }
    [[nodiscard]] LineCol lineCol(std::uint32_t offset) const;
    [[nodiscard]] std::string_view lineText(std::uint32_t line) const; // without the newline
    [[nodiscard]] std::uint32_t lineCount() const { return static_cast<std::uint32_t>(lineStarts_.size()); }

private:
    FileId id_;
    std::string path_;
    std::string text_;
    std::vector<std::uint32_t> lineStarts_;
};

// Owns every source of one compilation; FileIds index into it. Files are never removed, so
// references to a SourceFile stay valid for the manager's lifetime.
class SourceManager {
public:
    FileId add(std::string path, std::string text);
    // Reads a file from disk; on failure returns kNoFile and sets `error` to the reason.
    FileId load(const std::string& path, std::string& error);

    [[nodiscard]] const SourceFile& file(FileId id) const { return *files_.at(id); }
    [[nodiscard]] std::size_t size() const { return files_.size(); }
    [[nodiscard]] LineCol lineCol(const Span& span) const { return file(span.file).lineCol(span.begin); }
    [[nodiscard]] LineCol endLineCol(const Span& span) const { return file(span.file).lineCol(span.end); }
    [[nodiscard]] std::string_view text(const Span& span) const {
        return file(span.file).text().substr(span.begin, span.end - span.begin);
    }

private:
    std::vector<std::unique_ptr<SourceFile>> files_;
};

} // namespace takt::compiler
