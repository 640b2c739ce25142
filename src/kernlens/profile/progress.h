// ncu's console output as events, and the deep pass's progress bar as text.
//
//   parse_ncu_line()   one line of ncu's stdout/stderr -> the events in it (==PROF==
//                      Profiling "name" - N: ... - P passes, Connected, Disconnected, Report,
//                      ==WARNING== No kernels were profiled, ==ERROR== ...). ncu writes a
//                      kernel's progress without a newline, so other messages can land in the
//                      middle of a line; each marker starts an event of its own.
//   DeepProgress       "kernels done / planned, elapsed, current kernel (base name)": a carriage-return
//                      redraw for a terminal, plain lines otherwise. Pure: it returns the text
//                      and the caller writes it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kernlens::profile {

enum class NcuEventKind : std::uint8_t {
  kProfiling,          // a kernel launch profiled (passes known) or started (passes absent)
  kConnected,          // ==PROF== Connected to process PID (EXE)
  kDisconnected,       // ==PROF== Disconnected from process PID
  kReport,             // ==PROF== Report: PATH
  kNoKernelsProfiled,  // ==WARNING== No kernels were profiled.
  kWarning,            // any other ==WARNING==
  kError,              // ==ERROR== ...
  kOtherProf,          // any other ==PROF== message
};

struct NcuEvent {
  NcuEventKind kind = NcuEventKind::kOtherProf;
  std::string kernel;                  // kProfiling: the name ncu printed (may end in "...");
                                       // under --kernel-id, the name part of the id
  std::optional<std::int64_t> launch;  // kProfiling: ncu's launch number
  std::optional<int> passes;           // kProfiling: replay passes, when finished
  std::optional<std::int64_t> pid;     // kConnected, kDisconnected
  std::string text;                    // the message after the marker
};

std::vector<NcuEvent> parse_ncu_line(std::string_view line);

class DeepProgress {
 public:
  DeepProgress(std::uint64_t planned_kernels, bool tty) : planned_(planned_kernels), tty_(tty) {}

  // The text to write for this event at `elapsed_s` since the deep pass began; empty when
  // nothing changes on screen.
  std::string on_event(const NcuEvent& event, double elapsed_s);
  // The closing text: the last redraw ended by a newline, or a summary line. It says "(done)"
  // only when every planned kernel was profiled; "(nothing profiled)" when none was,
  // "(stopped)" when the pass ended early (`ended_early`: a failure or Ctrl-C), else "(short
  // of the plan)".
  std::string finish(double elapsed_s, bool ended_early = false);

  std::uint64_t done() const { return done_; }

 private:
  std::string render(double elapsed_s);

  std::uint64_t planned_;
  bool tty_;
  std::uint64_t done_ = 0;
  std::string current_;
  std::size_t last_width_ = 0;  // of the last redraw, to blank what a shorter one leaves
};

// "1:05" / "12.3s": elapsed time as the bar shows it.
std::string format_elapsed(double seconds);

}  // namespace kernlens::profile
