// The schema's history: one migration step per version, applied in order. A new file
// runs every step from 0, so the steps are the only definition of the schema and an old
// file always has a path to the current one.
#pragma once

#include <cstdint>

#include "sqlite_handle.h"

namespace reduce_tune::db::detail {

// PRAGMA application_id of every reduce-tune database ("RTDB"); tells our files apart
// from other SQLite files.
inline constexpr std::int32_t kApplicationId = 0x52544442;

// What the file says about itself before we touch it.
struct FileState {
  std::int32_t application_id = 0;
  int user_version = 0;
  bool has_tables = false;
};

// Reads the header fields without writing. A file that is not SQLite, or is corrupt,
// throws DbError "<label>: not a reduce-tune database (<sqlite's reason>)".
FileState inspect(const Connection& connection);

// Throws DbError unless the file is empty (a new database) or a reduce-tune database of
// version `max_version` or older. A newer file is refused here, before any write.
void check_compatible(const FileState& state, const Connection& connection, int max_version);

bool is_empty(const FileState& state);

// Lets a read-only connection to a file of version `from` (older than the current one)
// read it as the current version, through temp-schema views and tables: nothing is
// written to the file and nothing of it is copied.
void add_read_shims(const Connection& connection, int from);

// Whether migrating a file of version `from` rebuilds a table (version 5 rebuilds
// axis_measurements), leaving the old table's pages free in the file.
bool migration_rebuilds_tables(int from);

// Applies the steps from `from` to `to` and sets user_version and application_id. The
// caller holds a write transaction.
void migrate(const Connection& connection, int from, int to);

}  // namespace reduce_tune::db::detail
