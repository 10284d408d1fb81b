// Library logging: messages go to a sink the application may replace (the default
// writes warnings and errors to stderr). Never used on the hot path of a call.
#pragma once

#include <functional>
#include <string_view>

namespace reduce_tune {

enum class LogLevel { debug, info, warning, error };

using LogSink = std::function<void(LogLevel, std::string_view)>;

void log_message(LogLevel level, std::string_view message);
// Replaces the sink; an empty function restores the default. Returns the previous sink.
LogSink set_log_sink(LogSink sink);

}  // namespace reduce_tune
