#pragma once
// A scratch directory for tests that need files on disk; removed with everything in it when
// the test ends.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace takt::test {

class TempDir {
public:
    TempDir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "takt-test-XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr) {
            std::abort(); // no scratch space: nothing a test could check
        }
        path_ = pattern;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    [[nodiscard]] const std::filesystem::path& path() const { return path_; }

    // Writes `text` to `relative` (creating parent directories) and returns the full path.
    std::filesystem::path write(const std::string& relative, std::string_view text) const {
        std::filesystem::path p = path_ / relative;
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary) << text;
        return p;
    }

private:
    std::filesystem::path path_;
};

} // namespace takt::test
