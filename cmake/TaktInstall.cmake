# Install rules (FHS; docs/install.md): the binary in bin/, boards and the example projects in
# share/takt/, and, as the "service" component, the systemd units, a default project in
# /etc/takt/project and nothing else: /var/lib/takt (state) and /run/takt (control socket) are
# made by the package's postinst and by systemd (StateDirectory=, RuntimeDirectory=).
#
#   cmake --install build --component takt --prefix ~/.local     # binary, boards, examples
#   DESTDIR=/tmp/stage cmake --install build                      # everything, as the package

include(GNUInstallDirs)

# Debian keeps units under /lib/systemd/system (lintian rejects /usr/lib/systemd/system in bookworm).
set(TAKT_SYSTEMD_UNIT_DIR "/lib/systemd/system" CACHE PATH "Where the systemd units are installed")

# takt finds its boards relative to its own binary (io-drivers/src/board.cpp); in the build tree
# that is <build>/boards, and <build>/tests/boards for the test binaries.
file(CREATE_LINK ${PROJECT_SOURCE_DIR}/boards ${PROJECT_BINARY_DIR}/boards SYMBOLIC COPY_ON_ERROR)
file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
file(CREATE_LINK ${PROJECT_SOURCE_DIR}/boards ${PROJECT_BINARY_DIR}/tests/boards SYMBOLIC COPY_ON_ERROR)

install(TARGETS takt RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT takt)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/boards/ DESTINATION ${CMAKE_INSTALL_DATADIR}/takt/boards COMPONENT takt
        FILES_MATCHING PATTERN "*.toml")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/ DESTINATION ${CMAKE_INSTALL_DATADIR}/takt/examples COMPONENT takt
        PATTERN ".takt" EXCLUDE PATTERN "program.stbc" EXCLUDE)
# The OPC UA server `takt run` starts (agent/src/opcua/opcua_server.cpp, findOpcuaScript looks in
# share/takt/opcua beside the binary) with its npm packages: node_modules is there after
# `scripts/npm-ci.sh opcua` (scripts/package.sh and scripts/test.sh run it). Without it the
# installed takt says to run `npm ci` in the installed folder. The packages' .npmignore and the
# folder's .gitignore are files for npm and git, not for the installed server (lintian refuses
# the first in a package).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/opcua/ DESTINATION ${CMAKE_INSTALL_DATADIR}/takt/opcua COMPONENT takt
        PATTERN ".lock-installed" EXCLUDE PATTERN ".npmignore" EXCLUDE PATTERN ".gitignore" EXCLUDE)

# The units name the installed binary; docs/takt.service is written for /usr/bin/takt.
foreach(unit takt.service takt@.service)
  file(READ ${PROJECT_SOURCE_DIR}/docs/${unit} text)
  string(REPLACE "/usr/bin/takt " "${CMAKE_INSTALL_FULL_BINDIR}/takt " text "${text}")
  file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/packaging/${unit} CONTENT "${text}")
  install(FILES ${PROJECT_BINARY_DIR}/packaging/${unit} DESTINATION ${TAKT_SYSTEMD_UNIT_DIR} COMPONENT service)
endforeach()
# The group takt may write the PM QoS CPU latency device (cpu_dma_latency_us, docs/install.md).
install(FILES ${PROJECT_SOURCE_DIR}/packaging/udev/60-takt.rules DESTINATION /lib/udev/rules.d COMPONENT service)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/takt.service
                                                              ${PROJECT_SOURCE_DIR}/docs/takt@.service)

# The default project of the service: the demo, with its control socket where the unit's
# RuntimeDirectory= puts it (the demo's own /tmp socket would be private to the service).
set(TAKT_DEFAULT_PROJECT ${PROJECT_BINARY_DIR}/packaging/project)
file(READ ${PROJECT_SOURCE_DIR}/examples/demo/runtime.toml runtime_toml)
string(REGEX REPLACE "endpoint = \"[^\"]*\"" "endpoint = \"unix:///run/takt/takt.sock\"" service_toml
       "${runtime_toml}")
if(service_toml STREQUAL runtime_toml)
  message(FATAL_ERROR "examples/demo/runtime.toml has no [runtime.control] endpoint for the service to move")
endif()
file(GENERATE OUTPUT ${TAKT_DEFAULT_PROJECT}/runtime.toml CONTENT "${service_toml}")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/examples/demo/runtime.toml)
set(TAKT_ETC_DIR ${CMAKE_INSTALL_FULL_SYSCONFDIR}/takt)
install(FILES ${TAKT_DEFAULT_PROJECT}/runtime.toml ${PROJECT_SOURCE_DIR}/examples/demo/io.toml
        DESTINATION ${TAKT_ETC_DIR}/project COMPONENT service)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/demo/src DESTINATION ${TAKT_ETC_DIR}/project COMPONENT service)

# The native tier's plugin, the package takt-native (TaktPackage.cmake): beside it, takt finds it
# at ../lib/<triple>/takt relative to its binary (runtime/native/src/loader.cpp).
if(TARGET takt_native_plugin)
  install(TARGETS takt_native_plugin LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/takt COMPONENT native)
endif()
