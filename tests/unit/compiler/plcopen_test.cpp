// PLCopen XML as a source kind (plcopen.h): a .xml file in the sources is translated to ST line for
// line, so the whole front end checks it and every diagnostic names the XML file and the line of
// the element it is about; what the reader cannot translate is E0026/E0027, never a silent skip.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "plcopen_test_util.h"

namespace takt::compiler {
namespace {

namespace fs = std::filesystem;
using namespace plcopen_testing; // NOLINT(google-build-using-namespace): the tests' own helpers

std::string fixture() {
    std::ifstream in(fs::path(TAKT_SOURCE_DIR) / "tests/plcopen/mixer.xml", std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(Plcopen, TheMixerProjectChecksWithoutADiagnostic) {
    TempDir dir;
    const Project p = checkXml(dir, fixture());
    ASSERT_TRUE(p.valid());
    EXPECT_EQ(p.errorCount, 0u) << ::testing::PrintToString(diagnostics(p));
    EXPECT_EQ(p.warningCount, 0u) << ::testing::PrintToString(diagnostics(p));
    EXPECT_EQ(p.sourcePaths, std::vector<std::string>{"src/plant.xml"});
}

TEST(Plcopen, TheTranslationKeepsTheXmlsLines) {
    const std::string xml = fixture();
    const PlcopenTranslation t = translatePlcopen(xml);
    ASSERT_TRUE(t.problems.empty());
    // A declaration on its <variable>'s line, a body statement on its own line, the POU header on
    // the <pou>'s line, the task on the <task>'s line.
    EXPECT_EQ(lineOf(t.text, "Start AT %IX0.0 : BOOL;"), lineOf(xml, "<variable name=\"Start\""));
    EXPECT_EQ(lineOf(t.text, "FillPercent := MIN(ToPercent(Level), Share);"),
              lineOf(xml, "FillPercent := MIN(ToPercent(Level), Share);"));
    EXPECT_EQ(lineOf(t.text, "PROGRAM MixerControl"), lineOf(xml, "<pou name=\"MixerControl\""));
    EXPECT_EQ(lineOf(t.text, "FUNCTION ToPercent : INT"), lineOf(xml, "<pou name=\"ToPercent\""));
    EXPECT_EQ(lineOf(t.text, "TASK MainTask(INTERVAL := T#20ms, PRIORITY := 2);"),
              lineOf(xml, "<task name=\"MainTask\""));
    EXPECT_EQ(lineOf(t.text, "PROGRAM Mixer0 WITH MainTask : MixerControl;"),
              lineOf(xml, "<pouInstance name=\"Mixer0\""));
    EXPECT_NE(t.text.find("Batch : Recipe := (FillLevel := 400, MixCycles := 2);"), std::string::npos) << t.text;
    EXPECT_NE(t.text.find("History : ARRAY[1..4] OF INT := [4(-1)];"), std::string::npos);
    EXPECT_NE(t.text.find("TYPE MixerState : (IDLE, FILLING, MIXING, DRAINING) := IDLE; END_TYPE"), std::string::npos);
    EXPECT_NE(t.text.find("TYPE Percent : INT(0..100); END_TYPE"), std::string::npos);
    // The last item written is the last program instance; the closing tags after it need no lines.
    EXPECT_EQ(std::count(t.text.begin(), t.text.end(), '\n') + 1, lineOf(xml, "<pouInstance name=\"Mixer0\""));
}

TEST(Plcopen, ResourcesTasksAndLocatedVariables) {
    const PlcopenTranslation t = translatePlcopen(fixture());
    ASSERT_EQ(t.resources.size(), 1u);
    EXPECT_EQ(t.resources[0].configuration, "Config0");
    EXPECT_EQ(t.resources[0].name, "Res0");
    ASSERT_EQ(t.resources[0].tasks.size(), 2u);
    EXPECT_EQ(t.resources[0].tasks[0].name, "FastTask");
    EXPECT_EQ(t.resources[0].tasks[0].intervalMs, 10u);
    EXPECT_EQ(t.resources[0].tasks[0].priority, "1");
    EXPECT_EQ(t.resources[0].tasks[1].intervalMs, 20u); // PT0.02S
    std::vector<std::string> located;
    for (const PlcopenLocated& l : t.located) {
        located.push_back(l.address + " " + l.path + " " + l.type);
    }
    EXPECT_EQ(located,
              (std::vector<std::string>{"%IX0.0 MixerControl.Start BOOL", "%IW1 MixerControl.Level INT",
                                        "%QX0.0 MixerControl.InletValve BOOL", "%QX0.1 MixerControl.Agitator BOOL",
                                        "%QX0.2 MixerControl.DrainValve BOOL", "%QW2 MixerControl.FillPercent INT",
                                        "%QX0.7 Heartbeat.Beat BOOL"}));
}

TEST(Plcopen, AnErrorInAnStBodyNamesTheXmlFileAndLine) {
    TempDir dir;
    const std::string xml = document("      <pou name=\"Main\" pouType=\"program\">\n"
                                     "        <interface><localVars>\n"
                                     "          <variable name=\"Count\"><type><INT/></type></variable>\n"
                                     "        </localVars></interface>\n"
                                     "        <body><ST><xhtml:p><![CDATA[Count := Count + 1;\n"
                                     "Cuont := 0;]]></xhtml:p></ST></body>\n"
                                     "      </pou>\n");
    const Project p = checkXml(dir, xml);
    const std::vector<std::string> d = diagnostics(p);
    ASSERT_EQ(d.size(), 1u) << ::testing::PrintToString(d);
    EXPECT_EQ(d[0].substr(0, d[0].find(" | ")), "src/plant.xml:" + std::to_string(lineOf(xml, "Cuont")) + " E0104");
}

TEST(Plcopen, AnIlBodyIsE0027NamingThePou) {
    TempDir dir;
    const std::string xml = document("      <pou name=\"Sequence\" pouType=\"program\">\n"
                                     "        <interface/>\n"
                                     "        <body>\n"
                                     "          <IL>\n"
                                     "            <xhtml:p>LD TRUE</xhtml:p>\n"
                                     "          </IL>\n"
                                     "        </body>\n"
                                     "      </pou>\n");
    const std::vector<std::string> d = diagnostics(checkXml(dir, xml));
    ASSERT_EQ(d.size(), 1u) << ::testing::PrintToString(d);
    EXPECT_EQ(d[0], "src/plant.xml:" + std::to_string(lineOf(xml, "<IL>")) +
                        " E0027 | POU 'Sequence': a body in IL is not supported yet (only ST, FBD, LD and SFC bodies "
                        "are read)");
}

TEST(Plcopen, MalformedXmlIsE0026AtItsLine) {
    TempDir dir;
    const std::string xml = document("      <pou name=\"Main\" pouType=\"program\">\n"
                                     "        <interface>\n"
                                     "      </pou>\n");
    const std::vector<std::string> d = diagnostics(checkXml(dir, xml));
    ASSERT_EQ(d.size(), 1u) << ::testing::PrintToString(d);
    EXPECT_TRUE(
        d[0].starts_with("src/plant.xml:" + std::to_string(lineOf(xml, "</pou>")) + " E0026 | not well-formed XML"))
        << d[0];
}

TEST(Plcopen, LinesEndingInALoneCarriageReturnCountAsXmlCountsThem) {
    // XML reads CR, LF and CRLF alike; the translated body kept a line the XML's LF count missed.
    TempDir dir;
    std::string xml =
        document("      <pou name=\"Main\" pouType=\"program\">\n"
                 "        <interface/>\n"
                 "        <body><ST><xhtml:p><![CDATA[(* a *)\n(* b *)\nCuont := 0;]]></xhtml:p></ST></body>\n"
                 "      </pou>\n");
    std::replace(xml.begin(), xml.end(), '\n', '\r');
    const std::vector<std::string> d = diagnostics(checkXml(dir, xml));
    ASSERT_EQ(d.size(), 1u) << ::testing::PrintToString(d);
    EXPECT_EQ(d[0].substr(0, d[0].find(" | ")), "src/plant.xml:12 E0104");
}

TEST(Plcopen, AnotherXmlDocumentIsE0026) {
    TempDir dir;
    const std::vector<std::string> d =
        diagnostics(checkXml(dir, "<?xml version=\"1.0\"?>\n<project xmlns=\"urn:other\"/>\n"));
    ASSERT_EQ(d.size(), 1u) << ::testing::PrintToString(d);
    EXPECT_TRUE(d[0].starts_with("src/plant.xml:2 E0026 | not a PLCopen TC6 XML project")) << d[0];
}

TEST(Plcopen, TheOlderNamespaceAndCodesysStBodiesAreRead) {
    TempDir dir;
    std::string xml = document("      <pou name=\"Main\" pouType=\"program\">\n"
                               "        <interface><localVars>\n"
                               "          <variable name=\"N\"><type><DINT/></type></variable>\n"
                               "        </localVars></interface>\n"
                               "        <body><ST><xhtml xmlns=\"http://www.w3.org/1999/xhtml\">N := N + 1;\n"
                               "IF N &gt; 10 THEN N := 0; END_IF;</xhtml></ST></body>\n"
                               "      </pou>\n");
    xml.replace(xml.find("tc6_0201"), 8, "tc6_0200");
    const Project p = checkXml(dir, xml);
    EXPECT_TRUE(p.ok()) << ::testing::PrintToString(diagnostics(p));
}

TEST(Plcopen, ANameThatIsNoIdentifierIsE0026) {
    TempDir dir;
    const std::string xml =
        document("      <pou name=\"Main\" pouType=\"program\">\n"
                 "        <interface><localVars>\n"
                 "          <variable name=\"x\"><type><derived name=\"INT; y\"/></type></variable>\n"
                 "        </localVars></interface>\n"
                 "      </pou>\n");
    const std::vector<std::string> d = diagnostics(checkXml(dir, xml));
    ASSERT_EQ(d.size(), 1u) << ::testing::PrintToString(d);
    EXPECT_EQ(d[0], "src/plant.xml:" + std::to_string(lineOf(xml, "<derived")) +
                        " E0026 | Main.x: 'INT; y' is not a type name");
}

TEST(Plcopen, PouActionsBecomeActionsOfThePou) {
    std::ifstream in(fs::path(TAKT_SOURCE_DIR) / "tests/plcopen/actions.xml", std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    const std::string xml = s.str();
    const PlcopenTranslation t = translatePlcopen(xml);
    ASSERT_TRUE(t.problems.empty()) << t.problems[0].message;
    // Each on the line of its <action>, its body (ST, FBD or LD) on the body's lines.
    EXPECT_EQ(lineOf(t.text, "ACTION Bump:"), lineOf(xml, "<action name=\"Bump\""));
    EXPECT_EQ(lineOf(t.text, "ACTION Mark:"), lineOf(xml, "<action name=\"Mark\""));
    EXPECT_EQ(lineOf(t.text, "Flag := NOT (Flag);"), lineOf(xml, "<coil localId=\"3\""));
    EXPECT_EQ(lineOf(t.text, "Count := 0;"), lineOf(xml, "Count := 0;"));
    TempDir dir;
    const Project p = checkXml(dir, xml);
    EXPECT_TRUE(p.ok()) << ::testing::PrintToString(diagnostics(p));
}

TEST(Plcopen, AnEdgeContactInAnActionIsE0027) {
    std::ifstream in(fs::path(TAKT_SOURCE_DIR) / "tests/plcopen/actions.xml", std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    std::string xml = s.str();
    xml.replace(xml.find("negated=\"true\""), 14, "edge=\"rising\"");
    const PlcopenTranslation t = translatePlcopen(xml);
    ASSERT_EQ(t.problems.size(), 1u);
    EXPECT_EQ(t.problems[0].message, "POU 'ActMain': an edge-sensing contact in an action, which declares no "
                                     "variables of its own (localId 2)");
}

std::string fbdFixture() {
    std::ifstream in(fs::path(TAKT_SOURCE_DIR) / "tests/plcopen/fbd_network.xml", std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(Plcopen, AnFbdBodyBecomesStatementsInTopologicalOrder) {
    const std::string xml = fbdFixture();
    const PlcopenTranslation t = translatePlcopen(xml);
    ASSERT_TRUE(t.problems.empty()) << t.problems[0].message;
    // No executionOrderId: the sinks in document order, each after the FB call it reads; the TON
    // is called before `Lamp` reads its Q; a function is written where its output is read; the
    // connector/continuation pair carries the AND; the negated pin is a NOT; the in-out variable
    // is assigned before MUL reads it.
    std::string statements;
    for (const std::string s :
         {"Delay(IN := (Start), PT := (T#30ms));", "Lamp := Delay.Q;", "Alarm := AND((Start), NOT Delay.Q);",
          "Count := ADD((Count), (1));", "Scaled := MUL((Count), (1));"}) {
        const std::size_t at = t.text.find(s);
        EXPECT_NE(at, std::string::npos) << s << " in\n" << t.text;
        statements += std::to_string(at == std::string::npos ? 0 : lineOf(t.text, s)) + " ";
    }
    // Each on the line of its element (the call moved before the first sink that reads it).
    EXPECT_EQ(statements,
              fmt::format("{0} {0} {1} {2} {3} ", lineOf(xml, "<outVariable localId=\"10\""),
                          lineOf(xml, "<outVariable localId=\"11\""), lineOf(xml, "<inOutVariable localId=\"12\""),
                          lineOf(xml, "<outVariable localId=\"14\"")));
    TempDir dir;
    const Project p = checkXml(dir, xml);
    EXPECT_TRUE(p.ok()) << ::testing::PrintToString(diagnostics(p));
}

TEST(Plcopen, ExecutionOrderIdsDecideTheOrder) {
    std::string xml = fbdFixture();
    // Scaled first, then the rest: the ids are the XML's order, not the reader's.
    const auto setId = [&](const std::string& element, int id) {
        const std::size_t at = xml.find(element);
        ASSERT_NE(at, std::string::npos);
        xml.insert(at + element.size(), fmt::format(" executionOrderId=\"{}\"", id));
    };
    setId("<outVariable localId=\"14\"", 1);
    setId("<block localId=\"4\"", 2);
    setId("<outVariable localId=\"10\"", 3);
    setId("<outVariable localId=\"11\"", 4);
    setId("<inOutVariable localId=\"12\"", 5);
    const PlcopenTranslation t = translatePlcopen(xml);
    ASSERT_TRUE(t.problems.empty()) << t.problems[0].message;
    const std::size_t scaled = t.text.find("Scaled := MUL((Count), (1));");
    const std::size_t count = t.text.find("Count := ADD((Count), (1));");
    const std::size_t call = t.text.find("Delay(IN := (Start), PT := (T#30ms));");
    ASSERT_NE(scaled, std::string::npos) << t.text;
    EXPECT_LT(scaled, call) << t.text;
    EXPECT_LT(call, count) << t.text;
}

TEST(Plcopen, AnFbdConnectionToNoElementIsE0026) {
    std::string xml = fbdFixture();
    const std::string ref = "<connection refLocalId=\"8\"/>";
    xml.replace(xml.find(ref), ref.size(), "<connection refLocalId=\"99\"/>");
    const PlcopenTranslation t = translatePlcopen(xml);
    ASSERT_EQ(t.problems.size(), 1u);
    EXPECT_EQ(t.problems[0].code, DiagCode::PlcopenInvalid);
    EXPECT_EQ(t.problems[0].message, "POU 'FbdMain': a connection names localId 99, which no element has");
}

std::string ldFixture() {
    std::ifstream in(fs::path(TAKT_SOURCE_DIR) / "tests/plcopen/ld_network.xml", std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(Plcopen, AnLdBodyBecomesStatementsOnTheLinesOfItsCoils) {
    const std::string xml = ldFixture();
    const PlcopenTranslation t = translatePlcopen(xml);
    ASSERT_TRUE(t.problems.empty()) << t.problems[0].message;
    // Parallel contacts are an OR, a series an AND, a negated contact a NOT; set and reset coils
    // are IFs; an edge contact or coil runs its hidden R_TRIG/F_TRIG once, before the first
    // statement reading it; a function under EN runs only when EN is TRUE, and ENO is EN; an FB
    // under EN is called only when EN is TRUE.
    for (const auto& [statement, element] : std::vector<std::pair<std::string, std::string>>{
             {"Run := ((Start) OR (Run)) AND NOT (Stop);", "<coil localId=\"5\""},
             {"_Edge6(CLK := (Start)); IF _Edge6.Q THEN Latch := TRUE; END_IF;", "<coil localId=\"7\""},
             {"IF (Stop) THEN Latch := FALSE; END_IF;", "<coil localId=\"9\""},
             {"Idle := NOT ((Run));", "<coil localId=\"11\""},
             {"_Edge12(CLK := (Run)); RunPulse := _Edge12.Q;", "<coil localId=\"12\""},
             {"_Edge13(CLK := (Run)); IF _Edge13.Q THEN Count := ADD((Count), (1)); END_IF;",
              "<outVariable localId=\"17\""},
             {"Stopped := _Edge13.Q;", "<coil localId=\"18\""},
             {"Delay(IN := (Run), PT := (T#30ms));", "<block localId=\"20\""},
             {"IF (Jog) THEN Pulses(CU := (Start), PV := (100)); END_IF;", "<block localId=\"25\""},
             {"JogOn := (Jog);", "<coil localId=\"28\""},
         }) {
        EXPECT_NE(t.text.find(statement), std::string::npos) << statement << " in\n" << t.text;
        EXPECT_EQ(lineOf(t.text, statement), lineOf(xml, element)) << statement;
    }
    EXPECT_EQ(lineOf(t.text, "VAR _Edge6 : R_TRIG; _Edge12 : R_TRIG; _Edge13 : F_TRIG; END_VAR"), lineOf(xml, "<LD>"));
    TempDir dir;
    const Project p = checkXml(dir, xml);
    EXPECT_TRUE(p.ok()) << ::testing::PrintToString(diagnostics(p));
}

TEST(Plcopen, ACodesysLdExportIsRead) {
    // As CODESYS 3.5 writes LD: the 2.0 namespace, a network title and the editor's settings as
    // vendor elements, executionOrderIds, connections with branch ids in addData, the left rail's
    // pin named "none", a TON under EN (on the rail: always called) reading the power through a coil.
    std::string xml = document(
        "      <pou name=\"Seal\" pouType=\"program\">\n"
        "        <interface><localVars>\n"
        "          <variable name=\"Start\"><type><BOOL/></type></variable>\n"
        "          <variable name=\"Stop\"><type><BOOL/></type></variable>\n"
        "          <variable name=\"Run\"><type><BOOL/></type></variable>\n"
        "          <variable name=\"Done\"><type><BOOL/></type></variable>\n"
        "          <variable name=\"Delay\"><type><derived name=\"TON\"/></type></variable>\n"
        "        </localVars></interface>\n"
        "        <body>\n"
        "          <LD>\n"
        "            <vendorElement localId=\"10000000000\"><position x=\"0\" y=\"0\"/><alternativeText><xhtml "
        "xmlns=\"http://www.w3.org/1999/xhtml\">LD Implementation Attributes</xhtml></alternativeText><addData><data "
        "name=\"http://www.3s-software.com/plcopenxml/fbd/implementationattributes\" "
        "handleUnknown=\"implementation\"><fbdattributes xmlns=\"\"/></data></addData></vendorElement>\n"
        "            <vendorElement localId=\"10000000001\"><position x=\"0\" y=\"0\"/><alternativeText><xhtml "
        "xmlns=\"http://www.w3.org/1999/xhtml\"/></alternativeText><addData><data "
        "name=\"http://www.3s-software.com/plcopenxml/fbdelementtype\" handleUnknown=\"implementation\"><ElementType "
        "xmlns=\"\">networktitle</ElementType></data></addData></vendorElement>\n"
        "            <leftPowerRail localId=\"10000000002\"><position x=\"0\" y=\"0\"/><connectionPointOut "
        "formalParameter=\"none\"/></leftPowerRail>\n"
        "            <contact localId=\"10000000003\" negated=\"false\" storage=\"none\" edge=\"none\"><position "
        "x=\"0\" y=\"0\"/><connectionPointIn><connection refLocalId=\"10000000002\"/></connectionPointIn>"
        "<connectionPointOut/><variable>Start</variable></contact>\n"
        "            <contact localId=\"10000000004\" negated=\"false\" storage=\"none\" edge=\"none\"><position "
        "x=\"0\" y=\"0\"/><connectionPointIn><connection refLocalId=\"10000000002\"/></connectionPointIn>"
        "<connectionPointOut/><variable>Run</variable></contact>\n"
        "            <contact localId=\"10000000005\" negated=\"true\" storage=\"none\" edge=\"none\"><position "
        "x=\"0\" y=\"0\"/><connectionPointIn><connection refLocalId=\"10000000003\"><addData><data "
        "name=\"http://www.3s-software.com/plcopenxml/ldbranchid\" handleUnknown=\"implementation\"><BranchId "
        "xmlns=\"\">1</BranchId></data></addData></connection><connection refLocalId=\"10000000004\"/>"
        "</connectionPointIn><connectionPointOut/><variable>Stop</variable></contact>\n"
        "            <coil localId=\"10000000006\" negated=\"false\" storage=\"none\" edge=\"none\" "
        "executionOrderId=\"1\"><position x=\"0\" y=\"0\"/><connectionPointIn><connection "
        "refLocalId=\"10000000005\"/></connectionPointIn><connectionPointOut/><variable>Run</variable></coil>\n"
        "            <inVariable localId=\"10000000007\"><position x=\"0\" y=\"0\"/><connectionPointOut/>"
        "<expression>T#20ms</expression></inVariable>\n"
        "            <block localId=\"10000000008\" typeName=\"TON\" instanceName=\"Delay\" executionOrderId=\"0\">"
        "<position x=\"0\" y=\"0\"/><inputVariables><variable formalParameter=\"EN\"><connectionPointIn>"
        "<connection refLocalId=\"10000000002\"/></connectionPointIn></variable><variable formalParameter=\"IN\">"
        "<connectionPointIn><connection refLocalId=\"10000000006\"/></connectionPointIn></variable><variable "
        "formalParameter=\"PT\"><connectionPointIn><connection refLocalId=\"10000000007\"/></connectionPointIn>"
        "</variable></inputVariables><inOutVariables/><outputVariables><variable formalParameter=\"ENO\">"
        "<connectionPointOut/></variable><variable formalParameter=\"Q\"><connectionPointOut/></variable>"
        "</outputVariables></block>\n"
        "            <coil localId=\"10000000009\" negated=\"false\" storage=\"none\" edge=\"none\" "
        "executionOrderId=\"2\"><position x=\"0\" y=\"0\"/><connectionPointIn><connection refLocalId=\"10000000008\" "
        "formalParameter=\"Q\"/></connectionPointIn><connectionPointOut/><variable>Done</variable></coil>\n"
        "            <rightPowerRail localId=\"10000000010\"><position x=\"0\" y=\"0\"/><connectionPointIn><connection "
        "refLocalId=\"10000000009\" formalParameter=\"\"/></connectionPointIn></rightPowerRail>\n"
        "          </LD>\n"
        "        </body>\n"
        "      </pou>\n");
    xml.replace(xml.find("tc6_0201"), 8, "tc6_0200");
    const PlcopenTranslation t = translatePlcopen(xml);
    ASSERT_TRUE(t.problems.empty()) << t.problems[0].message;
    // CODESYS numbers the execution order from 0: the TON (0) runs before the coils (1, 2),
    // although the first coil comes before it in the XML.
    const std::size_t run = t.text.find("Run := ((Start) OR (Run)) AND NOT (Stop);");
    const std::size_t call = t.text.find("Delay(IN := ((Start) OR (Run)) AND NOT (Stop), PT := (T#20ms));");
    const std::size_t done = t.text.find("Done := Delay.Q;");
    ASSERT_NE(run, std::string::npos) << t.text;
    EXPECT_NE(call, std::string::npos) << t.text;
    EXPECT_LT(call, run) << t.text;
    EXPECT_LT(run, done) << t.text;
    TempDir dir;
    const Project p = checkXml(dir, xml);
    EXPECT_TRUE(p.ok()) << ::testing::PrintToString(diagnostics(p));
}

TEST(Plcopen, AnEdgeMemberMovesAsideForAPouVariableOfItsName) {
    std::string xml = ldFixture();
    const std::string decl = "<variable name=\"Start\">";
    xml.insert(xml.find(decl), "<variable name=\"_Edge6\"><type><INT/></type></variable>");
    const PlcopenTranslation t = translatePlcopen(xml);
    ASSERT_TRUE(t.problems.empty()) << t.problems[0].message;
    EXPECT_NE(t.text.find("VAR _Edge6_ : R_TRIG;"), std::string::npos) << t.text;
    EXPECT_NE(t.text.find("_Edge6_(CLK := (Start)); IF _Edge6_.Q THEN Latch := TRUE; END_IF;"), std::string::npos);
    TempDir dir;
    const Project p = checkXml(dir, xml);
    EXPECT_TRUE(p.ok()) << ::testing::PrintToString(diagnostics(p));
}

TEST(Plcopen, AnLdCoilWithoutInputIsE0026AtTheCoil) {
    std::string xml = ldFixture();
    const std::size_t coil = xml.find("<coil localId=\"22\"");
    const std::string ref = "<connection refLocalId=\"20\" formalParameter=\"Q\"/>";
    xml.erase(xml.find(ref, coil), ref.size());
    TempDir dir;
    // The network is not written after its first problem (its variables then warn as unused).
    std::vector<std::string> d = diagnostics(checkXml(dir, xml));
    std::erase_if(d, [](const std::string& s) { return s.find(" W0001 | ") != std::string::npos; });
    ASSERT_EQ(d.size(), 1u) << ::testing::PrintToString(d);
    EXPECT_EQ(d[0], "src/plant.xml:" + std::to_string(lineOf(xml, "<coil localId=\"22\"")) +
                        " E0026 | POU 'LdMain': a coil has no input connection (localId 22)");
}

TEST(Plcopen, AnLdContactNamingAnUnknownVariableNamesItsLineAndLocalId) {
    std::string xml = ldFixture();
    const std::size_t contact = xml.find("<contact localId=\"4\"");
    xml.replace(xml.find("<variable>Stop</variable>", contact), 25, "<variable>Stpo</variable>");
    TempDir dir;
    const std::vector<std::string> d = diagnostics(checkXml(dir, xml));
    ASSERT_EQ(d.size(), 1u) << ::testing::PrintToString(d);
    EXPECT_EQ(d[0], "src/plant.xml:" + std::to_string(lineOf(xml, "<contact localId=\"4\"")) +
                        " E0104 | unknown identifier 'Stpo' (localId 4)");
}

TEST(Plcopen, AnEdgeContactInAFunctionIsE0027) {
    TempDir dir;
    const std::string xml =
        document("      <pou name=\"Fn\" pouType=\"function\">\n"
                 "        <interface><returnType><BOOL/></returnType>\n"
                 "          <inputVars><variable name=\"X\"><type><BOOL/></type></variable></inputVars>\n"
                 "        </interface>\n"
                 "        <body><LD>\n"
                 "          <leftPowerRail localId=\"1\"><connectionPointOut/></leftPowerRail>\n"
                 "          <contact localId=\"2\" edge=\"rising\"><connectionPointIn><connection refLocalId=\"1\"/>"
                 "</connectionPointIn><variable>X</variable></contact>\n"
                 "          <coil localId=\"3\"><connectionPointIn><connection refLocalId=\"2\"/></connectionPointIn>"
                 "<variable>Fn</variable></coil>\n"
                 "        </LD></body>\n"
                 "      </pou>\n");
    const std::vector<std::string> d = diagnostics(checkXml(dir, xml));
    ASSERT_EQ(d.size(), 1u) << ::testing::PrintToString(d);
    EXPECT_EQ(d[0], "src/plant.xml:" + std::to_string(lineOf(xml, "<contact")) +
                        " E0027 | POU 'Fn': an edge-sensing contact in a FUNCTION, which keeps nothing between calls "
                        "(localId 2)");
}

TEST(Plcopen, ANetworkThatDoublesAtEveryElementIsE0026NotAHang) {
    // Each contact reads the one before through two connections (an OR of the same branch): the
    // coil's expression would double 60 times.
    std::string elements = "          <leftPowerRail localId=\"100\"><connectionPointOut/></leftPowerRail>\n";
    for (int i = 2; i < 62; ++i) {
        elements += fmt::format("          <contact localId=\"{}\"><connectionPointIn><connection refLocalId=\"{}\"/>"
                                "<connection refLocalId=\"{}\"/></connectionPointIn><variable>A</variable></contact>\n",
                                i, i == 2 ? 100 : i - 1, i == 2 ? 100 : i - 1);
    }
    elements += "          <coil localId=\"99\"><connectionPointIn><connection refLocalId=\"61\"/></connectionPointIn>"
                "<variable>B</variable></coil>\n";
    std::string xml = fbdPou(elements);
    xml.replace(xml.find("<FBD>"), 5, "<LD>");
    xml.replace(xml.find("</FBD>"), 6, "</LD>");
    const PlcopenTranslation t = translatePlcopen(xml);
    ASSERT_EQ(t.problems.size(), 1u);
    EXPECT_EQ(t.problems[0].code, DiagCode::PlcopenInvalid);
    EXPECT_NE(t.problems[0].message.find("the network"), std::string::npos) << t.problems[0].message;
}

TEST(Plcopen, EventTasksAndGlobalsOfTheConfigurationCompile) {
    TempDir dir;
    std::string xml = document("      <pou name=\"Counter\" pouType=\"program\">\n"
                               "        <interface><externalVars><variable name=\"G\"><type><INT/></type></variable>"
                               "</externalVars></interface>\n"
                               "        <body><ST><xhtml:p><![CDATA[G := G + 1;]]></xhtml:p></ST></body>\n"
                               "      </pou>\n");
    xml.replace(
        xml.find("</project>"), 10,
        "<instances><configurations><configuration name=\"C\">\n"
        "<resource name=\"R\">\n"
        "<task name=\"Cyc\" interval=\"PT0.05S\" priority=\"1\"><pouInstance name=\"p1\" "
        "typeName=\"Counter\"/></task>\n"
        "<task name=\"Ev\" single=\"Trig\" priority=\"3\"><pouInstance name=\"p2\" typeName=\"Counter\"/></task>\n"
        "<globalVars><variable name=\"Trig\"><type><BOOL/></type></variable></globalVars>\n"
        "</resource>\n"
        "<globalVars retain=\"true\"><variable name=\"G\"><type><INT/></type><initialValue><simpleValue "
        "value=\"5\"/></initialValue></variable></globalVars>\n"
        "</configuration></configurations></instances></project>");
    const PlcopenTranslation t = translatePlcopen(xml);
    ASSERT_TRUE(t.problems.empty()) << t.problems[0].message;
    EXPECT_NE(t.text.find("TASK Cyc(INTERVAL := T#50ms, PRIORITY := 1);"), std::string::npos) << t.text;
    EXPECT_NE(t.text.find("TASK Ev(SINGLE := Trig, PRIORITY := 3);"), std::string::npos) << t.text;
    EXPECT_NE(t.text.find("VAR_GLOBAL RETAIN "), std::string::npos) << t.text;
    EXPECT_NE(t.text.find("G : INT := 5; END_VAR END_CONFIGURATION"), std::string::npos) << t.text;
    ASSERT_EQ(t.resources.size(), 1u);
    ASSERT_EQ(t.resources[0].tasks.size(), 2u);
    EXPECT_EQ(t.resources[0].tasks[1].single, "Trig");
    EXPECT_EQ(t.resources[0].tasks[1].intervalMs, 0u);
    const Project p = checkXml(dir, xml);
    EXPECT_TRUE(p.ok()) << ::testing::PrintToString(diagnostics(p));
}

TEST(Plcopen, ABadTaskIntervalIsE0026NamingTheTask) {
    std::string xml = document("");
    xml.replace(xml.find("</project>"), 10,
                "<instances><configurations><configuration name=\"C\"><resource name=\"R\">\n"
                "<task name=\"Cyc\" interval=\"20ms\" priority=\"1\"/>\n"
                "</resource></configuration></configurations></instances></project>");
    const PlcopenTranslation t = translatePlcopen(xml);
    ASSERT_EQ(t.problems.size(), 1u);
    EXPECT_EQ(t.problems[0].line, lineOf(xml, "<task "));
    EXPECT_EQ(t.problems[0].message, "task 'Cyc': interval '20ms' is neither a TIME literal (T#20ms) nor a duration "
                                     "(PT0.02S) of at least 1 ms");
}

TEST(Plcopen, IntervalsInBothForms) {
    std::uint32_t ms = 0;
    EXPECT_TRUE(plcopenIntervalMs("T#20ms", ms));
    EXPECT_EQ(ms, 20u);
    EXPECT_TRUE(plcopenIntervalMs("TIME#1s500ms", ms));
    EXPECT_EQ(ms, 1500u);
    EXPECT_TRUE(plcopenIntervalMs("PT0.02S", ms));
    EXPECT_EQ(ms, 20u);
    EXPECT_TRUE(plcopenIntervalMs("PT1M30S", ms));
    EXPECT_EQ(ms, 90000u);
    EXPECT_FALSE(plcopenIntervalMs("PT0S", ms));
    EXPECT_FALSE(plcopenIntervalMs("PT", ms));
    EXPECT_FALSE(plcopenIntervalMs("PT5X", ms));
    EXPECT_FALSE(plcopenIntervalMs("20ms", ms));
    EXPECT_FALSE(plcopenIntervalMs("T#0.1ms", ms));
}

TEST(Plcopen, XmlFilesAreDiscoveredBesideSt) {
    TempDir dir;
    dir.write("src/a.st", "");
    dir.write("src/b/plant.XML", "");
    dir.write("src/notes.txt", "");
    std::vector<std::string> names;
    for (const fs::path& p : discoverSources(dir.path() / "src")) {
        names.push_back(p.lexically_relative(dir.path() / "src").generic_string());
    }
    EXPECT_EQ(names, (std::vector<std::string>{"a.st", "b/plant.XML"}));
}

TEST(Plcopen, DeepMarkupIsAnErrorNotACrash) {
    std::string deep = "<?xml version=\"1.0\"?>\n<project xmlns=\"http://www.plcopen.org/xml/tc6_0201\"><types><pous>"
                       "<pou name=\"M\" pouType=\"program\"><body><ST>";
    for (int i = 0; i < 100000; ++i) {
        deep += "<p>";
    }
    for (int i = 0; i < 100000; ++i) {
        deep += "</p>";
    }
    deep += "</ST></body></pou></pous></types></project>\n";
    const PlcopenTranslation t = translatePlcopen(deep);
    ASSERT_EQ(t.problems.size(), 1u);
    EXPECT_EQ(t.problems[0].code, DiagCode::PlcopenInvalid);
}

} // namespace
} // namespace takt::compiler
