#include "driver_support.h"

#include <cctype>
#include <charconv>
#include <ctime>

#include <fmt/format.h>

#include "takt/bytecode/address.h"

namespace takt::io::detail {

namespace {
// Addresses past 16 MiB of one area are refused: no driver image is that large.
constexpr std::uint64_t kMaxImageByte = 0xFFFFFFU;
} // namespace

bool parseImageAddress(std::string_view text, bool byteAddressing, ImageAddress& out, std::string& why) {
    // One parser and one address-mode rule for every layer (takt/bytecode/address.h).
    bytecode::DirectAddress a;
    if (!bytecode::parseDirectAddress(text, a, why)) {
        return false;
    }
    const std::uint64_t offset = a.byteOffset(byteAddressing);
    if (offset > kMaxImageByte) {
        why = fmt::format("'{}' lies beyond the largest process image ({} bytes)", text, kMaxImageByte + 1);
        return false;
    }
    static constexpr char kLetters[] = {'X', 'B', 'W', 'D', 'L'};
    out.area = static_cast<Area>(a.area); // the same order: Input, Output, Memory
    out.sizeLetter = kLetters[static_cast<int>(a.width)];
    out.byteOffset = static_cast<std::uint32_t>(offset);
    out.bit = a.bit;
    out.size = a.isBit() ? 0 : a.bytes();
    return true;
}

std::string_view areaName(Area a) {
    switch (a) {
    case Area::Input: return "%I";
    case Area::Output: return "%Q";
    case Area::Memory: return "%M";
    }
    return "%?";
}

bool ParamReader::fail(std::string_view key, std::string_view message) {
    if (ok_) {
        error_ = fmt::format("{}.{}: {}", prefix_, key, message);
        ok_ = false;
    }
    return false;
}

bool ParamReader::adopt(const std::string& nestedError) {
    if (ok_) {
        error_ = nestedError;
        ok_ = false;
    }
    return false;
}

bool ParamReader::onlyKeys(std::span<const std::string_view> known, std::string_view what) {
    for (const auto& [key, node] : table_) {
        bool found = false;
        for (std::string_view k : known) {
            found = found || k == key.str();
        }
        if (!found) {
            std::string list;
            for (std::string_view k : known) {
                list += list.empty() ? "" : ", ";
                list += k;
            }
            return fail(key.str(), fmt::format("unknown parameter of {} (known: {})", what, list));
        }
    }
    return ok_;
}

std::optional<std::string> ParamReader::string(std::string_view key, bool required) {
    const toml::node* n = table_.get(key);
    if (!ok_) {
        return std::nullopt;
    }
    if (n == nullptr) {
        if (required) {
            fail(key, "missing (required)");
        }
        return std::nullopt;
    }
    if (!n->is_string()) {
        fail(key, "expected a string");
        return std::nullopt;
    }
    return std::string(*n->value<std::string_view>());
}

std::optional<std::int64_t> ParamReader::integer(std::string_view key, std::int64_t min, std::int64_t max) {
    const toml::node* n = table_.get(key);
    if (!ok_ || n == nullptr) {
        return std::nullopt;
    }
    const auto v = n->value<std::int64_t>();
    if (!n->is_integer() || !v || *v < min || *v > max) {
        fail(key, fmt::format("expected an integer {}..{}", min, max));
        return std::nullopt;
    }
    return *v;
}

std::optional<bool> ParamReader::boolean(std::string_view key) {
    const toml::node* n = table_.get(key);
    if (!ok_ || n == nullptr) {
        return std::nullopt;
    }
    if (!n->is_boolean()) {
        fail(key, "expected true or false");
        return std::nullopt;
    }
    return *n->value<bool>();
}

const toml::array* ParamReader::tableArray(std::string_view key) {
    const toml::node* n = table_.get(key);
    if (!ok_ || n == nullptr) {
        return nullptr;
    }
    const toml::array* a = n->as_array();
    if (a == nullptr) {
        fail(key, "expected an array of tables");
        return nullptr;
    }
    for (std::size_t i = 0; i < a->size(); ++i) {
        if (!(*a)[i].is_table()) {
            fail(fmt::format("{}[{}]", key, i), "expected a table ({ … })");
            return nullptr;
        }
    }
    return a;
}

const toml::table* ParamReader::table(std::string_view key) {
    const toml::node* n = table_.get(key);
    if (!ok_ || n == nullptr) {
        return nullptr;
    }
    if (!n->is_table()) {
        fail(key, "expected a table ({ … })");
        return nullptr;
    }
    return n->as_table();
}

std::string elementPrefix(const ParamReader& parent, std::string_view key, std::size_t index) {
    return fmt::format("{}.{}[{}]", parent.prefix(), key, index);
}

bool parseOnError(ParamReader& params, OnError& out) {
    const auto v = params.string("on_error");
    if (!v) {
        return params.ok();
    }
    if (*v == "fault") {
        out = OnError::Fault;
    } else if (*v == "warn") {
        out = OnError::Warn;
    } else if (*v == "ignore") {
        out = OnError::Ignore;
    } else {
        return params.fail("on_error", fmt::format("unknown policy '{}' (expected fault, warn or ignore)", *v));
    }
    return true;
}

bool parseHostPort(std::string_view text, std::optional<std::uint16_t> defaultPort, HostPort& out, std::string& why) {
    std::string_view host = text;
    std::string_view port;
    if (!text.empty() && text.front() == '[') {
        const auto close = text.find(']');
        if (close == std::string_view::npos) {
            why = fmt::format("'{}': unterminated [IPv6] address", text);
            return false;
        }
        host = text.substr(1, close - 1);
        const std::string_view rest = text.substr(close + 1);
        if (!rest.empty()) {
            if (rest.front() != ':') {
                why = fmt::format("'{}': expected ':' after ']'", text);
                return false;
            }
            port = rest.substr(1);
        }
    } else if (const auto colon = text.rfind(':'); colon != std::string_view::npos) {
        host = text.substr(0, colon);
        port = text.substr(colon + 1);
        if (port.empty()) {
            why = fmt::format("'{}': empty port", text);
            return false;
        }
    }
    if (host.empty()) {
        why = fmt::format("'{}': expected host:port", text);
        return false;
    }
    if (port.empty()) {
        if (!defaultPort) {
            why = fmt::format("'{}': expected host:port", text);
            return false;
        }
        out.port = *defaultPort;
    } else {
        unsigned v = 0;
        auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), v);
        if (ec != std::errc{} || p != port.data() + port.size() || v == 0 || v > 65535) {
            why = fmt::format("'{}': port must be 1..65535", text);
            return false;
        }
        out.port = static_cast<std::uint16_t>(v);
    }
    out.host = std::string(host);
    return true;
}

void HealthCell::set(Health h, std::string reason, IoError code, bool inputsBad) {
    const std::lock_guard lock(mutex_);
    status_.health = h;
    status_.reason = h == Health::Ok ? std::string() : std::move(reason);
    status_.code = h == Health::Ok ? IoError::None : (code == IoError::None ? IoError::Other : code);
    status_.inputsBad = h != Health::Ok && inputsBad;
}

HealthStatus HealthCell::get() const {
    const std::lock_guard lock(mutex_);
    return status_;
}

std::span<std::uint8_t> areaSpan(const ImageView& image, Area area) {
    switch (area) {
    case Area::Input: return image.inputs;
    case Area::Output: return image.outputs;
    case Area::Memory: return image.memory;
    }
    return {};
}

std::int64_t monotonicNs() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

int findOverlap(const std::vector<BitExtent>& all, const BitExtent& e) {
    for (std::size_t i = 0; i < all.size(); ++i) {
        if (all[i].area == e.area && all[i].first < e.last && e.first < all[i].last) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

std::vector<ByteRange> byteRanges(const std::vector<BitExtent>& extents, Access access) {
    std::vector<ByteRange> out;
    out.reserve(extents.size());
    for (const BitExtent& e : extents) {
        const std::uint64_t first = e.first / 8;
        const std::uint64_t last = (e.last + 7) / 8;
        out.push_back({e.area, static_cast<std::uint32_t>(first), static_cast<std::uint32_t>(last - first), access});
    }
    return out;
}

} // namespace takt::io::detail
