// program.stbc encoder and decoder (layout in container.h and docs/stbc.md).
#include "takt/bytecode/container.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "takt/bytecode/version.h"
#include "takt/common/fd_io.h"

namespace takt::bytecode {

namespace {

// ---- encoding -------------------------------------------------------------------------------

class Writer {
public:
    void u8(std::uint8_t v) { bytes_.push_back(v); }
    void boolean(bool v) { u8(v ? 1 : 0); }
    void u32(std::uint32_t v) {
        for (int i = 0; i < 4; ++i) {
            bytes_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
        }
    }
    void i64(std::int64_t v) {
        auto u = static_cast<std::uint64_t>(v);
        for (int i = 0; i < 8; ++i) {
            bytes_.push_back(static_cast<std::uint8_t>(u >> (8 * i)));
        }
    }
    void count(std::size_t n) { u32(static_cast<std::uint32_t>(n)); }
    void str(std::string_view s) {
        count(s.size());
        bytes_.insert(bytes_.end(), s.begin(), s.end());
    }
    std::vector<std::uint8_t>& bytes() { return bytes_; }

private:
    std::vector<std::uint8_t> bytes_;
};

void putU32At(std::vector<std::uint8_t>& out, std::size_t at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) {
        out[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
    }
}

void encodeSection(Writer& w, SectionId id, const Module& m) {
    switch (id) {
    case SectionId::Code:
        w.count(m.code.size());
        for (std::uint32_t word : m.code) {
            w.u32(word);
        }
        w.u32(m.initCode);
        break;
    case SectionId::Image:
        w.u32(m.constSize);
        w.u32(m.globalSize);
        w.u32(m.stackSize);
        w.count(m.initImage.size());
        w.bytes().insert(w.bytes().end(), m.initImage.begin(), m.initImage.end());
        break;
    case SectionId::Types:
        w.count(m.types.size());
        for (const TypeDesc& t : m.types) {
            w.u8(static_cast<std::uint8_t>(t.kind));
            w.str(t.name);
            w.str(t.signature);
            w.u32(t.size);
            w.u32(t.align);
            w.u32(t.element);
            w.count(t.bounds.size());
            for (std::int64_t b : t.bounds) {
                w.i64(b);
            }
            w.u32(t.stringLength);
            w.count(t.fields.size());
            for (const FieldDesc& f : t.fields) {
                w.str(f.name);
                w.u32(f.type);
                w.u32(f.offset);
                w.boolean(f.retain);
            }
            w.count(t.enumValues.size());
            for (const EnumValueDesc& e : t.enumValues) {
                w.str(e.name);
                w.i64(e.value);
            }
            w.u32(t.pou);
        }
        break;
    case SectionId::Symbols:
        w.count(m.variables.size());
        for (const VarEntry& v : m.variables) {
            w.str(v.path);
            w.u32(v.type);
            w.u32(v.offset);
            w.u32(v.size);
            w.u8(static_cast<std::uint8_t>(v.kind));
            w.boolean(v.retain);
            w.boolean(v.constant);
        }
        break;
    case SectionId::Pous:
        w.count(m.pous.size());
        for (const PouEntry& p : m.pous) {
            w.str(p.name);
            w.u8(static_cast<std::uint8_t>(p.kind));
            w.u32(p.code);
            w.u32(p.codeEnd);
            w.u32(p.frameSize);
            w.u32(p.instanceType);
            w.u32(p.native);
            w.count(p.frame.size());
            for (const FrameVar& v : p.frame) {
                w.str(v.name);
                w.u32(v.type);
                w.u32(v.offset);
                w.u8(static_cast<std::uint8_t>(v.kind));
                w.boolean(v.constant);
            }
        }
        break;
    case SectionId::Tasks:
        w.count(m.tasks.size());
        for (const TaskEntry& t : m.tasks) {
            w.str(t.name);
            w.i64(t.intervalNs);
            w.u32(t.priority);
            w.u32(t.singleOffset);
            w.count(t.io.size());
            for (const std::uint32_t i : t.io) {
                w.u32(i);
            }
        }
        break;
    case SectionId::Programs:
        w.count(m.programs.size());
        for (const ProgramInstance& p : m.programs) {
            w.str(p.name);
            w.u32(p.pou);
            w.u32(p.offset);
            w.u32(p.task);
        }
        break;
    case SectionId::Io:
        w.count(m.io.size());
        for (const IoBinding& b : m.io) {
            w.u8(static_cast<std::uint8_t>(b.area));
            w.u32(b.byteOffset);
            w.u8(b.bit);
            w.u32(b.size);
            w.u32(b.imageOffset);
            w.u32(b.type);
            w.str(b.address);
            w.str(b.path);
        }
        break;
    case SectionId::Access:
        w.count(m.access.size());
        for (const AccessEntry& a : m.access) {
            w.str(a.name);
            w.str(a.path);
            w.u32(a.type);
            w.u32(a.offset);
            w.boolean(a.readOnly);
        }
        break;
    case SectionId::Files:
        w.count(m.files.size());
        for (const std::string& f : m.files) {
            w.str(f);
        }
        break;
    case SectionId::Debug:
        w.count(m.debug.size());
        for (const DebugEntry& d : m.debug) {
            w.u32(d.codeOffset);
            w.u32(d.file);
            w.u32(d.line);
            w.u32(d.column);
            w.u32(d.statement ? 1 : 0);
        }
        break;
    }
}

ProgramHash sha256(const std::uint8_t* data, std::size_t size) {
    ProgramHash out{};
    unsigned int len = 0;
    // EVP_Digest is the one-shot form of the EVP interface; it cannot fail for SHA-256 short of
    // a broken OpenSSL, in which case the hash stays zero and loading reports a mismatch.
    if (EVP_Digest(data, size, out.data(), &len, EVP_sha256(), nullptr) != 1) {
        out.fill(0);
    }
    return out;
}

std::uint32_t crcOf(std::span<const std::uint8_t> file) {
    // Every byte except the CRC field itself (offset 16..19), so any single changed bit changes
    // either the covered bytes or the stored value.
    uLong crc = crc32(0L, Z_NULL, 0);
    crc = crc32(crc, file.data(), 16);
    crc = crc32(crc, file.data() + 20, static_cast<uInt>(file.size() - 20));
    return static_cast<std::uint32_t>(crc);
}

// ---- decoding -------------------------------------------------------------------------------

// Reads one section. After the first failure every read returns zero and the first error is
// kept, so decoders can be written straight through and checked once.
class Reader {
public:
    Reader(std::span<const std::uint8_t> file, std::uint32_t begin, std::uint32_t end, std::string_view section)
        : file_(file), pos_(begin), end_(end), section_(section) {}

    [[nodiscard]] bool failed() const { return !error_.empty(); }
    [[nodiscard]] const std::string& error() const { return error_; }
    [[nodiscard]] bool atEnd() const { return pos_ == end_; }
    [[nodiscard]] std::uint32_t pos() const { return pos_; }

    void fail(std::string_view what) { failAt(pos_, what); }
    void failAt(std::uint32_t at, std::string_view what) {
        if (error_.empty()) {
            char where[64];
            std::snprintf(where, sizeof where, "section %.*s at offset 0x%x: ", static_cast<int>(section_.size()),
                          section_.data(), at);
            error_ = std::string(where) + std::string(what);
            pos_ = end_;
        }
    }

    std::uint8_t u8() { return static_cast<std::uint8_t>(take(1)); }
    std::uint32_t u32() { return static_cast<std::uint32_t>(take(4)); }
    std::int64_t i64() { return static_cast<std::int64_t>(take(8)); }
    bool boolean() {
        std::uint32_t at = pos_;
        std::uint8_t v = u8();
        if (v > 1) {
            failAt(at, "boolean byte is neither 0 nor 1");
        }
        return v == 1;
    }
    template <typename E> E enumValue(E last, std::string_view what) {
        std::uint32_t at = pos_;
        std::uint8_t v = u8();
        if (v > static_cast<std::uint8_t>(last)) {
            failAt(at, std::string("unknown ") + std::string(what) + " " + std::to_string(v));
        }
        return static_cast<E>(v);
    }
    // A count of elements that each take at least `minBytes`: checked against what is left so
    // a corrupt count can never make the loader allocate more than the file's size.
    std::uint32_t count(std::uint32_t minBytes, std::string_view what) {
        std::uint32_t at = pos_;
        std::uint32_t n = u32();
        if (!failed() && static_cast<std::uint64_t>(n) * minBytes > end_ - pos_) {
            failAt(at, std::string(what) + " count " + std::to_string(n) + " exceeds the section");
            return 0;
        }
        return n;
    }
    std::string str() {
        std::uint32_t n = count(1, "string length");
        std::string s(reinterpret_cast<const char*>(file_.data()) + pos_, failed() ? 0 : n);
        pos_ += failed() ? 0 : n;
        return s;
    }
    void bytes(std::vector<std::uint8_t>& out, std::uint32_t n) {
        out.assign(file_.begin() + pos_, file_.begin() + pos_ + n);
        pos_ += n;
    }

private:
    std::uint64_t take(std::uint32_t width) {
        if (failed()) {
            return 0;
        }
        if (end_ - pos_ < width) {
            fail("truncated field");
            return 0;
        }
        std::uint64_t v = 0;
        for (std::uint32_t i = 0; i < width; ++i) {
            v |= static_cast<std::uint64_t>(file_[pos_ + i]) << (8 * i);
        }
        pos_ += width;
        return v;
    }

    std::span<const std::uint8_t> file_;
    std::uint32_t pos_;
    std::uint32_t end_;
    std::string_view section_;
    std::string error_;
};

std::uint32_t readU32(std::span<const std::uint8_t> b, std::size_t at) {
    return static_cast<std::uint32_t>(b[at]) | static_cast<std::uint32_t>(b[at + 1]) << 8 |
           static_cast<std::uint32_t>(b[at + 2]) << 16 | static_cast<std::uint32_t>(b[at + 3]) << 24;
}

void decodeSection(Reader& r, SectionId id, Module& m) {
    switch (id) {
    case SectionId::Code: {
        std::uint32_t n = r.count(4, "instruction word");
        m.code.resize(n);
        for (std::uint32_t& word : m.code) {
            word = r.u32();
        }
        m.initCode = r.u32();
        break;
    }
    case SectionId::Image: {
        m.constSize = r.u32();
        m.globalSize = r.u32();
        m.stackSize = r.u32();
        std::uint32_t at = r.pos();
        std::uint32_t n = r.count(1, "initial image byte");
        if (!r.failed() && static_cast<std::uint64_t>(m.constSize) + m.globalSize != n) {
            r.failAt(at, "initial image has " + std::to_string(n) + " bytes, constSize + globalSize is " +
                             std::to_string(static_cast<std::uint64_t>(m.constSize) + m.globalSize));
            break;
        }
        if (!r.failed()) {
            r.bytes(m.initImage, n);
        }
        break;
    }
    case SectionId::Types: {
        // kind + 2 strings + 6 u32 + 3 counts: 41 bytes at least
        m.types.resize(r.count(41, "type"));
        for (TypeDesc& t : m.types) {
            t.kind = r.enumValue(ValueKind::Interface, "value kind");
            t.name = r.str();
            t.signature = r.str();
            t.size = r.u32();
            t.align = r.u32();
            t.element = r.u32();
            t.bounds.resize(r.count(8, "bound"));
            for (std::int64_t& b : t.bounds) {
                b = r.i64();
            }
            t.stringLength = r.u32();
            t.fields.resize(r.count(13, "field"));
            for (FieldDesc& f : t.fields) {
                f.name = r.str();
                f.type = r.u32();
                f.offset = r.u32();
                f.retain = r.boolean();
            }
            t.enumValues.resize(r.count(12, "enum value"));
            for (EnumValueDesc& e : t.enumValues) {
                e.name = r.str();
                e.value = r.i64();
            }
            t.pou = r.u32();
        }
        break;
    }
    case SectionId::Symbols:
        m.variables.resize(r.count(19, "variable"));
        for (VarEntry& v : m.variables) {
            v.path = r.str();
            v.type = r.u32();
            v.offset = r.u32();
            v.size = r.u32();
            v.kind = r.enumValue(VarKind::Constant, "variable kind");
            v.retain = r.boolean();
            v.constant = r.boolean();
        }
        break;
    case SectionId::Pous:
        m.pous.resize(r.count(29, "POU"));
        for (PouEntry& p : m.pous) {
            p.name = r.str();
            p.kind = r.enumValue(PouKind::Native, "POU kind");
            p.code = r.u32();
            p.codeEnd = r.u32();
            p.frameSize = r.u32();
            p.instanceType = r.u32();
            p.native = r.u32();
            p.frame.resize(r.count(14, "frame variable"));
            for (FrameVar& v : p.frame) {
                v.name = r.str();
                v.type = r.u32();
                v.offset = r.u32();
                v.kind = r.enumValue(VarKind::Constant, "frame variable kind");
                v.constant = r.boolean();
            }
        }
        break;
    case SectionId::Tasks:
        m.tasks.resize(r.count(24, "task"));
        for (TaskEntry& t : m.tasks) {
            t.name = r.str();
            t.intervalNs = r.i64();
            t.priority = r.u32();
            t.singleOffset = r.u32();
            t.io.resize(r.count(4, "task I/O index"));
            for (std::uint32_t& i : t.io) {
                i = r.u32();
            }
        }
        break;
    case SectionId::Programs:
        m.programs.resize(r.count(16, "program instance"));
        for (ProgramInstance& p : m.programs) {
            p.name = r.str();
            p.pou = r.u32();
            p.offset = r.u32();
            p.task = r.u32();
        }
        break;
    case SectionId::Io:
        m.io.resize(r.count(26, "I/O binding"));
        for (IoBinding& b : m.io) {
            b.area = r.enumValue(IoArea::Memory, "I/O area");
            b.byteOffset = r.u32();
            b.bit = r.u8();
            b.size = r.u32();
            b.imageOffset = r.u32();
            b.type = r.u32();
            b.address = r.str();
            b.path = r.str();
        }
        break;
    case SectionId::Access:
        m.access.resize(r.count(17, "access entry"));
        for (AccessEntry& a : m.access) {
            a.name = r.str();
            a.path = r.str();
            a.type = r.u32();
            a.offset = r.u32();
            a.readOnly = r.boolean();
        }
        break;
    case SectionId::Files:
        m.files.resize(r.count(4, "file"));
        for (std::string& f : m.files) {
            f = r.str();
        }
        break;
    case SectionId::Debug:
        m.debug.resize(r.count(20, "debug entry"));
        for (DebugEntry& d : m.debug) {
            d.codeOffset = r.u32();
            d.file = r.u32();
            d.line = r.u32();
            d.column = r.u32();
            d.statement = r.u32() != 0;
        }
        break;
    }
}

std::string hex(std::uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

} // namespace

std::string_view sectionName(SectionId id) noexcept {
    switch (id) {
    case SectionId::Code: return "CODE";
    case SectionId::Image: return "IMAGE";
    case SectionId::Types: return "TYPES";
    case SectionId::Symbols: return "SYMBOLS";
    case SectionId::Pous: return "POUS";
    case SectionId::Tasks: return "TASKS";
    case SectionId::Programs: return "PROGRAMS";
    case SectionId::Io: return "IO";
    case SectionId::Access: return "ACCESS";
    case SectionId::Files: return "FILES";
    case SectionId::Debug: return "DEBUG";
    }
    return "?";
}

std::string hashHex(const ProgramHash& hash) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    out.reserve(64);
    for (std::uint8_t b : hash) {
        out.push_back(kDigits[b >> 4]);
        out.push_back(kDigits[b & 15]);
    }
    return out;
}

std::vector<std::uint8_t> serialize(const Module& module) {
    Writer w;
    w.bytes().resize(kHeaderSize + kSectionCount * kSectionEntrySize, 0);
    std::vector<std::uint8_t>& out = w.bytes();
    std::memcpy(out.data(), kMagic.data(), kMagic.size());
    putU32At(out, 4, kFormatVersion);
    putU32At(out, 8, module.overflowTrap ? kFlagOverflowTrap : 0);
    putU32At(out, 52, kSectionCount);
    for (std::uint32_t i = 0; i < kSectionCount; ++i) {
        auto id = static_cast<SectionId>(i + 1);
        std::size_t begin = out.size();
        encodeSection(w, id, module);
        std::size_t entry = kHeaderSize + i * kSectionEntrySize;
        putU32At(out, entry, i + 1);
        putU32At(out, entry + 4, static_cast<std::uint32_t>(begin));
        putU32At(out, entry + 8, static_cast<std::uint32_t>(out.size() - begin));
    }
    putU32At(out, 12, static_cast<std::uint32_t>(out.size()));
    ProgramHash hash = sha256(out.data() + kHeaderSize, out.size() - kHeaderSize);
    std::memcpy(out.data() + 20, hash.data(), hash.size());
    putU32At(out, 16, crcOf(out));
    return std::move(out);
}

LoadResult deserialize(std::span<const std::uint8_t> bytes) {
    LoadResult result;
    auto fail = [&](std::string message) {
        result.module = Module{};
        result.error = std::move(message);
        return std::move(result);
    };
    if (bytes.size() < 8 || !std::equal(kMagic.begin(), kMagic.end(), bytes.begin())) {
        if (bytes.size() >= 4 && std::equal(kMagic.begin(), kMagic.end(), bytes.begin())) {
            return fail("truncated header: " + std::to_string(bytes.size()) + " bytes");
        }
        return fail("not a program.stbc file: wrong magic (expected \"STBC\")");
    }
    result.formatVersion = readU32(bytes, 4);
    if (result.formatVersion > kFormatVersion) {
        return fail("future format version " + std::to_string(result.formatVersion) + ": this takt reads version " +
                    std::to_string(kFormatVersion) + "; rebuild the program or update takt");
    }
    if (result.formatVersion != kFormatVersion) {
        return fail("unsupported format version " + std::to_string(result.formatVersion) + " (this takt reads " +
                    std::to_string(kFormatVersion) + ")");
    }
    if (bytes.size() < kHeaderSize) {
        return fail("truncated header: " + std::to_string(bytes.size()) + " bytes, the header has " +
                    std::to_string(kHeaderSize));
    }
    std::uint32_t declared = readU32(bytes, 12);
    if (declared != bytes.size()) {
        return fail((declared > bytes.size() ? "truncated file: header says " : "file size mismatch: header says ") +
                    std::to_string(declared) + " bytes, file has " + std::to_string(bytes.size()));
    }
    std::uint32_t storedCrc = readU32(bytes, 16);
    std::uint32_t crc = crcOf(bytes);
    if (crc != storedCrc) {
        return fail("CRC32 mismatch: stored " + hex(storedCrc) + ", computed " + hex(crc) +
                    " (the file is corrupt or was modified)");
    }
    std::uint32_t flags = readU32(bytes, 8);
    if ((flags & ~kFlagOverflowTrap) != 0) {
        return fail("unknown flags " + hex(flags & ~kFlagOverflowTrap) + " in header");
    }
    result.module.overflowTrap = (flags & kFlagOverflowTrap) != 0;
    std::uint32_t sections = readU32(bytes, 52);
    if (sections != kSectionCount) {
        return fail("section table: " + std::to_string(sections) + " sections, version " +
                    std::to_string(kFormatVersion) + " has " + std::to_string(kSectionCount));
    }
    std::uint64_t expectedOffset = kHeaderSize + static_cast<std::uint64_t>(kSectionCount) * kSectionEntrySize;
    if (bytes.size() < expectedOffset) {
        return fail("truncated section table");
    }
    std::array<std::uint32_t, kSectionCount> offsets{};
    std::array<std::uint32_t, kSectionCount> lengths{};
    for (std::uint32_t i = 0; i < kSectionCount; ++i) {
        std::size_t entry = kHeaderSize + i * kSectionEntrySize;
        std::uint32_t id = readU32(bytes, entry);
        offsets[i] = readU32(bytes, entry + 4);
        lengths[i] = readU32(bytes, entry + 8);
        std::string name(sectionName(static_cast<SectionId>(id)));
        if (id != i + 1) {
            return fail("section table entry " + std::to_string(i) + " at offset " + hex(entry) + ": id " +
                        std::to_string(id) + " (" + name + "), expected " + std::to_string(i + 1) + " (" +
                        std::string(sectionName(static_cast<SectionId>(i + 1))) + ")");
        }
        // Sections are contiguous: this also bounds every section by the file.
        if (offsets[i] != expectedOffset || expectedOffset + lengths[i] > bytes.size()) {
            return fail("section " + name + " at offset " + hex(entry) + ": bounds [" + hex(offsets[i]) + ", +" +
                        hex(lengths[i]) + ") are outside the file or not contiguous");
        }
        expectedOffset += lengths[i];
    }
    if (expectedOffset != bytes.size()) {
        return fail("trailing bytes after the last section at offset " + hex(expectedOffset));
    }
    result.hash = sha256(bytes.data() + kHeaderSize, bytes.size() - kHeaderSize);
    if (!std::equal(result.hash.begin(), result.hash.end(), bytes.begin() + 20)) {
        return fail("program hash mismatch (SHA-256 of the sections differs from the header)");
    }
    for (std::uint32_t i = 0; i < kSectionCount; ++i) {
        auto id = static_cast<SectionId>(i + 1);
        Reader r(bytes, offsets[i], offsets[i] + lengths[i], sectionName(id));
        decodeSection(r, id, result.module);
        if (!r.failed() && !r.atEnd()) {
            r.fail("unexpected bytes after the last entry");
        }
        if (r.failed()) {
            return fail(r.error());
        }
    }
    return result;
}

bool readFileBytes(const std::filesystem::path& path, std::vector<std::uint8_t>& bytes, std::string& error) {
    // POSIX rather than a stream: libstdc++'s filebuf throws when a read fails (a directory
    // opens, and its first read is EISDIR), and callers expect an error, never an exception.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        error = "cannot open " + path.string() + ": " + std::strerror(errno);
        return false;
    }
    bytes.clear();
    std::uint8_t buf[65536];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            error = "cannot read " + path.string() + ": " + std::strerror(errno);
            ::close(fd);
            return false;
        }
        if (n == 0) {
            break;
        }
        bytes.insert(bytes.end(), buf, buf + n);
    }
    ::close(fd);
    return true;
}

LoadResult readProgramFile(const std::filesystem::path& path) {
    std::vector<std::uint8_t> bytes;
    LoadResult r;
    if (!readFileBytes(path, bytes, r.error)) {
        return r;
    }
    return deserialize(bytes);
}

std::error_code syncDirectory(const std::filesystem::path& dir) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        return {errno, std::generic_category()};
    }
    std::error_code ec;
    if (::fsync(fd) != 0) {
        ec = {errno, std::generic_category()};
    }
    if (::close(fd) != 0 && !ec) {
        ec = {errno, std::generic_category()};
    }
    return ec;
}

bool cannotSyncDirectories(std::error_code ec) {
    return ec == std::errc::invalid_argument;
}

std::string writeFileAtomically(const std::filesystem::path& path, std::span<const std::uint8_t> bytes) {
    std::filesystem::path dir = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
    std::string tmpl = (dir / ("." + path.filename().string() + ".XXXXXX")).string();
    std::vector<char> name(tmpl.begin(), tmpl.end());
    name.push_back('\0');
    int fd = ::mkstemp(name.data());
    if (fd < 0) {
        return "cannot create a temporary file in " + dir.string() + ": " + std::strerror(errno);
    }
    std::string tmp(name.data());
    auto abandon = [&](const std::string& message) {
        ::close(fd);
        ::unlink(tmp.c_str());
        return message + ": " + std::strerror(errno);
    };
    if (!common::writeAll(fd, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()))) {
        return abandon("cannot write " + tmp);
    }
    // mkstemp creates 0600; a build product is an ordinary readable file.
    if (::fchmod(fd, 0644) != 0 || ::fsync(fd) != 0) {
        return abandon("cannot sync " + tmp);
    }
    if (::close(fd) != 0) {
        ::unlink(tmp.c_str());
        return "cannot close " + tmp + ": " + std::strerror(errno);
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        std::string message = "cannot rename " + tmp + " to " + path.string() + ": " + std::strerror(errno);
        ::unlink(tmp.c_str());
        return message;
    }
    // The rename is durable only once the directory entry is on disk. Best effort: the new file
    // is complete and in place, and a build must not fail where the directory cannot be synced.
    (void)syncDirectory(dir);
    return {};
}

} // namespace takt::bytecode
