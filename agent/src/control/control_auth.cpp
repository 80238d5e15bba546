// Tokens, token files, login back-off, endpoint strings and the per-connection rate limit of the
// control endpoint (PROTOCOLS.md "Control endpoint").
#include "control/control_auth.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

namespace takt::agent {

const char* roleName(Role r) noexcept {
    switch (r) {
    case Role::Viewer: return "viewer";
    case Role::Operator: return "operator";
    case Role::Engineer: return "engineer";
    case Role::Admin: return "admin";
    }
    return "viewer";
}

bool roleByName(std::string_view name, Role& role) noexcept {
    for (const Role r : {Role::Viewer, Role::Operator, Role::Engineer, Role::Admin}) {
        if (name == roleName(r)) {
            role = r;
            return true;
        }
    }
    return false;
}

MethodAnswer MethodAnswer::result(std::string json) {
    ControlAnswer a;
    a.ok = true;
    a.json = std::move(json);
    return a;
}

MethodAnswer MethodAnswer::error(int code, std::string message, std::string data) {
    ControlAnswer a;
    a.code = code;
    a.message = std::move(message);
    a.data = std::move(data);
    return a;
}

namespace {

constexpr std::size_t kMinTokenBytes = 16;
constexpr std::size_t kMaxTokenFileBytes = 4096;

// Words that mark a token copied from an example rather than generated.
constexpr std::string_view kPlaceholderWords[] = {
    "changeme",  "change-me",  "change_me",  "placeholder", "<token>",      "your-token",  "your_token",
    "yourtoken", "replace-me", "replace_me", "example",     "insert-token", "secret-token"};

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

} // namespace

std::string tokenProblem(std::string_view token) {
    if (token.size() < kMinTokenBytes) {
        return fmt::format("the token is {} bytes; at least {} random bytes are needed", token.size(), kMinTokenBytes);
    }
    for (const char c : token) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x21 || u > 0x7e) {
            return "the token must be printable ASCII without spaces (e.g. `openssl rand -hex 32`)";
        }
    }
    if (token.find_first_not_of(token.front()) == std::string_view::npos) {
        return "the token repeats one character; generate a random one (e.g. `openssl rand -hex 32`)";
    }
    const std::string l = lower(token);
    for (std::string_view w : kPlaceholderWords) {
        if (l.find(w) != std::string::npos) {
            return fmt::format("the token looks like a placeholder ('{}'); generate a random one", w);
        }
    }
    if (token.front() == '<' && token.back() == '>') {
        return "the token looks like a placeholder ('<...>'); generate a random one";
    }
    return {};
}

bool readTokenFile(const std::string& path, std::string& token, std::string& error, std::string_view what) {
    token.clear();
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        error = fmt::format("{} '{}': {}", what, path, std::strerror(errno));
        return false;
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        error = fmt::format("{} '{}': not a regular file", what, path);
        return false;
    }
    if ((st.st_mode & 077) != 0) {
        ::close(fd);
        error = fmt::format("{} '{}': mode {:04o} lets other users read it; chmod 600 it", what, path,
                            static_cast<unsigned>(st.st_mode & 07777));
        return false;
    }
    std::string text;
    char buf[1024];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            error = fmt::format("{} '{}': {}", what, path, std::strerror(errno));
            ::close(fd);
            return false;
        }
        if (n == 0) {
            break;
        }
        text.append(buf, static_cast<std::size_t>(n));
        if (text.size() > kMaxTokenFileBytes) {
            ::close(fd);
            error = fmt::format("{} '{}': larger than {} bytes", what, path, kMaxTokenFileBytes);
            return false;
        }
    }
    ::close(fd);
    if (!text.empty() && text.back() == '\n') {
        text.pop_back();
        if (!text.empty() && text.back() == '\r') {
            text.pop_back();
        }
    }
    if (std::string why = tokenProblem(text); !why.empty()) {
        error = fmt::format("{} '{}': {}", what, path, why);
        return false;
    }
    token = std::move(text);
    return true;
}

namespace detail {

TokenSet::TokenSet(const std::vector<ControlToken>& tokens) {
    for (const ControlToken& t : tokens) {
        digests_.emplace_back(digest(t.secret), t.role);
    }
}

TokenSet::Digest TokenSet::digest(std::string_view text) {
    Digest d{};
    unsigned int len = 0;
    ::EVP_Digest(text.data(), text.size(), d.data(), &len, ::EVP_sha256(), nullptr);
    return d;
}

std::optional<Role> TokenSet::match(std::string_view presented) const {
    const Digest d = digest(presented);
    // Every digest is compared; the result is only looked at afterwards.
    int best = -1;
    for (const auto& [known, role] : digests_) {
        const int equal = ::CRYPTO_memcmp(known.data(), d.data(), d.size()) == 0 ? 1 : 0;
        const int r = static_cast<int>(role);
        best = equal != 0 && r > best ? r : best;
    }
    if (best < 0) {
        return std::nullopt;
    }
    return static_cast<Role>(best);
}

std::int64_t LoginBackoff::retryAfterMs(const std::string& peer, Clock::time_point now) const {
    auto it = peers_.find(peer);
    if (it == peers_.end() || it->second.blockedUntil <= now) {
        return 0;
    }
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(it->second.blockedUntil - now);
    return std::max<std::int64_t>(1, left.count());
}

void LoginBackoff::failed(const std::string& peer, Clock::time_point now) {
    if (peers_.size() >= kMaxPeers && peers_.find(peer) == peers_.end()) {
        prune(now);
    }
    Entry& e = peers_[peer];
    if (e.failures > 0 && now - e.last > kMax) {
        e.failures = 0; // quiet for longer than the longest back-off: start afresh
    }
    ++e.failures;
    e.last = now;
    if (e.failures >= kFreeFailures) {
        const std::uint32_t shift = std::min<std::uint32_t>(e.failures - kFreeFailures, 20);
        const auto wait = std::min<std::chrono::milliseconds>(kBase * (std::int64_t{1} << shift), kMax);
        e.blockedUntil = now + wait;
    }
}

void LoginBackoff::prune(Clock::time_point now) {
    // Drop peers whose back-off is over and who have been quiet for the longest back-off.
    std::erase_if(peers_, [&](const auto& kv) { return kv.second.blockedUntil <= now && now - kv.second.last > kMax; });
    if (peers_.size() < kMaxPeers) {
        return;
    }
    auto oldest = std::min_element(peers_.begin(), peers_.end(),
                                   [](const auto& a, const auto& b) { return a.second.last < b.second.last; });
    peers_.erase(oldest);
}

std::string loginPeerKey(std::string_view address) {
    std::string_view v4 = address;
    if (v4.starts_with("::ffff:")) {
        v4.remove_prefix(7); // IPv4-mapped, as a dual-stack socket reports IPv4 peers
    }
    if (address == "::1" || (v4.starts_with("127.") && v4.find(':') == std::string_view::npos)) {
        return "ip:loopback";
    }
    return "ip:" + std::string(address);
}

bool parseEndpoint(std::string_view text, Endpoint& out, std::string& error) {
    out = Endpoint{};
    if (text.starts_with("unix://")) {
        out.kind = Endpoint::Kind::Unix;
        out.path = std::string(text.substr(7));
        if (out.path.empty()) {
            error = fmt::format("endpoint '{}': unix:// needs a socket path (unix:///run/takt/takt.sock)", text);
            return false;
        }
        if (out.path.size() >= 108) {
            error = fmt::format("endpoint '{}': the socket path is longer than 107 bytes", text);
            return false;
        }
        if (out.path.find('\0') != std::string::npos) {
            error = fmt::format("endpoint '{}': the socket path contains a NUL byte", text);
            return false;
        }
        return true;
    }
    std::string_view rest;
    if (text.starts_with("tcp://")) {
        out.kind = Endpoint::Kind::Tcp;
        rest = text.substr(6);
    } else if (text.starts_with("tls://")) {
        out.kind = Endpoint::Kind::Tls;
        rest = text.substr(6);
    } else {
        error = fmt::format("endpoint '{}': expected unix:///PATH, tcp://HOST:PORT or tls://HOST:PORT", text);
        return false;
    }
    const std::size_t colon = rest.rfind(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 == rest.size()) {
        error = fmt::format("endpoint '{}': expected HOST:PORT after the scheme", text);
        return false;
    }
    std::string_view host = rest.substr(0, colon);
    if (host.front() == '[') {
        if (host.size() < 3 || host.back() != ']') {
            error = fmt::format("endpoint '{}': an IPv6 host is written [ADDRESS]", text);
            return false;
        }
        host = host.substr(1, host.size() - 2);
    } else if (host.find(':') != std::string_view::npos) {
        error = fmt::format("endpoint '{}': write an IPv6 host in brackets ([::1]:9001)", text);
        return false;
    }
    if (host.find_first_of("/ \t\r\n") != std::string_view::npos) {
        error = fmt::format("endpoint '{}': invalid host '{}'", text, host);
        return false;
    }
    const std::string_view port = rest.substr(colon + 1);
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc{} || end != port.data() + port.size() || value > 65535) {
        error = fmt::format("endpoint '{}': invalid port '{}' (0-65535)", text, port);
        return false;
    }
    out.host = std::string(host);
    out.port = static_cast<std::uint16_t>(value);
    return true;
}

const char* transportName(Endpoint::Kind kind) noexcept {
    switch (kind) {
    case Endpoint::Kind::Unix: return "unix";
    case Endpoint::Kind::Tcp: return "tcp";
    case Endpoint::Kind::Tls: return "tls";
    }
    return "unix";
}

RateLimiter::RateLimiter(std::uint32_t perSecond)
    : rate_(std::max<double>(1.0, perSecond)), tokens_(rate_), last_(Clock::now()) {}

std::int64_t RateLimiter::take(Clock::time_point now) {
    const double elapsed = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    tokens_ = std::min(rate_, tokens_ + elapsed * rate_);
    if (tokens_ >= 1.0) {
        tokens_ -= 1.0;
        return 0;
    }
    const double waitMs = (1.0 - tokens_) / rate_ * 1000.0;
    return std::max<std::int64_t>(1, static_cast<std::int64_t>(waitMs + 0.999));
}

} // namespace detail

} // namespace takt::agent
