# `cmake --install build --prefix P`: the CLI in P/bin, the tracer in P/lib/kernlens, the rules,
# GPU peaks, JSON schemas and demo data in P/share/kernlens, the man page in P/share/man/man1.
# The binary finds its data relative to itself (cli/cmd_demo.cpp), so the tree may be moved.
include(GNUInstallDirs)

install(TARGETS kernlens RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(KERNLENS_TRACER_BUILT)
  # profile looks beside kernlens, then in ../lib and ../lib/kernlens (profile/tracer_command.h).
  install(TARGETS kernlens_tracer LIBRARY DESTINATION lib/kernlens)
endif()
set(KERNLENS_INSTALL_SHARE "${CMAKE_INSTALL_DATADIR}/kernlens")
install(FILES data/kernel_rules.txt data/gpu_peaks.txt DESTINATION ${KERNLENS_INSTALL_SHARE})
install(DIRECTORY docs/schema DESTINATION ${KERNLENS_INSTALL_SHARE})
install(DIRECTORY examples/data/ DESTINATION ${KERNLENS_INSTALL_SHARE}/examples)

# The man page, generated from --help and --version by help2man (Debian's help2man); without
# help2man there is none, and the install says so.
find_program(KERNLENS_HELP2MAN help2man)
if(KERNLENS_HELP2MAN)
  set(man_page "${CMAKE_CURRENT_BINARY_DIR}/kernlens.1")
  add_custom_command(
    OUTPUT ${man_page}
    COMMAND ${KERNLENS_HELP2MAN} --no-info --section=1 --output=${man_page}
            "--name=where an LLM workload spends its GPU time, kernel by kernel, and why" $<TARGET_FILE:kernlens>
    DEPENDS kernlens
    COMMENT "Generating the man page (help2man)"
    VERBATIM)
  add_custom_target(kernlens_man ALL DEPENDS ${man_page})
  install(FILES ${man_page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  message(STATUS "help2man not found: no man page is installed")
endif()

if(KERNLENS_BUILD_TESTS)
  # Installs into a temporary prefix, moves the tree elsewhere, and runs demo, analyze and report
  # from there with the source tree's data out of reach (KERNLENS_NO_SOURCE_DATA).
  add_test(NAME install_tree
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/install/install_tree.sh ${CMAKE_BINARY_DIR}
                   ${CMAKE_CURRENT_BINARY_DIR}/install_tree_test $<$<BOOL:${KERNLENS_PYTHON_BUILT}>:${KERNLENS_PYTHON}>)
  set_tests_properties(install_tree PROPERTIES TIMEOUT 300 RESOURCE_LOCK install_prefix)
endif()
