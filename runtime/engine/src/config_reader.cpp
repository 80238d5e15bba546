// The shared TOML reading layer of every configuration file (config_reader.h).
#include "takt/engine/config_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <exception>

#include <fmt/format.h>

#include "takt/common/toml_names.h"

namespace takt::engine {

namespace {

// Configuration files are a few KiB; anything far larger is not one.
constexpr std::size_t kMaxConfigBytes = std::size_t{4} << 20;

ConfigDiagnostic::Severity constexpr kError = ConfigDiagnostic::Severity::Error;
ConfigDiagnostic::Severity constexpr kWarning = ConfigDiagnostic::Severity::Warning;

} // namespace

ConfigDiagnostic diagnosticAt(ConfigDiagnostic::Severity severity, const std::string& file,
                              const toml::source_region& where, std::string key, std::string message) {
    ConfigDiagnostic d;
    d.severity = severity;
    d.file = file;
    d.line = where.begin.line;
    d.column = where.begin.column;
    d.key = std::move(key);
    d.message = std::move(message);
    return d;
}

std::optional<toml::table> parseTomlText(std::string_view text, const std::string& file,
                                         std::vector<ConfigDiagnostic>& out) {
    // The packaged toml++ reports syntax errors by exception; they end here.
    try {
        return toml::parse(text, file);
    } catch (const toml::parse_error& e) {
        out.push_back(diagnosticAt(kError, file, e.source(), {}, std::string(e.description())));
    } catch (const std::exception& e) {
        out.push_back(diagnosticAt(kError, file, {}, {}, fmt::format("cannot parse: {}", e.what())));
    }
    return std::nullopt;
}

bool readConfigFile(const std::filesystem::path& path, std::string& text, std::vector<ConfigDiagnostic>& out) {
    auto fail = [&](std::string why) {
        out.push_back(diagnosticAt(kError, path.string(), {}, {}, fmt::format("cannot read: {}", why)));
        return false;
    };
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return fail(std::strerror(errno));
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
        const int err = S_ISDIR(st.st_mode) ? EISDIR : errno;
        ::close(fd);
        return fail(std::strerror(err));
    }
    text.clear();
    char buf[16384];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            const int err = errno;
            ::close(fd);
            return fail(std::strerror(err));
        }
        if (n == 0) {
            break;
        }
        text.append(buf, static_cast<std::size_t>(n));
        if (text.size() > kMaxConfigBytes) {
            ::close(fd);
            return fail(fmt::format("file is larger than {} MiB", kMaxConfigBytes >> 20));
        }
    }
    ::close(fd);
    return true;
}

bool splitHostPort(std::string_view text, std::string& host, std::uint16_t& port) {
    const std::size_t colon = text.rfind(':');
    if (colon == std::string_view::npos || colon == 0) {
        return false;
    }
    const std::string_view digits = text.substr(colon + 1);
    if (digits.empty() || digits.size() > 5 ||
        !std::all_of(digits.begin(), digits.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
        return false;
    }
    const int value = std::stoi(std::string(digits));
    if (value > 65535) {
        return false;
    }
    host = std::string(text.substr(0, colon));
    port = static_cast<std::uint16_t>(value);
    return true;
}

bool isLoopbackHost(std::string_view host) {
    return host == "127.0.0.1" || host == "localhost" || host == "::1" || host == "[::1]";
}

std::string indexedPath(const std::string& arrayPath, std::size_t index) {
    return fmt::format("{}[{}]", arrayPath, index);
}

TableReader::TableReader(const toml::table& table, std::string path, std::string file,
                         std::vector<ConfigDiagnostic>& out)
    : table_(table), path_(std::move(path)), file_(std::move(file)), out_(out) {}

std::string TableReader::keyPath(std::string_view key) const {
    if (path_.empty()) {
        return std::string(key);
    }
    return key.empty() ? path_ : path_ + "." + std::string(key);
}

toml::source_region TableReader::where(std::string_view key) const {
    if (auto it = table_.find(key); it != table_.end()) {
        return it->first.source().begin.line != 0 ? it->first.source() : it->second.source();
    }
    return table_.source();
}

ConfigPosition TableReader::position(std::string_view key) const {
    const toml::source_region at = where(key);
    return {at.begin.line, at.begin.column};
}

void TableReader::error(std::string_view key, std::string message) {
    out_.push_back(diagnosticAt(kError, file_, where(key), keyPath(key), std::move(message)));
}

void TableReader::warning(std::string_view key, std::string message) {
    out_.push_back(diagnosticAt(kWarning, file_, where(key), keyPath(key), std::move(message)));
}

void TableReader::accept(std::string_view key) {
    if (std::find(known_.begin(), known_.end(), key) == known_.end()) {
        known_.emplace_back(key);
    }
}

void TableReader::typeError(std::string_view key, const toml::node& node, std::string_view expected) {
    error(key, fmt::format("expected {}, found {}", expected, common::tomlTypeName(node.type())));
}

const toml::node* TableReader::lookup(std::string_view key, bool required, std::string_view expected) {
    accept(key);
    const toml::node* n = table_.get(key);
    if (n == nullptr && required) {
        error(key, fmt::format("missing required key (expected {})", expected));
    }
    return n;
}

std::optional<std::string> TableReader::string(std::string_view key, bool required) {
    const toml::node* n = lookup(key, required, "a string");
    if (n == nullptr) {
        return std::nullopt;
    }
    if (const auto* s = n->as_string()) {
        return s->get();
    }
    typeError(key, *n, "a string");
    return std::nullopt;
}

std::optional<bool> TableReader::boolean(std::string_view key, bool required) {
    const toml::node* n = lookup(key, required, "a boolean");
    if (n == nullptr) {
        return std::nullopt;
    }
    if (const auto* b = n->as_boolean()) {
        return b->get();
    }
    typeError(key, *n, "a boolean (true or false)");
    return std::nullopt;
}

std::optional<std::int64_t> TableReader::integer(std::string_view key, std::int64_t min, std::int64_t max,
                                                 bool required) {
    const toml::node* n = lookup(key, required, "an integer");
    if (n == nullptr) {
        return std::nullopt;
    }
    const auto* i = n->as_integer();
    if (i == nullptr) {
        typeError(key, *n, "an integer");
        return std::nullopt;
    }
    if (i->get() < min || i->get() > max) {
        error(key, fmt::format("{} is out of range (expected {}..{})", i->get(), min, max));
        return std::nullopt;
    }
    return i->get();
}

std::optional<double> TableReader::number(std::string_view key, double min, double max, bool required) {
    const toml::node* n = lookup(key, required, "a number");
    if (n == nullptr) {
        return std::nullopt;
    }
    double v = 0;
    if (const auto* f = n->as_floating_point()) {
        v = f->get();
    } else if (const auto* i = n->as_integer()) {
        v = static_cast<double>(i->get());
    } else {
        typeError(key, *n, "a number");
        return std::nullopt;
    }
    if (!std::isfinite(v) || v < min || v > max) {
        error(key, fmt::format("{} is out of range (expected {}..{})", v, min, max));
        return std::nullopt;
    }
    return v;
}

const toml::table* TableReader::table(std::string_view key, bool required) {
    const toml::node* n = lookup(key, required, "a table");
    if (n == nullptr) {
        return nullptr;
    }
    if (const auto* t = n->as_table()) {
        return t;
    }
    typeError(key, *n, "a table");
    return nullptr;
}

const toml::array* TableReader::array(std::string_view key, bool required) {
    const toml::node* n = lookup(key, required, "an array");
    if (n == nullptr) {
        return nullptr;
    }
    if (const auto* a = n->as_array()) {
        return a;
    }
    typeError(key, *n, "an array");
    return nullptr;
}

const toml::table* TableReader::tableAt(const toml::array& items, std::string_view key, std::size_t index) {
    const toml::node& n = *items.get(index);
    if (const auto* t = n.as_table()) {
        return t;
    }
    out_.push_back(diagnosticAt(kError, file_, n.source(), indexedPath(keyPath(key), index),
                                fmt::format("expected a table, found {}", common::tomlTypeName(n.type()))));
    return nullptr;
}

const toml::node* TableReader::node(std::string_view key) {
    return lookup(key, false, "");
}

void TableReader::finish() {
    for (const auto& [key, value] : table_) {
        if (std::find(known_.begin(), known_.end(), key.str()) != known_.end()) {
            continue;
        }
        std::string known;
        for (const std::string& k : known_) {
            known += known.empty() ? "" : ", ";
            known += k;
        }
        out_.push_back(diagnosticAt(kError, file_, key.source(), keyPath(key.str()),
                                    known.empty() ? std::string("unknown key")
                                                  : fmt::format("unknown key (known here: {})", known)));
    }
}

namespace {

// A list of CPU numbers (cpu_affinity, task_affinity.NAME): 0..1023, each once.
std::vector<int> readCpuList(TableReader& r, const toml::array& cpus, const std::string& path) {
    std::vector<int> out;
    for (std::size_t i = 0; i < cpus.size(); ++i) {
        const toml::node& n = *cpus.get(i);
        const auto* v = n.as_integer();
        if (v == nullptr || v->get() < 0 || v->get() > 1023) {
            r.diagnostics().push_back(diagnosticAt(ConfigDiagnostic::Severity::Error, r.file(), n.source(),
                                                   indexedPath(path, i), "expected a CPU number 0..1023"));
            continue;
        }
        const int cpu = static_cast<int>(v->get());
        if (std::find(out.begin(), out.end(), cpu) != out.end()) {
            r.diagnostics().push_back(diagnosticAt(ConfigDiagnostic::Severity::Error, r.file(), n.source(),
                                                   indexedPath(path, i), fmt::format("CPU {} is listed twice", cpu)));
            continue;
        }
        out.push_back(cpu);
    }
    return out;
}

} // namespace

void readRealtime(TableReader& r, RuntimeConfig::Realtime& out) {
    enum class Scheduler : std::uint8_t { Fifo, Other };
    if (auto s = r.choice<Scheduler>("scheduler", {{"fifo", Scheduler::Fifo}, {"other", Scheduler::Other}})) {
        out.fifo = *s == Scheduler::Fifo;
    }
    if (auto p = r.integer("priority", 1, 99)) {
        out.priority = static_cast<int>(*p);
        if (!out.fifo) {
            r.error("priority", "a priority needs scheduler = \"fifo\" (SCHED_OTHER has no static priority)");
        }
    } else if (out.fifo && r.raw().get("priority") == nullptr) {
        out.priority = 80; // CONFIG.md's recommended real-time priority
    }
    if (const toml::array* cpus = r.array("cpu_affinity")) {
        out.cpuAffinity = readCpuList(r, *cpus, r.keyPath("cpu_affinity"));
    }
    if (const toml::table* tasks = r.table("task_affinity")) {
        out.taskAffinity.clear();
        for (const auto& [name, node] : *tasks) {
            const std::string path = r.keyPath("task_affinity") + "." + std::string(name.str());
            if (const toml::array* cpus = node.as_array(); cpus != nullptr && !cpus->empty()) {
                out.taskAffinity.emplace_back(std::string(name.str()), readCpuList(r, *cpus, path));
            } else {
                r.diagnostics().push_back(diagnosticAt(ConfigDiagnostic::Severity::Error, r.file(), node.source(), path,
                                                       "expected a non-empty array of CPU numbers"));
            }
        }
    }
    if (auto m = r.boolean("lock_memory")) {
        out.lockMemory = *m;
    }
    // Microseconds (the kernel's PM QoS takes up to 2,000 s, "no constraint"), or false to leave
    // the system's setting alone under SCHED_FIFO too.
    if (const toml::node* n = r.node("cpu_dma_latency_us")) {
        constexpr std::int64_t kMaxUs = 2'000'000'000;
        if (const auto* b = n->as_boolean(); b != nullptr && !b->get()) {
            out.cpuDmaLatencyUs = -1;
        } else if (const auto* v = n->as_integer(); v != nullptr && v->get() >= 0 && v->get() <= kMaxUs) {
            out.cpuDmaLatencyUs = static_cast<std::int32_t>(v->get());
        } else {
            r.error("cpu_dma_latency_us", fmt::format("expected microseconds 0..{} or false", kMaxUs));
        }
    }
    r.finish();
}

} // namespace takt::engine

namespace takt::engine {

void TableReader::globList(std::string_view key, std::vector<std::string>& out) {
    const toml::array* globs = array(key);
    for (std::size_t i = 0; globs != nullptr && i < globs->size(); ++i) {
        const toml::node& n = *globs->get(i);
        const auto* s = n.as_string();
        if (s == nullptr || s->get().empty()) {
            out_.push_back(diagnosticAt(ConfigDiagnostic::Severity::Error, file_, n.source(),
                                        indexedPath(keyPath(key), i),
                                        "expected a glob over variable paths, e.g. \"Main.*\""));
            continue;
        }
        out.push_back(s->get());
    }
}

} // namespace takt::engine
