#include "run_log.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>

namespace takt::cli {

namespace {

int syslogPriority(spdlog::level::level_enum level) {
    switch (level) {
    case spdlog::level::critical: return 2;
    case spdlog::level::err: return kPriorityError;
    case spdlog::level::warn: return kPriorityWarning;
    case spdlog::level::info: return 6;
    default: return 7; // debug, trace
    }
}

// %* in the pattern: "<N>", the line's syslog priority.
class PriorityFlag : public spdlog::custom_flag_formatter {
public:
    void format(const spdlog::details::log_msg& msg, const std::tm& /*time*/, spdlog::memory_buf_t& dest) override {
        const char digit = static_cast<char>('0' + syslogPriority(msg.level));
        const char prefix[] = {'<', digit, '>'};
        dest.append(prefix, prefix + sizeof prefix);
    }
    [[nodiscard]] std::unique_ptr<custom_flag_formatter> clone() const override {
        return std::make_unique<PriorityFlag>();
    }
};

} // namespace

bool stderrIsJournal() {
    const char* stream = std::getenv("JOURNAL_STREAM");
    if (stream == nullptr) {
        return false;
    }
    unsigned long long dev = 0;
    unsigned long long ino = 0;
    struct stat st {};
    // NOLINTNEXTLINE(cert-err34-c): a malformed value fails the match below, which is the answer.
    return std::sscanf(stream, "%llu:%llu", &dev, &ino) == 2 && ::fstat(STDERR_FILENO, &st) == 0 &&
           static_cast<unsigned long long>(st.st_dev) == dev && static_cast<unsigned long long>(st.st_ino) == ino;
}

std::shared_ptr<spdlog::logger> makeRunLogger(const std::string& level) {
    auto logger = std::make_shared<spdlog::logger>("takt", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    if (stderrIsJournal()) {
        auto formatter = std::make_unique<spdlog::pattern_formatter>();
        formatter->add_flag<PriorityFlag>('*').set_pattern("%*%l %v");
        logger->set_formatter(std::move(formatter));
    } else {
        logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
    }
    logger->set_level(spdlog::level::from_str(level));
    logger->flush_on(spdlog::level::trace);
    return logger;
}

std::string journalPrefix(int priority) {
    static const bool journal = stderrIsJournal();
    return journal ? "<" + std::to_string(priority) + ">" : std::string();
}

} // namespace takt::cli
