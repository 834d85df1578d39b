// Finding a GPU's datasheet entry. Driver names do not say everything
// ("NVIDIA H100 80GB HBM3" is the SXM5 board; "NVIDIA H100 PCIe" and
// "NVIDIA H100 NVL" say their form factor), so the product word in the name
// picks a family and the SM count, memory size, form-factor and memory-type
// words pick the variant. Any evidence against an entry rejects it, and the
// rejections are kept so `roofline device` can show why.
#include "roofline/hardware/datasheet.hpp"

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "roofline/core/strings.hpp"

namespace roofline::hw {

bool Datasheet::is_derived(const std::string& key) const {
  auto it = basis.find(key);
  return it != basis.end() && starts_with(it->second, "derived");
}

const Datasheet* find_datasheet(const std::string& id_or_name) {
  std::string q = to_lower(trim(id_or_name));
  for (const auto& d : datasheets())
    if (d.id == q || to_lower(d.name) == q) return &d;
  return nullptr;
}

std::vector<const Datasheet*> search_datasheets(const std::string& query) {
  // Whole words first ("l4" is the L4, not part of "l40s"), else any substring.
  std::string q = to_lower(trim(query));
  std::vector<const Datasheet*> words, parts;
  for (const auto& d : datasheets()) {
    bool word = false;
    for (const auto& w : split(d.id, '-')) word |= w == q;
    for (const auto& w : split(to_lower(d.name), ' ')) word |= w == q;
    if (word) words.push_back(&d);
    if (contains(d.id, q) || contains(to_lower(d.name), q)) parts.push_back(&d);
  }
  return words.empty() ? parts : words;
}

namespace {

// "Tesla V100-SXM2-16GB" -> {"tesla", "v100", "sxm2", "16gb"}
std::vector<std::string> name_words(const std::string& name) {
  std::string s = to_lower(name);
  for (char& ch : s)
    if (ch == '-' || ch == '_' || ch == '(' || ch == ')' || ch == ',' || ch == '/') ch = ' ';
  return split(s, ' ');
}

// The form factor a driver name states, if any.
std::string form_in_name(const std::vector<std::string>& words) {
  for (const auto& w : words) {
    if (starts_with(w, "sxm")) return "sxm";
    if (w == "pcie") return "pcie";
    if (w == "nvl") return "nvl";
  }
  return "";
}

// The memory type a driver name states ("hbm3" in "NVIDIA H100 80GB HBM3").
std::string memory_in_name(const std::vector<std::string>& words) {
  for (const auto& w : words)
    if (starts_with(w, "hbm") || starts_with(w, "gddr")) return w;
  return "";
}

}  // namespace

DatasheetMatch explain_match(const std::string& name, std::uint64_t memory_bytes, int sms) {
  DatasheetMatch m;
  const auto words = name_words(name);
  const std::set<std::string> wordset(words.begin(), words.end());
  const std::string form = form_in_name(words);
  const std::string mem_word = memory_in_name(words);
  const double gib = memory_bytes / double(1ull << 30);

  std::vector<const Datasheet*> ok;
  for (const auto& d : datasheets()) {
    bool family = !d.name_tokens.empty();
    for (const auto& t : d.name_tokens) family = family && wordset.count(t);
    if (!family) continue;  // a different product: not worth listing
    std::vector<std::string> against;
    if (!form.empty() && form != d.form_token)
      against.push_back(fmt::format("the name says {}, the entry is {}", form, d.form_factor));
    // NVL boards always carry "NVL" in their driver name ("NVIDIA H200 NVL"),
    // while the SXM boards' names state no form factor ("NVIDIA H200").
    if (form.empty() && d.form_token == "nvl") against.push_back("the name does not say NVL");
    if (!mem_word.empty() && mem_word != to_lower(d.memory_type))
      against.push_back(fmt::format("the name says {}, the entry has {}", mem_word, d.memory_type));
    if (sms > 0 && d.sms > 0 && sms != d.sms) against.push_back(fmt::format("{} SMs, this GPU has {}", d.sms, sms));
    // Drivers report a little less than the printed size (ECC, reserved memory).
    if (memory_bytes > 0 && (gib < 0.85 * d.memory_gb || gib > 1.06 * d.memory_gb))
      against.push_back(fmt::format("{:g} GB of memory, this GPU has {:.1f} GiB", d.memory_gb, gib));
    if (against.empty())
      ok.push_back(&d);
    else
      m.rejected.push_back(d.id + ": " + join(against, "; "));
  }

  m.fits = ok;
  if (ok.size() == 1) {
    const Datasheet& d = *ok[0];
    std::vector<std::string> why;
    why.push_back(fmt::format("\"{}\" names the {}", name, join(d.name_tokens, " ")));
    if (!form.empty()) why.push_back("says " + form);
    if (sms > 0) why.push_back(fmt::format("{} SMs", sms));
    if (memory_bytes > 0) why.push_back(fmt::format("{:.1f} GiB fits {:g} GB", gib, d.memory_gb));
    m.entry = &d;
    m.reason = join(why, ", ");
  } else if (ok.empty()) {
    m.reason = m.rejected.empty() ? fmt::format("no datasheet entry names \"{}\"", name)
                                  : fmt::format("\"{}\" names a known product but no variant fits", name);
  } else {
    std::vector<std::string> ids;
    for (auto* d : ok) ids.push_back(d->id);
    m.reason = fmt::format("ambiguous: {} all fit \"{}\"; no entry chosen", join(ids, ", "), name);
  }
  return m;
}

DatasheetMatch explain_match(const GpuInfo& gpu) { return explain_match(gpu.name, gpu.memory_bytes, gpu.sms); }

const Datasheet* match_datasheet(const GpuInfo& gpu) { return explain_match(gpu).entry; }

}  // namespace roofline::hw
