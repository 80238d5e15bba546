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

#include <set>

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
    return found != objects_.end() ? found->second : nullptr;
}

void ObjectCache::add(const std::string& key, ObjectFile object) {
    const std::lock_guard<std::mutex> lock(mutex_);
    objects_[key] = std::move(object);
}

void ObjectCache::keepOnly(const std::vector<std::string>& keys) {
    const std::set<std::string> used(keys.begin(), keys.end());
    const std::lock_guard<std::mutex> lock(mutex_);
    std::erase_if(objects_, [&used](const auto& entry) { return used.count(entry.first) == 0; });
}

std::size_t ObjectCache::size() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return objects_.size();
}

ObjectCache& objectCache() {
    static ObjectCache cache;
    return cache;
}

} // namespace takt::native
