// `reduce-tune tune` (and `reduce-tune --device N`): the command-line layer over
// tuner::tune_device: options, the database path, Ctrl-C, progress on the terminal.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <ostream>
#include <sstream>
#include <thread>

#include "reduce_tune/engine/cuda_api.h"
#include "reduce_tune/db/database.h"
#include "reduce_tune/db/paths.h"
#include "reduce_tune/error.h"
#include "reduce_tune/engine/search_space.h"
#include "cli/cli.h"
#include "cli/command_support.h"
#include "cli/commands.h"
#include "cli/tune_options.h"
#include "cli/db_commands.h"
#include "reduce_tune/tuner/tune_options.h"
#include "reduce_tune/tuner/axis_tuner.h"
#include "reduce_tune/tuner/tuner.h"

namespace reduce_tune::cli {
using namespace reduce_tune::tuner;

std::string tool_version() { return REDUCE_TUNE_VERSION; }

namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void on_interrupt(int) { g_interrupted.store(true); }

std::string format_seconds(double s) {
  std::ostringstream os;
  if (s >= 60) os << static_cast<int>(s) / 60 << "m" << std::setw(2) << std::setfill('0') << static_cast<int>(s) % 60 << "s";
  else os << std::fixed << std::setprecision(1) << s << "s";
  return os.str();
}

std::string size_label(std::uint64_t n) {
  if (n && (n & (n - 1)) == 0) return "2^" + std::to_string(size_bucket(n));
  return std::to_string(n);
}

// A bar redrawn in place on a terminal; one plain line per bucket otherwise.
class ConsoleProgress final : public Progress {
 public:
  ConsoleProgress(std::ostream& out, bool terminal, bool quiet, bool verbose)
      : out_(out), terminal_(terminal), quiet_(quiet), verbose_(verbose) {}

  void device_started(const DeviceKey& d, int to_tune, int done_before) override {
    std::lock_guard lock(mutex_);
    if (quiet_) return;
    out_ << "tuning " << d << ": " << to_tune << " bucket" << (to_tune == 1 ? "" : "s") << " to tune";
    if (done_before) out_ << ", " << done_before << " already done (--fresh to redo)";
    out_ << '\n' << std::flush;
  }
  void candidate_finished(const BucketReport& b) override {
    std::lock_guard lock(mutex_);
    if (!terminal_ || quiet_) return;
    std::ostringstream line;
    line << "\r[" << bar(b.index - 1, b.total) << "] " << b.index << "/" << b.total << " " << label(b)
         << " candidates " << b.candidates;
    if (b.winner || !b.axis_winner.empty()) line << " best " << std::fixed << std::setprecision(1) << b.winner_gbps << " GB/s";
    if (b.index > 1) line << " ETA " << format_seconds(b.eta_seconds);
    std::string text = line.str();
    if (text.size() < last_width_) text += std::string(last_width_ - text.size(), ' ');
    last_width_ = line.str().size();
    out_ << text << std::flush;
  }
  void bucket_finished(const BucketReport& b) override {
    std::lock_guard lock(mutex_);
    if (quiet_) return;
    if (terminal_ && !verbose_) {
      return;  // the bar stays; the next candidate redraws it
    }
    out_ << "[" << b.index << "/" << b.total << "] " << b.device_name << " " << label(b) << ": " << b.candidates
         << " candidates (" << b.failed << " failed)";
    if (b.winner || !b.axis_winner.empty())
      out_ << ", best " << std::fixed << std::setprecision(4) << b.winner_ms << " ms " << std::setprecision(1)
           << b.winner_gbps << " GB/s " << (b.winner ? to_string(*b.winner) : b.axis_winner);
    out_ << ", " << format_seconds(b.seconds);
    if (verbose_ && !b.axis) {
      const auto& p = b.phases;
      out_ << std::fixed << std::setprecision(2) << " (compile wait " << p.compile_wait << ", checks " << p.verify
           << ", timing " << p.timing << ", finalists " << p.finalists << ", references " << p.references
           << ", data " << p.fill << ", database " << p.store << ")";
    }
    out_ << ", ETA " << format_seconds(b.eta_seconds) << '\n' << std::flush;
  }
  void note(std::string_view message) override {
    std::lock_guard lock(mutex_);
    if (quiet_) return;
    if (terminal_ && last_width_) out_ << '\n';
    last_width_ = 0;
    out_ << message << '\n' << std::flush;
  }
  void finish_line() {
    std::lock_guard lock(mutex_);
    if (terminal_ && last_width_) out_ << '\n';
    last_width_ = 0;
  }

 private:
  static std::string label(const BucketReport& b) {
    if (b.axis) return db::to_string(*b.axis) + (b.fill ? " (filled)" : "");
    return to_string(b.problem) + " n=" + size_label(b.n);
  }
  static std::string bar(int done, int total) {
    const int width = 20;
    const int filled = total ? done * width / total : width;
    return std::string(filled, '#') + std::string(width - filled, '.');
  }
  std::ostream& out_;
  bool terminal_, quiet_, verbose_;
  std::mutex mutex_;
  std::size_t last_width_ = 0;
};

void print_dry_run(const TuneOptions& o, int arch, std::ostream& out) {
  DeviceLimits limits;
  limits.arch = arch;
  out << "search space for sm_" << arch << " (declared values per strategy, then valid configs per problem):\n";
  for (Strategy s : kAllStrategies) {
    out << "  " << std::left << std::setw(18) << to_string(s) << std::right << std::setw(7) << declared_space_size(s)
        << " declared";
    for (Op op : o.ops)
      for (DType d : o.dtypes) {
        const TypeRule types = *resolve_types(op, d, default_out_dtype(op, d)).rule;
        out << "  " << to_string(op) << "<" << to_string(d) << ">=" << enumerate_space(s, op, types, limits).size();
      }
    out << '\n';
  }
  const auto sizes = o.sizes.empty() ? default_sizes() : o.sizes;
  const std::size_t buckets = one_size_per_bucket(sizes).size();
  std::size_t flat_problems = 0;
  for (Op op : o.ops)
    for (DType d : o.dtypes) flat_problems += in_flat_scope(o, op, d) ? 1 : 0;
  const bool flat = std::find(o.layouts.begin(), o.layouts.end(), AxisLayout::flat) != o.layouts.end();
  const auto [smallest, largest] = std::minmax_element(sizes.begin(), sizes.end());
  out << "sizes: " << sizes.size() << " (" << size_label(*smallest) << " .. " << size_label(*largest)
      << "), buckets to tune: " << (flat ? buckets * flat_problems : 0)
      << ", search: " << to_string(o.search);
  if (o.budget.evaluations_per_bucket) out << ", at most " << o.budget.evaluations_per_bucket << " candidates per bucket";
  if (o.budget.seconds > 0) out << ", at most " << o.budget.seconds << " s";
  out << '\n';
  // The axis classes, planned against an empty database: what a first run tunes.
  struct Silent final : Progress {
    void device_started(const DeviceKey&, int, int) override {}
    void bucket_finished(const BucketReport&) override {}
    void note(std::string_view) override {}
  } silent;
  const db::Database empty = db::Database::open_in_memory();
  const AxisWorkPlan axes = plan_axis_work(o, empty, 0, ~0ull, silent);
  out << "axis classes to tune: " << axes.items.size();
  if (!axes.items.empty()) {
    std::size_t fewest = ~std::size_t{0}, most = 0;
    for (const auto& w : axes.items) {
      const std::size_t n = axis_class_candidates(w.op, w.types, w.problem, 132).size();
      fewest = std::min(fewest, n);
      most = std::max(most, n);
    }
    out << " (" << fewest << " to " << most << " candidates each on a 132-SM GPU; ops other than sum start from the "
        << "sum's best)";
    if (o.fill_axis_neighbours)
      out << "; then the untuned classes one bucket from tuned ones are filled (their neighbours' winners and the "
             "built-in choice, timed there)";
  }
  out << '\n';
}

}  // namespace

int run_tune_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const TuneParseResult parsed = parse_tune_options(args);
  if (!parsed.options) {
    err << "reduce-tune tune: " << parsed.error << '\n' << tune_usage();
    return kExitUsage;
  }
  const TuneOptions& o = *parsed.options;
  if (o.help) {
    out << tune_usage()
        << "\nMeasures kernel configurations on the GPU and stores every measurement and the winners.\n"
           "  --device N|all      GPU index (default 0), a list such as 0,1, or all (one worker per GPU)\n"
           "  --ops LIST          sum,prod,min,max,mean or all (default sum,prod,min,max; mean is\n"
           "                      served by the sum's winners; axis classes tune sum, min, max)\n"
           "  --dtypes LIST       i32,i64,u32,f32,f64,f16,bf16 or all (default all; with neither\n"
           "                      --ops nor --dtypes, f16 and bf16 tune sum, min and max of flat\n"
           "                      sizes only: name them to tune their products and axis classes)\n"
           "  --sizes LIST        e.g. 2^10..2^30 (default), 1000,4096,1e8, 64k,16M; a size bucket\n"
           "                      [2^k, 2^(k+1)) is tuned once, at the smallest size given in it,\n"
           "                      and its winner checked across it\n"
           "  --layouts LIST      flat,rows,columns (default all three): flat sizes, and axis\n"
           "                      reductions of rows ([outputs, R]) and columns ([R, outputs]),\n"
           "                      tuned for the float dtypes among --dtypes\n"
           "  --axis-shapes LIST  axis classes by a shape in each, R x outputs (e.g. 1000x4096);\n"
           "                      default: R and outputs 2^1, 2^3 .. 2^23 with 2^16 <= R*outputs <= 2^28\n"
           "  --strategy KIND     local (default), random or exhaustive\n"
           "  --budget N|Ss       candidates per bucket (default 48 for local) or seconds for the run\n"
           "  --db PATH           database file (default $REDUCE_TUNE_DB, else $XDG_DATA_HOME/reduce-tune/tuning.db)\n"
           "  --fresh             retune buckets that are already stored (default: resume)\n"
           "  --no-fill           do not fill the axis classes one bucket from tuned ones (default:\n"
           "                      time the neighbours' winners and the built-in choice there)\n"
           "  --keep-binaries winners|all  store the winners' and finalists' compiled kernels\n"
           "                      (default), or every one, compressed, so that a --fresh rerun\n"
           "                      compiles nothing (reduce-tune db gc trims later)\n"
           "  --dry-run [--arch SM]  print the search space and the plan; needs no GPU\n"
           "  --quiet | --verbose\n";
    return kExitOk;
  }
  if (o.dry_run) {
    int arch = o.dry_run_arch;
    print_dry_run(o, arch, out);
    return kExitOk;
  }

  std::vector<int> devices = o.devices;
  const int count = cuda_device_count();  // throws NoDeviceError: exit 3 with the reason
  if (o.all_devices)
    for (int i = 0; i < count; ++i) devices.push_back(i);
  for (int d : devices)
    if (d >= count)
      throw NoDeviceError("device " + std::to_string(d) + " does not exist (" + std::to_string(count) +
                          " CUDA device" + (count == 1 ? "" : "s") + " present)");
  const std::filesystem::path db_path = o.db ? std::filesystem::path(*o.db) : db::default_database_path();
  // Fail early, before any GPU work, on a database that cannot be used.
  { db::Database::open(db_path); }

  g_interrupted.store(false);
  auto previous = std::signal(SIGINT, on_interrupt);
  ConsoleProgress progress(out, isatty(STDOUT_FILENO) && &out == &std::cout, o.quiet, o.verbose);
  std::vector<DeviceTuneResult> results(devices.size());
  std::vector<std::string> failures(devices.size());
  std::vector<std::thread> workers;
  for (std::size_t i = 0; i < devices.size(); ++i)
    workers.emplace_back([&, i] {
      try {
        results[i] = tune_device(devices[i], o, db_path, progress, g_interrupted);
      } catch (const std::exception& e) {
        failures[i] = e.what();
      }
    });
  for (auto& w : workers) w.join();
  std::signal(SIGINT, previous);
  progress.finish_line();

  bool interrupted = false, failed = false;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    if (!failures[i].empty()) {
      err << "reduce-tune tune: device " << devices[i] << ": " << failures[i] << '\n';
      failed = true;
      continue;
    }
    const auto& r = results[i];
    interrupted = interrupted || r.interrupted;
    if (!o.quiet || r.interrupted)
      out << "device " << devices[i] << " (" << r.device.name << "): " << r.buckets_tuned << " bucket"
          << (r.buckets_tuned == 1 ? "" : "s") << " tuned and saved, " << r.buckets_already_done << " already done, "
          << r.axis_classes_tuned << " axis class" << (r.axis_classes_tuned == 1 ? "" : "es") << " tuned and saved, "
          << r.axis_classes_already_done << " already done, " << r.axis_classes_filled << " filled in between, "
          << r.candidates << " candidates measured (" << r.failed_candidates << " failed), kernels compiled "
          << r.compiles.compiles << ", from the database cache " << r.compiles.store_hits << ", binaries stored "
          << r.binaries_stored << ", in " << format_seconds(r.seconds) << '\n';
    if (o.verbose && r.buckets_tuned + r.axis_classes_tuned + r.axis_classes_filled > 0) {
      const auto& p = r.phases;
      out << std::fixed << std::setprecision(1) << "  time: compile wait " << p.compile_wait << " s, checks "
          << p.verify << " s, timing " << p.timing << " s, finalists " << p.finalists << " s, references "
          << p.references << " s, data " << p.fill << " s, database " << p.store << " s\n";
    }
  }
  if (!o.quiet) out << "database: " << db_path.string() << '\n';
  if (interrupted) {
    out << "interrupted: finished buckets are saved; run the same command again to resume\n";
    return kExitInterrupted;
  }
  return failed ? kExitFailure : kExitOk;
}

}  // namespace reduce_tune::cli
