#include "reduce_tune/log.h"

#include <cstdio>
#include <mutex>
#include <string>

namespace reduce_tune {

namespace {
std::mutex& sink_mutex() {
  static std::mutex m;
  return m;
}
LogSink& current_sink() {
  static LogSink sink;
  return sink;
}
void default_sink(LogLevel level, std::string_view message) {
  if (level < LogLevel::warning) return;
  std::fprintf(stderr, "reduce-tune: %s: %.*s\n", level == LogLevel::error ? "error" : "warning",
               static_cast<int>(message.size()), message.data());
}
}  // namespace

void log_message(LogLevel level, std::string_view message) {
  std::lock_guard lock(sink_mutex());
  if (current_sink())
    current_sink()(level, message);
  else
    default_sink(level, message);
}

LogSink set_log_sink(LogSink sink) {
  std::lock_guard lock(sink_mutex());
  LogSink previous = std::move(current_sink());
  current_sink() = std::move(sink);
  return previous;
}

}  // namespace reduce_tune
