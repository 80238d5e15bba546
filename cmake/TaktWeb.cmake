# The live page of `takt run` (web/, docs/web.md): npm builds it into one HTML, one JS and one
# CSS file and takt_web_embed.cmake turns them into a generated .cpp compiled into takt. npm runs
# only when the page's sources or its lock changed. Without node and npm (or with TAKT_WEB=OFF)
# takt still builds; it then serves no page and `/` says how to get it.
option(TAKT_WEB "Build the web page into takt (needs node and npm)" ON)
find_program(TAKT_WEB_NODE node)
find_program(TAKT_WEB_NPM npm)
set(TAKT_WEB_CPP ${CMAKE_CURRENT_BINARY_DIR}/generated/web_assets.cpp)
set(_web ${PROJECT_SOURCE_DIR}/web)
if(TAKT_WEB AND TAKT_WEB_NODE AND TAKT_WEB_NPM)
  file(GLOB _web_sources CONFIGURE_DEPENDS ${_web}/src/*)
  set(_dist ${CMAKE_CURRENT_BINARY_DIR}/web-dist)
  set(_stamp ${CMAKE_CURRENT_BINARY_DIR}/web-npm.stamp)
  add_custom_command(OUTPUT ${_stamp}
    COMMAND ${TAKT_WEB_NPM} ci --no-audit --no-fund --loglevel=error
    COMMAND ${CMAKE_COMMAND} -E touch ${_stamp}
    DEPENDS ${_web}/package.json ${_web}/package-lock.json
    WORKING_DIRECTORY ${_web}
    COMMENT "web: npm ci"
    VERBATIM)
  add_custom_command(OUTPUT ${TAKT_WEB_CPP}
    COMMAND ${TAKT_WEB_NODE} build.mjs ${_dist}
    COMMAND ${CMAKE_COMMAND} -DDIST=${_dist} -DOUT=${TAKT_WEB_CPP} -P ${PROJECT_SOURCE_DIR}/cmake/takt_web_embed.cmake
    DEPENDS ${_stamp} ${_web_sources} ${_web}/build.mjs ${PROJECT_SOURCE_DIR}/cmake/takt_web_embed.cmake
    WORKING_DIRECTORY ${_web}
    COMMENT "web: building the page"
    VERBATIM)
  message(STATUS "web page: built with npm into takt")
else()
  add_custom_command(OUTPUT ${TAKT_WEB_CPP}
    COMMAND ${CMAKE_COMMAND} -DOUT=${TAKT_WEB_CPP} -P ${PROJECT_SOURCE_DIR}/cmake/takt_web_embed.cmake
    DEPENDS ${PROJECT_SOURCE_DIR}/cmake/takt_web_embed.cmake
    VERBATIM)
  message(STATUS "web page: not built (TAKT_WEB=OFF or no node/npm); takt serves no page")
endif()
