#include "schema.h"

#include <iterator>
#include <optional>
#include <string>

#include "reduce_tune/db/database.h"
#include "reduce_tune/error.h"

namespace reduce_tune::db::detail {
namespace {

// Version 1: the first release.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE devices (
  id               INTEGER PRIMARY KEY,
  uuid             TEXT    NOT NULL UNIQUE,
  name             TEXT    NOT NULL,
  cc_major         INTEGER NOT NULL,
  cc_minor         INTEGER NOT NULL,
  sm_count         INTEGER NOT NULL,
  l2_bytes         INTEGER NOT NULL,
  memory_bus_bits  INTEGER NOT NULL,
  memory_clock_khz INTEGER NOT NULL,
  driver_version   INTEGER NOT NULL,
  runtime_version  INTEGER NOT NULL
);
CREATE TABLE configs (
  id   INTEGER PRIMARY KEY,
  text TEXT    NOT NULL UNIQUE,  -- reduce_tune::to_string(ReduceConfig)
  hash INTEGER NOT NULL          -- reduce_tune::config_hash, as a signed 64-bit value
);
CREATE INDEX configs_by_hash ON configs (hash);
CREATE TABLE measurements (
  id            INTEGER PRIMARY KEY,
  device_id     INTEGER NOT NULL REFERENCES devices (id),
  op            TEXT    NOT NULL,
  dtype         TEXT    NOT NULL,
  out_dtype     TEXT    NOT NULL,
  layout        TEXT    NOT NULL,
  layout_outer  INTEGER NOT NULL,
  layout_inner  INTEGER NOT NULL,
  n             INTEGER NOT NULL,
  config_id     INTEGER NOT NULL REFERENCES configs (id),
  status        TEXT    NOT NULL CHECK (status IN
                  ('ok', 'compile_failed', 'launch_failed', 'wrong_result', 'skipped')),
  median_ms     REAL,             -- NULL where nothing was timed
  spread        REAL,
  repetitions   INTEGER NOT NULL,
  gbps          REAL,
  tool_version  TEXT    NOT NULL,
  created_at_us INTEGER NOT NULL, -- microseconds since the Unix epoch, UTC
  -- A measurement's identity: merging the same file twice adds nothing.
  UNIQUE (device_id, op, dtype, out_dtype, layout, layout_outer, layout_inner, n, config_id,
          created_at_us, tool_version)
);
CREATE TABLE winners (
  id             INTEGER PRIMARY KEY,
  device_id      INTEGER NOT NULL REFERENCES devices (id),
  op             TEXT    NOT NULL,
  dtype          TEXT    NOT NULL,
  out_dtype      TEXT    NOT NULL,
  layout         TEXT    NOT NULL,
  layout_outer   INTEGER NOT NULL,
  layout_inner   INTEGER NOT NULL,
  bucket         INTEGER NOT NULL,
  determinism    TEXT    NOT NULL CHECK (determinism IN ('deterministic', 'nondeterministic')),
  config_id      INTEGER NOT NULL REFERENCES configs (id),
  median_ms      REAL    NOT NULL,
  measurement_id INTEGER REFERENCES measurements (id),
  source         TEXT    NOT NULL CHECK (source IN ('tuned', 'imported', 'merged')),
  tool_version   TEXT    NOT NULL,
  created_at_us  INTEGER NOT NULL,
  UNIQUE (device_id, op, dtype, out_dtype, layout, layout_outer, layout_inner, bucket,
          determinism)
);
CREATE TABLE tuned_buckets (
  device_id     INTEGER NOT NULL REFERENCES devices (id),
  op            TEXT    NOT NULL,
  dtype         TEXT    NOT NULL,
  out_dtype     TEXT    NOT NULL,
  layout        TEXT    NOT NULL,
  layout_outer  INTEGER NOT NULL,
  layout_inner  INTEGER NOT NULL,
  bucket        INTEGER NOT NULL,
  tool_version  TEXT    NOT NULL,
  created_at_us INTEGER NOT NULL,
  PRIMARY KEY (device_id, op, dtype, out_dtype, layout, layout_outer, layout_inner, bucket)
) WITHOUT ROWID;
CREATE TABLE binaries (
  key           TEXT    PRIMARY KEY,  -- the runtime's hash of source, options, NVRTC, arch
  arch          INTEGER NOT NULL,
  nvrtc_version TEXT    NOT NULL,
  cubin         BLOB    NOT NULL,
  created_at_us INTEGER NOT NULL
);
)sql";

// Version 2: a failed candidate records why (v1 kept only the status). Old rows get an
// empty detail.
constexpr const char* kSchemaV2 = R"sql(
ALTER TABLE measurements ADD COLUMN detail TEXT NOT NULL DEFAULT '';
)sql";

// Version 3: `reduce-tune bench` results, the tuned call side by side with the built-in
// default, cub::DeviceReduce and the best classic kernel. `config` is text, not a
// configs row: a CUB row names the CUB call instead of a ReduceConfig. A row's identity
// (device, problem, n, implementation, run, time) makes merging the same file twice add
// nothing; its index also serves the latest-run lookup.
constexpr const char* kSchemaV3 = R"sql(
CREATE TABLE bench_results (
  id             INTEGER PRIMARY KEY,
  device_id      INTEGER NOT NULL REFERENCES devices (id),
  op             TEXT    NOT NULL,
  dtype          TEXT    NOT NULL,
  out_dtype      TEXT    NOT NULL,
  layout         TEXT    NOT NULL,
  layout_outer   INTEGER NOT NULL,
  layout_inner   INTEGER NOT NULL,
  n              INTEGER NOT NULL,
  implementation TEXT    NOT NULL CHECK (implementation IN ('tuned', 'default', 'cub', 'classic_best')),
  config         TEXT    NOT NULL,  -- canonical ReduceConfig text, or the CUB call's name
  median_ms      REAL,              -- NULL where nothing was timed
  spread         REAL,
  repetitions    INTEGER NOT NULL,
  gbps           REAL,
  peak_fraction  REAL,              -- gbps / peak_gbps
  peak_gbps      REAL,              -- the peak bandwidth the bench used
  run_id         TEXT    NOT NULL,  -- one `reduce-tune bench` run
  tool_version   TEXT    NOT NULL,
  created_at_us  INTEGER NOT NULL,
  UNIQUE (device_id, op, dtype, out_dtype, layout, layout_outer, layout_inner, n, implementation,
          run_id, created_at_us)
);
)sql";

// Version 4: tuned axis reductions (rows and columns layouts). An axis problem class is
// (op, dtypes, layout, log2 bucket of the reduced extent, log2 bucket of the output
// count); configs are the engine's canonical axis config text, which the database stores
// and never parses. Axis kernels are deterministic, so a class has one winner. A
// measurement's identity (device, shape, config, time, tool version) makes merging the
// same file twice add nothing; its index also serves the per-class lookup.
constexpr const char* kSchemaV4 = R"sql(
CREATE TABLE axis_measurements (
  id            INTEGER PRIMARY KEY,
  device_id     INTEGER NOT NULL REFERENCES devices (id),
  op            TEXT    NOT NULL,
  dtype         TEXT    NOT NULL,
  out_dtype     TEXT    NOT NULL,
  layout        TEXT    NOT NULL CHECK (layout IN ('rows', 'columns')),
  reduced       INTEGER NOT NULL,  -- R, the reduced extent
  outputs       INTEGER NOT NULL,  -- the output count
  inner         INTEGER NOT NULL,  -- columns: the contiguous inner extent; 1 for rows
  config        TEXT    NOT NULL CHECK (config <> ''),  -- canonical axis config text
  status        TEXT    NOT NULL CHECK (status IN
                  ('ok', 'compile_failed', 'launch_failed', 'wrong_result', 'skipped')),
  median_ms     REAL,              -- NULL where nothing was timed
  spread        REAL,
  repetitions   INTEGER NOT NULL,
  gbps          REAL,
  tool_version  TEXT    NOT NULL,
  created_at_us INTEGER NOT NULL,
  detail        TEXT    NOT NULL DEFAULT '',
  UNIQUE (device_id, op, dtype, out_dtype, layout, reduced, outputs, inner, config, created_at_us,
          tool_version)
);
CREATE TABLE axis_winners (
  id             INTEGER PRIMARY KEY,
  device_id      INTEGER NOT NULL REFERENCES devices (id),
  op             TEXT    NOT NULL,
  dtype          TEXT    NOT NULL,
  out_dtype      TEXT    NOT NULL,
  layout         TEXT    NOT NULL CHECK (layout IN ('rows', 'columns')),
  reduced_bucket INTEGER NOT NULL,  -- size_bucket(R)
  outputs_bucket INTEGER NOT NULL,  -- size_bucket(outputs)
  config         TEXT    NOT NULL CHECK (config <> ''),
  median_ms      REAL    NOT NULL,
  gbps           REAL,
  measurement_id INTEGER REFERENCES axis_measurements (id),
  source         TEXT    NOT NULL CHECK (source IN ('tuned', 'imported', 'merged')),
  tool_version   TEXT    NOT NULL,
  created_at_us  INTEGER NOT NULL,
  UNIQUE (device_id, op, dtype, out_dtype, layout, reduced_bucket, outputs_bucket)
);
CREATE TABLE axis_tuned_buckets (
  device_id      INTEGER NOT NULL REFERENCES devices (id),
  op             TEXT    NOT NULL,
  dtype          TEXT    NOT NULL,
  out_dtype      TEXT    NOT NULL,
  layout         TEXT    NOT NULL CHECK (layout IN ('rows', 'columns')),
  reduced_bucket INTEGER NOT NULL,
  outputs_bucket INTEGER NOT NULL,
  tool_version   TEXT    NOT NULL,
  created_at_us  INTEGER NOT NULL,
  PRIMARY KEY (device_id, op, dtype, out_dtype, layout, reduced_bucket, outputs_bucket)
) WITHOUT ROWID;
)sql";

// Version 5: a leaner axis_measurements. A default run stores tens of thousands of axis
// measurements, and each repeated its config text and the tool version, in the row and
// again in the identity's index: about 60% of a row's bytes. Both are now ids into
// lookup tables (axis_configs, tool_versions), as flat measurements refer to configs.
// The table is rebuilt under its old name, keeping every row and id, so axis_winners'
// measurement_id still points at the same rows. The caller runs the steps with foreign
// key enforcement off (SQLite's procedure for rebuilding a table that others refer to)
// and checks the keys before it commits.
constexpr const char* kSchemaV5 = R"sql(
CREATE TABLE axis_configs (
  id   INTEGER PRIMARY KEY,
  text TEXT    NOT NULL UNIQUE CHECK (text <> '')  -- canonical axis config text
);
CREATE TABLE tool_versions (
  id   INTEGER PRIMARY KEY,
  text TEXT    NOT NULL UNIQUE
);
INSERT INTO axis_configs (text) SELECT DISTINCT config FROM axis_measurements ORDER BY config;
INSERT INTO tool_versions (text) SELECT DISTINCT tool_version FROM axis_measurements ORDER BY tool_version;
CREATE TABLE axis_measurements_v5 (
  id              INTEGER PRIMARY KEY,
  device_id       INTEGER NOT NULL REFERENCES devices (id),
  op              TEXT    NOT NULL,
  dtype           TEXT    NOT NULL,
  out_dtype       TEXT    NOT NULL,
  layout          TEXT    NOT NULL CHECK (layout IN ('rows', 'columns')),
  reduced         INTEGER NOT NULL,
  outputs         INTEGER NOT NULL,
  inner           INTEGER NOT NULL,
  config_id       INTEGER NOT NULL REFERENCES axis_configs (id),
  status          TEXT    NOT NULL CHECK (status IN
                    ('ok', 'compile_failed', 'launch_failed', 'wrong_result', 'skipped')),
  median_ms       REAL,
  spread          REAL,
  repetitions     INTEGER NOT NULL,
  gbps            REAL,
  tool_version_id INTEGER NOT NULL REFERENCES tool_versions (id),
  created_at_us   INTEGER NOT NULL,
  detail          TEXT    NOT NULL DEFAULT '',
  UNIQUE (device_id, op, dtype, out_dtype, layout, reduced, outputs, inner, config_id, created_at_us,
          tool_version_id)
);
INSERT INTO axis_measurements_v5
  SELECT m.id, m.device_id, m.op, m.dtype, m.out_dtype, m.layout, m.reduced, m.outputs, m.inner, c.id, m.status,
         m.median_ms, m.spread, m.repetitions, m.gbps, t.id, m.created_at_us, m.detail
  FROM axis_measurements m
  JOIN axis_configs c ON c.text = m.config
  JOIN tool_versions t ON t.text = m.tool_version;
DROP TABLE axis_measurements;
ALTER TABLE axis_measurements_v5 RENAME TO axis_measurements;
)sql";

// Version 6: an axis class may keep a second winner for its shapes on the 16-byte grid
// (the contiguous extent and every stride whole 16-byte vectors). Where the built-in
// choice itself changes kernel family on that grid (16-bit columns of R = 2 to 4: eight
// outputs a thread on it, four off it), no one config held against it at every sample
// shape of such a class, and the one stored ran up to 1.4 times slower than no tuning on
// the grid. '' when `config` serves every shape of the class.
constexpr const char* kSchemaV6 = R"sql(
ALTER TABLE axis_winners ADD COLUMN grid_config TEXT NOT NULL DEFAULT '';
)sql";

// kSteps[i] takes a file from version i to i + 1. Append only: a released step never
// changes, or files made by it would no longer match.
constexpr const char* kSteps[] = {kSchemaV1, kSchemaV2, kSchemaV3, kSchemaV4, kSchemaV5, kSchemaV6};
static_assert(std::size(kSteps) == kSchemaVersion, "kSchemaVersion names the last step");

// kReadShims[i] lets a read-only connection to a file of version i + 1 or older read it
// as version i + 1, without writing the file and without copying it: temp-schema views
// and temp tables, which SQLite resolves before the file's own tables. Every schema step
// needs its shim (a new table: an empty temp table; a new column: a view that supplies
// its default). A shim that creates an empty table creates it as the current schema has
// it; a later step's shim that rebuilds that table then applies only to files that have
// it (`oldest`, the oldest file version it serves).
struct ReadShim {
  const char* sql;
  int oldest = 0;
};

constexpr const char* kAxisTablesShim = R"sql(
CREATE TEMP TABLE axis_configs (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE);
CREATE TEMP TABLE tool_versions (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE);
CREATE TEMP TABLE axis_measurements (
  id INTEGER PRIMARY KEY, device_id INTEGER NOT NULL, op TEXT NOT NULL, dtype TEXT NOT NULL,
  out_dtype TEXT NOT NULL, layout TEXT NOT NULL, reduced INTEGER NOT NULL, outputs INTEGER NOT NULL,
  inner INTEGER NOT NULL, config_id INTEGER NOT NULL, status TEXT NOT NULL, median_ms REAL, spread REAL,
  repetitions INTEGER NOT NULL, gbps REAL, tool_version_id INTEGER NOT NULL, created_at_us INTEGER NOT NULL,
  detail TEXT NOT NULL);
CREATE TEMP TABLE axis_winners (
  id INTEGER PRIMARY KEY, device_id INTEGER NOT NULL, op TEXT NOT NULL, dtype TEXT NOT NULL,
  out_dtype TEXT NOT NULL, layout TEXT NOT NULL, reduced_bucket INTEGER NOT NULL, outputs_bucket INTEGER NOT NULL,
  config TEXT NOT NULL, median_ms REAL NOT NULL, gbps REAL, measurement_id INTEGER, source TEXT NOT NULL,
  tool_version TEXT NOT NULL, created_at_us INTEGER NOT NULL, grid_config TEXT NOT NULL DEFAULT '');
CREATE TEMP TABLE axis_tuned_buckets (
  device_id INTEGER NOT NULL, op TEXT NOT NULL, dtype TEXT NOT NULL, out_dtype TEXT NOT NULL, layout TEXT NOT NULL,
  reduced_bucket INTEGER NOT NULL, outputs_bucket INTEGER NOT NULL, tool_version TEXT NOT NULL,
  created_at_us INTEGER NOT NULL);
)sql";

// A version 4 file's axis measurements, read as version 5's: views number the file's
// distinct texts (ids of this connection's own) and join them. Views cost nothing until a
// query reads them, so opening an old file stays as cheap as before.
constexpr const char* kAxisIdsShim = R"sql(
CREATE TEMP VIEW axis_configs AS
  SELECT row_number() OVER (ORDER BY config) AS id, config AS text
  FROM (SELECT DISTINCT config FROM main.axis_measurements);
CREATE TEMP VIEW tool_versions AS
  SELECT row_number() OVER (ORDER BY tool_version) AS id, tool_version AS text
  FROM (SELECT DISTINCT tool_version FROM main.axis_measurements);
CREATE TEMP VIEW axis_measurements AS
  SELECT m.id, m.device_id, m.op, m.dtype, m.out_dtype, m.layout, m.reduced, m.outputs, m.inner,
         c.id AS config_id, m.status, m.median_ms, m.spread, m.repetitions, m.gbps, t.id AS tool_version_id,
         m.created_at_us, m.detail
  FROM main.axis_measurements m
  JOIN temp.axis_configs c ON c.text = m.config
  JOIN temp.tool_versions t ON t.text = m.tool_version;
)sql";

constexpr ReadShim kReadShims[] = {
    {""},  // version 1 is the first schema
    {"CREATE TEMP VIEW measurements AS SELECT *, '' AS detail FROM main.measurements;"},
    {R"sql(
CREATE TEMP TABLE bench_results (
  id INTEGER PRIMARY KEY, device_id INTEGER NOT NULL, op TEXT NOT NULL, dtype TEXT NOT NULL,
  out_dtype TEXT NOT NULL, layout TEXT NOT NULL, layout_outer INTEGER NOT NULL, layout_inner INTEGER NOT NULL,
  n INTEGER NOT NULL, implementation TEXT NOT NULL, config TEXT NOT NULL, median_ms REAL, spread REAL,
  repetitions INTEGER NOT NULL, gbps REAL, peak_fraction REAL, peak_gbps REAL, run_id TEXT NOT NULL,
  tool_version TEXT NOT NULL, created_at_us INTEGER NOT NULL);
)sql"},
    {kAxisTablesShim},
    {kAxisIdsShim, 4},
    {"CREATE TEMP VIEW axis_winners AS SELECT *, '' AS grid_config FROM main.axis_winners;", 4},
};
static_assert(std::size(kReadShims) == std::size(kSteps), "every schema step needs a read shim");

int pragma_int(const Connection& connection, const char* sql) {
  Statement statement(connection, sql);
  return statement.step() ? statement.int32(0) : 0;
}

}  // namespace

FileState inspect(const Connection& connection) {
  try {
    // The three reads must see one state of the file: another process creating it may
    // commit its schema in between, and a mix (tables, but no application id yet) would
    // look like another application's file. Outside a transaction, a read transaction
    // gives them one snapshot; inside one (open() under the write lock) they have it.
    std::optional<Transaction> snapshot;
    if (sqlite3_get_autocommit(connection.get()) != 0) snapshot.emplace(connection, TransactionKind::deferred);
    FileState state;
    state.application_id = pragma_int(connection, "PRAGMA application_id");
    state.user_version = pragma_int(connection, "PRAGMA user_version");
    state.has_tables =
        pragma_int(connection, "SELECT count(*) FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'") > 0;
    if (snapshot) snapshot->commit();
    return state;
  } catch (const DbError& error) {
    const int primary = error.code() & 0xff;
    if (primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT)
      throw DbError(error.code(), connection.label() + ": not a reduce-tune database (" +
                                      sqlite3_errstr(primary) + ")");
    throw DbError(error.code(), connection.label() + ": cannot read the database (" + sqlite3_errstr(primary) + ")");
  }
}

bool is_empty(const FileState& state) {
  return state.application_id == 0 && state.user_version == 0 && !state.has_tables;
}

void check_compatible(const FileState& state, const Connection& connection, int max_version) {
  if (is_empty(state)) return;
  if (state.application_id != kApplicationId) {
    throw DbError(SQLITE_NOTADB, connection.label() +
                                     ": not a reduce-tune database (a SQLite file of another "
                                     "application)");
  }
  if (state.user_version > max_version) {
    throw DbError(SQLITE_CANTOPEN,
                  connection.label() + ": database schema version " +
                      std::to_string(state.user_version) + " is newer than this reduce-tune supports (" +
                      std::to_string(max_version) + "); use a newer reduce-tune (the file was not modified)");
  }
  if (state.user_version < 1) {
    throw DbError(SQLITE_NOTADB, connection.label() +
                                     ": not a reduce-tune database (no schema version)");
  }
}

void add_read_shims(const Connection& connection, int from) {
  if (from < 1 || from > static_cast<int>(std::size(kReadShims)))
    throw DbError(SQLITE_MISUSE, connection.label() + ": no read shim from schema version " + std::to_string(from));
  for (int version = from; version < static_cast<int>(std::size(kReadShims)); ++version)
    if (from >= kReadShims[version].oldest)
      connection.exec(kReadShims[version].sql, "cannot read schema version " + std::to_string(from));
}

bool migration_rebuilds_tables(int from) { return from == 4; }  // older files had no axis rows

void migrate(const Connection& connection, int from, int to) {
  static_assert(std::size(kSteps) >= 1);
  if (from < 0 || to > static_cast<int>(std::size(kSteps)) || from > to) {
    throw DbError(SQLITE_MISUSE, connection.label() + ": no migration from schema version " +
                                     std::to_string(from) + " to " + std::to_string(to));
  }
  for (int version = from; version < to; ++version)
    connection.exec(kSteps[version], "cannot migrate the schema to version " + std::to_string(version + 1));
  // The steps run without foreign key enforcement (a rebuilt table keeps its ids and its
  // references); what they wrote must still satisfy every key.
  if (from > 0) {
    Statement check(connection, "PRAGMA foreign_key_check");
    if (check.step())
      throw DbError(SQLITE_CONSTRAINT_FOREIGNKEY, connection.label() + ": migrating to schema version " +
                                                      std::to_string(to) + " broke a reference in table " +
                                                      check.text(0) + " (the file was not changed)");
  }
  // PRAGMAs take no parameters; both values are integers from this file.
  const std::string pragmas = "PRAGMA user_version = " + std::to_string(to) +
                              "; PRAGMA application_id = " + std::to_string(kApplicationId) + ";";
  connection.exec(pragmas.c_str(), "cannot record the schema version");
}

}  // namespace reduce_tune::db::detail
