// libFuzzer: arbitrary text as a line of libmosquitto's log (mosquitto_log.h). Beyond "no crash":
// a reason is never empty, never starts or ends with a blank or ends with a full stop, and is
// part of the line.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "takt/io/mosquitto_log.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view line(reinterpret_cast<const char*>(data), size);
    const std::optional<std::string> reason = takt::io::mosquittoErrorReason(line);
    if (reason) {
        if (reason->empty() || reason->front() == ' ' || reason->back() == ' ' || reason->back() == '.' ||
            line.find(*reason) == std::string_view::npos) {
            std::abort();
        }
    }
    return 0;
}
