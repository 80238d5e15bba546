#pragma once
// Reading checked TOML configuration (runtime.toml, io.toml, board files, driver params) with
// one diagnostic style: every finding names file, line, column and the dotted key path. A
// TableReader walks one table: each accessor marks its key as known and reports a wrong type
// or range; finish() reports every key nobody asked for as unknown. Never throws.
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <toml++/toml.h>

#include "takt/engine/config.h"

namespace takt::engine {

// A diagnostic at a toml++ source position (line/column 0 when the node has none, e.g. a
// table created implicitly by a dotted header).
[[nodiscard]] ConfigDiagnostic diagnosticAt(ConfigDiagnostic::Severity severity, const std::string& file,
                                            const toml::source_region& where, std::string key, std::string message);

// Parses TOML text; on a syntax error appends one diagnostic with toml++'s line/column and
// returns nothing.
[[nodiscard]] std::optional<toml::table> parseTomlText(std::string_view text, const std::string& file,
                                                       std::vector<ConfigDiagnostic>& out);

// Reads a whole configuration file (bounded size); on failure appends a diagnostic naming the
// file and the OS reason.
[[nodiscard]] bool readConfigFile(const std::filesystem::path& path, std::string& text,
                                  std::vector<ConfigDiagnostic>& out);

// What every load*(file) of a configuration file does: read it (a failure is the result's one
// diagnostic), `parse(text, displayPath)` it, and let `stamp(result)` record the file in what was
// parsed. One shape for runtime.toml, io.toml, simulation.toml and board files.
template <class Result, class Parse, class Stamp>
[[nodiscard]] Result loadConfigFile(const std::filesystem::path& path, Parse&& parse, Stamp&& stamp) {
    Result result;
    std::string text;
    if (!readConfigFile(path, text, result.diagnostics)) {
        return result;
    }
    result = parse(text, path.string());
    stamp(result);
    return result;
}

// The path of element `index` of array `key` for diagnostics: "io.drivers[1]".
[[nodiscard]] std::string indexedPath(const std::string& arrayPath, std::size_t index);

class TableReader {
public:
    // `path` is the dotted key path of `table` ("" for the document root).
    TableReader(const toml::table& table, std::string path, std::string file, std::vector<ConfigDiagnostic>& out);

    // Each accessor marks `key` as known. Absent: nullopt/nullptr (an error first when
    // `required`). Present with the wrong type or out of range: an error and nullopt.
    std::optional<std::string> string(std::string_view key, bool required = false);
    std::optional<bool> boolean(std::string_view key, bool required = false);
    std::optional<std::int64_t> integer(std::string_view key, std::int64_t min, std::int64_t max,
                                        bool required = false);
    std::optional<double> number(std::string_view key, double min, double max, bool required = false);
    const toml::table* table(std::string_view key, bool required = false);
    const toml::array* array(std::string_view key, bool required = false);
    const toml::node* node(std::string_view key); // any type

    // A string that must be one of `choices` (compared exactly); the error lists them.
    template <typename E>
    std::optional<E> choice(std::string_view key, std::initializer_list<std::pair<std::string_view, E>> choices,
                            bool required = false) {
        std::optional<std::string> s = string(key, required);
        if (!s) {
            return std::nullopt;
        }
        std::string known;
        for (const auto& [name, value] : choices) {
            if (name == *s) {
                return value;
            }
            known += known.empty() ? "" : ", ";
            known += name;
        }
        error(key, "unknown value \"" + *s + "\" (expected one of: " + known + ")");
        return std::nullopt;
    }

    // An array of tables (`[[key]]`): calls `each(entry)` with a reader over each table, named by
    // its index (`key[2]`); an element that is not a table is an error there and is skipped.
    // False when `key` holds no array.
    // `key` as a list of globs over var.list paths ([runtime.opcua] and [runtime.sparkplug]
    // `expose`): each element a non-empty string, else an error naming it; appended to `out`.
    void globList(std::string_view key, std::vector<std::string>& out);
    template <typename Each> bool forEachTable(std::string_view key, Each&& each) {
        const toml::array* items = array(key);
        if (items == nullptr) {
            return false;
        }
        for (std::size_t i = 0; i < items->size(); ++i) {
            if (const toml::table* t = tableAt(*items, key, i)) {
                TableReader entry(*t, indexedPath(keyPath(key), i), file_, out_);
                each(entry);
            }
        }
        return true;
    }

    // Keys accepted without being read (checked elsewhere, or deliberately ignored).
    void accept(std::string_view key);

    // Reports every key not marked by an accessor or accept() as unknown, listing the known
    // ones in the message. Call once, after all accessors.
    void finish();

    void error(std::string_view key, std::string message);
    void warning(std::string_view key, std::string message);

    [[nodiscard]] std::string keyPath(std::string_view key) const;
    [[nodiscard]] const std::string& path() const noexcept { return path_; }
    [[nodiscard]] const std::string& file() const noexcept { return file_; }
    [[nodiscard]] const toml::table& raw() const noexcept { return table_; }
    [[nodiscard]] std::vector<ConfigDiagnostic>& diagnostics() noexcept { return out_; }
    // The source position of `key` (its key text), or of the table when the key is absent.
    [[nodiscard]] toml::source_region where(std::string_view key) const;
    // The same as a ConfigPosition, for checks made after loading (a token file's contents).
    [[nodiscard]] ConfigPosition position(std::string_view key) const;

private:
    // Element `index` of the array at `key` as a table, or an error at it and nullptr.
    const toml::table* tableAt(const toml::array& items, std::string_view key, std::size_t index);
    const toml::node* lookup(std::string_view key, bool required, std::string_view expected);
    void typeError(std::string_view key, const toml::node& node, std::string_view expected);

    const toml::table& table_;
    std::string path_;
    std::string file_;
    std::vector<ConfigDiagnostic>& out_;
    std::vector<std::string> known_;
};

// [runtime.realtime] (runtime.toml and board files share it). scheduler = "fifo" without a
// priority means priority 80 (CONFIG.md); a priority without fifo is an error.
void readRealtime(TableReader& reader, RuntimeConfig::Realtime& out);

// A Sparkplug / MQTT broker URL, "tcp://host[:port]" or "ssl://host[:port]" (the port defaults to
// 1883 / 8883; an IPv6 host in brackets) -> a server; false when it is not one. [runtime.sparkplug]
// servers and `takt fleet status --servers` read it.
[[nodiscard]] bool parseSparkplugServer(std::string_view url, RuntimeConfig::Sparkplug::Server& out);

// "host:port" split at its last colon: false unless both are there and the port is 0..65535.
[[nodiscard]] bool splitHostPort(std::string_view text, std::string& host, std::uint16_t& port);
// 127.0.0.1, localhost, ::1 or [::1]: an address only this host can reach.
[[nodiscard]] bool isLoopbackHost(std::string_view host);

// [runtime.opcua] (config_opcua.cpp): the OPC UA server's keys, truST's and takt's.
void readOpcua(TableReader& reader, RuntimeConfig::Opcua& out);

// [runtime.sparkplug] (config_sparkplug.cpp): the Sparkplug B edge node's keys.
void readSparkplug(TableReader& reader, RuntimeConfig::Sparkplug& out);

} // namespace takt::engine
