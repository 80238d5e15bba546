// libFuzzer target for the host-side view of `takt fleet status` (takt/agent/sparkplug_fleet.h):
// the first byte picks the message (NBIRTH, NDATA, NDEATH, a device's, a host's NCMD), the rest is
// its payload as a broker would deliver it, from any edge node. Whatever the bytes: no crash, a
// host's message is no edge node, and a birth that decodes has its bdSeq when it carried one.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "takt/agent/sparkplug_fleet.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
        return 0;
    }
    static constexpr std::string_view kTopics[] = {
        "spBv1.0/G/NBIRTH/N",  "spBv1.0/G/NDATA/N", "spBv1.0/G/NDEATH/N",
        "spBv1.0/G/DDATA/N/D", "spBv1.0/G/NCMD/N",  "spBv1.0/G/NBIRTH/N/D",
    };
    const std::string_view topic = kTopics[data[0] % std::size(kTopics)];
    const std::string_view payload(reinterpret_cast<const char*>(data + 1), size - 1);
    takt::agent::FleetView view("G");
    const auto node = view.take(topic, payload, "tcp://b:1883");
    const bool edgeNode = data[0] % std::size(kTopics) <= 3;
    if (node.has_value() != edgeNode || view.nodes().size() != (edgeNode ? 1U : 0U)) {
        std::abort();
    }
    // The same message again (a broker cluster delivers one message once per node listened to)
    // changes nothing but the count.
    if (edgeNode) {
        const takt::agent::EdgeNodeView first = view.nodes().at("N");
        (void)view.take(topic, payload, "tcp://b:1883");
        const takt::agent::EdgeNodeView& again = view.nodes().at("N");
        if (again.online != first.online || again.bdSeq != first.bdSeq || again.metrics != first.metrics ||
            again.programHash != first.programHash || again.messages != first.messages + 1) {
            std::abort();
        }
    }
    return 0;
}
