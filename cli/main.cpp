// reduce-tune: a thin main over the command-line library.
#include <iostream>
#include <string>
#include <vector>

#include "cli/cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return reduce_tune::cli::run_cli(args, std::cout, std::cerr);
}
