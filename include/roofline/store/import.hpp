// Results from another machine: `roofline import FILE` copies every run of
// another roofline store (with its devices, measurements, bench results,
// layers and profiles) into this one, in one transaction, so that `compare`,
// `chart` and `report` see both machines' results. Each run keeps its
// devices; ids are renumbered past this store's own. A run already here (the
// same start time, host and command line) is skipped, so importing a file
// twice adds nothing the second time.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "roofline/store/db.hpp"

namespace roofline::store {

struct ImportResult {
  std::map<std::string, std::int64_t> rows;  // table -> rows added
  std::int64_t runs_skipped = 0;             // already in this store
  std::vector<std::string> devices;          // "NVIDIA H100 80GB HBM3 (gpu)", as imported, distinct
};

// Copies `from` (opened read-only: never written) into `into`. Throws
// Error(Store), with `into` unchanged, when `from` is missing, not a roofline
// store, corrupt, of a newer schema than this roofline's or of an older one
// than `into`'s (upgrade a copy of it first), or the same file as `into`.
ImportResult import_store(Db& into, const std::string& from);

}  // namespace roofline::store
