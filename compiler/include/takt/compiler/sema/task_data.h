#pragma once
// What each TASK of the CONFIGURATION reaches: the POUs its program instances run (directly or
// through FB bodies, FUNCTIONs, METHODs, ACTIONs, PROPERTY accessors; a call through an
// INTERFACE or a late-bound METHOD reaches every implementation) and the variables they read or
// write that outlive a call and belong to no single instance of theirs: globals (VAR_GLOBAL,
// VAR_STAT) and program variables. Code generation lists each task's located variables from it
// (TaskEntry::io); W0016 and `takt check --shared-variables` report what two tasks share.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "takt/compiler/source.h"

namespace takt::compiler {

struct Symbol;
class Type;

// A variable as tasks share it: a global (instance null) or a variable of one program instance
// (instance: the PROGRAM instance of a CONFIGURATION, or the PROGRAM itself for its implicit
// instance). `P1.x` and `P2.x` of two instances of one PROGRAM are two variables.
struct TaskVariable {
    const Symbol* instance = nullptr;
    const Symbol* variable = nullptr;
    friend bool operator==(const TaskVariable&, const TaskVariable&) = default;
    friend bool operator<(const TaskVariable& a, const TaskVariable& b) {
        return std::pair(a.instance, a.variable) < std::pair(b.instance, b.variable);
    }
};

struct TaskVariableUse {
    TaskVariable var;
    bool read = false;
    bool written = false;
    Span firstRead;  // where the task's code first reads it (source order of the POUs)
    Span firstWrite; // … and first writes it (a call of an FB instance, a VAR_IN_OUT or REF/ADR counts)
    // Accesses that move more than one atomically shared value: the whole STRUCT, STRING or
    // ARRAY, an FB call, an address taken (a member or an element of 64 bits or less is not).
    bool wholeRead = false;
    bool wholeWritten = false;
    Span firstWholeRead;
    Span firstWholeWrite;
};

struct TaskData {
    const Symbol* task = nullptr;
    std::vector<const Symbol*> pous;           // every POU the task's program instances reach
    std::vector<TaskVariableUse> uses;         // in the order the walk met them
    std::vector<std::string> directAddresses;  // "%IX0.1" used as a value (canonical text), sorted
    std::map<TaskVariable, std::size_t> index; // uses[index[v]] is v's
    [[nodiscard]] const TaskVariableUse* find(const TaskVariable& v) const {
        const auto it = index.find(v);
        return it == index.end() ? nullptr : &uses[it->second];
    }
};

// Whether two tasks may share a variable of type `t` without the data tearing: an elementary
// value (BOOL … LWORD, REAL, LREAL, TIME, DATE…, CHAR, an enumeration, a subrange) or a
// reference, of at most 64 bits. STRING, WSTRING, STRUCT, ARRAY and FB instances are not.
[[nodiscard]] bool sharedAtomically(const Type* t);

// A variable two tasks share, with how each uses it (TaskData::uses order of the first task).
struct SharedVariable {
    TaskVariable var;
    const TaskVariableUse* first = nullptr;  // in SharedTasks::first
    const TaskVariableUse* second = nullptr; // in SharedTasks::second
};
struct SharedTasks {
    const TaskData* first = nullptr; // in the order of SemanticModel::taskData
    const TaskData* second = nullptr;
    std::vector<SharedVariable> variables;
};
// Every pair of tasks that share a variable, with the variables: the one computation behind
// W0016 and `takt check --shared-variables`.
[[nodiscard]] std::vector<SharedTasks> sharedVariables(const std::vector<TaskData>& tasks);

// W0016's rule: a variable whose type is not shared atomically, written in one task and used in
// the other, where the write or the other use moves more than one atomic value (a reader of
// single BOOL elements beside a writer of single BOOL elements sees no torn value). Where to
// report it; nullopt when no value can be seen half-written.
struct TornAccess {
    bool writerIsFirst = true; // the writing task is SharedTasks::first
    Span write;                // the write to report at
    Span other;                // the other task's use
    bool otherWrites = false;
};
[[nodiscard]] std::optional<TornAccess> tornAccess(const SharedVariable& s);

} // namespace takt::compiler
