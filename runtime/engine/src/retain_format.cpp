// The retain slot format, the RETAIN layout of a program and restoring an image into one.
//
// Slot file (all integers little-endian):
//   header, 48 bytes: magic "TAKTRETN", u32 version (1), u32 header size (48), u64 layout hash,
//                     u64 sequence (>= 1), u64 body length, u32 CRC32C, u32 zero
//   body:             u32 entry count, u32 payload size,
//                     entries: u16 path length, path, u16 signature length, signature,
//                              u32 payload offset, u32 size
//                     payload
// The CRC covers every byte of the file but its own four, so a torn, truncated, padded
// or bit-flipped file never decodes.
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstring>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "takt/engine/retain.h"
#include "takt/engine/transfer.h"

namespace takt::engine {
namespace {

constexpr std::array<char, 8> kMagic{'T', 'A', 'K', 'T', 'R', 'E', 'T', 'N'};
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kCrcOffset = 40;
constexpr std::size_t kMaxName = 0xFFFF;

constexpr std::array<std::uint32_t, 256> makeCrcTable() {
    std::array<std::uint32_t, 256> table{};
    for (std::uint32_t i = 0; i < 256; ++i) {
        std::uint32_t c = i;
        for (int k = 0; k < 8; ++k) {
            c = (c & 1U) != 0 ? (c >> 1) ^ 0x82F63B78U : c >> 1;
        }
        table[i] = c;
    }
    return table;
}
constexpr std::array<std::uint32_t, 256> kCrcTable = makeCrcTable();

void putU16(std::vector<std::uint8_t>& out, std::uint16_t v) {
    out.push_back(static_cast<std::uint8_t>(v));
    out.push_back(static_cast<std::uint8_t>(v >> 8));
}
void putU32(std::vector<std::uint8_t>& out, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) {
        out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
    }
}
void setU32(std::uint8_t* at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) {
        at[i] = static_cast<std::uint8_t>(v >> (8 * i));
    }
}
void setU64(std::uint8_t* at, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
        at[i] = static_cast<std::uint8_t>(v >> (8 * i));
    }
}
void putString(std::vector<std::uint8_t>& out, std::string_view s) {
    const auto n = static_cast<std::uint16_t>(std::min(s.size(), kMaxName));
    putU16(out, n);
    out.insert(out.end(), s.begin(), s.begin() + n);
}

// Bounds-checked little-endian reader over an untrusted buffer.
class Reader {
public:
    explicit Reader(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}
    [[nodiscard]] std::size_t left() const { return bytes_.size() - pos_; }
    bool u16(std::uint16_t& v) { return uint(v); }
    bool u32(std::uint32_t& v) { return uint(v); }
    bool u64(std::uint64_t& v) { return uint(v); }
    bool string(std::string& s) {
        std::uint16_t n = 0;
        if (!u16(n) || left() < n) {
            return false;
        }
        s.assign(reinterpret_cast<const char*>(bytes_.data() + pos_), n);
        pos_ += n;
        return true;
    }
    bool bytes(std::size_t n, std::vector<std::uint8_t>& out) {
        if (left() < n) {
            return false;
        }
        out.assign(bytes_.begin() + static_cast<std::ptrdiff_t>(pos_),
                   bytes_.begin() + static_cast<std::ptrdiff_t>(pos_ + n));
        pos_ += n;
        return true;
    }

private:
    template <typename T> bool uint(T& v) {
        if (left() < sizeof(T)) {
            return false;
        }
        v = 0;
        for (std::size_t i = 0; i < sizeof(T); ++i) {
            v = static_cast<T>(v | static_cast<T>(static_cast<T>(bytes_[pos_ + i]) << (8 * i)));
        }
        pos_ += sizeof(T);
        return true;
    }

    std::span<const std::uint8_t> bytes_;
    std::size_t pos_ = 0;
};

std::string lower(std::string_view s) {
    std::string r(s);
    for (char& c : r) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return r;
}

// True when a proper ancestor of `path` ("a.b" of "a.b.c") is in `set`.
bool hasAncestorIn(const std::string& path, const std::unordered_set<std::string>& set) {
    for (std::size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', dot + 1)) {
        if (set.count(path.substr(0, dot)) != 0) {
            return true;
        }
    }
    return false;
}

// A slot file describes a variable's type by its signature only. What online change needs to
// convert a value (transfer.h) is read back from it for the elementary types, STRING[n]/WSTRING[n]
// and ENUMs; any other type, or text that does not parse, stays of an unknown kind (Interface),
// which is carried over only when the signature is unchanged. `types` may grow (an ENUM's base).
void typeFromSignature(std::vector<bytecode::TypeDesc>& types, std::size_t index) {
    using bytecode::ValueKind;
    static constexpr std::pair<std::string_view, ValueKind> kElementary[] = {
        {"BOOL", ValueKind::Bool},   {"SINT", ValueKind::SInt},   {"INT", ValueKind::Int},
        {"DINT", ValueKind::DInt},   {"LINT", ValueKind::LInt},   {"USINT", ValueKind::USInt},
        {"UINT", ValueKind::UInt},   {"UDINT", ValueKind::UDInt}, {"ULINT", ValueKind::ULInt},
        {"BYTE", ValueKind::Byte},   {"WORD", ValueKind::Word},   {"DWORD", ValueKind::DWord},
        {"LWORD", ValueKind::LWord}, {"REAL", ValueKind::Real},   {"LREAL", ValueKind::LReal},
        {"TIME", ValueKind::Time},   {"LTIME", ValueKind::LTime}, {"DATE", ValueKind::Date},
        {"LDATE", ValueKind::LDate}, {"TOD", ValueKind::Tod},     {"LTOD", ValueKind::LTod},
        {"DT", ValueKind::Dt},       {"LDT", ValueKind::Ldt},     {"CHAR", ValueKind::Char},
        {"WCHAR", ValueKind::WChar}};
    bytecode::TypeDesc& t = types[index];
    const std::string_view sig = t.signature;
    t.kind = ValueKind::Interface;
    t.name = t.signature;
    for (const auto& [name, kind] : kElementary) {
        if (sig == name) {
            t.kind = kind;
            return;
        }
    }
    for (const auto& [prefix, kind, unit] : {std::tuple{std::string_view("STRING"), ValueKind::String, 1u},
                                             std::tuple{std::string_view("WSTRING"), ValueKind::WString, 2u}}) {
        if ((sig == prefix || (sig.starts_with(prefix) && sig.substr(prefix.size()).starts_with("["))) &&
            t.size >= unit && t.size % unit == 0) {
            t.kind = kind;
            t.stringLength = t.size / unit - 1;
            return;
        }
    }
    // "ENUM State(INT){Idle=0;Fill=1;}" (the compiler's codegen/layout.cpp writes it).
    if (!sig.starts_with("ENUM ") || !sig.ends_with("}")) {
        return;
    }
    const std::size_t open = sig.find('(');
    const std::size_t close = sig.find("){", open == std::string_view::npos ? 0 : open);
    if (open == std::string_view::npos || close == std::string_view::npos) {
        return;
    }
    std::vector<bytecode::EnumValueDesc> values;
    std::string_view body = sig.substr(close + 2, sig.size() - close - 3);
    while (!body.empty()) {
        const std::size_t eq = body.find('=');
        const std::size_t semi = body.find(';');
        if (eq == std::string_view::npos || semi == std::string_view::npos || eq == 0 || semi < eq + 2) {
            return;
        }
        std::int64_t value = 0;
        const std::string_view digits = body.substr(eq + 1, semi - eq - 1);
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
        if (ec != std::errc() || end != digits.data() + digits.size()) {
            return;
        }
        values.push_back(bytecode::EnumValueDesc{std::string(body.substr(0, eq)), value});
        body.remove_prefix(semi + 1);
    }
    bytecode::TypeDesc base;
    base.signature = std::string(sig.substr(open + 1, close - open - 1));
    base.size = t.size;
    t.kind = ValueKind::Enum;
    t.name = std::string(sig.substr(5, open - 5));
    t.enumValues = std::move(values);
    t.element = static_cast<std::uint32_t>(types.size());
    types.push_back(std::move(base));
    typeFromSignature(types, types.size() - 1);
}

std::uint64_t fnv1a(std::span<const std::uint8_t> bytes) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (const std::uint8_t b : bytes) {
        h = (h ^ b) * 0x100000001b3ULL;
    }
    return h;
}

} // namespace

std::uint32_t crc32c(std::span<const std::uint8_t> bytes, std::uint32_t crc) noexcept {
    crc = ~crc;
    for (const std::uint8_t b : bytes) {
        crc = kCrcTable[(crc ^ b) & 0xFFU] ^ (crc >> 8);
    }
    return ~crc;
}

RetainLayout::RetainLayout(const bytecode::Module& module) {
    const std::size_t limit = static_cast<std::size_t>(module.constSize) + module.globalSize;
    std::vector<std::pair<std::string, const bytecode::VarEntry*>> entries;
    for (const bytecode::VarEntry& v : module.variables) {
        if (v.retain && v.size > 0 && static_cast<std::size_t>(v.offset) + v.size <= limit) {
            entries.emplace_back(lower(v.path), &v);
        }
    }
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });

    // Outermost RETAIN variables own payload blocks; RETAIN members of a retained instance are
    // described in the table by their place inside the parent's block.
    struct Described {
        const bytecode::VarEntry* var;
        std::uint32_t payloadOffset;
    };
    std::vector<Described> described;
    std::unordered_map<std::string, Described> tops; // lower-case path -> the block's variable
    for (const auto& [path, v] : entries) {
        const Described* top = nullptr;
        for (std::size_t dot = path.find('.'); dot != std::string::npos && top == nullptr;
             dot = path.find('.', dot + 1)) {
            auto it = tops.find(path.substr(0, dot));
            top = it != tops.end() ? &it->second : nullptr;
        }
        if (top == nullptr) {
            const Described d{v, static_cast<std::uint32_t>(payloadSize_)};
            tops.emplace(path, d);
            described.push_back(d);
            blocks_.push_back(Block{v->offset, d.payloadOffset, v->size});
            payloadSize_ += v->size;
        } else if (v->offset >= top->var->offset && v->offset + v->size <= top->var->offset + top->var->size) {
            described.push_back(Described{v, top->payloadOffset + (v->offset - top->var->offset)});
        }
    }

    putU32(table_, static_cast<std::uint32_t>(described.size()));
    putU32(table_, static_cast<std::uint32_t>(payloadSize_));
    for (const Described& d : described) {
        putString(table_, d.var->path);
        putString(table_, typeSignature(module, d.var->type));
        putU32(table_, d.payloadOffset);
        putU32(table_, d.var->size);
    }
    entryCount_ = described.size();
    hash_ = fnv1a(table_);

    // Adjacent blocks (consecutive globals) become one memcpy.
    std::vector<Block> merged;
    for (const Block& b : blocks_) {
        if (!merged.empty() && merged.back().imageOffset + merged.back().size == b.imageOffset &&
            merged.back().payloadOffset + merged.back().size == b.payloadOffset) {
            merged.back().size += b.size;
        } else {
            merged.push_back(b);
        }
    }
    blocks_ = std::move(merged);
}

void RetainLayout::capture(const std::uint8_t* image, std::span<std::uint8_t> payload) const noexcept {
    for (const Block& b : blocks_) {
        if (static_cast<std::size_t>(b.payloadOffset) + b.size <= payload.size()) {
            std::memcpy(payload.data() + b.payloadOffset, image + b.imageOffset, b.size);
        }
    }
}

void encodeRetainSlot(const RetainLayout& layout, std::span<const std::uint8_t> payload, std::uint64_t sequence,
                      std::vector<std::uint8_t>& out) {
    const std::span<const std::uint8_t> table = layout.table();
    out.resize(kRetainHeaderSize + table.size() + payload.size());
    std::uint8_t* p = out.data();
    std::memcpy(p, kMagic.data(), kMagic.size());
    setU32(p + 8, kVersion);
    setU32(p + 12, static_cast<std::uint32_t>(kRetainHeaderSize));
    setU64(p + 16, layout.hash());
    setU64(p + 24, sequence);
    setU64(p + 32, table.size() + payload.size());
    setU32(p + kCrcOffset, 0);
    setU32(p + 44, 0);
    if (!table.empty()) {
        std::memcpy(p + kRetainHeaderSize, table.data(), table.size());
    }
    if (!payload.empty()) {
        std::memcpy(p + kRetainHeaderSize + table.size(), payload.data(), payload.size());
    }
    std::uint32_t crc = crc32c(std::span(out).first(kCrcOffset));
    crc = crc32c(std::span(out).subspan(kCrcOffset + 4), crc);
    setU32(p + kCrcOffset, crc);
}

bool decodeRetainSlot(std::span<const std::uint8_t> bytes, RetainImage& out, std::string& error) {
    if (bytes.size() < kRetainHeaderSize) {
        error = fmt::format("truncated header ({} bytes)", bytes.size());
        return false;
    }
    if (!std::equal(kMagic.begin(), kMagic.end(), bytes.begin())) {
        error = "bad magic (not a takt retain file)";
        return false;
    }
    Reader header(bytes.subspan(kMagic.size(), kRetainHeaderSize - kMagic.size()));
    std::uint32_t version = 0;
    std::uint32_t headerSize = 0;
    std::uint64_t layoutHash = 0;
    std::uint64_t sequence = 0;
    std::uint64_t length = 0;
    std::uint32_t storedCrc = 0;
    (void)(header.u32(version) && header.u32(headerSize) && header.u64(layoutHash) && header.u64(sequence) &&
           header.u64(length) && header.u32(storedCrc));
    if (version != kVersion || headerSize != kRetainHeaderSize) {
        error = fmt::format("unsupported version {} (header size {})", version, headerSize);
        return false;
    }
    if (length != bytes.size() - kRetainHeaderSize) {
        error =
            fmt::format("length mismatch: header says {} bytes, file has {}", length, bytes.size() - kRetainHeaderSize);
        return false;
    }
    std::uint32_t crc = crc32c(bytes.first(kCrcOffset));
    crc = crc32c(bytes.subspan(kCrcOffset + 4), crc);
    if (crc != storedCrc) {
        error = fmt::format("CRC mismatch (stored {:08x}, computed {:08x})", storedCrc, crc);
        return false;
    }
    if (sequence == 0) {
        error = "sequence 0";
        return false;
    }

    Reader body(bytes.subspan(kRetainHeaderSize));
    std::uint32_t count = 0;
    std::uint32_t payloadSize = 0;
    if (!body.u32(count) || !body.u32(payloadSize) || count > body.left() / 12) {
        error = "malformed entry table";
        return false;
    }
    RetainImage image;
    image.sequence = sequence;
    image.layoutHash = layoutHash;
    image.layout.types.reserve(count);
    image.layout.variables.reserve(count);
    for (std::uint32_t i = 0; i < count; ++i) {
        bytecode::VarEntry v;
        bytecode::TypeDesc t;
        if (!body.string(v.path) || !body.string(t.signature) || !body.u32(v.offset) || !body.u32(v.size)) {
            error = fmt::format("malformed entry {}", i);
            return false;
        }
        if (v.path.empty() || static_cast<std::uint64_t>(v.offset) + v.size > payloadSize) {
            error = fmt::format("entry {} ('{}') lies outside the payload", i, v.path);
            return false;
        }
        t.size = v.size;
        v.type = static_cast<std::uint32_t>(image.layout.types.size());
        v.retain = true;
        v.kind = bytecode::VarKind::Global;
        image.layout.types.push_back(std::move(t));
        typeFromSignature(image.layout.types, v.type);
        image.layout.variables.push_back(std::move(v));
    }
    if (body.left() != payloadSize) {
        error = fmt::format("payload size mismatch: table says {} bytes, file has {}", payloadSize, body.left());
        return false;
    }
    (void)body.bytes(payloadSize, image.payload);
    image.layout.globalSize = payloadSize;
    out = std::move(image);
    return true;
}

RetainApplyReport applyRetainImage(const RetainImage& image, LoadedProgram& program) {
    RetainApplyReport report;
    const bytecode::Module& module = program.module();
    report.layoutChanged = image.layoutHash != RetainLayout(module).hash();
    TransferPlan plan = computeTransferPlan(image.layout, module, true);
    // A decoded image keeps its entries inside its payload; the program side is checked here.
    std::erase_if(plan.copies,
                  [&](const TransferCopy& c) { return !copyInside(c, image.payload.size(), program.imageSize()); });
    std::erase_if(plan.converts, [&](const TransferConvert& c) {
        return !convertInside(c, image.payload.size(), program.imageSize());
    });
    plan.missed.assign(plan.converts.size(), 0);
    applyTransferPlan(plan, image.payload.data(), program.image());
    settleTransferReport(plan, plan.report);
    report.restored = plan.report.kept + plan.report.converted;

    // Dropped: the outermost saved variables none of whose bytes were restored. A variable
    // partly restored (an instance whose type changed but whose members matched) is not
    // reported; its unrestored members are.
    std::vector<std::pair<std::string, const bytecode::VarEntry*>> saved;
    for (const bytecode::VarEntry& v : image.layout.variables) {
        saved.emplace_back(lower(v.path), &v);
    }
    std::sort(saved.begin(), saved.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::unordered_set<std::string> reported;
    for (const auto& [path, v] : saved) {
        if (hasAncestorIn(path, reported)) {
            continue;
        }
        std::uint64_t covered = 0;
        for (const TransferCopy& c : plan.copies) {
            const std::uint64_t lo = std::max<std::uint64_t>(c.from, v->offset);
            const std::uint64_t hi =
                std::min<std::uint64_t>(std::uint64_t{c.from} + c.size, std::uint64_t{v->offset} + v->size);
            covered += hi > lo ? hi - lo : 0;
        }
        for (std::size_t i = 0; i < plan.converts.size(); ++i) {
            const TransferConvert& c = plan.converts[i];
            covered += plan.missed[i] == 0 && c.from >= v->offset && c.from < std::uint64_t{v->offset} + v->size;
        }
        if (covered == 0) {
            report.dropped.push_back(v->path);
            reported.insert(path);
        }
    }
    return report;
}

} // namespace takt::engine
