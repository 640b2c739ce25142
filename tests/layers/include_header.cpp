// One include, KERNLENS_LAYER_HEADER, compiled against one module's include set by the
// layer_* tests (tests/CMakeLists.txt): an include the layers allow builds, one they forbid
// fails the build (docs/architecture.md).
#include KERNLENS_LAYER_HEADER
