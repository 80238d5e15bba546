#include "takt/compiler/source.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace takt::compiler {

SourceFile::SourceFile(FileId id, std::string path, std::string text)
    : id_(id), path_(std::move(path)), text_(std::move(text)) {
    lineStarts_.push_back(0);
    for (std::uint32_t i = 0; i < text_.size(); ++i) {
        if (text_[i] == '\n') {
            lineStarts_.push_back(i + 1);
        }
    }
}

LineCol SourceFile::lineCol(std::uint32_t offset) const {
    offset = std::min<std::uint32_t>(offset, static_cast<std::uint32_t>(text_.size()));
    auto it = std::upper_bound(lineStarts_.begin(), lineStarts_.end(), offset);
    auto line = static_cast<std::uint32_t>(it - lineStarts_.begin()); // 1-based by construction
    return LineCol{line, offset - lineStarts_[line - 1] + 1};
}

std::string_view SourceFile::lineText(std::uint32_t line) const {
    if (line == 0 || line > lineStarts_.size()) {
        return {};
    }
    std::uint32_t begin = lineStarts_[line - 1];
    std::uint32_t end = line < lineStarts_.size() ? lineStarts_[line] : static_cast<std::uint32_t>(text_.size());
    std::string_view s = std::string_view(text_).substr(begin, end - begin);
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) {
        s.remove_suffix(1);
    }
    return s;
}

FileId SourceManager::add(std::string path, std::string text) {
    auto id = static_cast<FileId>(files_.size());
    files_.push_back(std::make_unique<SourceFile>(id, std::move(path), std::move(text)));
    return id;
}

FileId SourceManager::load(const std::string& path, std::string& error) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        error = std::strerror(errno);
        return kNoFile;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) {
        error = "read error";
        return kNoFile;
    }
    return add(path, ss.str());
}

} // namespace takt::compiler
