#pragma once
// Why a libmosquitto client's TLS connection failed, from a line of the client's log. Its return
// codes say only "A TLS error occurred." (or "Protocol error" when the broker ends the
// handshake); OpenSSL's reason ("OpenSSL Error[0]: error:0A000086:SSL routines::certificate
// verify failed") and its own ("Error: Unable to load client certificate "…".") reach only the
// log callback. The mqtt driver, the Sparkplug node and `takt fleet status` say it with the
// failure.
#include <mosquitto.h>

#include <cerrno>
#include <optional>
#include <string>
#include <string_view>

namespace takt::io {

// The reason in `line` of a libmosquitto log at MOSQ_LOG_ERR; nullopt for a line that gives none.
inline std::optional<std::string> mosquittoErrorReason(std::string_view line) {
    constexpr std::string_view kOpenSsl = "OpenSSL Error[";
    constexpr std::string_view kOwn = "Error: ";
    std::string_view reason;
    if (line.starts_with(kOpenSsl)) {
        // error:<code>:<library>:<function>:<reason>: the reason is after the last colon
        const std::size_t colon = line.rfind(':');
        reason = colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
    } else if (line.starts_with(kOwn)) {
        reason = line.substr(kOwn.size());
    }
    while (!reason.empty() && (reason.front() == ' ' || reason.back() == ' ' || reason.back() == '.')) {
        reason = reason.front() == ' ' ? reason.substr(1) : reason.substr(0, reason.size() - 1);
    }
    if (reason.empty()) {
        return std::nullopt;
    }
    return std::string(reason);
}

// The reason a line of a client's log gives for a failure: lines at MOSQ_LOG_ERR only. What a
// client's log callback keeps (the first of an attempt: OpenSSL may add more after the cause).
inline std::optional<std::string> mosquittoLogReason(int level, const char* line) {
    if (level != MOSQ_LOG_ERR || line == nullptr) {
        return std::nullopt;
    }
    return mosquittoErrorReason(line);
}

// libmosquitto's words for `rc` of a failed call or a lost connection, read on the thread that
// got it (MOSQ_ERR_ERRNO's text is that thread's errno). A broker that requires a client
// certificate ends the handshake of a client without one with EPROTO, of which libmosquitto logs
// nothing; so does an abrupt end of any TLS connection. `certificateMayBeWanted`: a TLS client
// offering no certificate that this broker never accepted: then that is said.
inline std::string mosquittoFailure(int rc, bool certificateMayBeWanted) {
    const int err = errno;
    std::string text = mosquitto_strerror(rc);
    if (certificateMayBeWanted && rc == MOSQ_ERR_ERRNO && err == EPROTO) {
        text += " (no client certificate was offered: a broker that requires one ends the connection so; tls.cert "
                "and tls.key give one)";
    }
    return text;
}

} // namespace takt::io
