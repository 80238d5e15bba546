// The OPC UA server process and its private channel (opcua_server.h).
#include "takt/agent/opcua_server.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "control/control_runtime_internal.h"
#include "rpc/rpc_envelope.h"
#include "rpc/rpc_framer.h"
#include "takt/agent/given_time.h"
#include "takt/agent/opcua_placement.h"
#include "takt/common/hex.h"

extern char** environ;

namespace takt::agent {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// The methods the process may call. Everything else is refused before the method table: the
// process serves reads, not runtime control.
constexpr std::string_view kAllowed[] = {"var.list",       "var.read",      "var.write",         "var.writeMany",
                                         "runtime.status", "var.subscribe", "events.subscribe",  "opcua.ready",
                                         "opcua.login",    "opcua.logout",  "opcua.unsubscribe", "opcua.health"};
// The calls that open a feed: a control session kept open for the process (ControlServer::
// openStream) whose notifications (var.changed, event) follow on the channel.
constexpr std::string_view kFeeds[] = {"var.subscribe", "events.subscribe"};
// Logged-in sessions a process may hold at once; a login beyond it ends the oldest.
constexpr std::size_t kMaxLogins = 1024;

// Passwords are compared as digests in constant time: neither their bytes nor their length show
// in how long a wrong one takes.
std::array<unsigned char, SHA256_DIGEST_LENGTH> digestOf(std::string_view text) {
    std::array<unsigned char, SHA256_DIGEST_LENGTH> out{};
    ::SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), out.data());
    return out;
}

std::string randomHandle() {
    std::array<unsigned char, 16> bytes{};
    if (::RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
        return {};
    }
    return common::hexBytes(bytes);
}

// A client's user name as the audit log shows it: a name given by anyone who connects, so only
// printable ASCII without spaces (others are '?') and at most 64 bytes, one audit line per login.
std::string auditUser(std::string_view user) {
    std::string out;
    for (const char c : user.substr(0, 64)) {
        out += c > ' ' && c < 0x7f ? c : '?';
    }
    return out.empty() ? std::string("-") : out;
}

// The logged-in sessions of the current process: written by the endpoint's thread (a login's
// answer) and read by the channel's, so behind a mutex. A login answered for an earlier process
// (`generation`) is not kept.
struct LoginTable {
    struct Login {
        std::string user;
        Role role = Role::Viewer;
        std::uint64_t serial = 0; // the oldest goes first past kMaxLogins
    };
    void reset(std::uint64_t gen) {
        const std::lock_guard lock(mutex);
        generation = gen;
        sessions.clear();
    }
    bool add(std::uint64_t gen, const std::string& handle, std::string user, Role role) {
        const std::lock_guard lock(mutex);
        if (gen != generation) {
            return false;
        }
        if (sessions.size() >= kMaxLogins) {
            sessions.erase(std::min_element(sessions.begin(), sessions.end(), [](const auto& a, const auto& b) {
                return a.second.serial < b.second.serial;
            }));
        }
        sessions[handle] = Login{std::move(user), role, ++serial};
        return true;
    }
    std::optional<Login> find(const std::string& handle) {
        const std::lock_guard lock(mutex);
        const auto it = sessions.find(handle);
        return it == sessions.end() ? std::nullopt : std::optional<Login>(it->second);
    }
    void erase(const std::string& handle) {
        const std::lock_guard lock(mutex);
        sessions.erase(handle);
    }

    std::mutex mutex;
    std::uint64_t generation = 0;
    std::map<std::string, Login> sessions; // session handle -> who
    std::uint64_t serial = 0;
};

// A JSON object with `"stream":id` as its first member: the feed a var.subscribe answer or a
// notification belongs to.
std::string withStream(std::string_view object, std::uint64_t id) {
    if (object.size() < 2 || object.front() != '{') {
        return fmt::format(R"({{"stream":{}}})", id);
    }
    const std::string_view rest = object.substr(1);
    const bool empty = rest.find_first_not_of(" \t\r\n") == rest.size() - 1; // just the closing brace
    return fmt::format(R"({{"stream":{}{}{})", id, empty ? "" : ",", rest);
}

std::string memberString(const rapidjson::Value& object, const char* name) {
    if (!object.IsObject()) {
        return {};
    }
    const auto it = object.FindMember(name);
    return it != object.MemberEnd() && it->value.IsString() ? std::string(it->value.GetString()) : std::string();
}

// The variable calls the process makes for OPC UA clients: each name they take must be one the
// server serves ([runtime.opcua] expose), whatever the process asks.
constexpr std::string_view kVariableCalls[] = {"var.read", "var.write", "var.writeMany", "var.subscribe"};

// Why a variable call of the process is refused under `globs`, or empty when it is not.
std::string unexposed(const std::vector<std::string>& globs, const rapidjson::Value& params) {
    if (globs.empty() || !params.IsObject()) {
        return {};
    }
    if (params.HasMember("pattern")) {
        return "pattern: not open to the OPC UA server when expose is set (name the variables)";
    }
    if (const auto name = params.FindMember("name");
        name != params.MemberEnd() && name->value.IsString() && !exposedBy(globs, name->value.GetString())) {
        return fmt::format("name: {} is not exposed to OPC UA", name->value.GetString());
    }
    if (const auto names = params.FindMember("names"); names != params.MemberEnd() && names->value.IsArray()) {
        for (rapidjson::SizeType i = 0; i < names->value.Size(); ++i) {
            const rapidjson::Value& n = names->value[i];
            if (n.IsString() && !exposedBy(globs, n.GetString())) {
                return fmt::format("names[{}]: {} is not exposed to OPC UA", i, n.GetString());
            }
        }
    }
    if (const auto items = params.FindMember("items"); items != params.MemberEnd() && items->value.IsArray()) {
        for (rapidjson::SizeType i = 0; i < items->value.Size(); ++i) {
            const std::string name = memberString(items->value[i], "name");
            if (!name.empty() && !exposedBy(globs, name)) {
                return fmt::format("items[{}].name: {} is not exposed to OPC UA", i, name);
            }
        }
    }
    return {};
}

constexpr std::chrono::milliseconds kFirstBackoff{1000};
constexpr std::chrono::milliseconds kMaxBackoff{30'000};
// A process that ran this long before it died starts its back-off again from the first step.
constexpr std::chrono::seconds kStableRun{60};
constexpr std::chrono::seconds kTermGrace{3};
// A process that takes no byte of a line for this long is stuck: the channel is given up and the
// process ended (and started again), so neither the runtime's stop nor its other answers wait on it.
constexpr std::chrono::seconds kWriteStall{5};
// From its start the process is pinged (opcua.ping) this often and answers with its figures
// (opcua.health) from its event loop; no answer for kHungAfter means the loop does not turn (a
// stopped process, a loop stuck in code): it is ended and started again like one that died. The
// first answer may take kFirstAnswer (Node.js loads node-opcua first, seconds on a small board or a
// busy machine), and a process that answers but has not said it listens (opcua.ready) kReadyWithin
// after its start is stuck starting, ended and started again the same way. Every deadline here
// counts the time the process was given (given_time.h): waiting for a CPU is not being stuck.
constexpr std::chrono::seconds kPingInterval{1};
constexpr std::chrono::seconds kHungAfter{10};
constexpr std::chrono::seconds kFirstAnswer{30};
constexpr std::chrono::seconds kReadyWithin{60};

std::string describeExit(int status) {
    if (WIFEXITED(status)) {
        return fmt::format("exited with status {}", WEXITSTATUS(status));
    }
    if (WIFSIGNALED(status)) {
        return fmt::format("killed by signal {} ({})", WTERMSIG(status), ::strsignal(WTERMSIG(status)));
    }
    return "ended";
}

// The options of opcua.configure, as the process reads them.
std::string configureLine(const OpcuaOptions& o, const OpcuaProcess& p) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    const auto str = [&](const char* key, const std::string& value) {
        w.Key(key);
        w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
    };
    w.StartObject();
    str("jsonrpc", "2.0");
    str("method", "opcua.configure");
    w.Key("params");
    w.StartObject();
    str("host", o.host);
    w.Key("port");
    w.Uint(o.port);
    str("endpointPath", o.endpointPath);
    str("namespaceUri", o.namespaceUri);
    w.Key("publishIntervalMs");
    w.Uint(o.publishIntervalMs);
    w.Key("maxNodes");
    w.Uint(o.maxNodes);
    w.Key("expose");
    w.StartArray();
    for (const std::string& g : o.expose) {
        w.String(g.c_str(), static_cast<rapidjson::SizeType>(g.size()));
    }
    w.EndArray();
    str("securityPolicy", o.securityPolicy);
    str("securityMode", o.securityMode);
    w.Key("allowAnonymous");
    w.Bool(o.allowAnonymous);
    str("certificate", o.certificate);
    str("privateKey", o.privateKey);
    str("pkiDir", p.pkiDir);
    str("resource", p.resource);
    str("version", p.version);
    w.Key("cycleIntervalMs");
    w.Uint(p.cycleIntervalMs);
    w.EndObject();
    w.EndObject();
    return std::string(buf.GetString(), buf.GetSize()) + "\n";
}

// Answers of the control service, handed from its thread to the supervisor's: the service's
// callbacks must not block, and may come after the server stopped (they hold this, not it).
struct Outbox {
    Outbox() : fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}
    ~Outbox() {
        if (fd >= 0) {
            ::close(fd);
        }
    }
    Outbox(const Outbox&) = delete;
    Outbox& operator=(const Outbox&) = delete;

    // Lines of one feed not written to the process yet: while it has any, the feed holds its
    // changes back and merges them (the latest value wins), as for a control client that does
    // not read. Counted per feed, so one feed's notification waiting holds back no other feed:
    // with a count for all, the feeds sampled first in each round kept the others from ever
    // sending (10,000 monitored items are ten feeds).
    using Unwritten = std::shared_ptr<std::atomic<std::size_t>>;
    struct Line {
        std::uint64_t generation = 0; // the process it is for
        std::string text;
        Unwritten feed; // the feed's count, or null for an answer
    };

    void push(std::uint64_t generation, std::string line, Unwritten feed = nullptr) {
        if (feed) {
            ++*feed;
        }
        {
            const std::lock_guard lock(mutex);
            lines.push_back(Line{generation, std::move(line), std::move(feed)});
        }
        const std::uint64_t one = 1;
        (void)!::write(fd, &one, sizeof one);
    }

    std::mutex mutex;
    std::deque<Line> lines;
    int fd;
};

} // namespace

struct OpcuaServer::Impl {
    Impl(OpcuaOptions o, OpcuaProcess p, ControlServer& c)
        : options(std::move(o)), process(std::move(p)), control(c), outbox(std::make_shared<Outbox>()),
          wake(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}
    ~Impl() {
        if (wake >= 0) {
            ::close(wake);
        }
    }

    void run();
    bool spawn(int& channel, std::string& error);
    void writeAll(int channel, std::string_view text);
    void serve(int channel);
    void handle(std::string_view line, int channel);
    void login(const rpc::Request& request);
    void openFeed(const rpc::Request& request, ControlServer::Call call);
    void closeFeeds();
    void end(const std::string& why);
    bool waitOrStop(std::chrono::milliseconds delay);
    void setHealth(const std::function<void(OpcuaHealth&)>& change) {
        const std::lock_guard lock(healthMutex);
        change(healthState);
    }

    OpcuaOptions options;
    OpcuaProcess process;
    ControlServer& control;
    std::shared_ptr<Outbox> outbox;
    int wake;
    std::atomic<bool> stopping{false};
    bool stalled = false;   // the process stopped reading its channel (writeAll gave up)
    bool listening = false; // the process said it listens (opcua.ready)
    bool answered = false;  // it answered a ping (or said it listens) since its start
    std::string hung;       // why it was taken for hung (the ping, or not ready in time)
    // From its start, and from its last answer (or when it said it listens): the time it was
    // given, so that waiting for a CPU on a busy machine is not taken for a hang.
    GivenTime sinceStart, sinceAnswer;
    Clock::time_point pinged{}; // the last ping
    std::thread thread;
    pid_t pid = 0;
    std::uint64_t generation = 0;                                        // answers for an earlier process are dropped
    std::shared_ptr<LoginTable> logins = std::make_shared<LoginTable>(); // of the current process only
    std::vector<std::pair<std::uint64_t, std::uint64_t>> feeds;          // (feed, stream) of the current process
    std::uint64_t feedSerial = 0;
    mutable std::mutex healthMutex;
    OpcuaHealth healthState;
};

OpcuaServer::OpcuaServer(OpcuaOptions options, OpcuaProcess process, ControlServer& control)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(process), control)) {}

OpcuaServer::~OpcuaServer() {
    stop();
}

bool OpcuaServer::start(std::string& error) {
    if (impl_->wake < 0 || impl_->outbox->fd < 0) {
        error = fmt::format("opcua: eventfd: {}", std::strerror(errno));
        return false;
    }
    std::error_code ec;
    fs::create_directories(impl_->process.pkiDir, ec);
    impl_->thread = std::thread([this] { impl_->run(); });
    return true;
}

void OpcuaServer::stop() {
    if (!impl_->thread.joinable()) {
        return;
    }
    impl_->stopping = true;
    const std::uint64_t one = 1;
    (void)!::write(impl_->wake, &one, sizeof one);
    impl_->thread.join();
}

OpcuaHealth OpcuaServer::health() const {
    const std::lock_guard lock(impl_->healthMutex);
    return impl_->healthState;
}

bool OpcuaServer::Impl::spawn(int& channel, std::string& error) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
        error = fmt::format("socketpair: {}", std::strerror(errno));
        return false;
    }
    // The child's end becomes its descriptor 3 (dup2 clears close-on-exec on the copy); every
    // other descriptor of takt is closed in the child.
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pair[1], 3);
    posix_spawn_file_actions_addclosefrom_np(&actions, 4);
    // Nothing to read on a terminal: a service's stdin, or the shell's, is not the server's.
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none); // takt run blocks SIGTERM in its threads
    sigset_t defaults;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGTERM);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGPIPE);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    // A process group of its own: Ctrl-C on the terminal signals takt's group, and takt stops the
    // server itself (gracefully, opcua/server.js) instead of it dying first and being restarted.
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
    // takt's environment without NODE_OPTIONS: options meant for other Node programs (a
    // --require, an inspector port) must not reach the server.
    std::vector<char*> env;
    for (char** e = environ; *e != nullptr; ++e) {
        if (std::string_view(*e).substr(0, 13) != "NODE_OPTIONS=") {
            env.push_back(*e);
        }
    }
    env.push_back(nullptr);
    std::string node = process.node;
    std::string script = process.script;
    char* argv[] = {node.data(), script.data(), nullptr};
    pid_t child = 0;
    const int rc = ::posix_spawn(&child, node.c_str(), &actions, &attr, argv, env.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    ::close(pair[1]);
    if (rc != 0) {
        ::close(pair[0]);
        error = fmt::format("cannot start {}: {}", node, std::strerror(rc));
        return false;
    }
    pid = child;
    channel = pair[0];
    (void)::fcntl(channel, F_SETFL, ::fcntl(channel, F_GETFL) | O_NONBLOCK);
    return true;
}

// Writes all of `text`, waiting while the process's buffer is full, but not past kWriteStall
// without progress nor once the runtime stops: then `stalled` is set and serve() gives the
// channel up. After that nothing more is written to this channel.
void OpcuaServer::Impl::writeAll(int channel, std::string_view text) {
    // Since the channel stopped taking bytes; a process that waits for a CPU is slow, not stuck.
    std::optional<GivenTime> blocked;
    while (!text.empty() && !stalled) {
        const ssize_t n = ::send(channel, text.data(), text.size(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && errno == EAGAIN) {
            if (!blocked) {
                blocked.emplace().mark(pid, Clock::now());
            }
            if (stopping || blocked->beyond(pid, Clock::now(), kWriteStall)) {
                stalled = true;
                return;
            }
            pollfd p[2] = {{channel, POLLOUT, 0}, {wake, POLLIN, 0}};
            (void)::poll(p, 2, 100);
            continue;
        }
        if (n <= 0) {
            return; // the process is gone: the supervisor sees the channel close
        }
        text.remove_prefix(static_cast<std::size_t>(n));
        blocked.reset();
    }
}

void OpcuaServer::Impl::handle(std::string_view line, int channel) {
    rpc::ParsedLine scratch;
    rpc::Request request;
    rpc::Error error;
    if (!rpc::parseRequest(line, scratch, request, error)) {
        writeAll(channel, rpc::errorLine(request.id, error) + "\n");
        return;
    }
    const auto allowed = std::find(std::begin(kAllowed), std::end(kAllowed), request.method) != std::end(kAllowed);
    if (!allowed) {
        if (!request.notification) {
            writeAll(channel, rpc::errorLine(request.id, rpc::Error{kForbidden,
                                                                    fmt::format("{} is not open to the OPC UA "
                                                                                "server",
                                                                                request.method),
                                                                    {}}) +
                                  "\n");
        }
        return;
    }
    if (std::find(std::begin(kVariableCalls), std::end(kVariableCalls), request.method) != std::end(kVariableCalls)) {
        if (const std::string why = unexposed(options.expose, *request.params); !why.empty()) {
            if (!request.notification) {
                writeAll(channel, rpc::errorLine(request.id, rpc::Error{kForbidden, why, {}}) + "\n");
            }
            return;
        }
    }
    if (request.method == "opcua.login") {
        login(request);
        return;
    }
    if (request.method == "opcua.logout") {
        logins->erase(memberString(*request.params, "session"));
        if (!request.notification) {
            writeAll(channel, rpc::resultLine(request.id, "{}") + "\n");
        }
        return;
    }
    if (request.method == "opcua.unsubscribe") {
        const auto stream = request.params->FindMember("stream");
        const std::uint64_t id =
            stream != request.params->MemberEnd() && stream->value.IsUint64() ? stream->value.GetUint64() : 0;
        const auto it = std::find_if(feeds.begin(), feeds.end(), [id](const auto& f) { return f.first == id; });
        const bool known = it != feeds.end();
        if (known) {
            control.closeStream(it->second);
            feeds.erase(it);
        }
        if (!request.notification) {
            writeAll(channel, (known ? rpc::resultLine(request.id, "{}")
                                     : rpc::errorLine(request.id, rpc::Error{rpc::kInvalidParams,
                                                                             fmt::format("stream: {} is not an open "
                                                                                         "feed",
                                                                                         id),
                                                                             {}})) +
                                  "\n");
        }
        return;
    }
    if (request.method == "opcua.health") {
        answered = true;
        sinceAnswer.mark(pid, Clock::now());
        const auto count = [&](const char* name) -> std::uint64_t {
            const auto it = request.params->FindMember(name);
            return it != request.params->MemberEnd() && it->value.IsUint64() ? it->value.GetUint64() : 0;
        };
        setHealth([&](OpcuaHealth& h) {
            h.sessions = count("sessions");
            h.subscriptions = count("subscriptions");
            h.monitoredItems = count("monitored_items");
        });
        return;
    }
    if (request.method == "opcua.ready") {
        listening = true;
        answered = true;
        sinceAnswer.mark(pid, Clock::now());
        const auto endpoint = request.params->FindMember("endpoint");
        const std::string url = endpoint != request.params->MemberEnd() && endpoint->value.IsString()
                                    ? std::string(endpoint->value.GetString())
                                    : std::string();
        setHealth([&](OpcuaHealth& h) {
            h.state = "running";
            h.endpoint = url;
        });
        if (!request.notification) {
            writeAll(channel, rpc::resultLine(request.id, "{}") + "\n");
        }
        return;
    }
    ControlServer::Call call;
    call.caller.origin = "opcua";
    call.caller.peer = "anonymous";
    call.role = Role::Viewer; // an anonymous session
    if (std::find(std::begin(kFeeds), std::end(kFeeds), request.method) != std::end(kFeeds)) {
        // The feeds are the server's own, not a client's: one stream of values serves every
        // session's monitored items, and every session (anonymous where allowed, or logged in)
        // may read what it carries. They have the viewer role, the least one that reads.
        call.caller.peer = "server";
        call.method = std::string(request.method);
        call.params.CopyFrom(*request.params, call.params.GetAllocator());
        openFeed(request, std::move(call));
        return;
    }
    // The session a call is made for: what opcua.login answered, checked here, so the role is
    // the runtime's decision and the audit log names the user ("opcua:scada").
    const std::string session = memberString(scratch.doc, "session");
    if (!session.empty()) {
        const std::optional<LoginTable::Login> who = logins->find(session);
        if (!who) {
            if (!request.notification) {
                writeAll(channel, rpc::errorLine(request.id, rpc::Error{kUnauthorized, "unknown session", {}}) + "\n");
            }
            return;
        }
        call.caller.peer = who->user;
        call.role = who->role;
    } else if (!options.allowAnonymous) {
        if (!request.notification) {
            writeAll(channel,
                     rpc::errorLine(request.id, rpc::Error{kUnauthorized, "anonymous sessions are not allowed", {}}) +
                         "\n");
        }
        return;
    }
    call.method = std::string(request.method);
    call.params.CopyFrom(*request.params, call.params.GetAllocator());
    const bool answer = !request.notification;
    control.call(std::move(call), [box = outbox, gen = generation, id = request.id, answer](const MethodAnswer& a) {
        if (!answer) {
            return;
        }
        box->push(gen, a.ok ? rpc::resultLine(id, a.json) : rpc::errorLine(id, rpc::Error{a.code, a.message, a.data}));
    });
}

// A feed: the call's answer, then its notifications, go to the process as lines, each with the
// stream's id (`stream`) so the process knows which feed they belong to and can close it
// (opcua.unsubscribe).
void OpcuaServer::Impl::openFeed(const rpc::Request& request, ControlServer::Call call) {
    ControlServer::Stream stream;
    const std::uint64_t id = ++feedSerial;
    const bool answer = !request.notification;
    stream.answer = [box = outbox, gen = generation, rid = request.id, id, answer](const MethodAnswer& a) {
        if (answer) {
            box->push(gen, a.ok ? rpc::resultLine(rid, withStream(a.json, id))
                                : rpc::errorLine(rid, rpc::Error{a.code, a.message, a.data}));
        }
    };
    auto unwritten = std::make_shared<std::atomic<std::size_t>>(0);
    stream.notification = [box = outbox, gen = generation, id, unwritten](std::string_view method,
                                                                          const std::string& params) {
        box->push(gen, rpc::notificationLine(method, withStream(params, id)), unwritten);
    };
    stream.backlogged = [unwritten] { return unwritten->load() > 0; };
    feeds.emplace_back(id, control.openStream(std::move(call), std::move(stream)));
}

void OpcuaServer::Impl::closeFeeds() {
    for (const auto& [feed, stream] : feeds) {
        control.closeStream(stream);
    }
    feeds.clear();
}

// A user's login, checked through the control endpoint's login path (ControlServer::login): the
// failed-login back-off per client address shared with the endpoint's TCP peers, and an auth.login
// line in the audit log naming the user and the client ("opcua:scada@127.0.0.1:50312").
void OpcuaServer::Impl::login(const rpc::Request& request) {
    std::string user = memberString(*request.params, "user");
    const std::string address = memberString(*request.params, "address");
    const std::string port = memberString(*request.params, "port");
    ControlServer::Caller caller;
    caller.origin = "opcua";
    caller.peer = fmt::format("{}@{}", auditUser(user), address.empty() ? std::string("-") : address);
    if (!address.empty() && !port.empty()) {
        caller.peer += ":" + port;
    }
    caller.address = address;
    auto match = [users = options.users, user,
                  given = digestOf(memberString(*request.params, "password"))]() -> std::optional<Role> {
        const OpcuaUserOptions* found = nullptr;
        for (const OpcuaUserOptions& u : users) {
            const auto expected = digestOf(u.password);
            // Every user is compared, the right one or not, so the time says nothing about names.
            const bool same = u.name == user && CRYPTO_memcmp(given.data(), expected.data(), given.size()) == 0;
            found = same ? &u : found;
        }
        return found != nullptr ? std::optional<Role>(found->role) : std::nullopt;
    };
    control.login(std::move(caller), std::move(match), "wrong user name or password",
                  [box = outbox, table = logins, gen = generation, id = request.id, answer = !request.notification,
                   name = std::move(user)](ControlServer::TokenCheck checked) {
                      std::string handle = checked.role ? randomHandle() : std::string();
                      if (checked.role && (handle.empty() || !table->add(gen, handle, name, *checked.role))) {
                          handle.clear();
                          checked.answer = MethodAnswer::error(kUnauthorized, "the login could not be kept");
                      }
                      if (!answer) {
                          return;
                      }
                      if (handle.empty()) {
                          const MethodAnswer& a = checked.answer;
                          box->push(gen, rpc::errorLine(id, rpc::Error{a.code, a.message, a.data}));
                          return;
                      }
                      box->push(gen, rpc::resultLine(id, fmt::format("{{\"session\":\"{}\",\"role\":\"{}\"}}", handle,
                                                                     roleName(*checked.role))));
                  });
}

void OpcuaServer::Impl::serve(int channel) {
    logins->reset(generation); // a new process: no session of the last one goes on
    stalled = false;
    listening = false;
    answered = false;
    hung.clear();
    sinceStart.mark(pid, Clock::now());
    pinged = Clock::time_point{};
    writeAll(channel, configureLine(options, process));
    rpc::LineFramer framer(std::size_t{16} << 20);
    char buf[65536];
    for (;;) {
        pollfd fds[3] = {{channel, POLLIN, 0}, {outbox->fd, POLLIN, 0}, {wake, POLLIN, 0}};
        if (::poll(fds, 3, 1000) < 0 && errno != EINTR) {
            return;
        }
        if (stopping || stalled) {
            return;
        }
        // Hung, starting or running: unless a line waits to be read (it may be the answer).
        const Clock::time_point now = Clock::now();
        if ((fds[0].revents & POLLIN) == 0) {
            if (!answered && sinceStart.beyond(pid, now, kFirstAnswer)) {
                hung = fmt::format("did not answer the liveness ping within {} s of its start", kFirstAnswer.count());
            } else if (answered && sinceAnswer.beyond(pid, now, kHungAfter)) {
                hung = fmt::format("did not answer the liveness ping for {} s", kHungAfter.count());
            } else if (!listening && sinceStart.beyond(pid, now, kReadyWithin)) {
                hung = fmt::format("did not get ready within {} s of its start", kReadyWithin.count());
            }
            if (!hung.empty()) {
                return;
            }
        }
        if (now - pinged >= kPingInterval) {
            pinged = now;
            writeAll(channel, R"({"jsonrpc":"2.0","method":"opcua.ping","params":{}})"
                              "\n");
            if (stalled) {
                return;
            }
        }
        if ((fds[1].revents & POLLIN) != 0) {
            std::uint64_t n = 0;
            (void)!::read(outbox->fd, &n, sizeof n);
            std::deque<Outbox::Line> lines;
            {
                const std::lock_guard lock(outbox->mutex);
                lines.swap(outbox->lines);
            }
            for (Outbox::Line& line : lines) {
                if (line.generation == generation) {
                    line.text += '\n';
                    writeAll(channel, line.text);
                }
                if (line.feed) {
                    --*line.feed; // written, or for a process that is gone
                }
                if (stalled) {
                    return;
                }
            }
        }
        if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
            const ssize_t n = ::read(channel, buf, sizeof buf);
            if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
                continue;
            }
            if (n <= 0) {
                return; // the process closed its end: it is ending
            }
            std::string_view in(buf, static_cast<std::size_t>(n));
            while (!in.empty()) {
                const rpc::LineFramer::Status s = framer.next(in);
                if (s == rpc::LineFramer::Status::Line) {
                    handle(framer.line(), channel);
                }
                if (stalled) {
                    return;
                }
            }
        }
    }
}

bool OpcuaServer::Impl::waitOrStop(std::chrono::milliseconds delay) {
    pollfd p{wake, POLLIN, 0};
    (void)::poll(&p, 1, static_cast<int>(delay.count()));
    return stopping;
}

// Ends the process: SIGTERM, then SIGKILL when it has not ended within the grace time.
void OpcuaServer::Impl::end(const std::string& why) {
    if (pid <= 0) {
        return;
    }
    int status = 0;
    pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == 0) {
        (void)::kill(pid, SIGTERM);
        const auto deadline = Clock::now() + kTermGrace;
        while ((done = ::waitpid(pid, &status, WNOHANG)) == 0 && Clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        if (done == 0) {
            (void)::kill(pid, SIGKILL);
            done = ::waitpid(pid, &status, 0);
        }
    }
    const std::string reason = why.empty() ? describeExit(status) : why;
    pid = 0;
    setHealth([&](OpcuaHealth& h) {
        h.pid = 0;
        h.endpoint.clear();
        h.reason = reason;
        h.sessions = 0;
        h.subscriptions = 0;
        h.monitoredItems = 0;
    });
}

void OpcuaServer::Impl::run() {
    // Below the scan and off its CPUs, this thread first: every process it spawns, the first and
    // each restart, inherits both from it (opcua_placement.h).
    std::fprintf(stderr, "opcua: %s\n", lowerForOpcua(process.scanCpus).c_str());
    std::chrono::milliseconds backoff = kFirstBackoff;
    bool first = true;
    while (!stopping) {
        setHealth([&](OpcuaHealth& h) {
            h.state = "starting";
            if (!first) {
                ++h.restarts;
            }
        });
        first = false;
        ++generation;
        int channel = -1;
        std::string error;
        const auto started = Clock::now();
        if (spawn(channel, error)) {
            setHealth([&](OpcuaHealth& h) { h.pid = pid; });
            serve(channel);
            closeFeeds(); // the process is ending: nothing is fed to it any more
            ::close(channel);
            // The process ends on its own once its channel is closed; stopping ends it now.
            end(stopping  ? "stopped with the runtime"
                : stalled ? fmt::format("stopped reading its channel for {} s", kWriteStall.count())
                          : hung);
        } else {
            setHealth([&](OpcuaHealth& h) { h.reason = error; });
        }
        if (stopping) {
            break;
        }
        if (Clock::now() - started >= kStableRun) {
            backoff = kFirstBackoff;
        }
        const OpcuaHealth h = [&] {
            const std::lock_guard lock(healthMutex);
            healthState.state = "restarting";
            return healthState;
        }();
        std::fprintf(stderr, "opcua: the server process %s; starting it again in %lld ms\n", h.reason.c_str(),
                     static_cast<long long>(backoff.count()));
        if (waitOrStop(backoff)) {
            break;
        }
        backoff = std::min(backoff * 2, kMaxBackoff);
    }
    setHealth([](OpcuaHealth& h) { h.state = "stopped"; });
}

std::string findOpcuaScript(std::string& error) {
    std::vector<fs::path> candidates;
    if (const char* env = std::getenv("TAKT_OPCUA_DIR"); env != nullptr && *env != '\0') {
        candidates.emplace_back(env);
    } else {
        std::error_code ec;
        const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
        if (!ec) {
            candidates.push_back(exe.parent_path().parent_path() / "share" / "takt" / "opcua");
        }
#ifdef TAKT_OPCUA_SOURCE_DIR
        candidates.emplace_back(TAKT_OPCUA_SOURCE_DIR);
#endif
    }
    for (const fs::path& dir : candidates) {
        std::error_code ec;
        if (!fs::is_regular_file(dir / "server.js", ec)) {
            continue;
        }
        if (!fs::is_directory(dir / "node_modules" / "node-opcua", ec)) {
            error = fmt::format("the OPC UA server's npm packages are missing in {}: run `npm ci` there", dir.string());
            return {};
        }
        return (dir / "server.js").string();
    }
    error = "the OPC UA server (opcua/server.js) is not installed";
    if (!candidates.empty()) {
        error += fmt::format(" (looked in {})", candidates.front().string());
    }
    return {};
}

} // namespace takt::agent
