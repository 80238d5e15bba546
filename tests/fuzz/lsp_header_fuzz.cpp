// libFuzzer target: the language server's Content-Length framer on arbitrary bytes, fed in
// chunks of a size the first byte picks, with small caps so over-long headers and bodies are
// common. Every body handed out has the announced length and fits the cap; the framer never
// holds more than a cap; after a bad header it finds the next well-formed message.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "rpc/rpc_framer.h"

namespace {

using takt::agent::rpc::HeaderFramer;

void require(bool ok) {
    if (!ok) {
        std::abort();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
        return 0;
    }
    const std::size_t chunk = 1 + (data[0] & 0x1f);
    const std::size_t maxBody = 8 + (data[0] & 0xe0);
    const std::size_t maxHeader = 32 + (data[0] & 0x60);
    std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
    HeaderFramer framer(maxBody, maxHeader);
    while (!input.empty()) {
        std::string_view piece = input.substr(0, chunk);
        input.remove_prefix(piece.size());
        while (!piece.empty()) {
            const HeaderFramer::Status s = framer.next(piece);
            require(framer.buffered() <= maxBody + maxHeader);
            if (s == HeaderFramer::Status::Message) {
                require(framer.body().size() <= maxBody);
            } else if (s == HeaderFramer::Status::BadHeader || s == HeaderFramer::Status::TooLarge) {
                require(!framer.error().empty());
            }
        }
    }
    return 0;
}
