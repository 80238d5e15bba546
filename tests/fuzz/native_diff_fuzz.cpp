// libFuzzer: a random, well-typed ST program built from the input (tests/support/native_diff)
// runs on the interpreter and on the native tier; any difference in the image after a cycle or
// in a fault, or a program that does not compile (a bug of the generator), aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "support/native_diff/st_gen.h"
#include "support/native_diff/tier_diff.h"
#include "takt/native/native.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (!takt::native::available()) {
        return 0;
    }
    takt::test::ByteChoices choices(data, size);
    takt::test::GenOptions options;
    options.calls = choices.below(4) != 0; // a quarter of the inputs stay within what the tier translates
    options.statements = 16;
    const takt::test::GeneratedProgram program = takt::test::generateProgram(choices, options);
    const takt::test::TierDiff d = takt::test::compareTiers(program.text, program.overflowTrap, 12, program.budget);
    if (!d.compiled) {
        std::fprintf(stderr, "generated program does not compile:\n%s\n%s\n", d.compileErrors.c_str(),
                     program.text.c_str());
        std::abort();
    }
    if (!d.difference.empty()) {
        std::fprintf(stderr, "tiers differ (%s, overflow %s, budget %llu): %s\n%s\n", d.status.c_str(),
                     program.overflowTrap ? "trap" : "wrap", static_cast<unsigned long long>(program.budget),
                     d.difference.c_str(), program.text.c_str());
        std::abort();
    }
    return 0;
}
