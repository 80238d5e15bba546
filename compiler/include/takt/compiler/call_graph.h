#pragma once
// The one walk of a call graph: whether `to` is reachable from `from` over the edges of `graph`
// (a map from a caller to its callees). Semantic analysis uses it for E0115 (recursive calls)
// and `takt lsp` to decide whether an edit may change E0115 in other bodies.
#include <set>
#include <vector>

namespace takt::compiler {

template <typename Graph, typename Node>
[[nodiscard]] bool reaches(const Graph& graph, const Node& from, const Node& to) {
    std::vector<Node> stack{from};
    std::set<Node> seen;
    while (!stack.empty()) {
        Node node = std::move(stack.back());
        stack.pop_back();
        if (node == to) {
            return true;
        }
        if (!seen.insert(node).second) {
            continue;
        }
        if (auto it = graph.find(node); it != graph.end()) {
            stack.insert(stack.end(), it->second.begin(), it->second.end());
        }
    }
    return false;
}

} // namespace takt::compiler
