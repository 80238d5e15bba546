// libFuzzer target for the Sparkplug B NCMD decoder (agent/src/sparkplug): the bytes are an NCMD
// payload as a broker would deliver it, against a birth of one metric per IEC type. Whatever the
// bytes: no crash, a refusal writes nothing, and accepted writes, sent back as an NCMD by name,
// decode to the same writes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "sparkplug/sparkplug_payload.h"

namespace {

using namespace takt::agent::sparkplug;

const MetricTable& birth() {
    static const MetricTable table = [] {
        MetricTable t;
        // Every type a metric carries: IecType's values run from Bool to Enum, the last, so a
        // type added to the enumeration is fuzzed without a second list to keep.
        std::uint64_t alias = 0;
        for (int i = 0; i <= static_cast<int>(IecType::Enum); ++i) {
            const auto type = static_cast<IecType>(i);
            if (!t.add({"P/" + std::string(iecTypeName(type)), alias++, type})) {
                std::abort();
            }
        }
        return t;
    }();
    return table;
}

// Values compare by their bits: a NaN sent back is the same NaN.
bool sameValue(const Value& a, const Value& b) {
    if (a.index() != b.index()) {
        return false;
    }
    if (const auto* f = std::get_if<float>(&a)) {
        return std::memcmp(f, &std::get<float>(b), sizeof(float)) == 0;
    }
    if (const auto* d = std::get_if<double>(&a)) {
        return std::memcmp(d, &std::get<double>(b), sizeof(double)) == 0;
    }
    return a == b;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::vector<MetricWrite> writes{MetricWrite{}};
    Error error;
    if (!decodeCommand(std::span<const std::uint8_t>(data, size), birth(), writes, error)) {
        if (!writes.empty() || error.message.empty()) {
            std::abort(); // a refusal left writes behind, or said nothing
        }
        return 0;
    }
    Payload again;
    for (const MetricWrite& w : writes) {
        Metric m;
        m.name = w.name;
        m.type = w.type;
        m.value = w.value;
        if (w.type == IecType::String) {
            // protobuf-c strings end at their first NUL.
            std::string& s = std::get<std::string>(m.value);
            s.resize(std::strlen(s.c_str()));
        }
        again.metrics.push_back(std::move(m));
    }
    std::string bytes;
    if (!encodePayload(again, bytes, error)) {
        std::abort(); // an accepted value does not fit its own type
    }
    std::vector<MetricWrite> back;
    if (!decodeCommand(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()),
                       birth(), back, error) ||
        back.size() != writes.size()) {
        std::abort();
    }
    for (std::size_t i = 0; i < back.size(); ++i) {
        if (back[i].name != writes[i].name || !sameValue(back[i].value, again.metrics[i].value)) {
            std::abort();
        }
    }
    return 0;
}
