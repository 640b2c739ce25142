# The public C++ API (src/kernlens/api/kernlens.h) as an installed library, libkernlens.so, with
# a CMake package (find_package(kernlens) -> kernlens::kernlens) and a pkg-config file; and the
# Python module built on it (python/). Both are shared objects holding the static modules, so
# the modules are compiled position-independent.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Every module's static library (all of them, so that a module added later is covered too).
get_property(kernlens_targets DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} PROPERTY BUILDSYSTEM_TARGETS)
foreach(t ${kernlens_targets})
  get_target_property(type ${t} TYPE)
  if(t MATCHES "^kernlens_" AND type STREQUAL "STATIC_LIBRARY")
    set_target_properties(${t} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  endif()
endforeach()

set(kernlens_api_deps kernlens_analysis kernlens_common kernlens_load kernlens_model kernlens_names kernlens_report
    kernlens_store)
kernlens_module(api SOURCES src/kernlens/api/kernlens.cpp PRIVATE ${kernlens_api_deps})
set_target_properties(kernlens_api PROPERTIES POSITION_INDEPENDENT_CODE ON)

# Consumers include <kernlens/kernlens.h>: the build tree's copy sits where the installed one will.
set(KERNLENS_PUBLIC_INCLUDE "${CMAKE_CURRENT_BINARY_DIR}/include")
configure_file(src/kernlens/api/kernlens.h "${KERNLENS_PUBLIC_INCLUDE}/kernlens/kernlens.h" COPYONLY)

# Not in the sanitizer or fuzz builds: an instrumented library is no use to another program.
if(NOT KERNLENS_SANITIZE AND NOT KERNLENS_BUILD_FUZZ)
  add_library(kernlens_shared SHARED src/kernlens/api/kernlens.cpp)
  # The API's source again (one file), with the modules under it linked in.
  target_link_libraries(kernlens_shared PRIVATE kernlens_api ${kernlens_api_deps})
  target_include_directories(kernlens_shared PUBLIC $<BUILD_INTERFACE:${KERNLENS_PUBLIC_INCLUDE}>
                             $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(kernlens_shared INTERFACE cxx_std_17)
  # The modules' and their libraries' symbols stay inside: only the API is exported.
  target_link_options(kernlens_shared PRIVATE -Wl,--exclude-libs,ALL -Wl,--no-undefined)
  set_target_properties(kernlens_shared PROPERTIES OUTPUT_NAME kernlens EXPORT_NAME kernlens
                        VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR})
  add_library(kernlens::kernlens ALIAS kernlens_shared)

  install(TARGETS kernlens_shared EXPORT kernlensTargets
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(FILES src/kernlens/api/kernlens.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kernlens)
  set(KERNLENS_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/kernlens)
  install(EXPORT kernlensTargets NAMESPACE kernlens:: DESTINATION ${KERNLENS_CMAKE_DIR})
  configure_package_config_file(cmake/kernlensConfig.cmake.in "${CMAKE_CURRENT_BINARY_DIR}/kernlensConfig.cmake"
                                INSTALL_DESTINATION ${KERNLENS_CMAKE_DIR})
  write_basic_package_version_file("${CMAKE_CURRENT_BINARY_DIR}/kernlensConfigVersion.cmake"
                                   COMPATIBILITY SameMinorVersion)
  install(FILES "${CMAKE_CURRENT_BINARY_DIR}/kernlensConfig.cmake" "${CMAKE_CURRENT_BINARY_DIR}/kernlensConfigVersion.cmake"
          DESTINATION ${KERNLENS_CMAKE_DIR})
  configure_file(cmake/kernlens.pc.in "${CMAKE_CURRENT_BINARY_DIR}/kernlens.pc" @ONLY)
  install(FILES "${CMAKE_CURRENT_BINARY_DIR}/kernlens.pc" DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

  if(KERNLENS_BUILD_TESTS)
    # examples/cpp built against the installed package, by find_package and by pkg-config.
    add_test(NAME install_cpp_consumer
             COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/install/cpp_consumer.sh ${CMAKE_BINARY_DIR}
                     ${CMAKE_CURRENT_BINARY_DIR}/install_cpp_test ${CMAKE_CURRENT_SOURCE_DIR})
    set_tests_properties(install_cpp_consumer PROPERTIES TIMEOUT 300 RESOURCE_LOCK install_prefix)
  endif()
elseif(KERNLENS_BUILD_TESTS)
  add_test(NAME install_cpp_consumer COMMAND sh -c "echo 'SKIPPED: no libkernlens.so in a sanitizer or fuzz build'; exit 77")
  set_tests_properties(install_cpp_consumer PROPERTIES SKIP_RETURN_CODE 77)
endif()

include(${CMAKE_CURRENT_LIST_DIR}/python.cmake)
