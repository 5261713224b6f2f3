# Rooms: each top-level source directory is one static library that links only the rooms it uses, so dependencies
# run one way. trainpack_room(NAME USES ROOM...) makes trainpack_NAME from NAME/*.cpp and, before it compiles,
# checks that every `#include "ROOM/..."` in NAME/ names NAME itself or a room it uses (directly or through another):
# a wrong-way include fails the build with the file and the line, not only at link time.

set(TRAINPACK_ROOM_CHECK ${CMAKE_CURRENT_LIST_DIR}/check_room_includes.cmake)

function(trainpack_room name)
  cmake_parse_arguments(PARSE_ARGV 1 ROOM "" "" "USES;LIBRARIES;GENERATED")
  set(allowed ${name})
  foreach(used IN LISTS ROOM_USES)
    if(NOT TARGET trainpack_${used})
      message(FATAL_ERROR "room ${name} uses ${used}, which is not defined yet: define rooms bottom-up")
    endif()
    get_property(used_allowed GLOBAL PROPERTY TRAINPACK_ROOM_ALLOWED_${used})
    list(APPEND allowed ${used_allowed})
  endforeach()
  list(REMOVE_DUPLICATES allowed)
  set_property(GLOBAL PROPERTY TRAINPACK_ROOM_ALLOWED_${name} ${allowed})

  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${name}/*.cpp)
  file(GLOB headers CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${name}/*.h)
  list(FILTER sources EXCLUDE REGEX ".*/cli/main\\.cpp$")
  list(TRANSFORM ROOM_USES PREPEND trainpack_ OUTPUT_VARIABLE used_targets)
  if(sources)
    add_library(trainpack_${name} STATIC ${sources} ${ROOM_GENERATED})
    target_link_libraries(trainpack_${name} PUBLIC ${used_targets} ${ROOM_LIBRARIES})
    if(TRAINPACK_FUZZ)
      # Coverage feedback for libFuzzer in the code under test; the fuzz targets link libFuzzer itself.
      target_compile_options(trainpack_${name} PRIVATE -fsanitize=fuzzer-no-link)
    endif()
  else()
    add_library(trainpack_${name} INTERFACE)
    target_link_libraries(trainpack_${name} INTERFACE ${used_targets} ${ROOM_LIBRARIES})
  endif()
  target_include_directories(trainpack_${name} INTERFACE ${CMAKE_CURRENT_SOURCE_DIR})
  if(sources)
    target_include_directories(trainpack_${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  endif()

  set(stamp ${CMAKE_CURRENT_BINARY_DIR}/room-checks/${name}.ok)
  add_custom_command(OUTPUT ${stamp}
    COMMAND ${CMAKE_COMMAND} -DROOM=${name} "-DALLOWED=${allowed}" -DSTAMP=${stamp}
            -DROOT=${CMAKE_CURRENT_SOURCE_DIR} -P ${TRAINPACK_ROOM_CHECK}
    DEPENDS ${sources} ${headers} ${TRAINPACK_ROOM_CHECK}
    COMMENT "Checking that room ${name} includes only ${allowed}" VERBATIM)
  add_custom_target(trainpack_${name}_includes DEPENDS ${stamp})
  add_dependencies(trainpack_${name} trainpack_${name}_includes)
endfunction()
