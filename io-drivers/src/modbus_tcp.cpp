// The modbus-tcp driver's transport: one Modbus TCP server, `address = "host:port"` (port 502
// when omitted), `unit_id` 0..255 (1). Everything else is the client engine (modbus_client.cpp).
#include <cerrno>

#include <fmt/format.h>

#include "modbus_client.h"
#include "registry.h"

namespace takt::io {
namespace {

using namespace detail;

class TcpTransport final : public ModbusTransport {
public:
    std::string_view driverName() const override { return "modbus-tcp"; }

    std::span<const std::string_view> keys() const override {
        static constexpr std::string_view kKeys[] = {"address", "unit_id"};
        return kKeys;
    }

    bool init(ParamReader& p, int& unitId) override {
        if (const auto address = p.string("address", true)) {
            std::string why;
            if (!parseHostPort(*address, 502, peer_, why)) {
                p.fail("address", why);
            }
        }
        unitId = static_cast<int>(p.integer("unit_id", 0, 255).value_or(1));
        return p.ok();
    }

    bool start(std::string& error) override {
        (void)error;
        return true;
    }

    modbus_t* newContext(std::string& error) override {
        modbus_t* ctx = modbus_new_tcp_pi(peer_.host.c_str(), std::to_string(peer_.port).c_str());
        if (ctx == nullptr) {
            error = fmt::format("modbus-tcp: cannot create a context for {}:{}: {}", peer_.host, peer_.port,
                                modbus_strerror(errno));
        }
        return ctx;
    }

    bool open(modbus_t* ctx, std::string& why) override {
        if (modbus_connect(ctx) != 0) {
            why = fmt::format("connect to {}:{} failed: {}", peer_.host, peer_.port, modbus_strerror(errno));
            return false;
        }
        return true;
    }

private:
    HostPort peer_;
};

} // namespace

std::unique_ptr<Driver> detail::makeModbusTcp() {
    return makeModbusClient(std::make_unique<TcpTransport>());
}

} // namespace takt::io
