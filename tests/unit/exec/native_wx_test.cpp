// The native tier under the rule the shipped takt.service sets (MemoryDenyWriteExecute=yes): no
// mapping writable and executable at once, no mapping made executable after the fact. systemd
// applies it as the kernel's PR_SET_MDWE (Linux 6.3 and later) or, on older kernels, as a seccomp
// filter; each test runs the tier in a child process under one of them (neither can be lifted
// again) and asserts the bench programs still compile to native code and leave the same state as
// the interpreter after every scan. ctest -L native.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <string>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../../bench/native/st_program.h"
#include "support/image_state.h"
#include "support/paths.h"
#include "takt/native/native.h"

#ifndef PR_SET_MDWE
#define PR_SET_MDWE 65
#define PR_MDWE_REFUSE_EXEC_GAIN 1
#endif

namespace takt::engine {
namespace {

// systemd's MemoryDenyWriteExecute= filter (seccomp-util.c, seccomp_memory_deny_write_execute):
// EPERM for mmap with PROT_WRITE and PROT_EXEC, for mprotect and pkey_mprotect adding PROT_EXEC.
bool installSeccompRule() {
    constexpr unsigned kWriteExec = PROT_WRITE | PROT_EXEC;
    constexpr unsigned kDeny = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
#if defined(__x86_64__)
    constexpr unsigned kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
    constexpr unsigned kArch = AUDIT_ARCH_AARCH64;
#endif
    // The low 32 bits of the prot argument (args[2]) on a little-endian machine.
    constexpr unsigned kProt = offsetof(seccomp_data, args) + 2 * sizeof(std::uint64_t);
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 0, 4),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kProt),
        BPF_STMT(BPF_ALU | BPF_AND | BPF_K, kWriteExec),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kWriteExec, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, kDeny),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mprotect, 1, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pkey_mprotect, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kProt),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, kDeny),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog program{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
    return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
           ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) == 0;
}

enum class Rule { Mdwe, Seccomp };

// The child: under `rule`, a write+execute mapping must be refused, and every bench program must
// run natively with the interpreter's state after each of 100 scans. Its exit status says which
// check failed (0: all held); what failed is on stderr.
int childUnder(Rule rule) {
    if (rule == Rule::Mdwe ? ::prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN, 0, 0, 0) != 0 : !installSeccompRule()) {
        std::perror("installing the rule");
        return 2;
    }
    void* wx = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (wx != MAP_FAILED) {
        std::fprintf(stderr, "a write+execute mapping was allowed: the rule is not in force\n");
        return 3;
    }
    for (const char* name : {"int_arith", "real_math", "fb_calls", "timers_edges", "array_struct"}) {
        const std::string path = std::string(TAKT_SOURCE_DIR) + "/bench/programs/" + name + ".st";
        bench::StProgram interp;
        bench::StProgram compiled;
        std::string error;
        if (!interp.load(path, error, Execution::Interpreter) || !compiled.load(path, error, Execution::Native)) {
            std::fprintf(stderr, "%s: %s\n", name, error.c_str());
            return 4;
        }
        if (compiled.executionStatus() != "native") {
            std::fprintf(stderr, "%s: %s\n", name, compiled.executionStatus().c_str());
            return 5;
        }
        for (int n = 0; n < 100; ++n) {
            if (!interp.scan() || !compiled.scan() ||
                takt::test::stateOf(interp.program()) != takt::test::stateOf(compiled.program())) {
                std::fprintf(stderr, "%s: the tiers differ after scan %d\n", name, n + 1);
                return 6;
            }
        }
    }
    return 0;
}

int runUnder(Rule rule) {
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::_exit(childUnder(rule));
    }
    int status = 0;
    if (pid < 0 || ::waitpid(pid, &status, 0) != pid) {
        return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(NativeTierWriteExecute, RunsUnderKernelMdwe) {
    if (!native::available()) {
        GTEST_SKIP() << "takt built without the native tier";
    }
    EXPECT_EQ(runUnder(Rule::Mdwe), 0) << "see stderr: 2 rule, 3 rule not in force, 4 load, 5 not native, 6 differ";
}

TEST(NativeTierWriteExecute, RunsUnderSystemdSeccompRule) {
    if (!native::available()) {
        GTEST_SKIP() << "takt built without the native tier";
    }
    EXPECT_EQ(runUnder(Rule::Seccomp), 0) << "see stderr: 2 rule, 3 rule not in force, 4 load, 5 not native, 6 differ";
}

} // namespace
} // namespace takt::engine
