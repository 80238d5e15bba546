// writeAll: the one loop every layer's file, pipe and socket writes go through.
#include <unistd.h>

#include <cerrno>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "takt/common/fd_io.h"

namespace takt::common {
namespace {

TEST(CommonFd, WriteAllDeliversEveryByteOrSaysItFailed) {
    // More than a pipe holds at once, so the write has to go on after short writes.
    std::string text(256 * 1024, '\0');
    for (std::size_t i = 0; i < text.size(); ++i) {
        text[i] = static_cast<char>('a' + i % 26);
    }
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    std::string got;
    std::thread reader([&] {
        char buf[4096];
        for (ssize_t n = 0; (n = ::read(fds[0], buf, sizeof buf)) > 0;) {
            got.append(buf, static_cast<std::size_t>(n));
        }
    });
    EXPECT_TRUE(writeAll(fds[1], text));
    ::close(fds[1]);
    reader.join();
    ::close(fds[0]);
    EXPECT_EQ(got, text);
    errno = 0;
    EXPECT_FALSE(writeAll(-1, "x"));
    EXPECT_EQ(errno, EBADF);
}

} // namespace
} // namespace takt::common
