#pragma once
// The parts of the PLCopen XML reader (plcopen.h) shared by its files: the writer that keeps the
// XML's lines in the translated ST, and the element helpers. pugixml is the XML parser.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <pugixml.hpp>

#include "takt/compiler/plcopen.h"

namespace takt::compiler::plcopen {

// CODESYS's vendor data for its global variable lists (GVLs: VAR_GLOBAL outside a CONFIGURATION),
// a `<data>` in the project's `addData` holding one named `<globalVars>` per list.
inline constexpr std::string_view kCodesysGlobalVars = "http://www.3s-software.com/plcopenxml/globalvars";
// CODESYS's vendor data for a METHOD, in its POU's `addData`: a `<Method name>` with an
// `<interface>` and a `<body>` like a POU's.
inline constexpr std::string_view kCodesysMethod = "http://www.3s-software.com/plcopenxml/method";
// CODESYS's vendor data for a PROPERTY, in its POU's `addData`: a `<Property name>` with an
// `<interface>` holding its `returnType`, and a `<GetAccessor>` and/or a `<SetAccessor>` (in
// either order), each with an `<interface>` and a `<body>` like a method's.
inline constexpr std::string_view kCodesysProperty = "http://www.3s-software.com/plcopenxml/property";
// CODESYS's vendor data for the access of a METHOD or PROPERTY, in the `addData` of its
// `<interface>`: `<AccessModifiers Private="true"/>` (Protected, Internal, Public; none: PUBLIC).
inline constexpr std::string_view kCodesysAccessModifiers = "http://www.3s-software.com/plcopenxml/accessmodifiers";
// The access specifiers in CODESYS's attribute spelling, as ast::Access numbers them (Default first).
inline constexpr std::string_view kCodesysAccessNames[] = {"", "Public", "Private", "Protected", "Internal"};
// takt's vendor data on a configuration `takt export plcopen` made for a project without one (a
// task at the base cycle running every PROGRAM, so that the editors run it): takt's reader takes
// only the resource's name and the task's interval from it, for runtime.toml, and compiles the
// programs as before, each once every base cycle.
inline constexpr std::string_view kTaktImplicitConfiguration = "urn:takt:plcopenxml:implicit-configuration";

// The element's name without its namespace prefix ("xhtml:p" -> "p").
[[nodiscard]] std::string_view localName(const pugi::xml_node& node);
// The first child element named `name` (prefix ignored); empty when none.
[[nodiscard]] pugi::xml_node child(const pugi::xml_node& node, std::string_view name);
// The first child element, whatever its name.
[[nodiscard]] pugi::xml_node firstElement(const pugi::xml_node& node);

// Builds the translated ST. Text is only appended, and before each piece the writer moves to the
// line and column of the element it comes from (never backwards: a piece whose element lies
// before what is written already follows it on the same line). Newlines come only from the
// XML's own newlines, so line N of the ST is line N of the XML.
class Translator {
public:
    explicit Translator(std::string_view xml);

    // Moves to `node`'s position in the XML (an element's '<', a text's first character).
    void moveTo(const pugi::xml_node& node);
    // Appends `text`, counting its newlines.
    void put(std::string_view text);
    // Removes the characters of `chars` at the end of the text, not before offset `floor` and
    // never a newline.
    void dropTrailing(std::string_view chars, std::size_t floor);
    // A problem at `node`, with the element's localId (when it has one) in the message.
    void problem(DiagCode code, const pugi::xml_node& node, std::string message);
    // A problem about `node` (its XML line and localId) without moving the text: at the node's
    // place when the text has reached its line, else at the end of what is written so far (a
    // warning while the statements around it are still being written).
    void problemHere(DiagCode code, const pugi::xml_node& node, std::string message);
    // The translation, once everything is written: a problem about an element the text had not
    // reached then (problemHere) moves to the element's place, which the text is extended to.
    [[nodiscard]] PlcopenTranslation take();
    // A problem at a byte offset of the XML (where pugixml stopped on malformed XML).
    void problemAt(DiagCode code, std::size_t xmlOffset, std::string message);

    [[nodiscard]] std::uint32_t xmlLine(const pugi::xml_node& node) const;
    // Where `node`'s line and column are in the text, once the text reaches that line.
    [[nodiscard]] std::optional<std::uint32_t> textOffsetOf(const pugi::xml_node& node) const;
    // Records that the text from `begin` to the end written so far is `node`'s (PlcopenOrigin);
    // its place is found at take() when the text has not reached the node's line yet.
    void origin(std::uint32_t begin, const pugi::xml_node& node);

    // The ST text of a type element's content (`<type>`, `<baseType>`); nothing after a problem.
    [[nodiscard]] std::optional<std::string> typeOf(const pugi::xml_node& holder, std::string_view where);
    // The ST text of an `<initialValue>`'s content; nothing after a problem.
    [[nodiscard]] std::optional<std::string> valueOf(const pugi::xml_node& holder, std::string_view where);
    // `name [AT address] : type [:= value];` of one `<variable>`, written at its place; `owner`
    // names its POU or resource in messages and in the located list.
    void variable(const pugi::xml_node& var, std::string_view owner);
    // `TYPE … END_TYPE` of one `<dataType>`.
    void dataType(const pugi::xml_node& type);

    PlcopenTranslation out;

private:
    struct LineCol {
        std::uint32_t line;
        std::uint32_t column;
    };
    [[nodiscard]] LineCol position(const pugi::xml_node& node) const;
    [[nodiscard]] LineCol positionAt(std::size_t offset) const;
    [[nodiscard]] std::optional<std::uint32_t> textOffsetOf(LineCol at) const;
    void moveTo(LineCol to);
    // A diagnostic will name the element at `at`, below the text written so far: moving past
    // its line, the text makes room up to its column (padTo_).
    void keepRoomFor(LineCol at);
    [[nodiscard]] std::optional<std::string> typeElement(const pugi::xml_node& type, std::string_view where, int depth);
    [[nodiscard]] std::optional<std::string> valueElement(const pugi::xml_node& value, std::string_view where,
                                                          int depth);

    std::string_view xml_;
    // Byte offsets in the XML where its lines start: after LF, CRLF or a lone CR, the line ends
    // XML knows (pugixml turns each into one LF in text and attribute values).
    std::vector<std::uint32_t> lineStarts_;
    // Byte offsets in the translated text where its lines start.
    std::vector<std::uint32_t> outLineStarts_{0};
    std::uint32_t line_ = 1;
    std::uint32_t column_ = 1;
    // Problems (their index in out.problems) about an element the text had not reached yet.
    std::vector<std::pair<std::size_t, LineCol>> pending_;
    // Lines ahead of the text -> the column they must reach (keepRoomFor).
    std::map<std::uint32_t, std::uint32_t> padTo_;
    // Origins (their index in out.origins) of an element whose line the text had not reached.
    std::vector<std::pair<std::size_t, LineCol>> pendingOrigins_;
};

// One line of text: an attribute value with a newline would shift every line after it.
[[nodiscard]] std::string oneLine(std::string_view text);

// A name the ST front end can take as an identifier (letters, digits, '_', not starting with a
// digit); the reader refuses others (E0026) so an attribute cannot inject ST.
[[nodiscard]] bool isIdentifier(std::string_view name);

// The POUs (`types/pous`) and the configurations (`instances/configurations`): reader.cpp.
void translatePou(Translator& t, const pugi::xml_node& pou);
void translateConfiguration(Translator& t, const pugi::xml_node& configuration);
// The statements of one `<body>` of `<pou>`, or of one of its actions (reader.cpp).
void translateBody(Translator& t, const pugi::xml_node& body, const pugi::xml_node& pou, bool inAction);
// The statements of an `<FBD>` or `<LD>` body of `<pou>` or of an action of it (network.cpp).
void translateNetwork(Translator& t, const pugi::xml_node& body, const pugi::xml_node& pou, bool inAction);
// The expression a connectionPointIn of an SFC body reads through that body's FBD or LD elements
// (a transition's condition); nothing after a problem (network.cpp).
[[nodiscard]] std::optional<std::string> translateCondition(Translator& t, const pugi::xml_node& body,
                                                            const pugi::xml_node& pou, const pugi::xml_node& point);
// The chart of an `<SFC>` body of `<pou>`, as textual SFC (sfc.cpp).
void translateSfc(Translator& t, const pugi::xml_node& sfc, const pugi::xml_node& pou);

} // namespace takt::compiler::plcopen
