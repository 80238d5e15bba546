# Compiler flags and the one helper that defines a layer library.

find_program(CCACHE_PROGRAM ccache)
if(CCACHE_PROGRAM)
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
endif()

if(TAKT_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
if(TAKT_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "TAKT_FUZZ needs clang (libFuzzer)")
  endif()
  # Instrument everything for coverage; only the fuzz executables link the libFuzzer main.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
endif()

# Clang's UBSan flags a null-pointer offset inside RapidJSON 1.1.0's headers (see the list).
# The list is named relative to the build directory (Ninja compiles from there): an absolute path
# in every command line would defeat ccache for a checkout in any other directory.
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang" AND (TAKT_FUZZ OR TAKT_SANITIZE))
  file(RELATIVE_PATH ubsan_ignorelist ${CMAKE_BINARY_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/cmake/ubsan_ignorelist.txt)
  add_compile_options(-fsanitize-ignorelist=${ubsan_ignorelist})
endif()

function(takt_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                           -Wimplicit-fallthrough)
  if(TAKT_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# takt_layer(<name> <dir>): a static library from <dir>/src/*.cpp with public headers in
# <dir>/include/takt/<layer>/ and private ones in <dir>/src/.
function(takt_layer name dir)
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${dir}/src/*.cpp)
  add_library(${name} STATIC ${srcs})
  target_include_directories(${name} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/${dir}/include
                                     PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/${dir}/src)
  takt_warnings(${name})
endfunction()
