// The one door from db/src internals (transfer code) and white-box tests to a
// Database's connection. Not installed; public users never see it.
#pragma once

#include "reduce_tune/db/database.h"
#include "sqlite_handle.h"

namespace reduce_tune::db {

struct DatabaseAccess {
  static const detail::Connection& connection(const Database& database) { return *database.connection_; }
};

}  // namespace reduce_tune::db
