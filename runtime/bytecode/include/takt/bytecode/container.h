#pragma once
// program.stbc: the on-disk form of a Module (module.h). `takt build` writes it, the loader
// reads it; docs/stbc.md is the prose version of this comment.
//
// All integers are little-endian with the width written here; nothing is memcpy'd from a
// struct, so padding never reaches the file and the bytes are the same on every host.
//
//   offset  size  field
//   +------+-----+-------------------------------------------------------------------+
//   |    0 |   4 | magic "STBC"                                                      |
//   |    4 |   4 | u32 format version (kFormatVersion in version.h)                  |
//   |    8 |   4 | u32 flags (bit 0: overflow traps; other bits must be 0)           |
//   |   12 |   4 | u32 file size in bytes (the whole file, header included)          |
//   |   16 |   4 | u32 CRC32 (zlib) of every byte of the file except these 4         |
//   |   20 |  32 | SHA-256 program hash of every byte from offset 56 to the end      |
//   |   52 |   4 | u32 section count n (= kSectionCount)                             |
//   |   56 | 12n | section table: n x { u32 id, u32 offset, u32 length }             |
//   |      |     | section payloads, in id order, contiguous, no gaps, no overlap    |
//   +------+-----+-------------------------------------------------------------------+
//
// Section payloads (str = u32 byte length + UTF-8 bytes; vec<T> = u32 count + count x T;
// bool = u8 0 or 1; every section must be consumed exactly):
//
//   1 CODE     vec<u32> instruction words (opcodes.def describes the encoding), u32 initCode
//   2 IMAGE    u32 constSize, u32 globalSize, u32 stackSize,
//              vec<u8> initial image (constSize + globalSize bytes: constants + cold-start values)
//   3 TYPES    vec<{u8 kind, str name, str signature, u32 size, u32 align, u32 element,
//                   vec<i64> bounds, u32 stringLength,
//                   vec<{str name, u32 type, u32 offset, bool retain}> fields,
//                   vec<{str name, i64 value}> enumValues, u32 pou}>
//   4 SYMBOLS  vec<{str path, u32 type, u32 offset, u32 size, u8 kind, bool retain, bool constant}>
//   5 POUS     vec<{str name, u8 kind, u32 code, u32 codeEnd, u32 frameSize, u32 instanceType,
//                   u32 native, vec<{str name, u32 type, u32 offset, u8 kind, bool constant}> frame}>
//   6 TASKS    vec<{str name, i64 intervalNs, u32 priority, u32 singleOffset, vec<u32> io}>
//   7 PROGRAMS vec<{str name, u32 pou, u32 offset, u32 task}>
//   8 IO       vec<{u8 area, u32 byteOffset, u8 bit, u32 size, u32 imageOffset, u32 type,
//                   str address, str path}>
//   9 ACCESS   vec<{str name, str path, u32 type, u32 offset, bool readOnly}>
//  10 FILES    vec<str> source file paths
//  11 DEBUG    vec<{u32 codeOffset, u32 file, u32 line, u32 column}>
//
// Loading checks, in this order: size >= header, magic, version (newer than this build: "future
// version"), file size, CRC32, section table (ids, order, bounds), program hash, then each
// section's structure. A structurally valid Module must still pass verify() (verifier.h) before
// it may run.
#include <array>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "takt/bytecode/module.h"

namespace takt::bytecode {

inline constexpr std::array<std::uint8_t, 4> kMagic = {'S', 'T', 'B', 'C'};
inline constexpr std::uint32_t kHeaderSize = 56; // up to and including the section count
inline constexpr std::uint32_t kSectionEntrySize = 12;
inline constexpr std::uint32_t kFlagOverflowTrap = 1u << 0;

enum class SectionId : std::uint32_t {
    Code = 1,
    Image = 2,
    Types = 3,
    Symbols = 4,
    Pous = 5,
    Tasks = 6,
    Programs = 7,
    Io = 8,
    Access = 9,
    Files = 10,
    Debug = 11,
};
inline constexpr std::uint32_t kSectionCount = 11;

[[nodiscard]] std::string_view sectionName(SectionId id) noexcept; // "CODE", "TYPES", … ("?" if unknown)

using ProgramHash = std::array<std::uint8_t, 32>;

[[nodiscard]] std::string hashHex(const ProgramHash& hash);

// The program.stbc bytes of `module`. Deterministic: equal modules give equal bytes.
[[nodiscard]] std::vector<std::uint8_t> serialize(const Module& module);

struct LoadResult {
    Module module;
    ProgramHash hash{};
    std::uint32_t formatVersion = 0;
    // Empty on success; otherwise why the file was rejected, naming the section and file
    // offset when the problem lies inside one ("section TYPES at offset 0x1a4: …").
    std::string error;

    [[nodiscard]] bool ok() const { return error.empty(); }
};

// Decodes program.stbc bytes. Never trusts a length or count from the file before checking it
// against the bytes that are actually there.
[[nodiscard]] LoadResult deserialize(std::span<const std::uint8_t> bytes);

// All bytes of a file; false with `error` ("cannot open …: reason") when it cannot be read.
[[nodiscard]] bool readFileBytes(const std::filesystem::path& path, std::vector<std::uint8_t>& bytes,
                                 std::string& error);

// Reads and decodes a file; an unreadable file is reported in `error` like a malformed one.
[[nodiscard]] LoadResult readProgramFile(const std::filesystem::path& path);

// fsync of a directory, so that an entry made, renamed or removed in it is on the disk. The
// error when the directory cannot be opened or synced: the change itself has happened, only its
// durability across a power loss is unsure, so a caller decides whether that matters to it.
[[nodiscard]] std::error_code syncDirectory(const std::filesystem::path& dir);
// A file system that has no fsync of a directory (EINVAL), where nothing more can be done.
[[nodiscard]] bool cannotSyncDirectories(std::error_code ec);

// Writes `bytes` so that readers see either the old file or the complete new one: a temporary
// file in the same directory, fsync, rename, fsync of the directory (best effort: the file is in
// place whether or not the directory could be synced). Returns an error message, empty on success.
[[nodiscard]] std::string writeFileAtomically(const std::filesystem::path& path, std::span<const std::uint8_t> bytes);

} // namespace takt::bytecode
