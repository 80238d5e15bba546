// The live runtime as a ValueFeed (value_feed.h): the subscribed variables of all sessions as
// one set of slots, resolved against the program the next command applies to, handed to the
// scan thread as one ValueWatch with a SetWatch command whenever the set changes, and read back
// at each round of sampling. Rendering is var.read's (control_access.cpp).
#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "control/control_runtime_internal.h"

namespace takt::agent {

const engine::PathIndex& RuntimeControl::paths() const {
    // The index holds the program it indexes, so an address equal to module_'s is that program.
    if (paths_ == nullptr || paths_->modulePtr() != module_) {
        paths_ = std::make_shared<const engine::PathIndex>(module_);
    }
    return *paths_;
}

std::vector<std::string> RuntimeControl::match(std::string_view pattern, std::size_t limit) const {
    std::vector<std::string> out;
    for (const bytecode::VarEntry* v : listedVariables(*module_, pattern)) {
        if (out.size() > limit) {
            break;
        }
        out.push_back(v->path);
    }
    return out;
}

bool RuntimeControl::acquire(std::span<const std::string> names, std::string_view member,
                             std::vector<std::uint32_t>& slots, ControlAnswer& error) {
    std::vector<ctl::Target> targets(names.size());
    std::size_t bytes = 0;
    for (const Watched& w : watched_) {
        bytes += w.users > 0 ? w.target.range.valueBytes() : 0;
    }
    for (std::size_t i = 0; i < names.size(); ++i) {
        const std::string where = fmt::format("{}[{}]", member, i);
        if (!ctl::resolveVar(paths(), names[i], targets[i], error, where)) {
            return false;
        }
        bytes += targets[i].range.valueBytes();
    }
    const std::size_t inUse = static_cast<std::size_t>(
        std::count_if(watched_.begin(), watched_.end(), [](const Watched& w) { return w.users > 0; }));
    if (inUse + names.size() > kMaxSlots || bytes > engine::ValueWatch::kMaxBytes) {
        error = ControlAnswer::error(
            rpc::kCommandFailed,
            fmt::format("the runtime watches {} variables for all subscriptions, the most it publishes is {} "
                        "variables or {} KiB; unsubscribe others first",
                        inUse, kMaxSlots, engine::ValueWatch::kMaxBytes >> 10));
        return false;
    }
    // One slot per path: two subscriptions of the same variable share what is published. The
    // slots in use by path and the free ones, found in one pass: a subscription of 1,000 names
    // beside 10,000 watched ones must not compare every name with every slot.
    std::unordered_map<std::string_view, std::uint32_t> inUseByName;
    std::vector<std::uint32_t> free;
    for (std::uint32_t s = 0; s < watched_.size(); ++s) {
        if (watched_[s].users > 0) {
            inUseByName.emplace(watched_[s].target.name, s);
        } else {
            free.push_back(s);
        }
    }
    std::reverse(free.begin(), free.end()); // the lowest free slot is taken first, as before
    // Taking a slot may grow watched_, which moves the names the map points to: the slots are
    // found first and filled after.
    slots.clear();
    std::vector<std::uint32_t> fresh; // targets[i] goes to a slot taken by this call
    std::unordered_map<std::string_view, std::uint32_t> taken;
    std::uint32_t next = static_cast<std::uint32_t>(watched_.size());
    for (std::size_t i = 0; i < targets.size(); ++i) {
        const std::string_view name = targets[i].name;
        if (const auto it = inUseByName.find(name); it != inUseByName.end()) {
            slots.push_back(it->second);
        } else if (const auto again = taken.find(name); again != taken.end()) {
            slots.push_back(again->second); // named twice in this call
        } else {
            std::uint32_t s = next;
            if (!free.empty()) {
                s = free.back();
                free.pop_back();
            } else {
                ++next;
            }
            taken.emplace(name, s);
            fresh.push_back(static_cast<std::uint32_t>(i));
            slots.push_back(s);
        }
    }
    watched_.resize(next);
    for (const std::uint32_t i : fresh) {
        Watched& w = watched_[slots[i]];
        w.signature = engine::typeSignature(*module_, targets[i].type);
        w.target = std::move(targets[i]);
        w.gone = false;
        watchDirty_ = true;
    }
    for (const std::uint32_t s : slots) {
        ++watched_[s].users;
    }
    resolvedIn_ = module_;
    return true;
}

void RuntimeControl::release(std::span<const std::uint32_t> slots) {
    for (const std::uint32_t s : slots) {
        if (s < watched_.size() && watched_[s].users > 0 && --watched_[s].users == 0) {
            watchDirty_ = true;
        }
    }
}

// The watch of every slot in use, for the program the next command applies to, submitted to the
// scan thread; the watch it replaces is freed once the scan thread has let go of it.
void RuntimeControl::rebuildWatch() {
    if (resolvedIn_ != module_) {
        // An online change: every path is resolved again in the new program.
        for (Watched& w : watched_) {
            if (w.users > 0) {
                ControlAnswer ignored;
                ctl::Target t;
                w.gone = !ctl::resolveVar(paths(), w.target.name, t, ignored, "names") ||
                         engine::typeSignature(*module_, t.type) != w.signature;
                if (!w.gone) {
                    w.target = std::move(t);
                }
            }
        }
        resolvedIn_ = module_;
    }
    std::vector<engine::ImageRange> ranges;
    std::vector<std::int32_t> index(watched_.size(), -1);
    for (std::size_t s = 0; s < watched_.size(); ++s) {
        if (watched_[s].users > 0 && !watched_[s].gone) {
            index[s] = static_cast<std::int32_t>(ranges.size());
            ranges.push_back(watched_[s].target.range);
        }
    }
    auto next = ranges.empty() ? nullptr : std::make_shared<engine::ValueWatch>(module_.get(), std::move(ranges));
    auto p = std::make_unique<Pending>();
    p->command.kind = engine::ScanCommandKind::SetWatch;
    p->command.watch = next.get();
    p->watch = watch_; // kept until the scan thread has let go of it
    ControlReplyFn ignore = [](const ControlAnswer&) {};
    if (!submit(std::move(p), ignore)) {
        return; // the queue is full or the loop is not cycling: the next round tries again
    }
    watch_ = std::move(next);
    watchIndex_ = std::move(index);
    watchDirty_ = false;
}

bool RuntimeControl::refresh() {
    if (watchDirty_ || (resolvedIn_ != nullptr && resolvedIn_ != module_)) {
        rebuildWatch();
    }
    if (watch_ == nullptr) {
        return false;
    }
    return watch_->read(sample_, sampleCycle_);
}

std::span<const std::uint8_t> RuntimeControl::bytes(std::uint32_t slot) const {
    if (watch_ == nullptr || slot >= watchIndex_.size() || watchIndex_[slot] < 0) {
        return {};
    }
    const auto i = static_cast<std::size_t>(watchIndex_[slot]);
    const std::size_t at = watch_->at(i);
    const std::size_t n = watch_->ranges()[i].valueBytes();
    return at + n <= sample_.size() ? std::span<const std::uint8_t>(sample_.data() + at, n)
                                    : std::span<const std::uint8_t>();
}

void RuntimeControl::render(std::uint32_t slot, std::span<const std::uint8_t> bytes, bool iec, std::string& out,
                            std::optional<double>& number) const {
    const ctl::Target& t = watched_[slot].target;
    // An elementary value is built in this buffer: a Document would take a 64 KiB chunk from the
    // heap for every value, and every changed value of every subscription is rendered.
    alignas(std::max_align_t) char scratch[1024];
    engine::JsonAllocator alloc(scratch, sizeof scratch);
    rapidjson::Value v;
    ctl::encodeTyped(*module_, t, bytes.data(), v, alloc); // resolved in it (refresh())
    number.reset();
    if (v.IsObject()) {
        const auto it = v.FindMember("value");
        if (it != v.MemberEnd() && it->value.IsNumber()) {
            number = it->value.GetDouble();
        }
    }
    if (iec) {
        out += ctl::renderTyped(v, true);
    } else {
        rpc::appendJson(v, out);
    }
}

} // namespace takt::agent
