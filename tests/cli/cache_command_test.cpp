// `reduce-tune cache [info|clear]` through run_cache_command and the subcommand table:
// where the folder is (--dir, the variables), what it holds, and clearing only the files
// the runtime's store writes.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/cli.h"
#include "cli/command_support.h"
#include "cli/commands.h"
#include "reduce_tune/engine/directory_binary_store.h"
#include "test_support.h"

namespace reduce_tune::cli {
namespace {

namespace fs = std::filesystem;
using db::testing::TempDir;

struct Result {
  int code;
  std::string out;
  std::string err;
};

Result run(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = run_cache_command(args, out, err);
  return {code, out.str(), err.str()};
}

// Sets a variable for one scope (and restores what was there).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = ::getenv(name)) old_ = old;
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string key_of(unsigned i) {
  char text[33];
  std::snprintf(text, sizeof text, "%032x", i);
  return text;
}

void write(const fs::path& p, std::size_t bytes) {
  std::ofstream(p, std::ios::binary) << std::string(bytes, 'x');
}

TEST(CacheCommand, InfoSaysWhereTheFolderIsAndWhatItHolds) {
  TempDir dir;
  const fs::path folder = dir / "kernels";
  ScopedEnv limit("REDUCE_TUNE_KERNEL_CACHE_MAX_SIZE", nullptr);
  Result r = run({"info", "--dir", folder.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("kernel cache: " + folder.string()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("limit: 268435456 bytes (256 MiB)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kept: nothing yet"), std::string::npos) << r.out;
  {
    DirectoryBinaryStore store(folder);
    for (unsigned i = 0; i < 3; ++i) store.store(key_of(i), 90, "nvrtc", std::vector<char>(1000 + i, 'k'));
  }
  write(folder / "notes.txt", 5000);  // not the store's: not counted
  const std::uint64_t kept = fs::file_size(DirectoryBinaryStore(folder).file_for(key_of(0))) +
                             fs::file_size(DirectoryBinaryStore(folder).file_for(key_of(1))) +
                             fs::file_size(DirectoryBinaryStore(folder).file_for(key_of(2)));
  r = run({"--dir", folder.string()});  // info is the default
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("kept: 3 kernels, " + std::to_string(kept) + " bytes"), std::string::npos) << r.out;
  // The folder and the limit as the runtime takes them from the variables.
  ScopedEnv where("REDUCE_TUNE_KERNEL_CACHE", folder.c_str());
  ScopedEnv size("REDUCE_TUNE_KERNEL_CACHE_MAX_SIZE", "512M");
  r = run({});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("kernel cache: " + folder.string()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("limit: 536870912 bytes (512 MiB)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kept: 3 kernels"), std::string::npos) << r.out;
  {
    ScopedEnv none("REDUCE_TUNE_KERNEL_CACHE_MAX_SIZE", "0");
    EXPECT_NE(run({}).out.find("limit: none"), std::string::npos);
  }
  {
    // A variable that is not a size: the default limit, and one line saying why.
    ScopedEnv bad("REDUCE_TUNE_KERNEL_CACHE_MAX_SIZE", "lots");
    r = run({});
    EXPECT_EQ(r.code, kExitOk);
    EXPECT_NE(r.out.find("limit: 268435456 bytes"), std::string::npos) << r.out;
    EXPECT_NE(r.err.find("REDUCE_TUNE_KERNEL_CACHE_MAX_SIZE=\"lots\" is not a size"), std::string::npos) << r.err;
  }
  {
    ScopedEnv off("REDUCE_TUNE_KERNEL_CACHE", "off");
    r = run({});
    EXPECT_EQ(r.code, kExitOk);
    EXPECT_NE(r.out.find("kernel cache: off"), std::string::npos) << r.out;
  }
}

TEST(CacheCommand, ClearDeletesOnlyTheStoresFiles) {
  TempDir dir;
  const fs::path folder = dir / "kernels";
  {
    DirectoryBinaryStore store(folder);
    for (unsigned i = 0; i < 4; ++i) store.store(key_of(i), 90, "nvrtc", std::vector<char>(2048, 'k'));
  }
  write(folder / "notes.txt", 10);
  write(folder / "abc.rtk", 10);  // .rtk, but not a key
  const fs::path stale = folder / (".tmp-" + key_of(7) + "-1-2-3"), fresh = folder / (".tmp-" + key_of(8) + "-4-5-6");
  write(stale, 10);
  write(fresh, 10);
  fs::last_write_time(stale, fs::file_time_type::clock::now() - std::chrono::minutes(30));
  const Result r = run({"clear", "--dir", folder.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("deleted 4 kernels"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("and 1 stale temporary files"), std::string::npos) << r.out;
  for (unsigned i = 0; i < 4; ++i) EXPECT_FALSE(fs::exists(DirectoryBinaryStore(folder).file_for(key_of(i)))) << i;
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(fresh));  // perhaps another process still writing
  EXPECT_TRUE(fs::exists(folder / "notes.txt"));
  EXPECT_TRUE(fs::exists(folder / "abc.rtk"));
  EXPECT_NE(run({"info", "--dir", folder.string()}).out.find("kept: 0 kernels, 0 bytes"), std::string::npos);
  // A folder that does not exist: nothing to delete, not an error.
  const Result missing = run({"clear", "--dir", (dir / "none").string()});
  EXPECT_EQ(missing.code, kExitOk);
  EXPECT_NE(missing.out.find("does not exist; nothing to delete"), std::string::npos) << missing.out;
  EXPECT_FALSE(fs::exists(dir / "none"));
}

// A path that is not a folder (a file, by --dir or the variable) is an error of one line
// for either command, and the file is left as it was.
TEST(CacheCommand, APathThatIsNotAFolderIsRefused) {
  TempDir dir;
  const fs::path file = dir / "kernels";
  write(file, 10);
  for (const char* action : {"info", "clear"}) {
    const Result r = run({action, "--dir", file.string()});
    EXPECT_EQ(r.code, kExitFailure) << action << ": " << r.out;
    EXPECT_EQ(r.out, "") << action;
    EXPECT_NE(r.err.find("is not a folder"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.rfind("reduce-tune cache: ", 0), 0u) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    ASSERT_TRUE(fs::is_regular_file(file)) << action;
    EXPECT_EQ(fs::file_size(file), 10u) << action;
  }
  ScopedEnv at("REDUCE_TUNE_KERNEL_CACHE", file.string().c_str());
  const Result r = run({"clear"});
  EXPECT_EQ(r.code, kExitFailure) << r.out;
  EXPECT_NE(r.err.find("is not a folder"), std::string::npos) << r.err;
  EXPECT_EQ(fs::file_size(file), 10u);
}

TEST(CacheCommand, BadCommandLinesAreUsageErrorsOfOneLine) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"purge"}, {"info", "--dir"}, {"info", "--dir", ""}, {"info", "--frobnicate"}, {"info", "clear"}}) {
    const Result r = run(args);
    EXPECT_EQ(r.code, kExitUsage) << args.size();
    EXPECT_EQ(r.err.rfind("reduce-tune cache: ", 0), 0u) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  }
  const Result help = run({"--help"});
  EXPECT_EQ(help.code, kExitOk);
  EXPECT_NE(help.out.find("REDUCE_TUNE_KERNEL_CACHE_MAX_SIZE"), std::string::npos);
  // Listed by the command itself, and reached through it.
  std::ostringstream out, err;
  EXPECT_EQ(run_cli({"--help"}, out, err), kExitOk);
  EXPECT_NE(out.str().find("  cache "), std::string::npos) << out.str();
  std::ostringstream out2, err2;
  TempDir dir;
  EXPECT_EQ(run_cli({"cache", "--dir", (dir / "k").string()}, out2, err2), kExitOk) << err2.str();
  EXPECT_NE(out2.str().find("kept: nothing yet"), std::string::npos) << out2.str();
}

}  // namespace
}  // namespace reduce_tune::cli
