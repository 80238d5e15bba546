// Control flow in PLCopen XML (plcopen.h): FBD and LD jumps, labels and returns become IFs, REPEATs
// and RETURNs; SFC bodies (steps, transitions, divergences and convergences, action blocks and
// their inline actions, POU transitions, priorities) become textual SFC, each on the lines of its
// elements; what the reader cannot translate is E0026/E0027.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "plcopen_test_util.h"

namespace takt::compiler {
namespace {

using namespace plcopen_testing; // NOLINT(google-build-using-namespace): the tests' own helpers

TEST(Plcopen, JumpsLabelsAndReturnsBecomeIfsAndReturns) {
    const std::string xml = readFixture("jumps.xml");
    const PlcopenTranslation t = translatePlcopen(xml);
    ASSERT_TRUE(t.problems.empty()) << t.problems[0].message;
    // A jump skips the statements up to its label; a return ends the body when its input is TRUE.
    EXPECT_EQ(lineOf(t.text, "IF NOT ((Skip)) THEN"), lineOf(xml, "<jump localId=\"3\""));
    EXPECT_EQ(lineOf(t.text, "END_IF; \n"), lineOf(xml, "<label localId=\"10\""));
    EXPECT_EQ(lineOf(t.text, "IF (Halt) THEN RETURN; END_IF;"), lineOf(xml, "<return localId=\"12\""));
    TempDir dir;
    const Project p = checkXml(dir, xml);
    EXPECT_TRUE(p.ok()) << ::testing::PrintToString(diagnostics(p));
    EXPECT_EQ(p.warningCount, 0u) << ::testing::PrintToString(diagnostics(p));
}

std::string jump(int id, const std::string& label) {
    return fmt::format("          <jump localId=\"{}\" label=\"{}\"><connectionPointIn><connection refLocalId=\"1\"/>"
                       "</connectionPointIn></jump>\n",
                       id, label);
}

std::string label(int id, const std::string& name) {
    return fmt::format("          <label localId=\"{}\" label=\"{}\"/>\n", id, name);
}

// A jump back to a label above it is a loop: the label opens a REPEAT, the jump closes it with
// its condition; the statements before the label run once.
TEST(Plcopen, AJumpBackIsARepeatLoop) {
    const std::string xml = readFixture("loops.xml");
    const PlcopenTranslation t = translatePlcopen(xml);
    ASSERT_TRUE(t.problems.empty()) << t.problems[0].message;
    EXPECT_EQ(lineOf(t.text, "IF NOT ((Idle)) THEN"), lineOf(xml, "<jump localId=\"2\""));
    EXPECT_EQ(lineOf(t.text, "REPEAT"), lineOf(xml, "<label localId=\"5\""));
    EXPECT_EQ(lineOf(t.text, "UNTIL NOT (LT((I), (N))) END_REPEAT;"), lineOf(xml, "<jump localId=\"15\"")) << t.text;
    EXPECT_EQ(lineOf(t.text, "END_IF;"), lineOf(xml, "<label localId=\"16\""));
    TempDir dir;
    const Project p = checkXml(dir, xml);
    EXPECT_TRUE(p.ok()) << ::testing::PrintToString(diagnostics(p));
    EXPECT_EQ(p.warningCount, 0u) << ::testing::PrintToString(diagnostics(p));
    // Two jumps back to one label: two REPEATs, the inner one closed first.
    const PlcopenTranslation twice = translatePlcopen(fbdPou(label(2, "L") + jump(3, "L") + jump(4, "L")));
    ASSERT_TRUE(twice.problems.empty()) << twice.problems[0].message;
    EXPECT_NE(twice.text.find("REPEAT REPEAT"), std::string::npos) << twice.text;
}

// A label declared twice is E0026 at the second, naming the first: a jump to it is ambiguous.
TEST(Plcopen, ALabelDeclaredTwiceIsE0026) {
    const std::string xml = fbdPou(label(2, "L") + label(3, "L") + jump(4, "L"));
    const PlcopenTranslation t = translatePlcopen(xml);
    ASSERT_EQ(t.problems.size(), 1u) << t.text;
    EXPECT_EQ(t.problems[0].code, DiagCode::PlcopenInvalid);
    EXPECT_EQ(t.problems[0].line, lineOf(xml, "<label localId=\"3\""));
    EXPECT_EQ(t.problems[0].message, "POU 'J': label 'L' is declared twice (also localId 2) (localId 3)");
}

// Without executionOrderId a statement pulls the FB calls it reads before it, but never across a
// label or jump: an FB call inside a loop stays in it (pulled out, the loop's condition would never
// change), one after the loop stays after it (pulled in, it would run once per pass).
TEST(Plcopen, PullingNeverMovesAnFbCallIntoOrOutOfALoop) {
    const auto pou = [](const std::string& elements) {
        return document("      <pou name=\"J\" pouType=\"program\"><interface><localVars>"
                        "<variable name=\"A\"><type><BOOL/></type></variable>"
                        "<variable name=\"B\"><type><BOOL/></type></variable>"
                        "<variable name=\"C\"><type><derived name=\"CTU\"/></type></variable></localVars>"
                        "</interface>\n        <body><FBD>\n"
                        "          <inVariable localId=\"1\"><expression>A</expression></inVariable>\n"
                        "          <inVariable localId=\"9\"><expression>3</expression></inVariable>\n" +
                        elements + "        </FBD></body></pou>\n");
    };
    const std::string call = "          <block localId=\"5\" typeName=\"CTU\" instanceName=\"C\"><inputVariables>"
                             "<variable formalParameter=\"CU\"><connectionPointIn><connection refLocalId=\"1\"/>"
                             "</connectionPointIn></variable><variable formalParameter=\"PV\"><connectionPointIn>"
                             "<connection refLocalId=\"9\"/></connectionPointIn></variable></inputVariables>"
                             "<inOutVariables/><outputVariables><variable formalParameter=\"Q\"><connectionPointOut/>"
                             "</variable></outputVariables></block>\n";
    const auto readQ = [](int id, const std::string& kind) {
        const std::string end = kind == "jump" ? "</jump>" : "<expression>B</expression></outVariable>";
        return fmt::format("          <{} localId=\"{}\"{}><connectionPointIn><connection refLocalId=\"5\" "
                           "formalParameter=\"Q\"/></connectionPointIn>{}\n",
                           kind, id, kind == "jump" ? " label=\"L\"" : "", end);
    };
    // out: B reads C.Q before the loop, C runs in the loop whose jump reads C.Q
    PlcopenTranslation t = translatePlcopen(pou(readQ(2, "outVariable") + label(3, "L") + call + readQ(6, "jump")));
    ASSERT_TRUE(t.problems.empty()) << t.problems[0].message;
    ASSERT_NE(t.text.find("REPEAT"), std::string::npos) << t.text;
    EXPECT_GT(t.text.find("C("), t.text.find("REPEAT")) << t.text;
    EXPECT_LT(t.text.find("C("), t.text.find("UNTIL")) << t.text;
    // in: B reads C.Q inside the loop, C comes after it (and B reads last cycle's C.Q: W0017)
    const std::string after = pou(label(3, "L") + readQ(2, "outVariable") + jump(4, "L") + call);
    t = translatePlcopen(after);
    ASSERT_EQ(t.problems.size(), 1u) << t.text;
    EXPECT_EQ(t.problems[0].code, DiagCode::PlcopenLoopReadsLastCycle);
    EXPECT_EQ(t.problems[0].line, lineOf(after, "<block localId=\"5\""));
    EXPECT_EQ(t.problems[0].message,
              "POU 'J': the statement at localId 2 inside the loop at label 'L' reads an output of FB 'C', which is "
              "called after the loop: there it reads the output of the FB's previous call (put the block inside the "
              "loop or before its label, or give the network executionOrderId) (localId 5)");
    ASSERT_NE(t.text.find("UNTIL"), std::string::npos) << t.text;
    EXPECT_GT(t.text.find("C("), t.text.find("END_REPEAT")) << t.text;
    // The loop's own jump reading C.Q after the loop: the same
    t = translatePlcopen(pou(label(3, "L") + readQ(6, "jump") + call));
    ASSERT_EQ(t.problems.size(), 1u) << t.text;
    EXPECT_EQ(t.problems[0].code, DiagCode::PlcopenLoopReadsLastCycle);
    EXPECT_NE(t.problems[0].message.find("the statement at localId 6 inside the loop at label 'L'"), std::string::npos)
        << t.problems[0].message;
    // C before the loop has run when the loop reads it; with executionOrderId nothing is pulled and
    // the XML's order is the user's: no warning either way
    t = translatePlcopen(pou(call + label(3, "L") + readQ(2, "outVariable") + jump(4, "L")));
    EXPECT_TRUE(t.problems.empty()) << t.problems[0].message;
    std::string ordered = after;
    int next = 0;
    for (const std::string element :
         {"<label localId=\"3\"", "<outVariable localId=\"2\"", "<jump localId=\"4\"", "<block localId=\"5\""}) {
        const std::size_t at = ordered.find(element) + element.size();
        ordered.insert(at, fmt::format(" executionOrderId=\"{}\"", next++));
    }
    t = translatePlcopen(ordered);
    EXPECT_TRUE(t.problems.empty()) << t.problems[0].message;
}

// W0017 is a warning: the XML still checks, and the warning names the XML file, the block's line
// and its localId.
TEST(Plcopen, AnFbCallAfterALoopReadInsideItWarnsW0017) {
    // `afterLoop`: what the XML has between the loop's jump and the block.
    const auto network = [](const std::string& afterLoop) {
        // D only where the second case reads it (else it is an unused variable, W0001).
        const std::string d = afterLoop.empty() ? "" : "<variable name=\"D\"><type><BOOL/></type></variable>";
        return document("      <pou name=\"J\" pouType=\"program\"><interface><localVars>"
                        "<variable name=\"A\"><type><BOOL/></type></variable>"
                        "<variable name=\"B\"><type><BOOL/></type></variable>"
                        "<variable name=\"C\"><type><derived name=\"TON\"/></type></variable>" +
                        d +
                        "</localVars></interface>\n        <body><FBD>\n"
                        "          <inVariable localId=\"1\"><expression>A</expression></inVariable>\n"
                        "          <inVariable localId=\"9\"><expression>T#1s</expression></inVariable>\n" +
                        label(3, "L") +
                        "          <outVariable localId=\"2\"><connectionPointIn><connection refLocalId=\"5\" "
                        "formalParameter=\"Q\"/></connectionPointIn><expression>B</expression></outVariable>\n" +
                        jump(4, "L") + afterLoop +
                        "          <block localId=\"5\" typeName=\"TON\" instanceName=\"C\"><inputVariables>"
                        "<variable formalParameter=\"IN\"><connectionPointIn><connection refLocalId=\"1\"/>"
                        "</connectionPointIn></variable><variable formalParameter=\"PT\"><connectionPointIn>"
                        "<connection refLocalId=\"9\"/></connectionPointIn></variable></inputVariables>"
                        "<inOutVariables/><outputVariables><variable formalParameter=\"Q\"><connectionPointOut/>"
                        "</variable></outputVariables></block>\n"
                        "        </FBD></body></pou>\n");
    };
    // The block at its own place, and the block called where a reader after the loop (on the line
    // before it) needs it: both warn at the block's line and column, as `takt import` does.
    for (const std::string& afterLoop :
         {std::string(), std::string("          <outVariable localId=\"6\"><connectionPointIn><connection "
                                     "refLocalId=\"5\" formalParameter=\"Q\"/></connectionPointIn>"
                                     "<expression>D</expression></outVariable>\n")}) {
        const std::string xml = network(afterLoop);
        TempDir dir;
        const Project p = checkXml(dir, xml);
        EXPECT_TRUE(p.ok()) << ::testing::PrintToString(diagnostics(p));
        const std::vector<std::string> seen = diagnostics(p);
        ASSERT_EQ(seen.size(), 1u) << ::testing::PrintToString(seen);
        EXPECT_TRUE(seen[0].starts_with("src/plant.xml:" + std::to_string(lineOf(xml, "<block localId=\"5\"")) +
                                        " W0017 | POU 'J': the statement at localId 2"))
            << seen[0];
        EXPECT_TRUE(seen[0].ends_with("(put the block inside the loop or before its label, or give the network "
                                      "executionOrderId) (localId 5)"))
            << seen[0];
        const Diagnostic& d = p.diagnostics.front();
        const std::size_t block = xml.find("<block localId=\"5\"");
        EXPECT_EQ(p.sources->file(d.span.file).lineCol(d.span.begin).column, block - xml.rfind('\n', block));
        EXPECT_EQ(translatePlcopen(xml).problems.at(0).line, lineOf(xml, "<block localId=\"5\""));
    }
}

// Without executionOrderId "above" is the drawing's: a jump back is a loop only when its label is
// drawn above it too (by y, then x); otherwise E0027 at the jump, naming the label.
TEST(Plcopen, WithoutExecutionOrderALoopNeedsItsLabelDrawnAbove) {
    const std::string below =
        fbdPou("          <label localId=\"2\" label=\"L\"><position x=\"10\" y=\"200\"/></label>\n"
               "          <jump localId=\"3\" label=\"L\"><position x=\"10\" y=\"100\"/>"
               "<connectionPointIn><connection refLocalId=\"1\"/></connectionPointIn></jump>\n");
    PlcopenTranslation t = translatePlcopen(below);
    ASSERT_EQ(t.problems.size(), 1u) << t.text;
    EXPECT_EQ(t.problems[0].code, DiagCode::PlcopenUnsupported);
    EXPECT_EQ(t.problems[0].line, lineOf(below, "<jump localId=\"3\""));
    EXPECT_EQ(t.problems[0].message,
              "POU 'J': the jump to label 'L' comes after the label (localId 2) in the XML but not in the drawing; "
              "without executionOrderId takt reads a jump back only to a label drawn above it (localId 3)");
    std::string above = below;
    above.replace(above.find("y=\"200\""), 7, "y=\"50\"");
    t = translatePlcopen(above);
    EXPECT_TRUE(t.problems.empty()) << t.problems[0].message;
    std::string left = below;
    const std::string labelAt = "x=\"10\" y=\"200\"";
    left.replace(left.find(labelAt), labelAt.size(), "x=\"5\" y=\"100\"");
    t = translatePlcopen(left);
    EXPECT_TRUE(t.problems.empty()) << t.problems[0].message;
}

// A jump back wired straight to the left rail (or to TRUE) would loop for ever: E0027 at the jump.
TEST(Plcopen, AJumpBackThatIsAlwaysTakenIsE0027) {
    const std::string xml =
        fbdPou("          <inVariable localId=\"7\"><expression>TRUE</expression></inVariable>\n" + label(2, "L") +
               "          <jump localId=\"3\" label=\"L\"><connectionPointIn><connection refLocalId=\"7\"/>"
               "</connectionPointIn></jump>\n");
    PlcopenTranslation t = translatePlcopen(xml);
    ASSERT_EQ(t.problems.size(), 1u) << t.text;
    EXPECT_EQ(t.problems[0].code, DiagCode::PlcopenUnsupported);
    EXPECT_EQ(t.problems[0].line, lineOf(xml, "<jump localId=\"3\""));
    EXPECT_EQ(t.problems[0].message, "POU 'J': a jump back to 'L' that is always taken never ends (localId 3)");
    // the same from an LD left rail
    const std::string ld =
        document("      <pou name=\"J\" pouType=\"program\"><interface><localVars>"
                 "<variable name=\"A\"><type><BOOL/></type></variable></localVars></interface>\n"
                 "        <body><LD>\n"
                 "          <leftPowerRail localId=\"1\"><connectionPointOut formalParameter=\"\"/></leftPowerRail>\n" +
                 label(2, "L") +
                 "          <jump localId=\"3\" label=\"L\"><connectionPointIn><connection refLocalId=\"1\"/>"
                 "</connectionPointIn></jump>\n        </LD></body></pou>\n");
    t = translatePlcopen(ld);
    ASSERT_EQ(t.problems.size(), 1u) << t.text;
    EXPECT_EQ(t.problems[0].message, "POU 'J': a jump back to 'L' that is always taken never ends (localId 3)");
}

// A loop and a forward jump whose ranges cross are E0027 at the element where they meet.
TEST(Plcopen, ALoopCrossingAForwardJumpIsE0027) {
    // a jump forward out of the loop's body past its end
    std::string xml = fbdPou(label(2, "L1") + jump(3, "L2") + jump(4, "L1") + label(5, "L2"));
    PlcopenTranslation t = translatePlcopen(xml);
    ASSERT_EQ(t.problems.size(), 1u);
    EXPECT_EQ(t.problems[0].code, DiagCode::PlcopenUnsupported);
    EXPECT_EQ(t.problems[0].line, lineOf(xml, "<jump localId=\"4\""));
    EXPECT_EQ(t.problems[0].message, "POU 'J': the jumps to label 'L1' and to label 'L2' cross; takt lowers nested "
                                     "jumps only (localId 4)");
    // a jump forward into the loop's body
    xml = fbdPou(jump(2, "L2") + label(3, "L1") + label(4, "L2") + jump(5, "L1"));
    t = translatePlcopen(xml);
    ASSERT_EQ(t.problems.size(), 1u);
    EXPECT_EQ(t.problems[0].code, DiagCode::PlcopenUnsupported);
    EXPECT_EQ(t.problems[0].line, lineOf(xml, "<label localId=\"4\""));
    EXPECT_EQ(t.problems[0].message, "POU 'J': the jumps to label 'L2' and to label 'L1' cross; takt lowers nested "
                                     "jumps only (localId 4)");
}

TEST(Plcopen, CrossingJumpsAreE0027AndAJumpToNoLabelIsE0026) {
    const std::string crossing = fbdPou(jump(2, "L1") + jump(3, "L2") + label(4, "L1") + label(5, "L2"));
    PlcopenTranslation t = translatePlcopen(crossing);
    ASSERT_EQ(t.problems.size(), 1u);
    EXPECT_EQ(t.problems[0].code, DiagCode::PlcopenUnsupported);
    EXPECT_EQ(t.problems[0].line, lineOf(crossing, "<label localId=\"4\""));
    EXPECT_EQ(t.problems[0].message, "POU 'J': the jumps to label 'L1' and to label 'L2' cross; takt lowers nested "
                                     "jumps only (localId 4)");
    // Nested jumps are fine: the inner label closes first.
    t = translatePlcopen(fbdPou(jump(2, "L1") + jump(3, "L2") + label(4, "L2") + label(5, "L1")));
    EXPECT_TRUE(t.problems.empty()) << t.problems[0].message;
    t = translatePlcopen(fbdPou(jump(2, "Nowhere")));
    ASSERT_EQ(t.problems.size(), 1u);
    EXPECT_EQ(t.problems[0].code, DiagCode::PlcopenInvalid);
    EXPECT_EQ(t.problems[0].message, "POU 'J': a jump to label 'Nowhere', which no label has (localId 2)");
}

std::string sfcFixture() {
    return readFixture("sfc_chart.xml");
}

TEST(Plcopen, AnSfcBodyBecomesTextualSfc) {
    const std::string xml = sfcFixture();
    const PlcopenTranslation t = translatePlcopen(xml);
    ASSERT_TRUE(t.problems.empty()) << t.problems[0].message;
    // Steps with their action blocks (qualifiers, durations, an inline body as a hidden ACTION);
    // transitions from the steps before them (through a selection divergence, a simultaneous
    // convergence) to the steps after them (through a simultaneous divergence, a selection
    // convergence and a jump step); conditions inline in ST or connected through LD elements.
    for (const auto& [text, element] : std::vector<std::pair<std::string, std::string>>{
             {"INITIAL_STEP Idle: DrainValve(R); END_STEP", "<step localId=\"1\""},
             {"TRANSITION FROM Idle TO (Fill, Heat) :=", "<transition localId=\"2\""},
             {"STEP Fill: FillValve(N); END_STEP", "<step localId=\"4\""},
             {"STEP Heat: _Action8(P); END_STEP", "<step localId=\"5\""},
             {"ACTION _Action8:", "<action localId=\"8\""},
             {"Count := Count + 1;", "Count := Count + 1;"},
             {"TRANSITION FROM (Fill, Heat) TO Mix := (Full); END_TRANSITION", "<transition localId=\"10\""},
             {"STEP Mix: Mixer(N); Alarm(L, T#20ms); END_STEP", "<step localId=\"13\""},
             {"TRANSITION FROM Mix TO Idle :=", "<transition localId=\"16\""},
             {"TRANSITION FROM Mix TO Drain :=", "<transition localId=\"18\""},
             {"Mix.T >= T#40ms; END_TRANSITION", "Mix.T >= T#40ms"},
             {"STEP Drain: DrainValve(S); END_STEP", "<step localId=\"19\""},
             {"NOT Full; END_TRANSITION", "NOT Full;"},
         }) {
        EXPECT_NE(t.text.find(text), std::string::npos) << text << " in\n" << t.text;
        EXPECT_EQ(lineOf(t.text, text), lineOf(xml, element)) << text;
    }
    TempDir dir;
    const Project p = checkXml(dir, xml);
    EXPECT_TRUE(p.ok()) << ::testing::PrintToString(diagnostics(p));
}

std::string firstProblem(const std::string& xml);

// A chart error the ST front end finds in the translated text names the XML element it comes
// from, at its place and with its localId, not the column the text ran to on its line.
TEST(Plcopen, AChartErrorNamesItsElement) {
    // A step name used twice is the reader's E0026, at the second step.
    std::string xml = sfcFixture();
    const std::string drain = "<step localId=\"19\" name=\"Drain\"";
    xml.replace(xml.find(drain), drain.size(), "<step localId=\"19\" name=\"Fill\"");
    EXPECT_EQ(firstProblem(xml), "E0026 line " + std::to_string(lineOf(xml, "<step localId=\"19\"")) +
                                     " | POU 'SfcMain': step 'Fill' is named twice (also at localId 4) (localId 19)");
    // An action association's error names the <action>.
    std::string action = sfcFixture();
    action.replace(action.find("<reference name=\"Mixer\"/>"), 25, "<reference name=\"Mixxer\"/>");
    TempDir dir2;
    const Project checked = checkXml(dir2, action);
    const std::vector<std::string> unknown = diagnostics(checked);
    // at the <action>'s own line and column, though its text is written on the step's line
    const std::size_t element = action.rfind("<action ", action.find("<reference name=\"Mixxer\""));
    const auto e104 = std::find_if(checked.diagnostics.begin(), checked.diagnostics.end(),
                                   [](const Diagnostic& d) { return d.code == DiagCode::UnknownIdentifier; });
    ASSERT_NE(e104, checked.diagnostics.end());
    EXPECT_EQ(checked.sources->lineCol(e104->span).column, element - action.rfind('\n', element));
    ASSERT_FALSE(unknown.empty());
    EXPECT_NE(std::find(unknown.begin(), unknown.end(),
                        "src/plant.xml:" + std::to_string(lineOf(action, "<reference name=\"Mixxer\"") - 2) +
                            " E0104 | unknown identifier 'Mixxer' (localId 0)"),
              unknown.end())
        << ::testing::PrintToString(unknown);
}

// The SFC fixture with transition 16's condition naming the POU transition `Halt` of `body`.
std::string withNamedTransition(const std::string& body) {
    std::string xml = sfcFixture();
    const std::size_t inlineAt = xml.find("<inline name=\"\">", xml.find("<transition localId=\"16\""));
    xml.replace(inlineAt, xml.find("</inline>", inlineAt) + 9 - inlineAt, "<reference name=\"Halt\"/>");
    xml.insert(xml.find("        <body>\n          <SFC>"), "        <transitions>\n"
                                                            "          <transition name=\"Halt\">\n"
                                                            "            <body><ST><xhtml:p><![CDATA[" +
                                                                body +
                                                                "]]></xhtml:p></ST></body>\n"
                                                                "          </transition>\n"
                                                                "        </transitions>\n");
    return xml;
}

TEST(Plcopen, AConditionNamingAPouTransitionReadsItsSt) {
    for (const std::string body : {"Halt := Stop;", "Stop"}) {
        const std::string xml = withNamedTransition(body);
        const PlcopenTranslation t = translatePlcopen(xml);
        ASSERT_TRUE(t.problems.empty()) << t.problems[0].message;
        EXPECT_NE(t.text.find("TRANSITION FROM Mix TO Idle := Stop; END_TRANSITION"), std::string::npos) << t.text;
        TempDir dir;
        const Project p = checkXml(dir, xml);
        EXPECT_TRUE(p.ok()) << ::testing::PrintToString(diagnostics(p));
    }
    // A diagnostic about it names the POU transition's line.
    const std::string xml = withNamedTransition("Halt := Stpo;");
    TempDir dir;
    std::vector<std::string> d = diagnostics(checkXml(dir, xml));
    std::erase_if(d, [](const std::string& s) { return s.find(" W0001 | ") != std::string::npos; }); // Stop
    ASSERT_EQ(d.size(), 1u) << ::testing::PrintToString(d);
    EXPECT_EQ(d[0], "src/plant.xml:" + std::to_string(lineOf(xml, "<transition name=\"Halt\"")) +
                        " E0104 | unknown identifier 'Stpo'");
    const PlcopenTranslation statements = translatePlcopen(withNamedTransition("Halt := Stop; Stop := FALSE;"));
    ASSERT_EQ(statements.problems.size(), 1u);
    EXPECT_EQ(statements.problems[0].message, "POU 'SfcMain': transition 'Halt': only an expression, or 'Halt := "
                                              "expression;', is read as a condition");
}

// "CODE line N | message" of the reader's first problem with `xml`; "none" without one.
std::string firstProblem(const std::string& xml) {
    const PlcopenTranslation t = translatePlcopen(xml);
    return t.problems.empty() ? std::string("none")
                              : std::string(diagInfo(t.problems[0].code).code) + " line " +
                                    std::to_string(t.problems[0].line) + " | " + t.problems[0].message;
}

TEST(Plcopen, MalformedAndUnsupportedSfcElementsAreCodedErrors) {
    std::string xml = sfcFixture();
    // A macro step without a body.
    std::string macro = xml;
    const std::string drain = "<step localId=\"19\" name=\"Drain\"";
    macro.replace(macro.find(drain), drain.size(), "<macroStep localId=\"19\" name=\"Drain\"");
    macro.replace(macro.find("</step>", macro.find("<macroStep")), 7, "</macroStep>");
    EXPECT_EQ(firstProblem(macro), "E0027 line " + std::to_string(lineOf(macro, "<macroStep")) +
                                       " | POU 'SfcMain': a macro step without a body is not supported (it would be "
                                       "a step without a name) (localId 19)");
    // A transition whose condition names a POU's transition.
    std::string reference = xml;
    const std::size_t inlineAt = reference.find("<inline name=\"\">", reference.find("<transition localId=\"16\""));
    reference.replace(inlineAt, reference.find("</inline>", inlineAt) + 9 - inlineAt, "<reference name=\"Go\"/>");
    EXPECT_EQ(firstProblem(reference), "E0026 line " + std::to_string(lineOf(reference, "<reference name=\"Go\"")) +
                                           " | POU 'SfcMain': a transition condition names transition 'Go', which the "
                                           "POU does not have");
    // A transition leading to no step (its jump step removed).
    std::string nowhere = xml;
    const std::size_t jump = nowhere.find("<jumpStep");
    nowhere.erase(jump, nowhere.find("</jumpStep>") + 11 - jump);
    EXPECT_EQ(firstProblem(nowhere), "E0026 line " + std::to_string(lineOf(nowhere, "<transition localId=\"16\"")) +
                                         " | POU 'SfcMain': a transition leads to no step (localId 16)");
    // An unknown qualifier.
    std::string qualifier = xml;
    qualifier.replace(qualifier.find("qualifier=\"S\""), 13, "qualifier=\"X\"");
    EXPECT_EQ(firstProblem(qualifier), "E0026 line " + std::to_string(lineOf(xml, "qualifier=\"S\"")) +
                                           " | POU 'SfcMain': 'X' is not an action qualifier (N, R, S, P, L, D, P0, "
                                           "P1, SD, DS, SL) (localId 0)");
    // A jump step to no step of the chart (E0026 here, not an E0025 at the transition in the ST text).
    std::string jumpTo = xml;
    jumpTo.replace(jumpTo.find("targetName=\"Idle\""), 17, "targetName=\"Idel\"");
    EXPECT_EQ(firstProblem(jumpTo), "E0026 line " + std::to_string(lineOf(xml, "<jumpStep localId=\"25\"")) +
                                        " | POU 'SfcMain': a jump step to 'Idel', which is no step of the chart "
                                        "(localId 25)");
    // A qualifier's duration: L, D, SD, DS, SL need one, the others take none.
    std::string limited = xml;
    const std::string timedL = "qualifier=\"L\" duration=\"T#20ms\"";
    limited.replace(limited.find(timedL), timedL.size(), "qualifier=\"L\"");
    EXPECT_EQ(firstProblem(limited), "E0026 line " + std::to_string(lineOf(xml, "qualifier=\"L\"")) +
                                         " | POU 'SfcMain': qualifier L needs a duration: <action qualifier=\"L\" "
                                         "duration=\"PT5S\"> (localId 1)");
    std::string stored = xml;
    stored.replace(stored.find("qualifier=\"S\""), 13, "qualifier=\"S\" duration=\"PT1S\"");
    EXPECT_EQ(firstProblem(stored), "E0026 line " + std::to_string(lineOf(xml, "qualifier=\"S\"")) +
                                        " | POU 'SfcMain': qualifier S takes no duration (only L, D, SD, DS and SL) "
                                        "(localId 0)");
    // A transition priority that is no number.
    std::string priority = xml;
    priority.replace(priority.find("<transition localId=\"18\""), 24, "<transition localId=\"18\" priority=\"high\"");
    EXPECT_EQ(firstProblem(priority), "E0026 line " + std::to_string(lineOf(xml, "<transition localId=\"18\"")) +
                                          " | POU 'SfcMain': transition priority 'high' is not a number (localId 18)");
}

// tests/plcopen/sfc_macro.xml's macro steps inlined: the inner steps are the chart's (none of them
// initial: initialStep inside a macro marks its entry), the transition into a macro enters its
// entry step, the one after it leaves its exit step, and a jump step to a macro enters it.
TEST(Plcopen, AMacroStepIsInlinedBetweenItsTransitions) {
    const std::string xml = readFixture("sfc_macro.xml");
    const PlcopenTranslation t = translatePlcopen(xml);
    ASSERT_TRUE(t.problems.empty()) << t.problems[0].message;
    // The translation keeps the XML's lines: compare with its white space runs made one space.
    const auto flat = [](const std::string& text) {
        std::string out;
        for (const char c : text) {
            const bool blank = c == ' ' || c == '\n' || c == '\r' || c == '\t';
            if (!blank || (!out.empty() && out.back() != ' ')) {
                out += blank ? ' ' : c;
            }
        }
        return out;
    };
    const std::string text = flat(t.text);
    const auto has = [&](const std::string& piece) { return text.find(piece) != std::string::npos; };
    EXPECT_TRUE(has("INITIAL_STEP Idle:")) << t.text;
    EXPECT_TRUE(has("STEP Heat: Heater(N); END_STEP")) << t.text;
    EXPECT_FALSE(has("INITIAL_STEP Heat")) << t.text;
    EXPECT_TRUE(has("TRANSITION FROM Idle TO Fill := Start")) << t.text;
    EXPECT_TRUE(has("TRANSITION FROM Fill TO (Heat, Stir) := Full")) << t.text;
    EXPECT_TRUE(has("TRANSITION FROM (Hold, Stir) TO Drain := NOT Hot")) << t.text;
    EXPECT_TRUE(has("TRANSITION FROM Drain TO Idle := Done")) << t.text;
    EXPECT_FALSE(has("Work")) << "a macro is no step of its own: " << t.text;
    // A step of the inner macro is on its element's line.
    EXPECT_EQ(lineOf(t.text, "STEP Hold:"), lineOf(xml, "name=\"Hold\""));

    // A jump step to a macro enters the macro's entry step.
    std::string jump = xml;
    jump.replace(jump.find("targetName=\"Idle\""), 17, "targetName=\"Work\"");
    const PlcopenTranslation j = translatePlcopen(jump);
    ASSERT_TRUE(j.problems.empty()) << j.problems[0].message;
    EXPECT_NE(flat(j.text).find("TRANSITION FROM Drain TO Fill := Done"), std::string::npos) << j.text;
}

// A CODESYS property becomes a PROPERTY of its POU with its accessors in the XML's order; one
// without a returnType, or on a FUNCTION, is E0026 at the <Property>.
TEST(Plcopen, ACodesysPropertyIsAPropertyOfItsPou) {
    const std::string xml = readFixture("codesys_property.xml");
    const PlcopenTranslation t = translatePlcopen(xml);
    ASSERT_TRUE(t.problems.empty()) << t.problems[0].message;
    const std::size_t property = t.text.find("PROPERTY Level : INT");
    ASSERT_NE(property, std::string::npos) << t.text;
    EXPECT_LT(property, t.text.find("SET VAR")) << t.text;
    EXPECT_LT(t.text.find("END_SET"), t.text.find("GET")) << "the setter first, as the XML has it\n" << t.text;
    EXPECT_NE(t.text.find("END_GET END_PROPERTY"), std::string::npos) << t.text;
    EXPECT_EQ(lineOf(t.text, "PROPERTY Level"), lineOf(xml, "<Property name=\"Level\""));

    std::string untyped = xml;
    const std::size_t ret = untyped.find("<returnType>", untyped.find("<Property"));
    untyped.erase(ret, untyped.find("</returnType>", ret) + 13 - ret);
    EXPECT_EQ(firstProblem(untyped), "E0026 line " + std::to_string(lineOf(untyped, "<Property")) +
                                         " | property 'Tank.Level' has no <returnType>");
    std::string inFunction = xml;
    inFunction.replace(inFunction.find("pouType=\"functionBlock\""), 23, "pouType=\"function\"");
    inFunction.insert(inFunction.find("<interface>") + 11, "<returnType><INT /></returnType>");
    EXPECT_EQ(firstProblem(inFunction), "E0026 line " + std::to_string(lineOf(inFunction, "<Property")) +
                                            " | function 'Tank' has a property; only programs and function blocks "
                                            "have properties");
    // CODESYS's access modifiers: one of Public, Private, Protected, Internal set "true".
    const auto withAccess = [&](const std::string& attributes) {
        std::string x = xml;
        x.replace(x.find("<AccessModifiers />"), 19, "<AccessModifiers " + attributes + " />");
        return x;
    };
    const PlcopenTranslation isPrivate = translatePlcopen(withAccess("Private=\"true\""));
    ASSERT_TRUE(isPrivate.problems.empty()) << isPrivate.problems[0].message;
    EXPECT_NE(isPrivate.text.find("PROPERTY PRIVATE Level : INT"), std::string::npos) << isPrivate.text;
    EXPECT_NE(translatePlcopen(withAccess("Private=\"false\" Internal=\"true\"")).text.find("PROPERTY INTERNAL"),
              std::string::npos);
    const std::string twice = withAccess("Private=\"true\" Protected=\"true\"");
    EXPECT_EQ(firstProblem(twice), "E0026 line " + std::to_string(lineOf(twice, "<AccessModifiers")) +
                                       " | 'Tank.Level': two access modifiers, PRIVATE and PROTECTED");
    const std::string unknown = withAccess("Friend=\"true\"");
    EXPECT_EQ(firstProblem(unknown), "E0027 line " + std::to_string(lineOf(unknown, "<AccessModifiers")) +
                                         " | 'Tank.Level': the access modifier 'Friend' is not read (only Public, "
                                         "Private, Protected and Internal)");
    EXPECT_NE(translatePlcopen(withAccess("Protected=\"1\" Friend=\"false\"")).text.find("PROPERTY PROTECTED"),
              std::string::npos)
        << "xsd:boolean's 1; an attribute takt does not know, set false, changes nothing";
    const std::string notBoolean = withAccess("Private=\"yes\"");
    EXPECT_EQ(firstProblem(notBoolean), "E0026 line " + std::to_string(lineOf(notBoolean, "<AccessModifiers")) +
                                            " | 'Tank.Level': access modifier Private=\"yes\" is neither true nor "
                                            "false");
}

// A loop inside a macro back to its first step: the step a jump step leads to is still the entry
// when no other step is free, and a nameless macro is no clash with another.
TEST(Plcopen, AMacroWhoseFirstStepALoopJumpsBackToKeepsItAsEntry) {
    std::string xml = readFixture("sfc_macro.xml");
    const std::string heat = "<step localId=\"1\" name=\"Heat\" initialStep=\"true\"";
    xml.replace(xml.find(heat), heat.size(), "<step localId=\"1\" name=\"Heat\"");
    const std::string hold = "<step localId=\"5\" name=\"Hold\"";
    const std::size_t end = xml.find("</step>", xml.find(hold)) + 7;
    xml.insert(end, "<selectionDivergence localId=\"20\"><connectionPointIn><connection refLocalId=\"5\"/>"
                    "</connectionPointIn></selectionDivergence>"
                    "<transition localId=\"21\"><connectionPointIn><connection refLocalId=\"20\"/>"
                    "</connectionPointIn><condition><inline><ST>Full</ST></inline></condition></transition>"
                    "<jumpStep localId=\"22\" targetName=\"Heat\"><connectionPointIn><connection refLocalId=\"21\"/>"
                    "</connectionPointIn></jumpStep>"
                    "<transition localId=\"23\"><connectionPointIn><connection refLocalId=\"20\"/>"
                    "</connectionPointIn><condition><inline><ST>Hot</ST></inline></condition></transition>"
                    "<step localId=\"24\" name=\"Cool\"><connectionPointIn><connection refLocalId=\"23\"/>"
                    "</connectionPointIn></step>");
    for (const std::string macro :
         {"<macroStep localId=\"5\" name=\"Heating\"", "<macroStep localId=\"3\" name=\"Work\""}) {
        xml.replace(xml.find(macro), macro.size(), macro.substr(0, macro.find(" name=")));
    }
    const PlcopenTranslation t = translatePlcopen(xml);
    ASSERT_TRUE(t.problems.empty()) << t.problems[0].message;
    EXPECT_NE(t.text.find("TRANSITION FROM Hold TO Heat :="), std::string::npos) << t.text;
    EXPECT_NE(t.text.find("TRANSITION FROM Fill TO (Heat, Stir) :="), std::string::npos) << "Heat is the entry\n"
                                                                                         << t.text;
    EXPECT_NE(t.text.find("TRANSITION FROM (Cool, Stir) TO Drain :="), std::string::npos) << "Cool is the exit\n"
                                                                                          << t.text;
}

TEST(Plcopen, AMacroStepsBodyMustHaveOneEntryAndOneExit) {
    const std::string xml = readFixture("sfc_macro.xml");
    const std::string heating = "<macroStep localId=\"5\" name=\"Heating\"";
    // Heating's inner transition removed: Heat and Hold both end the body.
    std::string twoExits = xml;
    const std::size_t inner = twoExits.find("<transition localId=\"4\"", twoExits.find(heating));
    twoExits.erase(inner, twoExits.find("</transition>", inner) + 13 - inner);
    EXPECT_EQ(firstProblem(twoExits),
              "E0026 line " + std::to_string(lineOf(twoExits, heating)) +
                  " | POU 'SfcMacro': macro step 'Heating': its body has 1 entry step (Heat (localId 1)) and 2 "
                  "exit steps (Heat (localId 1), Hold (localId 5)), not one of each: the entry is the step no "
                  "connection leads to (or the one marked initialStep), the exit the one no transition follows "
                  "(localId 5)");
    // Fill's place in Work taken by a second step nothing leads to.
    std::string twoEntries = xml;
    const std::string fill = "<step localId=\"1\" name=\"Fill\"";
    twoEntries.insert(twoEntries.find(fill),
                      "<step localId=\"99\" name=\"Spare\"><connectionPointIn/>"
                      "<connectionPointOut/></step><transition localId=\"98\"><connectionPointIn><connection "
                      "refLocalId=\"99\"/></connectionPointIn><condition><inline><ST>TRUE</ST></inline></condition>"
                      "</transition><step localId=\"97\" name=\"Spare2\"><connectionPointIn><connection "
                      "refLocalId=\"98\"/></connectionPointIn></step>\n");
    EXPECT_NE(firstProblem(twoEntries)
                  .find("macro step 'Work': its body has 2 entry steps (Spare (localId 99), Fill "
                        "(localId 1)) and 2 exit steps"),
              std::string::npos)
        << firstProblem(twoEntries);
    // A body in another language than SFC.
    std::string ld = xml;
    const std::size_t sfc = ld.find("<SFC>", ld.find(heating));
    ld.replace(sfc, 5, "<LD>");
    ld.replace(ld.find("</SFC>", sfc), 6, "</LD>");
    EXPECT_EQ(firstProblem(ld),
              "E0027 line " + std::to_string(lineOf(ld, heating)) +
                  " | POU 'SfcMacro': a macro step's body in LD is not supported (only SFC) (localId 5)");
    // An action block on the macro step itself.
    std::string action = xml;
    const std::size_t after = action.find("</macroStep>", action.find(heating)) + 12;
    action.insert(after, "<actionBlock localId=\"50\"><connectionPointIn><connection refLocalId=\"5\"/>"
                         "</connectionPointIn><action qualifier=\"N\"><reference name=\"Heater\"/></action>"
                         "</actionBlock>");
    EXPECT_EQ(firstProblem(action), "E0027 line " + std::to_string(lineOf(action, "<actionBlock localId=\"50\"")) +
                                        " | POU 'SfcMacro': an action block on a macro step (only on its steps) "
                                        "(localId 50)");
    // Two elements of one body with one localId; the same localId in another body is no clash.
    std::string clash = xml;
    clash.replace(clash.find("<transition localId=\"4\"", clash.find(heating)), 23, "<transition localId=\"1\"");
    EXPECT_NE(firstProblem(clash).find("E0026"), std::string::npos) << firstProblem(clash);
    EXPECT_NE(firstProblem(clash).find("no localId or one another element has"), std::string::npos)
        << firstProblem(clash);
}

// TC6's transition priority becomes IEC 61131-3's PRIORITY of the textual SFC.
TEST(Plcopen, ATransitionsPriorityIsRead) {
    const std::string xml = readFixture("sfc_priority.xml");
    const PlcopenTranslation t = translatePlcopen(xml);
    ASSERT_TRUE(t.problems.empty()) << t.problems[0].message;
    EXPECT_EQ(lineOf(t.text, "TRANSITION (PRIORITY := 2) FROM Idle TO Normal :="),
              lineOf(xml, "<transition localId=\"3\""));
    EXPECT_EQ(lineOf(t.text, "TRANSITION (PRIORITY := 1) FROM Idle TO Rush :="),
              lineOf(xml, "<transition localId=\"5\""));
    EXPECT_NE(t.text.find("TRANSITION FROM Normal TO Idle :="), std::string::npos) << t.text;
    TempDir dir;
    const Project p = checkXml(dir, xml);
    EXPECT_TRUE(p.ok()) << ::testing::PrintToString(diagnostics(p));
}

// The priority attribute: spaces around it and a leading + are read; a number too large for 64
// bits is out of range, not "no number".
TEST(Plcopen, ATransitionsPriorityIsTrimmedAndRangeChecked) {
    const std::string xml = readFixture("sfc_priority.xml");
    std::string spaced = xml;
    spaced.replace(spaced.find("priority=\"2\""), 12, "priority=\" +2 \"");
    PlcopenTranslation t = translatePlcopen(spaced);
    ASSERT_TRUE(t.problems.empty()) << t.problems[0].message;
    EXPECT_NE(t.text.find("TRANSITION (PRIORITY := 2) FROM Idle TO Normal :="), std::string::npos) << t.text;
    std::string large = xml;
    large.replace(large.find("priority=\"2\""), 12, "priority=\"18446744073709551616\"");
    t = translatePlcopen(large);
    ASSERT_EQ(t.problems.size(), 1u) << t.text;
    EXPECT_EQ(t.problems[0].code, DiagCode::PlcopenInvalid);
    EXPECT_EQ(t.problems[0].message, "POU 'SfcPrio': transition priority '18446744073709551616' is out of range (at "
                                     "most 18446744073709551615) (localId 3)");
    std::string largest = xml;
    largest.replace(largest.find("priority=\"2\""), 12, "priority=\"18446744073709551615\"");
    t = translatePlcopen(largest);
    EXPECT_TRUE(t.problems.empty()) << t.problems[0].message;
}

} // namespace
} // namespace takt::compiler
