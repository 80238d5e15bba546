// The texts of `takt init`'s templates. Each is a complete project: `takt run --for 2s` and
// `takt test` work in it at once (tests/integration/agent/init_cli_test.cpp runs every one).
#include "init_templates.h"

namespace takt::cli {

namespace {

constexpr std::string_view kRuntimeToml =
    R"(# takt runtime configuration (docs/ of takt: "configuration.md" describes every key).
[bundle]
version = 1

[resource]
name = "@NAME@"
cycle_interval_ms = 10            # base cycle; the CONFIGURATION's tasks run on multiples of it

[build]
overflow = "wrap"                 # integer overflow wraps like CODESYS ("trap" faults instead)
address_mode = "word"             # %QW1 is the second word ("byte": the byte at offset 1)

[runtime.control]
# `takt status`, `takt watch`, `takt force` … find the runtime here. A Unix socket is only open
# to this user (mode 0600); add [[runtime.control.tokens]] before using tcp:// or tls://.
# The path is absolute: move the project and this line moves with it.
endpoint = "@ENDPOINT@"

[runtime.log]
level = "info"                    # trace | debug | info | warn | error

[runtime.retain]
mode = "file"                     # RETAIN variables survive a restart
path = ".takt/retain"
save_interval_ms = 1000

[runtime.watchdog]
enabled = true
timeout_ms = 50                   # one cycle longer than this is a fault
action = "safe_halt"              # outputs to their [[io.safe_state]] values, program halted

[runtime.fault]
policy = "safe_halt"              # on a runtime fault (division by zero, array bounds, …)
)";

constexpr std::string_view kGitignore =
    R"(# Built by takt build / takt run, and the runtime's state (retain, audit log, control socket).
program.stbc
.takt/
)";

constexpr TemplateFile kCommon[] = {{"runtime.toml", kRuntimeToml}, {".gitignore", kGitignore}};

constexpr std::string_view kConfiguration = R"(
(* One PLC, one resource, one 10 ms task running Main. *)
CONFIGURATION Plc
    RESOURCE Cpu ON PLC
        TASK MainTask (INTERVAL := T#10ms, PRIORITY := 1);
        PROGRAM Main WITH MainTask : MainProgram;
    END_RESOURCE
END_CONFIGURATION
)";

// ---- blank ---------------------------------------------------------------------------------

constexpr std::string_view kBlankIo =
    R"(# I/O of this project (docs/ of takt: "configuration.md" for this file, "io-drivers.md" for each driver).
# "simulated" without a plant: inputs stay 0 and outputs go nowhere until you choose a real
# driver (modbus-tcp, modbus-rtu, mqtt, gpio, …) or add a simulation.toml beside this file.
[io]
driver = "simulated"

[io.params]

[[io.safe_state]]                 # what the outputs show after a fault or a stop
address = "%QX0.0"
value = "FALSE"
)";

constexpr std::string_view kBlankMain = R"((*
 * A starting point: a cycle counter and a lamp that blinks at Period.
 * Try: takt watch Main.Cycles Main.Lamp     takt write Main.Period T#100ms
 *)
PROGRAM MainProgram
VAR
    Cycles : UDINT;                (* scan cycles since the start *)
    Period : TIME := T#500ms;      (* half a blink *)
    Lamp AT %QX0.0 : BOOL;
    Timer : TON;
    Flips : EdgeCounter;           (* counts the lamp's rising edges *)
END_VAR
Cycles := Cycles + 1;
Timer(IN := NOT Timer.Q, PT := Period);
IF Timer.Q THEN
    Lamp := NOT Lamp;
END_IF;
Flips(IN := Lamp);
END_PROGRAM

(* Counts rising edges of IN. *)
FUNCTION_BLOCK EdgeCounter
VAR_INPUT
    IN : BOOL;
END_VAR
VAR_OUTPUT
    Count : UDINT;
END_VAR
VAR
    Last : BOOL;
END_VAR
IF IN AND NOT Last THEN
    Count := Count + 1;
END_IF;
Last := IN;
END_FUNCTION_BLOCK
)";

constexpr std::string_view kBlankTests = R"((* Run with: takt test *)
TEST_PROGRAM EdgeCounterCountsRisingEdgesOnly
VAR
    c : EdgeCounter;
END_VAR
c(IN := TRUE);
c(IN := TRUE);
c(IN := FALSE);
c(IN := TRUE);
ASSERT_EQUAL(UDINT#2, c.Count, 'two rising edges');
END_TEST_PROGRAM
)";

// ---- motor ---------------------------------------------------------------------------------

constexpr std::string_view kMotorIo =
    R"(# A motor starter on simulated I/O: simulation.toml presses the buttons and answers the
# contactor with its feedback contact. Replace the driver with your field bus when wiring it up
# (docs/ of takt: "io-drivers.md").
#   %IX0.0 start button (NO)   %IX0.1 stop button (NC: TRUE when not pressed)
#   %IX0.2 contactor feedback  %QX0.0 contactor   %QX0.1 fault lamp
[io]
driver = "simulated"

[io.params]

[[io.safe_state]]
address = "%QX0.0"                # contactor off
value = "FALSE"

[[io.safe_state]]
address = "%QX0.1"                # fault lamp on
value = "TRUE"
)";

constexpr std::string_view kMotorSimulation =
    R"(# The simulated field of the motor template (truST's simulation.toml format).
[simulation]
enabled = true

[[couplings]]                     # the contactor's feedback contact closes 100 ms after the coil
source = "%QX0.0"
target = "%IX0.2"
delay_ms = 100

[[disturbances]]                  # the stop circuit is healthy (NC contact closed)
at_ms = 0
target = "%IX0.1"
value = "TRUE"

[[disturbances]]                  # someone presses start …
at_ms = 200
target = "%IX0.0"
value = "TRUE"

[[disturbances]]                  # … and lets go
at_ms = 400
target = "%IX0.0"
value = "FALSE"
)";

constexpr std::string_view kMotorMain = R"((*
 * A direct-on-line motor starter: start/stop with seal-in, feedback supervision.
 * Try: takt watch Main.OpMode Main.Starter.Run Main.Starter.Fault
 *      takt write Main.OpMode Mode#Off          takt force Main.StopOk FALSE
 *)
TYPE Mode : (Off, Manual, Auto); END_TYPE

PROGRAM MainProgram
VAR
    StartButton AT %IX0.0 : BOOL;
    StopOk AT %IX0.1 : BOOL;
    Feedback AT %IX0.2 : BOOL;
    Contactor AT %QX0.0 : BOOL;
    FaultLamp AT %QX0.1 : BOOL;
    OpMode : Mode := Mode#Auto;
    Starter : MotorStarter;
END_VAR
Starter(Start := StartButton AND OpMode <> Mode#Off,
        Stop := NOT StopOk OR OpMode = Mode#Off,
        Feedback := Feedback);
Contactor := Starter.Run;
FaultLamp := Starter.Fault;
END_PROGRAM

(* Seal-in start/stop; a missing feedback after FeedbackTime trips it until Reset. *)
FUNCTION_BLOCK MotorStarter
VAR_INPUT
    Start : BOOL;
    Stop : BOOL;
    Feedback : BOOL;
    Reset : BOOL;
    FeedbackTime : TIME := T#1s;
END_VAR
VAR_OUTPUT
    Run : BOOL;
    Fault : BOOL;
END_VAR
VAR
    NoFeedback : TON;
END_VAR
IF Reset THEN
    Fault := FALSE;
END_IF;
Run := (Start OR Run) AND NOT Stop AND NOT Fault;
NoFeedback(IN := Run AND NOT Feedback, PT := FeedbackTime);
IF NoFeedback.Q THEN
    Fault := TRUE;
    Run := FALSE;
END_IF;
END_FUNCTION_BLOCK
)";

constexpr std::string_view kMotorTests = R"((* Run with: takt test *)
TEST_PROGRAM StarterSealsInAndStops
VAR
    m : MotorStarter;
END_VAR
m(Start := TRUE, Feedback := TRUE);
ASSERT_TRUE(m.Run, 'runs on start');
m(Start := FALSE, Feedback := TRUE);
ASSERT_TRUE(m.Run, 'keeps running after start is released');
m(Stop := TRUE, Feedback := TRUE);
ASSERT_FALSE(m.Run, 'stop wins');
END_TEST_PROGRAM

TEST_PROGRAM StopWinsOverStart
VAR
    m : MotorStarter;
END_VAR
m(Start := TRUE, Stop := TRUE);
ASSERT_FALSE(m.Run);
END_TEST_PROGRAM
)";

// ---- modbus --------------------------------------------------------------------------------

constexpr std::string_view kModbusIo =
    R"(# A Modbus TCP client polling one slave (docs/ of takt: "io-drivers.md", modbus-tcp).
# Until a slave answers at `address` the driver is degraded and its inputs read 0; the program
# runs anyway. To try it on this machine: takt init a second project, set its io.toml to
# driver = "modbus-server" with listen = "127.0.0.1:5020", and run both.
[io]
driver = "modbus-tcp"
status = "%IB100"                 # the driver's status block, read by the program (Slave* in main.st)

[io.params]
address = "127.0.0.1:5020"        # the slave; port 502 when omitted
unit_id = 1
timeout_ms = 500
poll_ms = 50
on_error = "warn"                 # degraded while unreachable ("fault": the PLC faults, safe state everywhere)
comm_loss_timeout_ms = 1000
inputs = [
  { area = "holding_registers", start = 0, count = 1, address = "%IW0" },   # level, raw 0..27648
]
outputs = [
  { area = "coils", start = 0, count = 1, address = "%QX0.0" },             # high-level alarm
]

[[io.safe_state]]
address = "%QX0.0"
value = "TRUE"                    # alarm on in the safe state
)";

constexpr std::string_view kModbusMain = R"((*
 * Reads a raw level from holding register 0, scales it to %, sets coil 0 above HighLimit.
 * A lost slave is not an empty tank: its inputs then read 0, but the driver's status block
 * (io.toml: status = "%IB100") says the level is bad, and the alarm goes on.
 * Try: takt watch Main.LevelRaw Main.Level Main.SlaveBad Main.SlaveError Main.HighAlarm
 *)
PROGRAM MainProgram
VAR
    LevelRaw AT %IW0 : INT;
    HighAlarm AT %QX0.0 : BOOL;
    (* The status block at %IB100 (docs/ of takt: "io-drivers.md", Driver status). *)
    SlaveOk AT %IX100.0 : BOOL;    (* the driver is healthy *)
    SlaveBad AT %IX100.1 : BOOL;   (* LevelRaw is not from the slave: not read yet, or lost *)
    SlaveError AT %IW51 : UINT;    (* why not: 2 connecting, 3 refused, 4 timeout, 7 lost, ... *)
    SlaveStale AT %ID26 : UDINT;   (* cycles since the last good poll *)
    Level : REAL;                  (* %, the last good value while the slave is lost *)
    HighLimit : REAL := 90.0;
END_VAR
IF NOT SlaveBad THEN
    Level := Scale(LevelRaw);
END_IF;
HighAlarm := Level >= HighLimit OR SlaveBad;
END_PROGRAM

(* 0..27648 (an analog card's full scale) to 0..100 %. *)
FUNCTION Scale : REAL
VAR_INPUT
    Raw : INT;
END_VAR
Scale := INT_TO_REAL(Raw) * 100.0 / 27648.0;
END_FUNCTION
)";

constexpr std::string_view kModbusTests = R"((* Run with: takt test *)
TEST_PROGRAM ScaleCoversTheFullRange
ASSERT_NEAR(0.0, Scale(0), 0.001);
ASSERT_NEAR(50.0, Scale(13824), 0.001);
ASSERT_NEAR(100.0, Scale(27648), 0.001);
END_TEST_PROGRAM
)";

// ---- gpio ----------------------------------------------------------------------------------

constexpr std::string_view kGpioIo =
    R"(# A push button and a lamp. Until the project runs on the board, simulation.toml presses the
# button (a "simulated" driver without a plant reads it). On the board, replace the [io] and
# [io.params] below with the gpio block under them (docs/ of takt: "io-drivers.md", gpio): the
# gpio driver refuses to start where its chip does not exist.
[io]
driver = "simulated"

[io.params]

# [io]
# driver = "gpio"
#
# [io.params]
# # The chip's line offsets: on a Raspberry Pi the BCM numbers, with chip "pinctrl-bcm2711"
# # (Pi 4) or "pinctrl-rp1" (Pi 5); `gpiodetect` and `gpioinfo` list chips and lines.
# chip = "gpiochip0"
# poll_ms = 1
# on_error = "warn"
# inputs = [ { address = "%IX0.0", line = 17, debounce_ms = 20 } ]    # push button to 3V3
# outputs = [ { address = "%QX0.0", line = 27, initial = false } ]    # lamp or LED

[[io.safe_state]]
address = "%QX0.0"
value = "FALSE"
)";

constexpr std::string_view kGpioSimulation =
    R"(# Stands in for the push button until the project runs on the board (truST's format).
[simulation]
enabled = true

[[disturbances]]
at_ms = 300
target = "%IX0.0"
value = "TRUE"

[[disturbances]]
at_ms = 500
target = "%IX0.0"
value = "FALSE"
)";

constexpr std::string_view kGpioMain = R"((*
 * Each press of the button toggles the lamp.
 * Try: takt watch Main.Button Main.Lamp     takt force Main.Button TRUE
 *)
PROGRAM MainProgram
VAR
    Button AT %IX0.0 : BOOL;
    Lamp AT %QX0.0 : BOOL;
    Toggle : PushToggle;
END_VAR
Toggle(Press := Button);
Lamp := Toggle.State;
END_PROGRAM

(* Flips State on each rising edge of Press. *)
FUNCTION_BLOCK PushToggle
VAR_INPUT
    Press : BOOL;
END_VAR
VAR_OUTPUT
    State : BOOL;
END_VAR
VAR
    Edge : R_TRIG;
END_VAR
Edge(CLK := Press);
IF Edge.Q THEN
    State := NOT State;
END_IF;
END_FUNCTION_BLOCK
)";

constexpr std::string_view kGpioTests = R"((* Run with: takt test *)
TEST_PROGRAM EachPressToggles
VAR
    t : PushToggle;
END_VAR
t(Press := TRUE);
ASSERT_TRUE(t.State, 'first press');
t(Press := TRUE);
ASSERT_TRUE(t.State, 'holding changes nothing');
t(Press := FALSE);
t(Press := TRUE);
ASSERT_FALSE(t.State, 'second press');
END_TEST_PROGRAM
)";

constexpr TemplateFile kBlank[] = {{"io.toml", kBlankIo},
                                   {"src/main.st", kBlankMain},
                                   {"src/configuration.st", kConfiguration},
                                   {"src/tests.st", kBlankTests}};
constexpr TemplateFile kMotor[] = {{"io.toml", kMotorIo},
                                   {"simulation.toml", kMotorSimulation},
                                   {"src/main.st", kMotorMain},
                                   {"src/configuration.st", kConfiguration},
                                   {"src/tests.st", kMotorTests}};
constexpr TemplateFile kModbus[] = {{"io.toml", kModbusIo},
                                    {"src/main.st", kModbusMain},
                                    {"src/configuration.st", kConfiguration},
                                    {"src/tests.st", kModbusTests}};
constexpr TemplateFile kGpio[] = {{"io.toml", kGpioIo},
                                  {"simulation.toml", kGpioSimulation},
                                  {"src/main.st", kGpioMain},
                                  {"src/configuration.st", kConfiguration},
                                  {"src/tests.st", kGpioTests}};

constexpr ProjectTemplate kTemplates[] = {
    {"blank", "a cycle counter and a blinking lamp on simulated I/O", kBlank},
    {"motor", "a motor starter with feedback supervision on simulated buttons and contactor", kMotor},
    {"modbus", "a Modbus TCP client scaling a level register and setting an alarm coil", kModbus},
    {"gpio", "a push button toggling a lamp, simulated until switched to GPIO lines", kGpio},
};

} // namespace

std::span<const ProjectTemplate> projectTemplates() {
    return kTemplates;
}

std::span<const TemplateFile> commonTemplateFiles() {
    return kCommon;
}

} // namespace takt::cli
