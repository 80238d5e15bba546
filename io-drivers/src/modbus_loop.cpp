#include "modbus_loop.h"

#include <fcntl.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace takt::io::detail {
namespace {

constexpr int kTableSize = 65536; // every Modbus address, so no request is refused for range

} // namespace

bool LoopSlave::start(int unitId, std::string& error) {
    far_ = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    char name[128] = {};
    if (far_ < 0 || ::grantpt(far_) != 0 || ::unlockpt(far_) != 0 || ::ptsname_r(far_, name, sizeof name) != 0) {
        error = fmt::format("cannot open a pseudo-terminal for the simulated slave: {}", std::strerror(errno));
        stop();
        return false;
    }
    device_ = name;
    near_ = ::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    termios raw{};
    if (near_ < 0 || ::tcgetattr(near_, &raw) != 0) {
        error = fmt::format("cannot open {} for the simulated slave: {}", device_, std::strerror(errno));
        stop();
        return false;
    }
    // Raw from the start: the driver restores these settings whenever it closes the port.
    ::cfmakeraw(&raw);
    (void)::tcsetattr(near_, TCSANOW, &raw);
    ctx_ = modbus_new_rtu(name, 19200, 'N', 8, 1); // line settings mean nothing on a pseudo-terminal
    tables_ = modbus_mapping_new(kTableSize, kTableSize, kTableSize, kTableSize);
    if (ctx_ == nullptr || tables_ == nullptr) {
        error = fmt::format("cannot create the simulated slave: {}", modbus_strerror(errno));
        stop();
        return false;
    }
    modbus_set_slave(ctx_, unitId);
    modbus_set_socket(ctx_, far_);
    stopping_ = false;
    thread_ = std::thread([this] { run(); });
    return true;
}

void LoopSlave::stop() noexcept {
    stopping_ = true;
    if (thread_.joinable()) {
        thread_.join();
    }
    if (ctx_ != nullptr) {
        modbus_set_socket(ctx_, -1); // closed below; modbus_close would restore settings it never saved
        modbus_free(ctx_);
        ctx_ = nullptr;
    }
    if (tables_ != nullptr) {
        modbus_mapping_free(tables_);
        tables_ = nullptr;
    }
    for (int* fd : {&near_, &far_}) {
        if (*fd >= 0) {
            ::close(*fd);
            *fd = -1;
        }
    }
}

void LoopSlave::run() {
    std::uint8_t query[MODBUS_RTU_MAX_ADU_LENGTH];
    while (!stopping_) {
        pollfd p{far_, POLLIN, 0};
        if (::poll(&p, 1, 20) <= 0) {
            continue; // the poll slice lets stop() end the thread
        }
        const int len = modbus_receive(ctx_, query);
        if (len < 0) {
            modbus_flush(ctx_); // a broken frame: start over at the next request
        } else if (len > 0 && modbus_reply(ctx_, query, len, tables_) > 0) {
            loopBack(query);
        }
    }
}

// After a write has been answered: the written coils / holding registers also read back from
// the discrete inputs / input registers at the same addresses.
void LoopSlave::loopBack(const std::uint8_t* query) {
    const int h = modbus_get_header_length(ctx_);
    const int function = query[h];
    const int address = (query[h + 1] << 8) | query[h + 2];
    const bool multiple = function == MODBUS_FC_WRITE_MULTIPLE_COILS || function == MODBUS_FC_WRITE_MULTIPLE_REGISTERS;
    const int count = std::min(multiple ? (query[h + 3] << 8) | query[h + 4] : 1, kTableSize - address);
    if (function == MODBUS_FC_WRITE_SINGLE_COIL || function == MODBUS_FC_WRITE_MULTIPLE_COILS) {
        std::copy_n(tables_->tab_bits + address, count, tables_->tab_input_bits + address);
    } else if (function == MODBUS_FC_WRITE_SINGLE_REGISTER || function == MODBUS_FC_WRITE_MULTIPLE_REGISTERS) {
        std::copy_n(tables_->tab_registers + address, count, tables_->tab_input_registers + address);
    }
}

} // namespace takt::io::detail
