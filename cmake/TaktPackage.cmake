# The Debian packages (docs/install.md, scripts/package.sh): everything TaktInstall.cmake installs,
# configured with CMAKE_INSTALL_PREFIX=/usr so that the units, /etc/takt and /usr/bin agree.
#   cmake --build build-rel --target package      -> build-rel/takt_<version>_<arch>.deb
#                                                    build-rel/takt-native_<version>_<arch>.deb
# takt is the runtime with its service; takt-native, the add-on, is the native tier's plugin and
# what it needs (libllvm14, about 160 MB with its dependencies), so a small box can go without.

set(TAKT_PACKAGE_MAINTAINER "takt developers <takt-dev@takt.invalid>" CACHE STRING "Maintainer of the .deb")

# Debian wants these beside every package: the copyright and a compressed changelog.
set(doc ${CMAKE_INSTALL_DATADIR}/doc/takt)
configure_file(${PROJECT_SOURCE_DIR}/packaging/debian/changelog.in ${PROJECT_BINARY_DIR}/packaging/changelog @ONLY)
execute_process(COMMAND gzip -9nf ${PROJECT_BINARY_DIR}/packaging/changelog)
install(FILES ${PROJECT_BINARY_DIR}/packaging/changelog.gz ${PROJECT_SOURCE_DIR}/packaging/debian/copyright
        DESTINATION ${doc} COMPONENT service)
if(TARGET takt_native_plugin)
  install(FILES ${PROJECT_BINARY_DIR}/packaging/changelog.gz ${PROJECT_SOURCE_DIR}/packaging/debian/copyright
          DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/takt-native COMPONENT native)
endif()

# Every file under /etc is a conffile: an administrator's edits survive upgrades and `dpkg -r`.
file(GLOB_RECURSE project_sources RELATIVE ${PROJECT_SOURCE_DIR}/examples/demo CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/examples/demo/src/*)
set(conffiles "${TAKT_ETC_DIR}/project/runtime.toml\n${TAKT_ETC_DIR}/project/io.toml\n")
foreach(f ${project_sources})
  string(APPEND conffiles "${TAKT_ETC_DIR}/project/${f}\n")
endforeach()
file(WRITE ${PROJECT_BINARY_DIR}/packaging/conffiles "${conffiles}")

if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
  set(deb_arch arm64)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64)$")
  set(deb_arch amd64)
else()
  set(deb_arch ${CMAKE_SYSTEM_PROCESSOR})
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME takt)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT ${TAKT_PACKAGE_MAINTAINER})
# No CPACK_PACKAGE_DESCRIPTION_SUMMARY: CPack would put it above every package's description; each
# package's description (below) starts with its own synopsis.
set(CPACK_PACKAGE_DESCRIPTION
    "takt compiles IEC 61131-3 Structured Text to bytecode and runs it on a\n\
real-time scan-cycle VM that exchanges a process image with field I/O: a\n\
simulated plant, Modbus TCP, MQTT or GPIO. The package runs the project in\n\
/etc/takt/project as takt.service (user takt, enabled but not started on\n\
install); takt@NAME runs /etc/takt/NAME.")
set(CPACK_DEBIAN_PACKAGE_SECTION misc)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE ${deb_arch})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
# One package per group: "main" (takt: the binary, boards, examples, the service) and, when the
# tier is built, "native" (takt-native). Only takt's own components: not the tests' or a
# dependency's install rules.
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ONE_PER_GROUP)
set(CPACK_COMPONENTS_ALL takt service)
set(CPACK_DEBIAN_MAIN_PACKAGE_NAME takt)
# deb-systemd-helper (init-system-helpers) is essential in Debian: no dependency needed.
set(CPACK_DEBIAN_MAIN_PACKAGE_DEPENDS "adduser")
# The OPC UA server runs on Node.js ([runtime.opcua]); a box that does not serve OPC UA can go
# without it (apt installs recommended packages by default).
set(CPACK_DEBIAN_MAIN_PACKAGE_RECOMMENDS "nodejs (>= 18)")
set(CPACK_DEBIAN_MAIN_PACKAGE_CONTROL_EXTRA
    ${PROJECT_BINARY_DIR}/packaging/conffiles ${PROJECT_SOURCE_DIR}/packaging/debian/postinst
    ${PROJECT_SOURCE_DIR}/packaging/debian/prerm ${PROJECT_SOURCE_DIR}/packaging/debian/postrm)
set(CPACK_DEBIAN_MAIN_DESCRIPTION "IEC 61131-3 Structured Text soft-PLC runtime\n${CPACK_PACKAGE_DESCRIPTION}")
if(TARGET takt_native_plugin)
  list(APPEND CPACK_COMPONENTS_ALL native)
  set(CPACK_DEBIAN_NATIVE_PACKAGE_NAME takt-native)
  set(CPACK_DEBIAN_NATIVE_PACKAGE_SECTION misc)
  # The plugin of this very build (runtime/native/src/plugin_api.h); libllvm14 comes from
  # dpkg-shlibdeps.
  set(CPACK_DEBIAN_NATIVE_PACKAGE_DEPENDS "takt (= ${PROJECT_VERSION})")
  set(CPACK_DEBIAN_NATIVE_DESCRIPTION
      "native execution tier for the takt soft-PLC runtime\n\
takt compiles IEC 61131-3 Structured Text to bytecode and runs it on an\n\
interpreter. This add-on compiles program bodies to machine code with\n\
LLVM 14 when a project's runtime.toml sets execution to native (or for\n\
takt run --execution native). Without it such a project runs on the\n\
interpreter, and takt says so.")
endif()
include(CPack)
cpack_add_component_group(main)
cpack_add_component(takt GROUP main)
cpack_add_component(service GROUP main)
if(TARGET takt_native_plugin)
  cpack_add_component_group(native)
  cpack_add_component(native GROUP native)
endif()
