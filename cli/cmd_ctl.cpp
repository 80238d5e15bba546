// `takt ctl --endpoint E [--token-file F] [--ca FILE] [--cert F --key F] <method> [params-json]`:
// the generic client of a running runtime's control endpoint (PROTOCOLS.md). The result goes to
// stdout as JSON; an error reply goes to stderr with exit code 14, an unreachable endpoint 15.
#include <cstdio>
#include <memory>
#include <string>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "commands.h"
#include "ctl_support.h"
#include "takt/agent/control_client.h"

namespace takt::cli {

namespace {

struct CtlOptions {
    ControlConnectOptions connect;
    std::string method;
    std::string params;
};

int runCtl(const CtlOptions& options) {
    if (!options.params.empty()) {
        rapidjson::Document doc;
        doc.Parse(options.params.c_str(), options.params.size());
        if (doc.HasParseError()) {
            std::fprintf(stderr, "takt ctl: params: invalid JSON at offset %zu: %s\n", doc.GetErrorOffset(),
                         rapidjson::GetParseError_En(doc.GetParseError()));
            return kExitInvalidProject;
        }
        if (!doc.IsObject()) {
            std::fprintf(stderr, "takt ctl: params must be a JSON object, e.g. '{\"names\":[\"P.x\"]}'\n");
            return kExitInvalidProject;
        }
    }
    agent::ControlClientOptions client;
    if (const int rc = clientOptions("takt ctl", options.connect, client); rc != kExitOk) {
        return rc;
    }
    const agent::ControlReply reply = agent::controlCall(client, options.method, options.params);
    return printReply("takt ctl", options.method, reply);
}

} // namespace

void registerCtl(CLI::App& app, int& exitCode) {
    auto options = std::make_shared<CtlOptions>();
    CLI::App* cmd = app.add_subcommand("ctl", "Send one JSON-RPC request to a running runtime's control endpoint");
    addConnectOptions(*cmd, options->connect);
    cmd->add_option("method", options->method, "Method, e.g. runtime.status")->required();
    cmd->add_option("params", options->params, "Params as a JSON object (default: none)");
    cmd->callback([options, &exitCode] { exitCode = runCtl(*options); });
}

} // namespace takt::cli
