#include "reduce_tune/engine/binary_cache.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cstdio>

#include "reduce_tune/engine/kernel_sources.h"
#include "reduce_tune/log.h"
#include "reduce_tune/error.h"

namespace reduce_tune {

std::string kernel_templates_digest() {
  static const std::string digest = [] {
    XXH3_state_t* state = XXH3_createState();
    XXH3_64bits_reset(state);
    for (const auto& f : kernel_template_sources())
      for (std::string_view part : {f.name, f.content}) {
        const std::uint64_t size = part.size();
        XXH3_64bits_update(state, &size, sizeof(size));  // length-prefixed
        XXH3_64bits_update(state, part.data(), part.size());
      }
    const XXH64_hash_t h = XXH3_64bits_digest(state);
    XXH3_freeState(state);
    char text[17];
    std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(h));
    return std::string(text);
  }();
  return digest;
}

std::string binary_cache_key(const CompileRequest& request, const std::string& compiler_version) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_128bits_reset(state);
  auto add = [&](std::string_view part) {
    const std::uint64_t size = part.size();
    XXH3_128bits_update(state, &size, sizeof(size));  // length-prefixed: no ambiguity
    XXH3_128bits_update(state, part.data(), part.size());
  };
  add(request.source);
  for (const auto& f : request.headers) {
    add(f.name);
    add(f.content);
  }
  for (const auto& o : nvrtc_options(request)) add(o);
  for (const auto& e : request.name_expressions) add(e);
  add(compiler_version);
  const XXH128_hash_t h = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  char text[33];
  std::snprintf(text, sizeof(text), "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return text;
}

BinaryCache::BinaryCache(Compiler& compiler, BinaryStore* store)
    : compiler_(compiler), store_(store), compiler_version_(compiler.version()) {}

std::shared_ptr<const CompiledProgram> BinaryCache::get(const CompileRequest& request) {
  using Ptr = std::shared_ptr<const CompiledProgram>;
  const std::string key = binary_cache_key(request, compiler_version_);
  std::promise<Ptr> promise;
  std::shared_future<Ptr> future;
  bool owner = false;
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      ++stats_.hits;
      future = it->second;
    } else {
      future = promise.get_future().share();
      entries_.emplace(key, future);
      owner = true;
    }
  }
  if (!owner) return future.get();  // rethrows the owner's failure

  try {
    Ptr result;
    bool from_store = false;
    if (store_) {
      // A damaged or unreadable stored binary is a miss: compile it again.
      try {
        if (auto blob = store_->load(key)) {
          result = std::make_shared<const CompiledProgram>(deserialize_program(*blob));
          from_store = true;
        }
      } catch (const Error& e) {
        log_message(LogLevel::warning, "ignoring a cached binary that cannot be read (" + std::string(e.what()) +
                                           "); recompiling");
      }
    }
    if (!result) {
      result = std::make_shared<const CompiledProgram>(compiler_.compile(request));
      if (store_) {
        try {
          store_->store(key, request.arch, compiler_version_, serialize(*result));
        } catch (const Error& e) {
          log_message(LogLevel::warning,
                      "could not store a compiled binary: " + std::string(e.what()));
        }
      }
    }
    {
      std::lock_guard lock(mutex_);
      ++(from_store ? stats_.store_hits : stats_.compiles);
    }
    promise.set_value(result);
    return result;
  } catch (...) {
    {
      std::lock_guard lock(mutex_);
      entries_.erase(key);
    }
    promise.set_exception(std::current_exception());
    throw;
  }
}

CacheStats BinaryCache::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace reduce_tune
