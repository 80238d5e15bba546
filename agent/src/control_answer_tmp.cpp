// TEMPORARY until the control server lands (it defines these).
#include "takt/agent/control.h"
namespace takt::agent {
ControlAnswer ControlAnswer::result(std::string json) {
    ControlAnswer a;
    a.ok = true;
    a.json = std::move(json);
    return a;
}
ControlAnswer ControlAnswer::error(int code, std::string message, std::string data) {
    ControlAnswer a;
    a.code = code;
    a.message = std::move(message);
    a.data = std::move(data);
    return a;
}
} // namespace takt::agent
