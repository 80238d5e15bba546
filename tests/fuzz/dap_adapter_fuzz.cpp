// libFuzzer target: `takt dap`'s request handling on arbitrary message bodies, not attached to a
// runtime (a body that names `attach` is skipped: it would connect to whatever endpoint the input
// names). Every body the adapter sends back is one JSON object with a `type`, and every request
// that is a request is answered exactly once.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <rapidjson/document.h>

#include "takt/agent/dap_adapter.h"

namespace {

void require(bool ok) {
    if (!ok) {
        std::abort();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view body(reinterpret_cast<const char*>(data), size);
    if (body.find("attach") != std::string_view::npos) {
        return 0;
    }
    takt::agent::DapAdapter adapter;
    for (const std::string& out : adapter.handleMessage(body)) {
        rapidjson::Document d;
        d.Parse(out.c_str(), out.size());
        require(!d.HasParseError() && d.IsObject() && d.HasMember("type") && d["type"].IsString());
    }
    require(adapter.pollRuntime().empty());
    return 0;
}
