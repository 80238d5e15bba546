#include "object_cache.h"

#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Weverything"
#endif
#include <llvm/ADT/SmallVector.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/SHA1.h>
#include <llvm/Support/raw_ostream.h>
#if defined(__clang__)
#pragma clang diagnostic pop
#endif

#include <algorithm>

namespace takt::native {

std::string objectKey(const llvm::Module& mod, std::string_view options) {
    llvm::SmallVector<char, 0> bitcode;
    llvm::raw_svector_ostream out(bitcode);
    llvm::WriteBitcodeToFile(mod, out);
    llvm::SHA1 sha;
    sha.update(llvm::StringRef(bitcode.data(), bitcode.size()));
    sha.update(llvm::StringRef(options.data(), options.size()));
    return sha.final().str();
}

ObjectFile ObjectCache::find(const std::string& key) const {
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto found = objects_.find(key);
    return found != objects_.end() ? found->second.object : nullptr;
}

void ObjectCache::add(const std::string& key, ObjectFile object) {
    const std::lock_guard<std::mutex> lock(mutex_);
    // Counted with the program its compile will finish as, so another compile that finishes
    // meanwhile keeps it.
    objects_[key] = Entry{std::move(object), programs_ + 1};
}

void ObjectCache::compiled(const std::vector<std::string>& keys, const std::vector<ObjectFile>& objects) {
    std::vector<std::string> sorted = keys;
    std::sort(sorted.begin(), sorted.end());
    const std::lock_guard<std::mutex> lock(mutex_);
    if (sorted != lastKeys_) {
        ++programs_;
        lastKeys_ = std::move(sorted);
    }
    for (std::size_t i = 0; i < keys.size() && i < objects.size(); ++i) {
        objects_[keys[i]] = Entry{objects[i], programs_};
    }
    std::erase_if(objects_, [this](const auto& entry) { return entry.second.used + 1 < programs_; });
}

ObjectCache& objectCache() {
    static ObjectCache cache;
    return cache;
}

} // namespace takt::native
