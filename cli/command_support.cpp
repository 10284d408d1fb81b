#include "cli/command_support.h"

#include <algorithm>
#include <cctype>
#include <ostream>

#include "reduce_tune/db/paths.h"

namespace reduce_tune::cli {

db::RowId resolve_device(const db::Database& database, const std::string& text) {
  const auto devices = database.list_devices();
  for (const auto& d : devices)
    if (d.key.uuid == text) return d.id;
  if (!text.empty() && text.size() < 10 &&
      std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); })) {
    const auto index = std::stoull(text);
    if (index < devices.size()) return devices[index].id;
  }
  throw UsageError("--device '" + text + "': no such device in " + database.path().string() + " (" +
                   std::to_string(devices.size()) + " devices; give a UUID or an index from `reduce-tune db info`)");
}

std::filesystem::path database_path(const std::optional<std::string>& option) {
  return option && !option->empty() ? std::filesystem::path(*option) : db::default_database_path();
}

std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

int report_usage_error(std::ostream& err, const char* command, const std::string& message) {
  err << "reduce-tune " << command << ": " << one_line(message) << " (see reduce-tune " << command << " --help)\n";
  return kExitUsage;
}

}  // namespace reduce_tune::cli
