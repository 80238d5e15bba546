#pragma once
// Writing to a descriptor, for every layer that writes files, pipes or sockets by hand.
#include <string_view>

namespace takt::common {

// Writes all of `bytes` to `fd`, going on after short writes and EINTR; false (errno set) on an
// error.
[[nodiscard]] bool writeAll(int fd, std::string_view bytes);

} // namespace takt::common
