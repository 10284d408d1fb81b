// reduce-tune: a thin main over the tuner library.
#include <iostream>
#include <string>
#include <vector>

#include "tuner/cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return reduce_tune::tuner::run_cli(args, std::cout, std::cerr);
}
