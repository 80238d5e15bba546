// The user's documentation stands alone: every relative link in README.md and docs/*.md leads to
// a file of the project, and no page sends the reader to a design note that is not shipped.
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/paths.h"

namespace takt::test {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> userPages() {
    const fs::path root(TAKT_SOURCE_DIR);
    std::vector<fs::path> pages{root / "README.md"};
    for (const auto& entry : fs::directory_iterator(root / "docs")) {
        if (entry.path().extension() == ".md") {
            pages.push_back(entry.path());
        }
    }
    return pages;
}

std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

TEST(DocsLinks, RelativeLinksLeadToProjectFiles) {
    const std::regex link(R"(\]\(([^)#\s]+)(#[^)]*)?\))");
    int links = 0;
    for (const fs::path& page : userPages()) {
        const std::string text = read(page);
        for (auto it = std::sregex_iterator(text.begin(), text.end(), link); it != std::sregex_iterator(); ++it) {
            const std::string target = (*it)[1].str();
            if (target.find("://") != std::string::npos || target.starts_with("mailto:")) {
                continue;
            }
            ++links;
            const fs::path resolved = fs::weakly_canonical(page.parent_path() / target);
            EXPECT_TRUE(fs::exists(resolved)) << page.filename() << " links " << target;
            EXPECT_TRUE(resolved.string().starts_with(fs::weakly_canonical(TAKT_SOURCE_DIR).string()))
                << page.filename() << " links outside the project: " << target;
        }
    }
    EXPECT_GT(links, 0);
}

// Pages name each other in the text as well ("see docs/control.md", "io-drivers.md"): each name
// is a page of the project.
TEST(DocsLinks, PagesNamedInTheTextExist) {
    const fs::path root(TAKT_SOURCE_DIR);
    const std::regex name(R"(([A-Za-z0-9_./-]*[A-Za-z0-9_-]+\.md)\b)");
    int names = 0;
    for (const fs::path& page : userPages()) {
        const std::string text = read(page);
        for (auto it = std::sregex_iterator(text.begin(), text.end(), name); it != std::sregex_iterator(); ++it) {
            const std::string n = (*it)[1].str();
            if (n.find("://") != std::string::npos) {
                continue;
            }
            ++names;
            const bool found =
                fs::exists(page.parent_path() / n) || fs::exists(root / n) || fs::exists(root / "docs" / n);
            EXPECT_TRUE(found) << page.filename() << " names " << n;
        }
    }
    EXPECT_GT(names, 20);
}

TEST(DocsLinks, NoPageNamesANoteThatIsNotShipped) {
    static const char* const kNotShipped[] = {"LANGUAGE.md", "PROTOCOLS.md",    "CONFIG.md",
                                              "TARGETS.md",  "ARCHITECTURE.md", "STYLE.md",
                                              "../shared",   "seed 000",        "seed 001"};
    for (const fs::path& page : userPages()) {
        const std::string text = read(page);
        for (const char* name : kNotShipped) {
            EXPECT_EQ(text.find(name), std::string::npos) << page.filename() << " names " << name;
        }
    }
}

} // namespace
} // namespace takt::test
