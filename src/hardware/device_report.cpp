// The tables `roofline device` prints, built in the library so they can be
// tested (and previewed) with hand-made device descriptions.
#include "roofline/hardware/device_report.hpp"

#include <fmt/format.h>

#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/hardware/cpu_uarch.hpp"
#include "roofline/hardware/datasheet.hpp"
#include "roofline/hardware/formats.hpp"
#include "roofline/hardware/gpu_arch.hpp"
#include "roofline/hardware/peaks.hpp"

namespace roofline::hw {

namespace {

std::string mhz_text(double mhz) { return mhz > 0 ? format_sig(mhz, 4) + " MHz" : "unknown"; }

// Peaks in tera (GPU) or giga (CPU) units, so the text shows figures as
// datasheets print them; the "rate" column names the unit for each row.
Table& peaks_table(Report& r, const std::string& id, const std::string& title, bool with_derived) {
  Table& t = r.add(Table(id, title));
  t.col("precision", "Precision")
      .col("unit", "Executed on")
      .col("dense", "Dense", "", 1)
      .col("sparse", "2:4 sparse", "", 1)
      .col("rate", "Rate");
  if (with_derived) t.col("derived", "From attributes", "", 1);
  t.col("source", "Source").col("basis", "Basis", "", -1, 90);
  return t;
}

void add_peak_rows(Table& t, const std::vector<Peak>& peaks, double scale, const char* prefix,
                   const std::vector<Peak>* derived) {
  for (const auto& p : peaks) {
    std::vector<Cell> row;
    row.push_back(precision_title(p.precision));
    std::string unit = unit_title(p.unit);
    if (p.variant == "fp16acc")
      unit += ", FP16 accumulate";
    else if (!p.variant.empty())
      unit += " (" + p.variant + ")";
    row.push_back(unit);
    row.push_back(p.dense / scale);
    row.push_back(p.sparse ? Cell(*p.sparse / scale) : Cell(std::string("-")));
    row.push_back(std::string(prefix) + p.rate_unit());
    if (derived) {
      Cell d = std::string("-");
      for (const auto& q : *derived)
        if (q.id == p.id) d = q.dense / scale;
      row.push_back(d);
    }
    row.push_back(std::string(model::to_string(p.source)));
    row.push_back(p.basis);
    t.row(std::move(row));
  }
}

std::string cache_text(const CacheLevel& c) {
  std::string s = format_bytes(static_cast<double>(c.bytes));
  if (c.ways > 0)
    s += fmt::format(", {}-way", c.ways);
  else if (c.ways < 0)
    s += ", fully associative";
  if (c.line_bytes > 0) s += fmt::format(", {} B lines", c.line_bytes);
  if (c.shared_by_threads > 0)
    s += c.source == "sysfs"
             ? fmt::format(", shared by {} CPU{}", c.shared_by_threads, c.shared_by_threads == 1 ? "" : "s")
             : fmt::format(", shared by up to {} CPUs", c.shared_by_threads);
  return s + " (" + c.source + ")";
}

}  // namespace

void add_cpu_sheet(Report& r, const CpuInfo& c, double now_mhz) {
  const CpuMicroarch u = cpu_microarch(c);
  Table& t = r.add(Table("cpu", "CPU: " + (c.model_name.empty() ? std::string("unknown model") : c.model_name),
                         Table::Layout::Properties));
  t.prop("vendor", "Vendor", c.vendor);
  t.prop("model_name", "Model", c.model_name);
  if (c.isa == "x86_64")
    t.prop("family_model", "Family / model / stepping",
           fmt::format("{} / {} / {} (0x{:x} / 0x{:02x})", c.family, c.model, c.stepping, c.family, c.model));
  else if (c.isa == "aarch64")
    t.prop("family_model", "Part", fmt::format("0x{:x}", c.model));
  t.prop("microarchitecture", "Microarchitecture",
         u.known ? u.name : std::string("not in roofline's table (peaks below are a generic guess)"));
  t.prop("sockets", "Sockets", std::int64_t{c.sockets});
  t.prop("cores", "Cores available", std::int64_t{c.cores});
  t.prop("threads", "Threads available", std::int64_t{c.threads});
  t.prop("simd", "Widest SIMD",
         c.simd.empty() ? std::string("none found")
                        : fmt::format("{} ({}-bit){}", c.simd, c.simd_bits, c.has_fma ? ", FMA" : ", no FMA"));
  if (u.fma_pipes > 0)
    t.prop("fma_units", "FMA units per core",
           fmt::format("{} x {}-bit: {}", u.fma_pipes, u.datapath_bits, u.assumption));
  t.prop("flags", "ISA extensions of interest", join(c.flags, " "));
  for (const auto& cache : c.caches) {
    std::string key = fmt::format("l{}{}", cache.level,
                                  cache.type == "data"          ? "d"
                                  : cache.type == "instruction" ? "i"
                                                                : "");
    std::string title = cache.type == "unified" ? fmt::format("L{} cache", cache.level)
                                                : fmt::format("L{} {} cache", cache.level, cache.type);
    t.prop(key, title, cache_text(cache));
  }
  t.prop("cache_source", "Caches from", c.cache_source);
  if (c.max_mhz > 0) t.prop("max_mhz", "Max clock", c.max_mhz, "MHz");
  if (c.base_mhz > 0) t.prop("base_mhz", "Base clock", c.base_mhz, "MHz");
  if (c.current_mhz > 0) t.prop("current_mhz", "Clock (/proc/cpuinfo)", c.current_mhz, "MHz");
  if (c.measured_mhz > 0) t.prop("measured_mhz", "Clock (measured)", c.measured_mhz, "MHz");
  t.prop("frequency_source", "Clock from", c.frequency_source);
  t.prop("peak_clock", "Clock used for peaks", c.peak_clock_mhz() > 0 ? Cell(c.peak_clock_mhz()) : Cell(), "MHz");
  // The clock the core runs at now: in VMs the published figure is often the
  // nominal TSC rate while the core boosts well above it.
  if (double now = now_mhz; now > 0) {
    t.prop("clock_now", "Clock now (1 core, dependent adds)", now, "MHz");
    double used = c.peak_clock_mhz();
    if (used > 0 && (now > 1.15 * used || now < 0.85 * used))
      t.note(
          fmt::format("this core runs at about {} now against {} used for the peaks: the peaks scale with the "
                      "clock, and `roofline ceilings` measures what is reached",
                      mhz_text(now), mhz_text(used)));
  }
  t.prop("memory_bandwidth", "Memory bandwidth",
         std::string("not derivable without DMI (memory channels and speed); measured by `roofline ceilings`"));

  auto peaks = cpu_peaks(c);
  Table& p =
      peaks_table(r, "cpu_peaks", "CPU theoretical peaks (derived: cores x clock x FMA units x lanes x 2)", false);
  add_peak_rows(p, peaks, 1e9, "G", nullptr);
  if (peaks.empty()) p.note("no peak derivable: the core count, clock or SIMD width is unknown");
  p.note("FMA units: " + u.assumption);
  p.note("clock: " + c.peak_clock_source());
  p.note(
      "CPU peaks assume every core runs the widest vector FMA at that clock; AVX-512 all-core clocks are "
      "often lower");
}

void add_gpu_sheet(Report& r, const GpuInfo& g) {
  const std::string n = std::to_string(g.ordinal);
  const DatasheetMatch m = explain_match(g);
  const GpuArch* arch = gpu_arch(g.cc_major, g.cc_minor);
  Table& t = r.add(Table("gpu" + n, "GPU " + n + ": " + g.name, Table::Layout::Properties));
  t.prop("name", "Name", g.name);
  t.prop("datasheet", "Datasheet entry",
         m.entry ? m.entry->id + " (" + m.entry->name + ")" : std::string("none: figures below are derived"));
  t.prop("architecture", "Architecture",
         fmt::format("{} (compute capability {}.{})", g.architecture, g.cc_major, g.cc_minor));
  t.prop("sms", "SMs", std::int64_t{g.sms});
  if (g.cuda_cores_per_sm > 0) {
    t.prop("cuda_cores", fmt::format("CUDA cores (FP32 lanes, {} per SM)", g.cuda_cores_per_sm),
           std::int64_t{g.cuda_cores()});
    if (g.fp64_units_per_sm > 0)
      t.prop("fp64_units", fmt::format("FP64 units ({} per SM)", g.fp64_units_per_sm),
             std::int64_t{g.sms * g.fp64_units_per_sm});
    if (g.tensor_cores_per_sm > 0)
      t.prop("tensor_cores",
             fmt::format("Tensor cores ({} per SM, {})", g.tensor_cores_per_sm, g.tensor_core_generation),
             std::int64_t{g.tensor_cores()});
  } else {
    t.prop("cuda_cores", "CUDA cores", std::string("unknown: no per-SM table for this compute capability"));
  }
  t.prop("sm_clock_max", "SM clock, max", g.sm_clock_max_mhz > 0 ? Cell(g.sm_clock_max_mhz) : Cell(), "MHz");
  if (!g.sm_clock_source.empty()) t.prop("sm_clock_source", "SM clock from", g.sm_clock_source);
  if (g.sm_clock_now_mhz > 0) t.prop("sm_clock_now", "SM clock, now", g.sm_clock_now_mhz, "MHz");
  t.prop("memory", "Memory", format_bytes(static_cast<double>(g.memory_bytes)));
  t.prop("memory_type", "Memory type",
         g.memory_type.empty() ? std::string("unknown") : g.memory_type + " (" + g.memory_type_source + ")");
  t.prop("memory_bus", "Memory bus width",
         g.memory_bus_bits > 0 ? Cell(std::int64_t{g.memory_bus_bits}) : Cell(std::string("unknown")), "bit");
  t.prop("mem_clock_max", "Memory clock, max",
         g.mem_clock_max_mhz > 0 ? Cell(g.mem_clock_max_mhz) : Cell(std::string("unknown")), "MHz");
  if (!g.mem_clock_source.empty()) t.prop("mem_clock_source", "Memory clock from", g.mem_clock_source);
  t.prop("bandwidth_derived", "Bandwidth (bus x clock x 2)",
         g.bandwidth_theoretical > 0 ? Cell(g.bandwidth_theoretical / 1e12)
                                     : Cell(std::string("unknown: bus width or memory clock not reported")),
         "TB/s");
  if (m.entry) t.prop("bandwidth_datasheet", "Bandwidth (datasheet)", m.entry->bandwidth / 1e12, "TB/s");
  t.prop("l2", "L2 cache", format_bytes(static_cast<double>(g.l2_bytes)));
  t.prop("smem_per_sm", "Shared memory per SM", format_bytes(static_cast<double>(g.smem_per_sm)));
  t.prop("smem_per_block", "Shared memory per block (opt-in)",
         format_bytes(static_cast<double>(g.smem_per_block_optin)));
  t.prop("regs_per_sm", "Registers per SM", std::int64_t{g.regs_per_sm});
  t.prop("threads_per_sm", "Max threads per SM", std::int64_t{g.max_threads_per_sm});
  t.prop("tdp", "TDP (NVML default power limit)",
         g.tdp_w ? Cell(*g.tdp_w) : Cell(std::string("unknown: NVML did not report it")), "W");
  if (m.entry) t.prop("tdp_datasheet", "TDP (datasheet)", m.entry->tdp_w, "W");
  t.prop("driver", "Driver", g.driver_version);
  t.prop("runtime", "CUDA runtime", fmt::format("{}.{}", g.runtime_version / 1000, (g.runtime_version % 1000) / 10));
  t.prop("pci_bus_id", "PCI bus id", g.pci_bus_id);
  if (!g.uuid.empty()) t.prop("uuid", "UUID", g.uuid);

  Table& mt = r.add(Table("gpu" + n + "_match", "GPU " + n + " datasheet match"));
  mt.col("entry", "Entry").col("verdict", "Verdict").col("why", "Why", "", -1, 110);
  mt.row(
      {m.entry ? Cell(m.entry->id) : Cell(std::string("-")), std::string(m.entry ? "matched" : "no match"), m.reason});
  for (const auto& rej : m.rejected) {
    auto colon = rej.find(": ");
    mt.row({rej.substr(0, colon), std::string("ruled out"), colon == std::string::npos ? rej : rej.substr(colon + 2)});
  }

  const auto derived = derived_gpu_peaks(g);
  const auto peaks = m.entry ? datasheet_peaks(*m.entry) : derived;
  Table& p = peaks_table(r, "gpu" + n + "_peaks",
                         "GPU " + n + " theoretical peaks (" +
                             (m.entry ? "datasheet " + m.entry->id : std::string("derived from attributes")) + ")",
                         m.entry != nullptr);
  add_peak_rows(p, peaks, 1e12, "T", m.entry ? &derived : nullptr);
  // DRAM, the memory roof (in GB/s: TB/s with one decimal would hide the differences).
  std::vector<Cell> row = {std::string("memory"), "DRAM" + (g.memory_type.empty() ? "" : " (" + g.memory_type + ")")};
  double bw = m.entry ? m.entry->bandwidth : g.bandwidth_theoretical;
  row.push_back(bw > 0 ? Cell(bw / 1e9) : Cell(std::string("unknown")));
  row.push_back(std::string("-"));
  row.push_back(std::string("GB/s"));
  if (m.entry)
    row.push_back(g.bandwidth_theoretical > 0 ? Cell(g.bandwidth_theoretical / 1e9) : Cell(std::string("-")));
  row.push_back(std::string(m.entry ? "datasheet" : "derived"));
  row.push_back(m.entry ? std::string("[1]")
                        : fmt::format("{}-bit bus x {} x 2", g.memory_bus_bits, mhz_text(g.mem_clock_max_mhz)));
  p.row(std::move(row));
  if (peaks.empty())
    p.note(arch
               ? "no peak derivable: the SM clock is unknown"
               : fmt::format("no per-SM rates for compute capability {}.{}: roofline's architecture table has no entry",
                             g.cc_major, g.cc_minor));
  p.note("2:4 sparse rates need structured-sparse operands; dense work cannot exceed the Dense column");
  if (m.entry) {
    p.note(
        "\"From attributes\" = SMs x per-SM rate x max SM clock; NVIDIA prints tensor peaks at a lower clock, so "
        "that column runs higher");
    for (size_t i = 0; i < m.entry->sources.size(); ++i) p.note(fmt::format("[{}] {}", i + 1, m.entry->sources[i]));
    if (!m.entry->notes.empty()) p.note(m.entry->notes);
  }
  if (arch && !arch->note.empty()) p.note(arch->note);
}

void add_datasheet_list(Report& r) {
  Table& t = r.add(Table("datasheets", "Datasheet database (tensor figures dense unless marked sparse)"));
  t.col("id", "ID")
      .col("name", "Name")
      .col("architecture", "Architecture")
      .col("form_factor", "Form factor")
      .col("sms", "SMs")
      .col("memory_gb", "Memory", "GB")
      .col("memory_type", "Type")
      .col("bandwidth", "Bandwidth", "TB/s", 2)
      .col("tdp", "TDP", "W")
      .col("fp32_cuda", "FP32 CUDA", "TFLOP/s", 1)
      .col("bf16_tensor", "BF16 tensor", "TFLOP/s", 1)
      .col("bf16_tensor_sparse", "BF16 sparse", "TFLOP/s", 1)
      .col("fp8_tensor", "FP8 tensor", "TFLOP/s", 1);
  auto fig = [](const Datasheet& d, const char* key) {
    auto it = d.peaks.find(key);
    return it == d.peaks.end() ? Cell(std::string("-")) : Cell(it->second / 1e12);
  };
  for (const auto& d : datasheets()) {
    // Absent formats show "-" (V100 has no BF16), never a zero or another format's figure.
    t.row({d.id, d.name, d.architecture, d.form_factor, std::int64_t{d.sms}, d.memory_gb, d.memory_type,
           d.bandwidth / 1e12, d.tdp_w, fig(d, "fp32.cuda"), fig(d, "bf16.tensor"), fig(d, "bf16.tensor.sparse"),
           fig(d, "fp8.tensor")});
  }
  t.note("`roofline device --datasheet ID` shows every figure of one entry with its source");
}

void add_datasheet(Report& r, const std::string& query) {
  const Datasheet* d = find_datasheet(query);
  if (!d) {
    // A unique part of an id or name will do ("l40s"); several or none is a usage error.
    auto hits = search_datasheets(query);
    if (hits.size() == 1) {
      d = hits[0];
    } else {
      std::vector<std::string> ids;
      if (hits.empty())
        for (const auto& e : datasheets()) ids.push_back(e.id);
      else
        for (const auto* h : hits) ids.push_back(h->id);
      throw_usage(hits.empty() ? fmt::format("no datasheet entry matches '{}'", query)
                               : fmt::format("'{}' matches {} datasheet entries", query, hits.size()),
                  "use one of: " + join(ids, ", "));
    }
  }
  Table& t = r.add(Table("datasheet", "Datasheet " + d->id, Table::Layout::Properties));
  t.prop("id", "ID", d->id);
  t.prop("name", "Name", d->name);
  t.prop("architecture", "Architecture", d->architecture);
  t.prop("form_factor", "Form factor", d->form_factor);
  t.prop("sms", "SMs", std::int64_t{d->sms});
  t.prop("boost", "Max SM clock", d->boost_mhz > 0 ? Cell(d->boost_mhz) : Cell(std::string("not published")), "MHz");
  t.prop("memory", "Memory", fmt::format("{:g} GB {}, {}-bit", d->memory_gb, d->memory_type, d->memory_bus_bits));
  t.prop("bandwidth", "Bandwidth", d->bandwidth / 1e9, "GB/s");
  t.prop("tdp", "TDP", d->tdp_w, "W");
  t.prop("matches", "Matches driver names with",
         join(d->name_tokens, " ") + (d->form_token.empty() ? "" : " (form: " + d->form_token + ")") +
             fmt::format(", {} SMs, about {:g} GB", d->sms, d->memory_gb));
  if (!d->notes.empty()) t.prop("notes", "Notes", d->notes);
  Table& p = peaks_table(r, "datasheet_peaks", "Peaks of " + d->id, false);
  add_peak_rows(p, datasheet_peaks(*d), 1e12, "T", nullptr);
  Table& s = r.add(Table("datasheet_sources", "Sources of " + d->id));
  s.col("n", "Ref").col("source", "Source");
  for (size_t i = 0; i < d->sources.size(); ++i) s.row({fmt::format("[{}]", i + 1), d->sources[i]});
}

void add_formats(Report& r) {
  Table& t = r.add(Table("formats", "Number formats (figures computed from the bit layout)"));
  t.col("format", "Format")
      .col("standard", "Standard")
      .col("sign", "Sign")
      .col("exponent", "Exponent")
      .col("mantissa", "Mantissa")
      .col("bits", "Bits")
      .col("bias", "Bias")
      .col("max", "Max finite")
      .col("min", "Min")
      .col("min_normal", "Min normal")
      .col("min_subnormal", "Min subnormal")
      .col("epsilon", "Epsilon")
      .col("specials", "Inf / NaN")
      .col("used_for", "Used on");
  for (const auto& f : number_formats()) {
    if (f.is_integer()) {
      t.row({f.name, f.standard, std::int64_t{1}, std::string("-"), std::string("-"), std::int64_t{f.total_bits()},
             std::string("-"), f.int_max(), f.int_min(), std::string("-"), std::string("-"), std::string("-"),
             std::string("-"), f.used_for});
      continue;
    }
    std::string specials = f.has_infinity() ? "Inf, NaN" : f.has_nan() ? "NaN only" : "none";
    t.row({f.name, f.standard, std::int64_t{f.sign_bits}, std::int64_t{f.exponent_bits}, std::int64_t{f.mantissa_bits},
           std::int64_t{f.total_bits()}, std::int64_t{f.bias()}, f.max_finite(), -f.max_finite(), f.min_normal(),
           f.min_subnormal(), f.epsilon(), specials, f.used_for});
  }
  t.note(
      "Mantissa = stored fraction bits (one more bit of precision is implicit); epsilon = 2^-mantissa; "
      "TF32 is stored in 32 bits, tensor cores read 19");
}

}  // namespace roofline::hw
