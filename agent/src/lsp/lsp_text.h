#pragma once
// Text positions and documents of the language server. LSP addresses text by line and UTF-16
// code unit (the protocol's default position encoding); the compiler by byte offset. Every
// conversion between the two lives here, so a non-ASCII comment cannot shift a range elsewhere.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include "takt/compiler/source.h"

namespace takt::agent::lsp {

struct Position {
    std::uint32_t line = 0;      // 0-based
    std::uint32_t character = 0; // UTF-16 code units from the line start
};

// The byte offset of `pos` in `text`: a line past the end is the end of the text, a character
// past the end of its line is the line's end (as the protocol asks).
[[nodiscard]] std::size_t offsetOf(std::string_view text, Position pos);
// The position of byte `offset` of `text`.
[[nodiscard]] Position positionOf(std::string_view text, std::size_t offset);
// The same for a compiler source file, through its line table.
[[nodiscard]] Position positionOf(const compiler::SourceFile& file, std::uint32_t offset);

// file:// URIs: percent-decoded to a path, and back with the characters a URI reserves encoded.
// False for another scheme.
[[nodiscard]] bool pathFromUri(std::string_view uri, std::filesystem::path& out);
[[nodiscard]] std::string uriFromPath(const std::filesystem::path& path);

// The documents the editor has open: their text as the editor holds it overrides the disk.
class Documents {
public:
    struct Document {
        std::string text;
        std::int64_t version = 0;
    };
    void open(const std::filesystem::path& path, std::string text, std::int64_t version);
    void close(const std::filesystem::path& path);
    // Replaces the range [from, to) (LSP positions) with `text`, or the whole text when `whole`.
    // False when the document is not open.
    [[nodiscard]] bool change(const std::filesystem::path& path, bool whole, Position from, Position to,
                              std::string_view text, std::int64_t version);
    [[nodiscard]] const Document* find(const std::filesystem::path& path) const;
    [[nodiscard]] const std::map<std::filesystem::path, Document>& all() const { return docs_; }

private:
    std::map<std::filesystem::path, Document> docs_;
};

} // namespace takt::agent::lsp
