#include "lsp/lsp_text.h"

#include <algorithm>

namespace takt::agent::lsp {

namespace {

// UTF-16 code units of the UTF-8 sequence starting with `lead`: two for the 4-byte forms.
std::uint32_t unitsOf(unsigned char lead) {
    return lead >= 0xF0 ? 2 : 1;
}
std::size_t bytesOf(unsigned char lead) {
    return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
}

std::uint32_t unitsIn(std::string_view s) {
    std::uint32_t units = 0;
    for (std::size_t i = 0; i < s.size();) {
        const auto lead = static_cast<unsigned char>(s[i]);
        if ((lead & 0xC0) == 0x80) { // a stray continuation byte counts as one unit
            ++units;
            ++i;
            continue;
        }
        units += unitsOf(lead);
        i += bytesOf(lead);
    }
    return units;
}

int hexValue(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

} // namespace

std::size_t offsetOf(std::string_view text, Position pos) {
    std::size_t at = 0;
    for (std::uint32_t line = 0; line < pos.line; ++line) {
        const std::size_t nl = text.find('\n', at);
        if (nl == std::string_view::npos) {
            return text.size();
        }
        at = nl + 1;
    }
    std::uint32_t units = 0;
    while (at < text.size() && text[at] != '\n' && text[at] != '\r' && units < pos.character) {
        const auto lead = static_cast<unsigned char>(text[at]);
        units += (lead & 0xC0) == 0x80 ? 1 : unitsOf(lead);
        at += (lead & 0xC0) == 0x80 ? 1 : std::min(bytesOf(lead), text.size() - at);
    }
    return at;
}

Position positionOf(std::string_view text, std::size_t offset) {
    offset = std::min(offset, text.size());
    const std::string_view before = text.substr(0, offset);
    const auto line = static_cast<std::uint32_t>(std::count(before.begin(), before.end(), '\n'));
    const std::size_t start = before.rfind('\n');
    return {line, unitsIn(before.substr(start == std::string_view::npos ? 0 : start + 1))};
}

Position positionOf(const compiler::SourceFile& file, std::uint32_t offset) {
    const compiler::LineCol lc = file.lineCol(std::min<std::uint32_t>(offset, file.text().size()));
    const std::string_view line = file.lineText(lc.line);
    return {lc.line - 1, unitsIn(line.substr(0, std::min<std::size_t>(lc.column - 1, line.size())))};
}

bool pathFromUri(std::string_view uri, std::filesystem::path& out) {
    constexpr std::string_view kScheme = "file://";
    if (!uri.starts_with(kScheme)) {
        return false;
    }
    uri.remove_prefix(kScheme.size());
    const std::size_t slash = uri.find('/'); // skip an authority ("localhost")
    if (slash == std::string_view::npos) {
        return false;
    }
    uri.remove_prefix(slash);
    std::string path;
    for (std::size_t i = 0; i < uri.size(); ++i) {
        if (uri[i] == '%' && i + 2 < uri.size() && hexValue(uri[i + 1]) >= 0 && hexValue(uri[i + 2]) >= 0) {
            path.push_back(static_cast<char>(hexValue(uri[i + 1]) * 16 + hexValue(uri[i + 2])));
            i += 2;
        } else {
            path.push_back(uri[i]);
        }
    }
    out = std::filesystem::path(path).lexically_normal();
    return true;
}

std::string uriFromPath(const std::filesystem::path& path) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string uri = "file://";
    for (const char c : path.generic_string()) {
        const auto u = static_cast<unsigned char>(c);
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            std::string_view("/-_.~").find(c) != std::string_view::npos) {
            uri.push_back(c);
        } else {
            uri.push_back('%');
            uri.push_back(kHex[u >> 4]);
            uri.push_back(kHex[u & 15]);
        }
    }
    return uri;
}

void Documents::open(const std::filesystem::path& path, std::string text, std::int64_t version) {
    docs_[path] = Document{std::move(text), version};
}

void Documents::close(const std::filesystem::path& path) {
    docs_.erase(path);
}

bool Documents::change(const std::filesystem::path& path, bool whole, Position from, Position to, std::string_view text,
                       std::int64_t version) {
    const auto it = docs_.find(path);
    if (it == docs_.end()) {
        return false;
    }
    Document& doc = it->second;
    if (whole) {
        doc.text.assign(text);
    } else {
        const std::size_t begin = offsetOf(doc.text, from);
        const std::size_t end = std::max(begin, offsetOf(doc.text, to));
        doc.text.replace(begin, end - begin, text);
    }
    doc.version = version;
    return true;
}

const Documents::Document* Documents::find(const std::filesystem::path& path) const {
    const auto it = docs_.find(path);
    return it == docs_.end() ? nullptr : &it->second;
}

} // namespace takt::agent::lsp
