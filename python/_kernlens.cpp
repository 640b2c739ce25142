// kernlens._kernlens: the C extension under the Python package (python/kernlens), a thin layer
// over the public API (kernlens/kernlens.h). Reading, querying and writing run with the GIL
// released; tables come back by column ({name: [values]}), which pandas takes as they are.
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <kernlens/kernlens.h>

namespace py = pybind11;
namespace kl = kernlens::api;

namespace {

py::object cell_object(const kl::Cell& c) {
  return std::visit(
      [](const auto& v) -> py::object {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return py::none();
        } else {
          return py::cast(v);
        }
      },
      c);
}

py::dict columns(const kl::Table& t) {
  py::dict out;
  for (std::size_t c = 0; c < t.columns.size(); ++c) {
    py::list values(t.rows.size());
    for (std::size_t r = 0; r < t.rows.size(); ++r) values[r] = cell_object(t.rows[r][c]);
    out[py::str(t.columns[c])] = std::move(values);
  }
  return out;
}

// Runs f without the GIL (the reading and the analysis touch no Python object).
template <class F>
auto released(F&& f) {
  py::gil_scoped_release release;
  return f();
}

}  // namespace

PYBIND11_MODULE(_kernlens, m) {
  m.doc() = "kernlens's C extension: use the package `kernlens` (load, Database, compare)";
  static py::exception<kl::Error> error(m, "Error");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const kl::Error& e) {
      py::object instance = py::reinterpret_borrow<py::object>(error.ptr())(e.what());
      instance.attr("file") = e.file();
      instance.attr("line") = e.line();
      PyErr_SetObject(error.ptr(), instance.ptr());
    }
  });

  py::class_<kl::Analysis>(m, "Analysis")
      .def("json", [](const kl::Analysis& a, std::size_t top) { return released([&] { return a.json(top); }); },
           py::arg("top") = 0)
      .def("html", [](const kl::Analysis& a, std::size_t top) { return released([&] { return a.html(top); }); },
           py::arg("top") = 25)
      .def("summary", &kl::Analysis::summary)
      .def("launches", [](const kl::Analysis& a) { return columns(released([&] { return a.launches(); })); })
      .def("warnings", &kl::Analysis::warnings);
  m.def(
      "load",
      [](const std::vector<std::string>& inputs, const kl::LoadOptions& options) {
        return released([&] { return kl::Analysis::load(inputs, options); });
      },
      py::arg("inputs"), py::arg("options"));
  py::class_<kl::LoadOptions>(m, "LoadOptions")
      .def(py::init<>())
      .def_readwrite("rule_files", &kl::LoadOptions::rule_files)
      .def_readwrite("model_config", &kl::LoadOptions::model_config)
      .def_readwrite("batch", &kl::LoadOptions::batch)
      .def_readwrite("prompt_tokens", &kl::LoadOptions::prompt_tokens)
      .def_readwrite("decode_steps", &kl::LoadOptions::decode_steps)
      .def_readwrite("runs", &kl::LoadOptions::runs);

  py::class_<kl::Database>(m, "Database")
      .def("query", [](const kl::Database& d, const std::string& sql) { return columns(released([&] { return d.query(sql); })); })
      .def("view", [](const kl::Database& d, const std::string& name) { return columns(released([&] { return d.view(name); })); })
      .def_static("views", &kl::Database::views);
  m.def("open_database", [](const std::string& path) { return released([&] { return kl::Database::open(path); }); });
  m.def(
      "compare_json",
      [](const std::string& base, const std::string& candidate, const std::vector<std::string>& rule_files) {
        kl::LoadOptions options;
        options.rule_files = rule_files;
        return released([&] { return kl::compare_json(base, candidate, options); });
      },
      py::arg("base"), py::arg("candidate"), py::arg("rule_files"));
  m.attr("__version__") = kl::version();
}
