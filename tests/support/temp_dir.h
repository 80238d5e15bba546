#pragma once
// A scratch directory for tests that need files on disk (projects, logs, certificates); removed
// with everything in it when the test ends.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
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
    // The same with the file's permission bits set to `mode` (token files must be private).
    std::filesystem::path write(const std::string& relative, std::string_view text, mode_t mode) const {
        std::filesystem::path p = write(relative, text);
        ::chmod(p.c_str(), mode);
        return p;
    }

private:
    std::filesystem::path path_;
};

// A file's bytes ("" when it cannot be read).
inline std::string readText(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

} // namespace takt::test
