#include "kernlens/store/run_select.h"

#include <fmt/format.h>

namespace kernlens::store {

Result<std::vector<std::string>> run_keys_with_tags(const SqliteDb& db,
                                                    const std::vector<std::pair<std::string, std::string>>& tags) {
  if (tags.empty()) return make_error("", 0, "no tags to choose runs by");
  // One bound pair per tag: a run qualifies when it matches as many tags as were asked for.
  std::string matches;
  for (std::size_t i = 0; i < tags.size(); ++i) {
    matches += fmt::format("{}(key = ?{} AND value = ?{})", i ? " OR " : "", 2 * i + 1, 2 * i + 2);
  }
  auto stmt = db.prepare(fmt::format(
      "SELECT r.run_key FROM runs r JOIN run_tags t ON t.run_id = r.run_id WHERE {} GROUP BY r.run_id "
      "HAVING count(*) = {} ORDER BY r.run_id",
      matches, tags.size()));
  if (!stmt) return stmt.error();
  for (std::size_t i = 0; i < tags.size(); ++i) {
    stmt->bind(static_cast<int>(2 * i + 1), tags[i].first);
    stmt->bind(static_cast<int>(2 * i + 2), tags[i].second);
  }
  std::vector<std::string> keys;
  while (stmt->step()) keys.emplace_back(stmt->text(0));
  if (stmt->error()) return make_error("", 0, *stmt->error());
  if (keys.empty()) {
    std::vector<std::string> texts;
    for (const auto& [k, v] : tags) texts.push_back(k + "=" + v);
    return make_error("", 0, fmt::format("no run in the database has the tags {}", fmt::join(texts, ", ")));
  }
  return keys;
}

}  // namespace kernlens::store
