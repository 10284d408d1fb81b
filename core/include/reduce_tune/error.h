// Typed errors. Library code throws these (or returns a status where failure is data,
// as with tuning candidates); only the command-line layer turns them into messages and
// exit codes. None of them exposes CUDA, NVRTC or SQLite types: codes are plain ints.
#pragma once

#include <stdexcept>
#include <string>

namespace reduce_tune {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A bad argument from the caller: null pointer, unsupported op/dtype pair, misaligned
// pointer, invalid config.
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// A CUDA runtime call failed. `code` is the cudaError_t value, `expression` the call.
class CudaError : public Error {
 public:
  CudaError(int code, std::string expression, std::string message);
  int code() const { return code_; }
  const std::string& expression() const { return expression_; }

 private:
  int code_;
  std::string expression_;
};

// No usable CUDA device (no driver, no device, index out of range).
class NoDeviceError : public Error {
 public:
  using Error::Error;
};

// NVRTC failed. `log` is the compiler's build log (empty when it failed before compiling).
class NvrtcError : public Error {
 public:
  NvrtcError(int code, std::string expression, std::string log);
  int code() const { return code_; }
  const std::string& log() const { return log_; }

 private:
  int code_;
  std::string log_;
};

// The tuning database failed. `code` is SQLite's extended result code.
class DbError : public Error {
 public:
  DbError(int code, std::string message);
  int code() const { return code_; }

 private:
  int code_;
};

}  // namespace reduce_tune
