// libFuzzer target of the results store's readers: a damaged or hostile store
// file must be read or refused with roofline::Error, never crash, hang or
// throw anything else. The readers are the ones `runs`, `chart`, `sweep`,
// `profile --show/--load` and `explain` use, on a store opened read-only.
//
// Random bytes are almost never an SQLite file, so most inputs are patches to
// a real store built once at start-up (runs, a GPU device, ceilings and a
// stored profile): the first byte chooses the form.
//   even first byte: (4-byte offset, 1-byte value) pairs written over the
//                    store's bytes (offsets taken modulo its size);
//   odd first byte:  the rest of the input is the whole file.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "roofline/core/error.hpp"
#include "roofline/measure/figure.hpp"
#include "roofline/profiler/profile_data.hpp"
#include "roofline/profiler/profile_store.hpp"
#include "roofline/report/store_chart.hpp"
#include "roofline/store/db.hpp"
#include "roofline/store/results.hpp"

namespace {

using namespace roofline;

std::string g_dir;                  // this process's scratch folder
std::vector<std::uint8_t> g_base;   // the valid store's bytes

// A small profile: one kernel, one API call (the profile reader's own corpus
// holds richer ones).
const char* kProfile = R"json({"pid": 1, "command": "./app", "exit_status": "exited 0", "exit_code": 0,
 "complete": true, "devices": ["NVIDIA H100 80GB HBM3"],
 "kernels": [{"name": "_Z6kernelPf", "demangled": "kernel(float*)", "nvtx_path": "",
   "duration": {"count": 3, "total": 6000.0, "min": 1000.0, "max": 3000.0, "mean": 2000.0, "m2": 2000000.0,
                "reservoir": [1000.0, 2000.0, 3000.0]},
   "grid": [132, 1, 1], "block": [256, 1, 1], "registers": 32, "static_smem": 0, "dynamic_smem": 0, "device": 0}],
 "apis": [{"name": "cudaLaunchKernel", "domain": "runtime",
   "duration": {"count": 3, "total": 9000.0, "min": 3000.0, "max": 3000.0, "mean": 3000.0, "m2": 0.0,
                "reservoir": [3000.0, 3000.0, 3000.0]}}]})json";

void build_base_store(const std::string& path) {
  store::Db db(path, store::Db::Mode::ReadWrite);
  const std::int64_t run = store::begin_run(db, {"ceilings", {"roofline", "ceilings"}});
  const std::int64_t dev =
      store::record_device(db, run, {"gpu", 0, "NVIDIA H100 80GB HBM3", "GPU-0", R"({"sm_count": 132})"});
  const struct {
    const char* name;
    const char* unit;
    double value;
  } figures[] = {{"dram.read", "GB/s", 3010.5}, {"fp32.cuda", "GFLOP/s", 51200.0}, {"bf16.tensor", "GFLOP/s", 7.1e5}};
  for (const auto& f : figures) {
    store::MeasurementRecord m;
    m.run_id = run;
    m.device_id = dev;
    m.category = "ceiling";
    m.name = f.name;
    m.precision = "fp32";
    m.unit = f.unit;
    m.value = f.value;
    m.params_json = "{}";
    store::add_measurement(db, m);
  }
  store::finish_run(db, run, 0);
  const std::int64_t prun = store::begin_run(db, {"profile", {"roofline", "profile", "--", "./app"}});
  prof::store_profile(db, prun, prof::ProfileData::from_json(nlohmann::json::parse(kProfile)), "fuzz");
  store::finish_run(db, prun, 0);
}

std::vector<std::uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void remove_store(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((path + suffix).c_str());
}

// Every reader, as the commands call them.
void read_everything(const std::string& path) {
  store::Db db(path, store::Db::Mode::ReadOnly);
  for (const auto& r : store::list_runs(db, 100)) (void)r;
  for (const auto& p : prof::list_profiles(db, 0, 100)) {
    const prof::ProfileData data = prof::load_profile(db, p.id);
    (void)data;
  }
  for (const auto& dev : report::stored_devices(db)) {
    (void)report::device_chart(db, dev);
    (void)measure::load_measured_roofline(db, dev.name);
    (void)store::latest_measurement(db, dev.name, "dram.read");
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char tmpl[] = "/tmp/roofline-store-fuzz-XXXXXX";
  if (!mkdtemp(tmpl)) std::abort();
  g_dir = tmpl;
  const std::string base = g_dir + "/base.db";
  build_base_store(base);
  g_base = read_file(base);  // the WAL is folded in when the last connection closes
  remove_store(base);
  if (g_base.size() < 4096) std::abort();
  // The unpatched store must read whole, or the patches test nothing.
  const std::string copy = g_dir + "/copy.db";
  {
    std::ofstream out(copy, std::ios::binary);
    out.write(reinterpret_cast<const char*>(g_base.data()), static_cast<std::streamsize>(g_base.size()));
  }
  try {
    read_everything(copy);
  } catch (const Error& e) {
    std::fprintf(stderr, "store_fuzzer: the base store does not read: %s\n", e.what());
    std::abort();
  }
  remove_store(copy);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::vector<std::uint8_t> file;
  if (data[0] % 2 == 0) {
    file = g_base;
    for (size_t i = 1; i + 5 <= size; i += 5) {
      const std::uint32_t off = static_cast<std::uint32_t>(data[i]) | static_cast<std::uint32_t>(data[i + 1]) << 8 |
                                static_cast<std::uint32_t>(data[i + 2]) << 16 |
                                static_cast<std::uint32_t>(data[i + 3]) << 24;
      file[off % file.size()] = data[i + 4];
    }
  } else {
    file.assign(data + 1, data + size);
  }
  const std::string path = g_dir + "/store.db";
  remove_store(path);
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(file.data()), static_cast<std::streamsize>(file.size()));
  }
  try {
    read_everything(path);
  } catch (const Error&) {
    // Refused with a message: what a damaged store should get.
  }
  remove_store(path);
  return 0;
}
