#include "reduce_tune/error.h"

namespace reduce_tune {

CudaError::CudaError(int code, std::string expression, std::string message)
    : Error(message + " (" + expression + ")"), code_(code), expression_(std::move(expression)) {}

NvrtcError::NvrtcError(int code, std::string expression, std::string log)
    : Error(expression + " failed" + (log.empty() ? std::string() : ":\n" + log)),
      code_(code),
      log_(std::move(log)) {}

DbError::DbError(int code, std::string message) : Error(std::move(message)), code_(code) {}

}  // namespace reduce_tune
