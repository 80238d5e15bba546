// libFuzzer target: the shared line framer and JSON-RPC envelope on arbitrary bytes. The first
// byte picks the chunk size the input is fed in and the line cap (small, so over-long lines are
// common); every line must give a valid request or a coded error, and every response line written
// for it must read back with the same id.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "rpc/rpc_envelope.h"
#include "rpc/rpc_framer.h"

namespace {

using namespace takt::agent;

void require(bool ok) {
    if (!ok) {
        std::abort();
    }
}

void answer(std::string_view line, rpc::ParsedLine& scratch) {
    rpc::Request request;
    rpc::Error error;
    std::string response;
    if (rpc::parseRequest(line, scratch, request, error)) {
        require(request.params != nullptr && request.params->IsObject());
        require(!request.paramsError || request.paramsError->code == rpc::kInvalidParams);
        response = rpc::resultLine(request.id, R"({"ok":true})");
    } else {
        require(error.code == rpc::kParseError || error.code == rpc::kInvalidRequest);
        require(!error.message.empty());
        response = rpc::errorLine(request.id, error);
    }
    require(response.find('\n') == std::string::npos);
    rpc::ParsedLine back;
    rpc::Response read;
    require(rpc::parseResponse(response, back, read));
    require(read.id.kind == request.id.kind && read.id.text == request.id.text);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
        return 0;
    }
    const std::size_t chunk = 1 + (data[0] & 0x1f);
    const std::size_t cap = (data[0] & 0x80) != 0 ? kMaxLineBytes : 16 + (data[0] & 0x60);
    std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
    rpc::LineFramer framer(cap);
    rpc::ParsedLine scratch;
    const auto take = [&](rpc::LineFramer::Status s) {
        require(framer.buffered() <= cap + 1);
        if (s == rpc::LineFramer::Status::Line) {
            require(framer.line().size() <= cap && framer.line().find('\n') == std::string_view::npos);
            answer(framer.line(), scratch);
        }
    };
    while (!input.empty()) {
        std::string_view piece = input.substr(0, chunk);
        input.remove_prefix(piece.size());
        while (!piece.empty()) {
            take(framer.next(piece));
        }
    }
    take(framer.finish());
    // The whole input as one line too (what a direct caller of the servers' handleLine passes).
    answer(std::string_view(reinterpret_cast<const char*>(data), size), scratch);
    return 0;
}
