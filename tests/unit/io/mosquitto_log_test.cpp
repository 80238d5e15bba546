// The reason of a failed connection, from the lines libmosquitto logs (mosquitto_log.h).
#include <gtest/gtest.h>

#include "takt/io/mosquitto_log.h"

namespace takt::io::test {
namespace {

TEST(MosquittoLog, OpenSslsReasonIsWhatFollowsItsLastColon) {
    EXPECT_EQ(mosquittoErrorReason("OpenSSL Error[0]: error:0A000086:SSL routines::certificate verify failed"),
              std::optional<std::string>("certificate verify failed"));
    EXPECT_EQ(mosquittoErrorReason("OpenSSL Error[1]: error:0A00045C:SSL routines::tlsv13 alert certificate required"),
              std::optional<std::string>("tlsv13 alert certificate required"));
}

TEST(MosquittoLog, ItsOwnErrorsAreSaidWithoutThePrefix) {
    EXPECT_EQ(mosquittoErrorReason("Error: Unable to load client certificate \"/etc/takt/line1.crt\"."),
              std::optional<std::string>("Unable to load client certificate \"/etc/takt/line1.crt\""));
    EXPECT_EQ(mosquittoErrorReason("Error: host name verification failed."),
              std::optional<std::string>("host name verification failed"));
}

TEST(MosquittoLog, OtherLinesAndEmptyReasonsGiveNone) {
    EXPECT_EQ(mosquittoErrorReason("Client takt-1 received CONNACK (0)"), std::nullopt);
    EXPECT_EQ(mosquittoErrorReason(""), std::nullopt);
    EXPECT_EQ(mosquittoErrorReason("OpenSSL Error[0]: error:0A000086:SSL routines::"), std::nullopt);
    EXPECT_EQ(mosquittoErrorReason("Error: ."), std::nullopt);
    EXPECT_EQ(mosquittoErrorReason("OpenSSL Error["), std::nullopt);
}

} // namespace
} // namespace takt::io::test
