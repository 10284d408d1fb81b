// Writes tests/assets/db/schema_vN.db (fixture_writer.h says what each holds). Run it
// only to recreate a fixture (docs/DATABASE.md), naming the versions to write (default:
// all of them):
//   cmake --build build --target db_make_fixtures && ./build/tests/db/db_make_fixtures tests/assets/db 3
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "fixture_writer.h"
#include "reduce_tune/db/database.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: db_make_fixtures OUTPUT_FOLDER [VERSION...]\n";
    return 2;
  }
  std::vector<int> versions;
  for (int i = 2; i < argc; ++i) versions.push_back(std::atoi(argv[i]));
  if (versions.empty())
    for (int v = 1; v < reduce_tune::db::kSchemaVersion; ++v) versions.push_back(v);
  for (const int version : versions) {
    if (version < 1 || version >= reduce_tune::db::kSchemaVersion) {
      std::cerr << "db_make_fixtures: version " << version << ": fixtures are of versions 1 to "
                << reduce_tune::db::kSchemaVersion - 1 << '\n';
      return 2;
    }
    const auto path = std::filesystem::path(argv[1]) / ("schema_v" + std::to_string(version) + ".db");
    try {
      reduce_tune::db::fixtures::write_fixture(path, version);
    } catch (const std::exception& e) {
      std::cerr << e.what() << '\n';
      return 1;
    }
    std::cout << "wrote " << path.string() << '\n';
  }
  return 0;
}
