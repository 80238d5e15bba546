// Elementary values of up to 64 bits shared between threads (docs/language-notes.md, "Data
// shared between tasks"): one thread's program writes a LINT global through the interpreter
// while another thread's program reads it 10^6 times on the same data image; no read may see
// half of one value and half of another.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "support/compile_text.h"
#include "takt/vm/vm.h"

namespace takt::vm {
namespace {

// Both halves of `counter` count together (+ 2^32 + 1 per write), so a torn read shows as a
// high half that differs from the low half.
const char* const kSource = R"(
VAR_GLOBAL
  counter : LINT;
END_VAR
PROGRAM Writer
  counter := counter + 4294967297;
END_PROGRAM
PROGRAM Reader
  VAR i : DINT; v : LWORD; torn : DINT; reads : DINT; seen : LWORD; END_VAR
  FOR i := 1 TO 1000 DO
    v := LINT_TO_LWORD(counter);
    IF SHR(v, 32) <> (v AND 16#FFFFFFFF) THEN
      torn := torn + 1;
    END_IF;
    IF v > seen THEN
      seen := v;
    END_IF;
  END_FOR;
  reads := reads + 1000;
END_PROGRAM
)";

const bytecode::ProgramInstance* instance(const bytecode::Module& m, const char* name) {
    for (const bytecode::ProgramInstance& p : m.programs) {
        if (p.name == name) {
            return &p;
        }
    }
    return nullptr;
}

template <typename T>
T read(const std::vector<std::uint8_t>& image, const bytecode::Module& m, const std::string& path) {
    for (const bytecode::VarEntry& v : m.variables) {
        if (v.path == path) {
            T out{};
            std::memcpy(&out, image.data() + v.offset, sizeof out);
            return out;
        }
    }
    ADD_FAILURE() << "no variable " << path;
    return T{};
}

TEST(SharedValue, LintWrittenByOneThreadIsNeverReadTornByAnother) {
    const auto compiled = takt::test::compileText(kSource);
    ASSERT_TRUE(compiled.program.ok()) << compiled.rendered();
    const bytecode::Module& m = *compiled.program.module;
    const bytecode::ProgramInstance* writer = instance(m, "Writer");
    const bytecode::ProgramInstance* reader = instance(m, "Reader");
    ASSERT_NE(writer, nullptr);
    ASSERT_NE(reader, nullptr);
    // Until each task has a stack of its own (the engine's task threads), the two runs share the
    // image's one stack region: only the reader may use it.
    ASSERT_EQ(m.pous[writer->pou].frameSize, 0u);
    for (const bytecode::VarEntry& v : m.variables) {
        if (v.path == "counter") {
            ASSERT_EQ(v.offset % 8, 0u) << "a LINT lies at a multiple of 8";
        }
    }

    std::vector<std::uint8_t> image(Vm::requiredImageSize(m));
    Vm writerVm(m, image);
    writerVm.resetImage();
    Vm readerVm(m, image);

    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> writes{0};
    std::thread writing([&] {
        std::uint64_t n = 0;
        while (!stop.load(std::memory_order_relaxed) && n < 50'000'000) {
            if (writerVm.runPou(writer->pou, writer->offset) != Trap::None) {
                break;
            }
            ++n;
        }
        writes.store(n);
    });
    bool ok = true;
    for (int run = 0; run < 1000 && ok; ++run) {
        ok = readerVm.runPou(reader->pou, reader->offset) == Trap::None;
    }
    stop.store(true);
    writing.join();
    ASSERT_TRUE(ok) << trapName(readerVm.lastTrap().code);

    EXPECT_EQ(read<std::int32_t>(image, m, "Reader.reads"), 1'000'000);
    EXPECT_EQ(read<std::int32_t>(image, m, "Reader.torn"), 0);
    // The writer really ran beside the reader: the reader saw values it wrote.
    EXPECT_GT(writes.load(), 0u);
    EXPECT_GT(read<std::uint64_t>(image, m, "Reader.seen"), 0u);
    EXPECT_EQ(read<std::uint64_t>(image, m, "counter"), writes.load() * 4294967297ull);
}

} // namespace
} // namespace takt::vm
