# Writes a C++ source whose function returns a text file's content, so that the binary carries
# its data (the kernel rules) and works from any directory.
#   cmake -DINPUT=data/kernel_rules.txt -DOUTPUT=gen.cpp -DHEADER=kernlens/names/rules.h
#         -DFUNCTION=kernlens::names::builtin_rules_text -P embed_text.cmake
file(READ "${INPUT}" text)
set(delimiter "kernlens_text")  # raw string delimiters are at most 16 characters
string(FIND "${text}" ")${delimiter}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains ')${delimiter}\"', which ends the raw string literal")
endif()
string(REGEX REPLACE "::[^:]*$" "" namespace "${FUNCTION}")
string(REGEX REPLACE "^.*::" "" name "${FUNCTION}")
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by cmake/embed_text.cmake: edit that file, not this one.\n"
  "#include \"${HEADER}\"\n\n"
  "namespace ${namespace} {\n\n"
  "std::string_view ${name}() {\n"
  "  return R\"${delimiter}(${text})${delimiter}\";\n"
  "}\n\n"
  "}  // namespace ${namespace}\n")
# Only a changed file is rewritten, so that an unchanged input rebuilds nothing.
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
