// RAII over SQLite's handles (connection, prepared statement, transaction), in the style
// of SQLiteCpp: move-only owners, destructors that never throw, errors as DbError with
// SQLite's extended result code. Internal to db/: public headers never see sqlite3.h.
#pragma once

#include <sqlite3.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace reduce_tune::db::detail {

// Throws DbError "<label>: <what> (<sqlite message>)" for `rc`, using the connection's
// extended code and message when it has one.
[[noreturn]] void throw_db_error(sqlite3* db, int rc, std::string_view label, std::string_view what);

class Connection {
 public:
  // sqlite3_open_v2 with `flags` (SQLITE_OPEN_URI is added); `label` (the user's path)
  // prefixes error messages. Throws DbError.
  Connection(const std::string& filename, int flags, std::string label);
  Connection(Connection&& other) noexcept;
  Connection& operator=(Connection&& other) noexcept;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  sqlite3* get() const { return db_; }
  const std::string& label() const { return label_; }

  // Runs SQL without results (several statements allowed; no parameters, so only for
  // constant text). Throws DbError naming `what`.
  void exec(const char* sql, std::string_view what = {}) const;
  [[noreturn]] void fail(int rc, std::string_view what) const;

 private:
  sqlite3* db_ = nullptr;
  std::string label_;
};

// Null binds and NULL columns stand for NaN in REAL columns: SQLite stores NaN as NULL.
class Statement {
 public:
  Statement(const Connection& connection, std::string_view sql);
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Parameters are 1-based, as in SQLite.
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);
  Statement& bind(int index, const std::string& value) { return bind(index, std::string_view(value)); }
  Statement& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
  Statement& bind(int index, std::span<const std::byte> value);
  Statement& bind(int index, std::optional<std::int64_t> value);
  Statement& bind_null(int index);

  // True while a row is available; false when done. Throws DbError.
  bool step();
  // Steps a statement expected to return no row (or whose rows are ignored).
  void run();
  // Clears the bindings and rewinds, so the statement can run again.
  void reset();

  // How many parameters the SQL names, and how many columns a result row has.
  int parameter_count() const { return sqlite3_bind_parameter_count(stmt_); }
  int column_count() const { return sqlite3_column_count(stmt_); }

  // Columns are 0-based, as in SQLite.
  bool is_null(int column) const;
  std::int64_t int64(int column) const;
  int int32(int column) const;
  double real(int column) const;  // NULL → NaN
  std::string text(int column) const;
  std::vector<std::byte> blob(int column) const;
  std::optional<std::int64_t> optional_int64(int column) const;

 private:
  void check_bind(int rc, int index);
  const Connection* connection_;
  sqlite3_stmt* stmt_ = nullptr;
};

enum class TransactionKind {
  deferred,   // for reads: a consistent snapshot, never blocks writers in WAL mode
  immediate,  // for writes: takes the write lock up front, so the busy timeout applies
              // (a deferred transaction that later writes can fail with SQLITE_BUSY
              // without waiting)
};

// Begins in the constructor; rolls back in the destructor unless committed.
class Transaction {
 public:
  Transaction(const Connection& connection, TransactionKind kind);
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();
  void commit();

 private:
  const Connection& connection_;
  bool active_ = true;
};

}  // namespace reduce_tune::db::detail
