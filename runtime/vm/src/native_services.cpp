// The Vm's services for the native execution tier: the code the interpreter runs for the
// instructions that call into C++, reached from compiled code through native::Host. One
// implementation for both tiers is what keeps their results the same.
#include "vm_internal.h"

#include "takt/bytecode/value_compare.h"

namespace takt::vm {

Vm::NativeFbEntry Vm::nativeFbEntry(std::uint32_t pou) const noexcept {
    if (pou >= resolved_->fbLayouts.size() || resolved_->fbLayouts[pou].fn == nullptr) {
        return {};
    }
    const FbLayout& layout = resolved_->fbLayouts[pou];
    return {reinterpret_cast<const void*>(layout.fn), &layout, sizeof(FbLayout), module_->pous[pou].native};
}

const void* Vm::nativeFbContext() const noexcept {
    return &resolved_->context;
}

Trap Vm::callNativeFunction(std::uint32_t native, std::uint32_t args) noexcept {
    const NativeFn fn = nativeFn(static_cast<bytecode::Native>(native));
    if (fn == nullptr) [[unlikely]] {
        return Trap::InvalidCall;
    }
    const NativeContext nctx{image_.data(), static_cast<std::uint32_t>(image_.size()), module_->constSize, nowNs_,
                             wallNs_};
    return fn(nctx, image_.data() + args);
}

std::uint32_t Vm::dispatchTarget(std::uint32_t instance, std::uint32_t slot) const noexcept {
    return vm::dispatchTarget(*module_, resolved_->instanceSize, image_.data(), image_.size(), instance, slot);
}

bool Vm::moveString(std::uint32_t dst, std::uint32_t src, std::uint32_t cap, bool wide) noexcept {
    std::uint8_t* const image = image_.data();
    const std::uint8_t* const end = image + image_.size();
    return wide ? vm::moveString<std::uint16_t>(image + dst, image + src, cap, end)
                : vm::moveString<std::uint8_t>(image + dst, image + src, cap, end);
}

std::int32_t Vm::compareStrings(std::uint32_t a, std::uint32_t b, bool wide) const noexcept {
    const std::uint8_t* const image = image_.data();
    const std::uint8_t* const end = image + image_.size();
    return wide ? vm::compareStrings<std::uint16_t>(image + a, image + b, end)
                : vm::compareStrings<std::uint8_t>(image + a, image + b, end);
}

bool Vm::valuesEqual(std::uint32_t type, std::uint32_t a, std::uint32_t b) const noexcept {
    return bytecode::valuesEqual(*module_, type, image_.data() + a, image_.data() + b);
}

void Vm::recordAssertion(std::uint32_t a, std::uint32_t b, std::uint32_t message, std::uint32_t format,
                         std::uint32_t kind) noexcept {
    trap_.code = Trap::AssertionFailed;
    trap_.assertA = a;
    trap_.assertB = b;
    trap_.assertMessage = message;
    trap_.assertFormat = format;
    trap_.assertKind = kind;
}

} // namespace takt::vm
