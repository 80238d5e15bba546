#pragma once
// Authentication pieces of the control endpoint that need no socket: the configured tokens kept
// as SHA-256 digests and matched in constant time, the per-peer login back-off, and the parsed
// endpoint string.
#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "takt/agent/control.h"

namespace takt::agent::detail {

using Clock = std::chrono::steady_clock;

// The configured tokens. A presented token is hashed once and compared against every digest with
// CRYPTO_memcmp, so neither its length nor the position of the first differing byte changes the
// work done, and a prefix, suffix or padded token cannot match.
class TokenSet {
public:
    explicit TokenSet(const std::vector<ControlToken>& tokens);
    [[nodiscard]] bool empty() const { return digests_.empty(); }
    // The role of the matching token (the highest when several match), or nothing.
    [[nodiscard]] std::optional<Role> match(std::string_view presented) const;

private:
    using Digest = std::array<unsigned char, 32>;
    static Digest digest(std::string_view text);
    std::vector<std::pair<Digest, Role>> digests_;
};

// Failed logins per peer (IP address, or uid for Unix peers). From the fifth failure on, logins
// from that peer are refused for 1 s, 2 s, 4 s, ... (at most 5 min) without looking at the token.
class LoginBackoff {
public:
    static constexpr std::uint32_t kFreeFailures = 5;
    static constexpr std::chrono::milliseconds kBase{1000};
    static constexpr std::chrono::milliseconds kMax{300'000};
    static constexpr std::size_t kMaxPeers = 4096;

    // Milliseconds the peer still has to wait, 0 when a login may be tried now.
    [[nodiscard]] std::int64_t retryAfterMs(const std::string& peer, Clock::time_point now) const;
    void failed(const std::string& peer, Clock::time_point now);

private:
    struct Entry {
        std::uint32_t failures = 0;
        Clock::time_point blockedUntil{};
        Clock::time_point last{};
    };
    void prune(Clock::time_point now);
    std::unordered_map<std::string, Entry> peers_;
};

// The back-off key of a TCP/TLS peer from its address text: "ip:ADDRESS", except that every
// loopback address (127.0.0.0/8, ::1, ::ffff:127.x.y.z) is the one peer "ip:loopback". Any local
// process may connect from any of the 16 million 127.x.y.z addresses; keyed apart, each would start
// with a fresh back-off and guessing would go on unhindered.
[[nodiscard]] std::string loginPeerKey(std::string_view address);

// unix:///path | tcp://host:port | tls://host:port
struct Endpoint {
    enum class Kind : std::uint8_t { Unix, Tcp, Tls } kind = Kind::Unix;
    std::string path; // unix
    std::string host; // tcp/tls, without IPv6 brackets
    std::uint16_t port = 0;
};

[[nodiscard]] bool parseEndpoint(std::string_view text, Endpoint& out, std::string& error);
[[nodiscard]] const char* transportName(Endpoint::Kind kind) noexcept;

// Token-bucket rate limit of one connection: `perSecond` requests a second on average, bursts up
// to `perSecond`.
class RateLimiter {
public:
    explicit RateLimiter(std::uint32_t perSecond);
    // 0 when the request may go ahead (a token is taken), else the milliseconds until one frees.
    [[nodiscard]] std::int64_t take(Clock::time_point now);

private:
    double rate_;
    double tokens_;
    Clock::time_point last_;
};

} // namespace takt::agent::detail
