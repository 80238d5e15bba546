#include "instance_offsets.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/PatternMatch.h>

#include <vector>

namespace takt::native {

using namespace llvm::PatternMatch;

llvm::PreservedAnalyses InstanceOffsets::run(llvm::Function& fn, llvm::FunctionAnalysisManager& /*fam*/) {
    std::vector<llvm::GetElementPtrInst*> split;
    for (llvm::Instruction& i : llvm::instructions(fn)) {
        auto* gep = llvm::dyn_cast<llvm::GetElementPtrInst>(&i);
        llvm::Value* base = nullptr;
        // Byte addresses only: the translator addresses the image in i8 (a zext of an add with
        // no unsigned wrap is the add of the zexts, so the split address is the same).
        if (gep != nullptr && gep->getNumIndices() == 1 && gep->getSourceElementType()->isIntegerTy(8) &&
            match(gep->getOperand(1), m_ZExt(m_NUWAdd(m_Value(base), m_ConstantInt())))) {
            split.push_back(gep);
        }
    }
    for (llvm::GetElementPtrInst* gep : split) {
        auto* add = llvm::cast<llvm::BinaryOperator>(llvm::cast<llvm::ZExtInst>(gep->getOperand(1))->getOperand(0));
        const auto* c = llvm::cast<llvm::ConstantInt>(add->getOperand(1));
        llvm::IRBuilder<> b(gep);
        llvm::Type* i64 = gep->getOperand(1)->getType();
        llvm::Value* at = b.CreateGEP(b.getInt8Ty(), gep->getPointerOperand(), b.CreateZExt(add->getOperand(0), i64));
        llvm::Value* member = b.CreateGEP(b.getInt8Ty(), at, llvm::ConstantInt::get(i64, c->getZExtValue()));
        if (gep->isInBounds()) {
            // Both lie between the image and the in-bounds address (the offsets are unsigned).
            llvm::cast<llvm::GetElementPtrInst>(at)->setIsInBounds(true);
            llvm::cast<llvm::GetElementPtrInst>(member)->setIsInBounds(true);
        }
        member->takeName(gep);
        gep->replaceAllUsesWith(member);
        gep->eraseFromParent();
    }
    if (split.empty()) {
        return llvm::PreservedAnalyses::all();
    }
    llvm::PreservedAnalyses kept;
    kept.preserveSet<llvm::CFGAnalyses>();
    return kept;
}

} // namespace takt::native
