#include "sqlite_handle.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "reduce_tune/error.h"

namespace reduce_tune::db::detail {

void throw_db_error(sqlite3* db, int rc, std::string_view label, std::string_view what) {
  // The connection's code is the extended form of rc when it reports the same error.
  int code = rc;
  const char* message = sqlite3_errstr(rc);
  if (db != nullptr && (sqlite3_extended_errcode(db) & 0xff) == (rc & 0xff)) {
    code = sqlite3_extended_errcode(db);
    message = sqlite3_errmsg(db);
  }
  std::string text(label);
  text += ": ";
  if (!what.empty()) {
    text += what;
    text += " (";
    text += message;
    text += ")";
  } else {
    text += message;
  }
  throw DbError(code, std::move(text));
}

Connection::Connection(const std::string& filename, int flags, std::string label)
    : label_(std::move(label)) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(filename.c_str(), &db, flags | SQLITE_OPEN_URI, nullptr);
  if (rc != SQLITE_OK) {
    // sqlite3_open_v2 hands back a handle even on failure (unless out of memory); it
    // carries the message and must be closed.
    try {
      throw_db_error(db, rc, label_, "cannot open");
    } catch (...) {
      sqlite3_close_v2(db);
      throw;
    }
  }
  db_ = db;
  sqlite3_extended_result_codes(db_, 1);
}

Connection::Connection(Connection&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), label_(std::move(other.label_)) {}

Connection& Connection::operator=(Connection&& other) noexcept {
  if (this != &other) {
    sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    label_ = std::move(other.label_);
  }
  return *this;
}

Connection::~Connection() {
  // close_v2 defers the close until outstanding statements are finalized, so a
  // destruction order mistake cannot leak the connection.
  sqlite3_close_v2(db_);
}

void Connection::exec(const char* sql, std::string_view what) const {
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) fail(rc, what);
}

void Connection::fail(int rc, std::string_view what) const { throw_db_error(db_, rc, label_, what); }

Statement::Statement(const Connection& connection, std::string_view sql) : connection_(&connection) {
  const int rc = sqlite3_prepare_v2(connection.get(), sql.data(), static_cast<int>(sql.size()),
                                    &stmt_, nullptr);
  if (rc != SQLITE_OK) connection.fail(rc, "cannot prepare a query");
}

Statement::Statement(Statement&& other) noexcept
    : connection_(other.connection_), stmt_(std::exchange(other.stmt_, nullptr)) {}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::check_bind(int rc, int index) {
  if (rc != SQLITE_OK)
    connection_->fail(rc, "cannot bind parameter " + std::to_string(index));
}

Statement& Statement::bind(int index, std::int64_t value) {
  check_bind(sqlite3_bind_int64(stmt_, index, value), index);
  return *this;
}

Statement& Statement::bind(int index, double value) {
  if (std::isnan(value)) return bind_null(index);
  check_bind(sqlite3_bind_double(stmt_, index, value), index);
  return *this;
}

Statement& Statement::bind(int index, std::string_view value) {
  check_bind(sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT,
                                 SQLITE_UTF8),
             index);
  return *this;
}

Statement& Statement::bind(int index, std::span<const std::byte> value) {
  // A zero-length blob must still be a blob, not NULL: pass a non-null pointer.
  static const std::byte empty{};
  check_bind(sqlite3_bind_blob64(stmt_, index, value.empty() ? &empty : value.data(),
                                 value.size(), SQLITE_TRANSIENT),
             index);
  return *this;
}

Statement& Statement::bind(int index, std::optional<std::int64_t> value) {
  return value ? bind(index, *value) : bind_null(index);
}

Statement& Statement::bind_null(int index) {
  check_bind(sqlite3_bind_null(stmt_, index), index);
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  connection_->fail(rc, "query failed");
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool Statement::is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

std::int64_t Statement::int64(int column) const { return sqlite3_column_int64(stmt_, column); }

int Statement::int32(int column) const { return sqlite3_column_int(stmt_, column); }

double Statement::real(int column) const {
  if (is_null(column)) return std::numeric_limits<double>::quiet_NaN();
  return sqlite3_column_double(stmt_, column);
}

std::string Statement::text(int column) const {
  const auto* data = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  const int size = sqlite3_column_bytes(stmt_, column);
  return data == nullptr ? std::string() : std::string(data, static_cast<std::size_t>(size));
}

std::vector<std::byte> Statement::blob(int column) const {
  const void* data = sqlite3_column_blob(stmt_, column);
  const int size = sqlite3_column_bytes(stmt_, column);
  std::vector<std::byte> bytes(static_cast<std::size_t>(size));
  if (size > 0) std::memcpy(bytes.data(), data, bytes.size());
  return bytes;
}

std::optional<std::int64_t> Statement::optional_int64(int column) const {
  if (is_null(column)) return std::nullopt;
  return int64(column);
}

Transaction::Transaction(const Connection& connection, TransactionKind kind) : connection_(connection) {
  connection_.exec(kind == TransactionKind::immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED",
                   "cannot begin a transaction");
}

Transaction::~Transaction() {
  if (!active_) return;
  // A failed rollback means SQLite already rolled back (e.g. after an I/O error); the
  // destructor has nobody to tell, and must not throw.
  sqlite3_exec(connection_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  connection_.exec("COMMIT", "cannot commit");
  active_ = false;
}

}  // namespace reduce_tune::db::detail
