// io.toml (CONFIG.md "io.toml"): the driver list in either truST form and the safe state. The
// structure, driver names and safe-state entries are checked here; each driver checks its own
// params in Driver::init() (`takt validate` calls it).
#include <algorithm>
#include <charconv>
#include <cstring>
#include <exception>
#include <limits>
#include <tuple>

#include <fmt/format.h>

#include "io_config_internal.h"
#include "takt/bytecode/address.h"
#include "takt/common/text.h"
#include "takt/common/toml_names.h"
#include "takt/engine/config_reader.h"

namespace takt::io {

namespace {

using engine::ConfigDiagnostic;
using engine::diagnosticAt;
using engine::indexedPath;
using engine::TableReader;
using Severity = ConfigDiagnostic::Severity;

// Every driver CONFIG.md defines. A build may not have all of them registered yet
// (createDriver() returns nullptr for those); io.toml may still name them so a project
// validates before its driver is built in, and `takt validate` says which ones it could not
// check. Names registered with driverNames() are accepted too.
constexpr std::string_view kConfigDriverNames[] = {"loopback",      "simulated", "modbus-tcp", "modbus-rtu",
                                                   "modbus-server", "mqtt",      "gpio"};

std::string upper(std::string_view s) {
    std::string out(s);
    for (char& c : out) {
        if (c >= 'a' && c <= 'z') {
            c = static_cast<char>(c - 'a' + 'A');
        }
    }
    return out;
}

enum class Sign : std::uint8_t { Any, Signed, Unsigned, Real };

struct TypeName {
    std::string_view name;
    bytecode::AddressWidth width;
    Sign sign;
};

constexpr TypeName kTypes[] = {
    {"BOOL", bytecode::AddressWidth::Bit, Sign::Unsigned},  {"BYTE", bytecode::AddressWidth::Byte, Sign::Any},
    {"SINT", bytecode::AddressWidth::Byte, Sign::Signed},   {"USINT", bytecode::AddressWidth::Byte, Sign::Unsigned},
    {"WORD", bytecode::AddressWidth::Word, Sign::Any},      {"INT", bytecode::AddressWidth::Word, Sign::Signed},
    {"UINT", bytecode::AddressWidth::Word, Sign::Unsigned}, {"DWORD", bytecode::AddressWidth::DWord, Sign::Any},
    {"DINT", bytecode::AddressWidth::DWord, Sign::Signed},  {"UDINT", bytecode::AddressWidth::DWord, Sign::Unsigned},
    {"REAL", bytecode::AddressWidth::DWord, Sign::Real},    {"LWORD", bytecode::AddressWidth::LWord, Sign::Any},
    {"LINT", bytecode::AddressWidth::LWord, Sign::Signed},  {"ULINT", bytecode::AddressWidth::LWord, Sign::Unsigned},
    {"LREAL", bytecode::AddressWidth::LWord, Sign::Real},
};

// Parses an unsigned integer in ST (16#FF, 8#17, 2#1010, underscores between digits) or C hex
// (0xFF) notation into `out`; false on anything else or overflow of 64 bits.
bool parseMagnitude(std::string_view s, std::uint64_t& out) {
    unsigned base = 10;
    if (s.size() > 2 && (s.starts_with("0X"))) {
        base = 16;
        s.remove_prefix(2);
    } else if (const auto hash = s.find('#'); hash != std::string_view::npos) {
        const std::string_view b = s.substr(0, hash);
        if (b == "16") {
            base = 16;
        } else if (b == "8") {
            base = 8;
        } else if (b == "2") {
            base = 2;
        } else {
            return false;
        }
        s.remove_prefix(hash + 1);
    }
    if (s.empty() || s.front() == '_' || s.back() == '_') {
        return false;
    }
    std::uint64_t v = 0;
    for (char c : s) {
        if (c == '_') {
            continue;
        }
        unsigned d = 0;
        if (c >= '0' && c <= '9') {
            d = static_cast<unsigned>(c - '0');
        } else if (c >= 'A' && c <= 'F') {
            d = static_cast<unsigned>(c - 'A' + 10);
        } else {
            return false;
        }
        if (d >= base || v > (std::numeric_limits<std::uint64_t>::max() - d) / base) {
            return false;
        }
        v = v * base + d;
    }
    out = v;
    return true;
}

// The value of one safe-state entry, as little-endian bytes of the address's width. Accepts a
// string (truST: "TRUE", "0", "16#FF", optionally typed "INT#-5", "REAL#1.5"), a TOML boolean
// for a bit, or a TOML integer.
bool parseSafeValue(const toml::node& node, const bytecode::DirectAddress& address, std::uint64_t& value,
                    std::string& error) {
    const unsigned bits = address.isBit() ? 1U : address.bytes() * 8U;
    const std::string widthName = address.isBit() ? "BOOL" : fmt::format("{}-bit", bits);
    if (const auto* b = node.as_boolean()) {
        if (!address.isBit()) {
            error = fmt::format("a boolean needs a bit address (%QX); {} takes a number",
                                bytecode::formatDirectAddress(address));
            return false;
        }
        value = b->get() ? 1 : 0;
        return true;
    }
    std::string text;
    if (const auto* i = node.as_integer()) {
        text = std::to_string(i->get());
    } else if (const auto* s = node.as_string()) {
        text = upper(std::string(common::trim(s->get(), " \t")));
    } else {
        error = fmt::format("expected a string such as \"FALSE\" or \"16#00FF\", found {}",
                            common::tomlTypeName(node.type()));
        return false;
    }
    const std::string written = text;
    Sign sign = Sign::Any;
    // An IEC type prefix ("INT#-5") must match the width of the address.
    if (const auto hash = text.find('#'); hash != std::string::npos && hash > 0 && text[0] >= 'A' && text[0] <= 'Z') {
        const std::string type = text.substr(0, hash);
        const auto* t =
            std::find_if(std::begin(kTypes), std::end(kTypes), [&](const TypeName& k) { return k.name == type; });
        if (t == std::end(kTypes)) {
            error = fmt::format("unknown type {} in value \"{}\"", type, written);
            return false;
        }
        if (t->width != address.width) {
            error = fmt::format("{} does not fit {} ({} bits)", type, bytecode::formatDirectAddress(address), bits);
            return false;
        }
        sign = t->sign;
        text = text.substr(hash + 1);
    }
    if (address.isBit()) {
        if (text == "TRUE" || text == "1") {
            value = 1;
            return true;
        }
        if (text == "FALSE" || text == "0") {
            value = 0;
            return true;
        }
        error = fmt::format("\"{}\" is not a BOOL value (TRUE, FALSE, 1 or 0)", written);
        return false;
    }
    if (sign == Sign::Real) {
        double d = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
        if (ec != std::errc() || end != text.data() + text.size()) {
            error = fmt::format("\"{}\" is not a real number", written);
            return false;
        }
        if (bits == 32) {
            const auto f = static_cast<float>(d);
            std::uint32_t u = 0;
            std::memcpy(&u, &f, sizeof u);
            value = u;
        } else {
            std::memcpy(&value, &d, sizeof value);
        }
        return true;
    }
    const bool negative = !text.empty() && text[0] == '-';
    std::uint64_t magnitude = 0;
    if (!parseMagnitude(negative || (!text.empty() && text[0] == '+') ? std::string_view(text).substr(1) : text,
                        magnitude)) {
        error = fmt::format("\"{}\" is not an integer (decimal, 16#FF, 8#17 or 2#1010)", written);
        return false;
    }
    const std::uint64_t mask = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
    const std::uint64_t signedMax = mask >> 1;
    bool fits = false;
    if (negative) {
        fits = sign != Sign::Unsigned && magnitude <= signedMax + 1;
        value = (~magnitude + 1) & mask;
    } else {
        fits = magnitude <= (sign == Sign::Signed ? signedMax : mask);
        value = magnitude;
    }
    if (!fits) {
        error = fmt::format("{} does not fit {} ({} bits{})", written, bytecode::formatDirectAddress(address), bits,
                            sign == Sign::Signed     ? ", signed"
                            : sign == Sign::Unsigned ? ", unsigned"
                                                     : "");
        return false;
    }
    return true;
}

struct SafeEntry {
    SafeValue value;
    std::uint32_t line = 0;
};

bool overlaps(const SafeValue& a, const SafeValue& b) {
    const std::uint64_t aEnd = std::uint64_t{a.range.first} + a.range.count;
    const std::uint64_t bEnd = std::uint64_t{b.range.first} + b.range.count;
    if (a.range.first >= bEnd || b.range.first >= aEnd) {
        return false;
    }
    return !(a.isBit && b.isBit && a.bit != b.bit);
}

void readSafeState(TableReader& io, bool byteAddressing, std::vector<SafeValue>& out) {
    const toml::array* entries = io.array("safe_state");
    if (entries == nullptr) {
        return;
    }
    std::vector<SafeEntry> seen;
    for (std::size_t i = 0; i < entries->size(); ++i) {
        const toml::node& n = *entries->get(i);
        const std::string path = indexedPath(io.keyPath("safe_state"), i);
        const auto* t = n.as_table();
        if (t == nullptr) {
            io.diagnostics().push_back(diagnosticAt(
                Severity::Error, io.file(), n.source(), path,
                fmt::format("expected a table {{address, value}}, found {}", common::tomlTypeName(n.type()))));
            continue;
        }
        TableReader entry(*t, path, io.file(), io.diagnostics());
        std::optional<std::string> text = entry.string("address", true);
        const toml::node* valueNode = entry.node("value");
        if (valueNode == nullptr) {
            entry.error("", "missing required key value");
        }
        entry.finish();
        if (!text) {
            continue;
        }
        bytecode::DirectAddress address;
        std::string error;
        if (!bytecode::parseDirectAddress(*text, address, error)) {
            entry.error("address", error);
            continue;
        }
        if (address.area != bytecode::IoArea::Output) {
            entry.error("address",
                        fmt::format("{} is not an output: the safe state applies to %Q addresses only", *text));
            continue;
        }
        const std::uint64_t first = address.byteOffset(byteAddressing);
        if (first + address.bytes() > std::numeric_limits<std::uint32_t>::max()) {
            entry.error("address", fmt::format("{} lies beyond the 4 GiB process image", *text));
            continue;
        }
        SafeValue v;
        v.address = *text;
        v.range = ByteRange{Area::Output, static_cast<std::uint32_t>(first), address.bytes()};
        v.isBit = address.isBit();
        v.bit = address.bit;
        if (valueNode == nullptr) {
            continue;
        }
        if (!parseSafeValue(*valueNode, address, v.value, error)) {
            entry.error("value", error);
            continue;
        }
        const std::uint32_t line = entry.where("address").begin.line;
        const auto clash =
            std::find_if(seen.begin(), seen.end(), [&](const SafeEntry& e) { return overlaps(e.value, v); });
        if (clash != seen.end()) {
            entry.error("address",
                        fmt::format("{} overlaps {} (line {}) in {} address mode; each output bit may have "
                                    "one safe value",
                                    *text, clash->value.address, clash->line, byteAddressing ? "byte" : "word"));
            continue;
        }
        seen.push_back({v, line});
        out.push_back(std::move(v));
    }
}

// Driver params truST defines that takt accepts and ignores (one list; each driver's own reader
// never sees them). `only` is the one value truST allows, when it has a choice.
struct IgnoredTrustParam {
    std::string_view driver;
    std::string_view key;
    std::string_view only;
    std::string_view why;
};

constexpr IgnoredTrustParam kIgnoredTrustParams[] = {
    {"gpio", "backend", "sysfs",
     "ignored: takt drives GPIO lines through the character device of `chip` (default gpiochip0), not sysfs; a "
     "line is an offset on that chip (on a Raspberry Pi, gpiochip0's offsets are the BCM numbers truST uses)"},
    {"gpio", "sysfs_base", "", "ignored: takt does not use sysfs for GPIO (see `chip`)"},
    {"mqtt", "mappings", "",
     "not supported yet: nothing is published or subscribed for these tags; takt's mqtt exchanges located "
     "variables: locate each tag (AT or VAR_CONFIG) and list it in publish = [...] (direction \"write\") or "
     "subscribe = [...] (direction \"read\")"},
};

// Warns for each ignored truST key of `spec` at its line and removes it from the params.
void dropIgnoredTrustParams(DriverSpec& spec, std::vector<ConfigDiagnostic>& out) {
    for (const IgnoredTrustParam& p : kIgnoredTrustParams) {
        const toml::node* node = spec.params.get(p.key);
        if (p.driver != spec.name || node == nullptr) {
            continue;
        }
        const std::string key = spec.source.keyPrefix + "." + std::string(p.key);
        const SourcePoint at = paramKeyLocation(spec, key);
        ConfigDiagnostic d;
        d.file = spec.source.file;
        d.line = at.line;
        d.column = at.column;
        d.key = key;
        if (!p.only.empty() && node->value<std::string>() != std::string(p.only)) {
            d.severity = Severity::Error;
            d.message = fmt::format("expected \"{}\" (truST's only value; takt uses the character device)", p.only);
        } else {
            d.severity = Severity::Warning;
            d.message = std::string(p.why);
        }
        out.push_back(std::move(d));
        spec.params.erase(p.key);
    }
}

// truST's examples name modbus-rtu devices "loop://NAME", which no serial port is: say at the key
// what takt runs instead (modbus_loop.h), so nobody takes a simulated slave for the field.
void noteLoopDevice(const DriverSpec& spec, std::vector<ConfigDiagnostic>& out) {
    const std::optional<std::string> device = spec.params["device"].value<std::string>();
    if (spec.name != "modbus-rtu" || !device || !device->starts_with("loop://") || device->size() == 7) {
        return;
    }
    const std::string key = spec.source.keyPrefix + ".device";
    const SourcePoint at = paramKeyLocation(spec, key);
    ConfigDiagnostic d;
    d.severity = Severity::Warning;
    d.file = spec.source.file;
    d.line = at.line;
    d.column = at.column;
    d.key = key;
    d.message = fmt::format("'{}' is not a serial port: takt answers this driver with a simulated slave of its own "
                            "(what it writes to holding registers and coils reads back from the input registers and "
                            "discrete inputs at the same addresses); name a device such as /dev/ttyUSB0 for the field",
                            *device);
    out.push_back(std::move(d));
}

DriverSpec makeSpec(std::string name, toml::table* params, std::string keyPrefix, const std::string& file,
                    const toml::source_region& where) {
    DriverSpec spec;
    spec.name = std::move(name);
    if (params != nullptr) {
        spec.params = std::move(*params);
    }
    spec.source = ParamSource{file, std::move(keyPrefix)};
    spec.line = where.begin.line;
    spec.column = where.begin.column;
    return spec;
}

// A driver entry's `status` key: the byte in %I or %M where its status block starts
// (kStatusBlockBytes, layout in driver.h). A byte address on a multiple of 4, so that the block's
// UINT and UDINT fields have word-mode addresses too (%IB100: %IW51, %ID26).
void readStatusKey(TableReader& r, bool byteAddressing, DriverSpec& spec) {
    const std::optional<std::string> text = r.string("status");
    if (!text) {
        return;
    }
    bytecode::DirectAddress address;
    std::string error;
    if (!bytecode::parseDirectAddress(*text, address, error)) {
        r.error("status", error);
        return;
    }
    if (address.area == bytecode::IoArea::Output) {
        r.error("status", fmt::format("{} is an output: the program reads the driver's status block, so it goes in "
                                      "%I or %M (such as %IB100)",
                                      *text));
        return;
    }
    if (address.width != bytecode::AddressWidth::Byte) {
        r.error("status", fmt::format("{} is not a byte address: give the byte where the {}-byte status block starts, "
                                      "such as %IB100",
                                      *text, kStatusBlockBytes));
        return;
    }
    const std::uint64_t first = address.byteOffset(byteAddressing);
    if (first % 4 != 0) {
        r.error("status", fmt::format("{} does not start on a multiple of 4 bytes: the block's UINT and UDINT need "
                                      "word and double-word addresses (%IB100 gives %IW51 and %ID26)",
                                      *text));
        return;
    }
    if (first + kStatusBlockBytes > std::numeric_limits<std::uint32_t>::max()) {
        r.error("status", fmt::format("{} lies beyond the 4 GiB process image", *text));
        return;
    }
    const toml::source_region at = r.where("status");
    spec.status = ByteRange{address.area == bytecode::IoArea::Input ? Area::Input : Area::Memory,
                            static_cast<std::uint32_t>(first), kStatusBlockBytes};
    spec.statusLine = at.begin.line;
    spec.statusColumn = at.begin.column;
}

void checkDriverName(TableReader& r, std::string_view key, const std::string& name) {
    if (name.empty()) {
        r.error(key, "must not be empty");
    } else if (name == "ethercat") {
        // truST projects name it; takt has no EtherCAT master. One error that says so, rather
        // than "unknown driver", so a user porting such a project knows it is not a typo.
        r.error(key, fmt::format("driver \"ethercat\" is not supported by takt: there is no EtherCAT master; use "
                                 "modbus-tcp, modbus-rtu, modbus-server, mqtt or gpio for field I/O (known: {})",
                                 detail::knownDriverNames()));
    } else if (!detail::isKnownDriverName(name)) {
        r.error(key, fmt::format("unknown driver \"{}\" (known: {})", name, detail::knownDriverNames()));
    }
}

void readDriverList(TableReader& io, toml::table& ioTable, bool byteAddressing, std::vector<DriverSpec>& out) {
    toml::array* list = ioTable["drivers"].as_array();
    if (list == nullptr) {
        return;
    }
    if (list->empty()) {
        io.error("drivers", "must list at least one driver");
    }
    for (std::size_t i = 0; i < list->size(); ++i) {
        toml::node& n = *list->get(i);
        const std::string path = indexedPath(io.keyPath("drivers"), i);
        auto* t = n.as_table();
        if (t == nullptr) {
            io.diagnostics().push_back(diagnosticAt(
                Severity::Error, io.file(), n.source(), path,
                fmt::format("expected a table {{name, params}}, found {}", common::tomlTypeName(n.type()))));
            continue;
        }
        TableReader entry(*t, path, io.file(), io.diagnostics());
        std::optional<std::string> name = entry.string("name", true);
        const toml::table* params = entry.table("params");
        const bool paramsOk = params != nullptr || t->get("params") == nullptr;
        DriverSpec status;
        readStatusKey(entry, byteAddressing, status);
        entry.finish();
        if (!name) {
            continue;
        }
        checkDriverName(entry, "name", *name);
        if (paramsOk) {
            out.push_back(makeSpec(*name, (*t)["params"].as_table(), path + ".params", io.file(), t->source()));
            out.back().status = status.status;
            out.back().statusLine = status.statusLine;
            out.back().statusColumn = status.statusColumn;
        }
    }
}

} // namespace

SourcePoint paramKeyLocation(const DriverSpec& spec, std::string_view keyPath) {
    SourcePoint best{spec.line, spec.column};
    const std::string prefix = spec.source.keyPrefix + ".";
    if (!keyPath.starts_with(prefix)) {
        return best;
    }
    const auto take = [&best](const toml::source_region& where) {
        if (where.begin.line != 0) {
            best = SourcePoint{where.begin.line, where.begin.column};
        }
    };
    const toml::node* at = &spec.params;
    std::string_view rest = keyPath.substr(prefix.size());
    // Components: a key up to the next '.' or '[', or an index "[n]".
    while (!rest.empty() && at != nullptr) {
        if (rest.front() == '.') {
            rest.remove_prefix(1);
            continue;
        }
        if (rest.front() == '[') {
            const std::size_t close = rest.find(']');
            std::size_t index = 0;
            const auto [ptr, ec] = std::from_chars(rest.data() + 1, rest.data() + std::min(close, rest.size()), index);
            const toml::array* array = at->as_array();
            if (close == std::string_view::npos || ec != std::errc{} || array == nullptr || index >= array->size()) {
                break;
            }
            at = array->get(index);
            take(at->source());
            rest.remove_prefix(close + 1);
            continue;
        }
        const std::size_t end = std::min(rest.find('.'), rest.find('['));
        const std::string_view key = rest.substr(0, end);
        const toml::table* table = at->as_table();
        at = nullptr;
        if (table != nullptr) {
            for (const auto& [k, v] : *table) {
                if (k.str() == key) {
                    take(k.source().begin.line != 0 ? k.source() : v.source());
                    at = &v;
                    break;
                }
            }
        }
        rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
    }
    return best;
}

namespace detail {

bool parseImageValue(const toml::node& node, const bytecode::DirectAddress& address, std::uint64_t& value,
                     std::string& error) {
    return parseSafeValue(node, address, value, error);
}

bool isKnownDriverName(std::string_view name) {
    const std::vector<std::string_view> registered = driverNames();
    return std::find(std::begin(kConfigDriverNames), std::end(kConfigDriverNames), name) !=
               std::end(kConfigDriverNames) ||
           std::find(registered.begin(), registered.end(), name) != registered.end();
}

std::string knownDriverNames() {
    std::vector<std::string_view> names(std::begin(kConfigDriverNames), std::end(kConfigDriverNames));
    for (std::string_view n : driverNames()) {
        if (std::find(names.begin(), names.end(), n) == names.end()) {
            names.push_back(n);
        }
    }
    return fmt::format("{}", fmt::join(names, ", "));
}

bool hasErrors(const std::vector<engine::ConfigDiagnostic>& diagnostics) {
    return std::any_of(diagnostics.begin(), diagnostics.end(),
                       [](const engine::ConfigDiagnostic& d) { return d.severity == Severity::Error; });
}

void sortDiagnostics(std::vector<engine::ConfigDiagnostic>& diagnostics) {
    std::stable_sort(diagnostics.begin(), diagnostics.end(),
                     [](const engine::ConfigDiagnostic& a, const engine::ConfigDiagnostic& b) {
                         return std::tie(a.file, a.line, a.column) < std::tie(b.file, b.line, b.column);
                     });
}

std::optional<IoConfig> readIoSection(toml::table& ioTable, const std::string& path, const std::string& file,
                                      bool byteAddressing, std::vector<engine::ConfigDiagnostic>& out) {
    const std::size_t before = out.size();
    IoConfig config;
    config.file = file;
    TableReader io(ioTable, path, file, out);
    std::optional<std::string> single = io.string("driver");
    const toml::table* params = io.table("params");
    const toml::array* list = io.array("drivers");
    DriverSpec status; // io.status, of the single-driver form
    readStatusKey(io, byteAddressing, status);
    if (single && list != nullptr) {
        io.error("drivers", "use either io.driver (with io.params) or io.drivers, not both");
    } else if (single) {
        checkDriverName(io, "driver", *single);
        config.drivers.push_back(makeSpec(*single, params != nullptr ? ioTable["params"].as_table() : nullptr,
                                          io.keyPath("params"), file, io.where("driver")));
        config.drivers.back().status = status.status;
        config.drivers.back().statusLine = status.statusLine;
        config.drivers.back().statusColumn = status.statusColumn;
    } else if (list != nullptr) {
        if (params != nullptr) {
            io.error("params", "io.params belongs to the single-driver form; give each entry of io.drivers its params");
        }
        if (status.status.count != 0) {
            io.error("status", "io.status belongs to the single-driver form; give each entry of io.drivers its status");
        }
        readDriverList(io, ioTable, byteAddressing, config.drivers);
    } else if (ioTable.get("driver") == nullptr && ioTable.get("drivers") == nullptr) {
        io.error("", "set io.driver (and [io.params]) or io.drivers = [{name, params}]");
    }
    readSafeState(io, byteAddressing, config.safeState);
    // Drivers resolve their own %I/%Q/%M params in the project's address mode.
    for (DriverSpec& spec : config.drivers) {
        spec.byteAddressing = byteAddressing;
        dropIgnoredTrustParams(spec, out);
        noteLoopDevice(spec, out);
    }
    io.finish();
    for (std::size_t i = before; i < out.size(); ++i) {
        if (out[i].severity == Severity::Error) {
            return std::nullopt;
        }
    }
    return config;
}

} // namespace detail

IoConfigResult parseIoConfig(std::string_view text, const std::string& file, bool byteAddressing) {
    IoConfigResult result;
    try {
        std::optional<toml::table> doc = engine::parseTomlText(text, file, result.diagnostics);
        if (!doc) {
            return result;
        }
        TableReader root(*doc, "", file, result.diagnostics);
        const toml::table* io = root.table("io", true);
        root.finish();
        if (io != nullptr) {
            result.config =
                detail::readIoSection(*(*doc)["io"].as_table(), "io", file, byteAddressing, result.diagnostics);
        }
        detail::sortDiagnostics(result.diagnostics);
        if (detail::hasErrors(result.diagnostics)) {
            result.config.reset();
        }
    } catch (const std::exception& e) {
        // Only allocation failure can get here; report it instead of terminating.
        result.config.reset();
        result.diagnostics.push_back(
            diagnosticAt(Severity::Error, file, {}, {}, fmt::format("internal error: {}", e.what())));
    }
    return result;
}

IoConfigResult loadIoConfig(const std::filesystem::path& file, bool byteAddressing) {
    return engine::loadConfigFile<IoConfigResult>(
        file,
        [&](const std::string& text, const std::string& path) { return parseIoConfig(text, path, byteAddressing); },
        [&](IoConfigResult& r) {
            if (r.config) {
                r.config->file = file;
            }
        });
}

std::vector<std::uint8_t> safeOutputImage(const IoConfig& io, std::size_t outputBytes) {
    std::vector<std::uint8_t> image(outputBytes, 0);
    for (const SafeValue& v : io.safeState) {
        if (v.range.area != Area::Output) {
            continue;
        }
        if (v.isBit) {
            if (v.range.first < outputBytes) {
                auto& byte = image[v.range.first];
                const auto mask = static_cast<std::uint8_t>(1U << v.bit);
                byte = static_cast<std::uint8_t>(v.value != 0 ? (byte | mask) : (byte & ~mask));
            }
            continue;
        }
        // Entries beyond the image (the program uses fewer output bytes) have nothing to drive.
        for (std::uint32_t k = 0; k < v.range.count && std::size_t{v.range.first} + k < outputBytes; ++k) {
            image[v.range.first + k] = static_cast<std::uint8_t>(v.value >> (8U * k));
        }
    }
    return image;
}

} // namespace takt::io
