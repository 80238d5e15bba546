// The web server's connection table: the caps, who gives way to a newcomer, and the budget of
// large bodies.
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "web/web_connections.h"

namespace takt::agent::web {
namespace {

using State = ConnectionTable::State;

// Admits a connection from `address` whose eviction is recorded in `closed` as `name`.
std::optional<std::uint64_t> admit(ConnectionTable& t, const std::string& address, std::vector<std::string>& closed,
                                   const std::string& name) {
    ConnectionTable::Admission a = t.admit(address, [&closed, name] { closed.push_back(name); });
    for (const auto& close : a.evicted) {
        close();
    }
    return a.id;
}

TEST(WebConnections, AtTheCapTheLongestWaitingGivesWayThenTheLongestReading) {
    ConnectionTable t({.total = 3, .perAddress = 3});
    std::vector<std::string> closed;
    const auto a = admit(t, "10.0.0.1", closed, "a");
    const auto b = admit(t, "10.0.0.2", closed, "b");
    const auto c = admit(t, "10.0.0.3", closed, "c");
    ASSERT_TRUE(a && b && c);
    t.set(*a, State::Reading); // a slow sender, oldest
    t.set(*b, State::Busy);    // answering: never evicted
    // c waits for a request (idle keep-alive): it goes first, though a is older.
    ASSERT_TRUE(admit(t, "10.0.0.4", closed, "d"));
    EXPECT_EQ(closed, std::vector<std::string>{"c"});
    const auto e = admit(t, "10.0.0.5", closed, "e"); // d (waiting) goes before a (reading)
    ASSERT_TRUE(e);
    EXPECT_EQ(closed, (std::vector<std::string>{"c", "d"}));
    t.set(*e, State::Busy);
    ASSERT_TRUE(admit(t, "10.0.0.6", closed, "f")); // then a, the only one not busy
    EXPECT_EQ(closed, (std::vector<std::string>{"c", "d", "a"}));
    EXPECT_EQ(t.size(), 3U);
}

TEST(WebConnections, WhenEveryConnectionIsBusyANewcomerIsRefused) {
    ConnectionTable t({.total = 2, .perAddress = 2});
    std::vector<std::string> closed;
    for (const char* name : {"a", "b"}) {
        const auto id = admit(t, "10.0.0.1", closed, name);
        ASSERT_TRUE(id);
        t.set(*id, State::Busy);
    }
    EXPECT_FALSE(admit(t, "10.0.0.2", closed, "c"));
    EXPECT_TRUE(closed.empty());
    EXPECT_EQ(t.size(), 2U);
}

TEST(WebConnections, OneAddressOverItsCapEvictsItsOwnNotOthers) {
    ConnectionTable t({.total = 10, .perAddress = 2});
    std::vector<std::string> closed;
    const auto other = admit(t, "10.0.0.9", closed, "other"); // oldest, waiting
    ASSERT_TRUE(other);
    ASSERT_TRUE(admit(t, "10.0.0.1", closed, "x1"));
    ASSERT_TRUE(admit(t, "10.0.0.1", closed, "x2"));
    ASSERT_TRUE(admit(t, "10.0.0.1", closed, "x3"));
    EXPECT_EQ(closed, std::vector<std::string>{"x1"});
    EXPECT_EQ(t.size(), 3U);
    t.remove(*other);
    t.remove(*other); // twice: no effect
    EXPECT_EQ(t.size(), 2U);
}

TEST(WebConnections, LargeBodiesShareOneBudget) {
    BodyBudget budget(16);
    EXPECT_TRUE(budget.reserve(8));
    EXPECT_TRUE(budget.reserve(8));
    EXPECT_FALSE(budget.reserve(1));
    budget.release(8);
    EXPECT_TRUE(budget.reserve(5));
    EXPECT_FALSE(budget.reserve(4));
}

// A place for a control call is given back however its holder ends: dropped after the answer,
// moved, or unwound by an exception (which leaked the place while it was a counter).
TEST(WebConnections, ACallPlaceIsGivenBackHoweverItsHolderEnds) {
    CallSlots slots(2);
    {
        std::optional<CallSlots::Slot> a = slots.take();
        std::optional<CallSlots::Slot> b = slots.take();
        ASSERT_TRUE(a && b);
        EXPECT_FALSE(slots.take());
        std::optional<CallSlots::Slot> moved = std::move(a);
        a.reset();
        EXPECT_EQ(slots.inUse(), 2);
        EXPECT_FALSE(slots.take());
    }
    EXPECT_EQ(slots.inUse(), 0);
    for (int i = 0; i < 5; ++i) {
        try {
            std::optional<CallSlots::Slot> held = slots.take();
            ASSERT_TRUE(held);
            throw std::runtime_error("a handler that threw");
        } catch (const std::runtime_error&) {
        }
    }
    EXPECT_EQ(slots.inUse(), 0);
    EXPECT_TRUE(slots.take());
}

} // namespace
} // namespace takt::agent::web
