// libFuzzer target for applied.toml, the record of the program an online change applied
// (agent/applied_program.h). Whatever the bytes: no crash, no exception; a record read names only
// hashes that are file names (64 lower-case hex digits, nothing a path could hide in), and a
// refusal names the file.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "takt/agent/applied_program.h"

namespace {

bool isHash(const std::string& s) {
    if (s.size() != 64) {
        return false;
    }
    for (char c : s) {
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
            return false;
        }
    }
    return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    takt::agent::AppliedRecord record;
    std::string error;
    if (takt::agent::parseAppliedRecord(text, "applied.toml", record, error)) {
        if (!error.empty() || !isHash(record.program) || (!record.replaced.empty() && !isHash(record.replaced))) {
            std::abort();
        }
    } else if (!error.starts_with("applied.toml")) {
        std::abort();
    }
    return 0;
}
