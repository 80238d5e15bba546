// RetiredObjects (retired_objects.h): batches of unlinked stop-map objects, freed by run counts.
#include "takt/agent/retired_objects.h"

#include <algorithm>

namespace takt::agent {

void RetiredObjects::retire(std::vector<std::shared_ptr<const void>> objects, std::vector<std::uint32_t> counts) {
    std::erase(objects, nullptr);
    if (!objects.empty()) {
        batches_.push_back(Batch{std::move(objects), std::move(counts)});
    }
}

void RetiredObjects::reclaim(const std::vector<std::uint32_t>& now) {
    std::erase_if(batches_, [&now](const Batch& b) {
        if (b.counts.size() != now.size()) {
            return true;
        }
        for (std::size_t t = 0; t < now.size(); ++t) {
            // Odd: a run was under way at the unlink; still the same count: it has not ended.
            if ((b.counts[t] & 1U) != 0 && now[t] == b.counts[t]) {
                return false;
            }
        }
        return true;
    });
}

std::size_t RetiredObjects::objects() const noexcept {
    std::size_t n = 0;
    for (const Batch& b : batches_) {
        n += b.objects.size();
    }
    return n;
}

} // namespace takt::agent
