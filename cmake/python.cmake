# The Python module `kernlens` (python/): the C extension _kernlens (pybind11, Debian's
# pybind11-dev) over the public API, and the package around it (DataFrames, errors). Built for
# KERNLENS_PYTHON (Debian's /usr/bin/python3 where it is: the python3 on PATH may be another
# one without pandas); skipped, with a message, where pybind11 or Python's headers are absent.
option(KERNLENS_BUILD_PYTHON "Build the Python module (needs pybind11 and Python's headers)" ON)
if(EXISTS /usr/bin/python3)
  set(kernlens_default_python /usr/bin/python3)
else()
  find_program(kernlens_default_python python3)
endif()
set(KERNLENS_PYTHON "${kernlens_default_python}" CACHE FILEPATH "The Python the module is built for")
set(KERNLENS_PYTHON_BUILT OFF)
if(KERNLENS_BUILD_PYTHON AND KERNLENS_PYTHON AND NOT KERNLENS_SANITIZE AND NOT KERNLENS_BUILD_FUZZ)
  set(Python_EXECUTABLE "${KERNLENS_PYTHON}")
  find_package(Python 3.8 COMPONENTS Interpreter Development.Module QUIET)
  set(PYBIND11_FINDPYTHON ON)
  find_package(pybind11 CONFIG QUIET)
  if(Python_FOUND AND pybind11_FOUND)
    set(KERNLENS_PYTHON_DIR "${CMAKE_CURRENT_BINARY_DIR}/python")  # the importable package
    pybind11_add_module(kernlens_python python/_kernlens.cpp)
    target_link_libraries(kernlens_python PRIVATE kernlens_api)
    target_include_directories(kernlens_python PRIVATE ${KERNLENS_PUBLIC_INCLUDE})
    set_target_properties(kernlens_python PROPERTIES OUTPUT_NAME _kernlens
                          LIBRARY_OUTPUT_DIRECTORY "${KERNLENS_PYTHON_DIR}/kernlens")
    target_link_options(kernlens_python PRIVATE -Wl,--exclude-libs,ALL)
    set(kernlens_py_sources python/kernlens/__init__.py python/kernlens/_frames.py)
    foreach(f ${kernlens_py_sources})
      get_filename_component(name ${f} NAME)
      configure_file(${f} "${KERNLENS_PYTHON_DIR}/kernlens/${name}" COPYONLY)
    endforeach()
    install(TARGETS kernlens_python LIBRARY DESTINATION lib/python3/dist-packages/kernlens)
    install(FILES ${kernlens_py_sources} DESTINATION lib/python3/dist-packages/kernlens)
    # Debian's Python searches PREFIX/lib/python3/dist-packages for /usr only; for /usr/local it
    # searches /usr/local/lib/python3.X/dist-packages, where this .pth (read relative to its own
    # directory) adds the module's.
    set(kernlens_pth "${CMAKE_CURRENT_BINARY_DIR}/kernlens.pth")
    file(WRITE "${kernlens_pth}" "../../python3/dist-packages\n")
    install(FILES "${kernlens_pth}"
            DESTINATION lib/python${Python_VERSION_MAJOR}.${Python_VERSION_MINOR}/dist-packages)
    set(KERNLENS_PYTHON_BUILT ON)
    message(STATUS "Python module: built for ${Python_EXECUTABLE} (pybind11 ${pybind11_VERSION})")
  else()
    message(STATUS "Python module not built: pybind11 (pybind11-dev) or Python's headers (python3-dev) not found")
  endif()
endif()

if(KERNLENS_BUILD_TESTS)
  if(KERNLENS_PYTHON_BUILT)
    add_test(NAME python_pytest
             COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${KERNLENS_PYTHON_DIR}
                     KERNLENS_CLI=$<TARGET_FILE:kernlens> KERNLENS_SOURCE_DIR=${CMAKE_CURRENT_SOURCE_DIR}
                     ${KERNLENS_PYTHON} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/tests/python)
    set_tests_properties(python_pytest PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77)
  else()
    add_test(NAME python_pytest COMMAND sh -c "echo 'SKIPPED: the Python module is not built (no pybind11)'; exit 77")
    set_tests_properties(python_pytest PROPERTIES SKIP_RETURN_CODE 77)
  endif()
endif()
