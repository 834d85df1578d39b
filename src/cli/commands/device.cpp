// roofline device: the spec sheet of the CPU and each GPU, their theoretical
// peaks (dense and 2:4 sparse apart, CUDA cores and tensor cores apart, each
// with its source), which datasheet entry a GPU matched and why, the
// datasheet database, the GPU interconnect (NVLink or PCIe between each pair
// of GPUs), and the number-format table.
#include "src/cli/command.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/cuda/runtime.hpp"
#include "roofline/hardware/cpu_info.hpp"
#include "roofline/hardware/device_report.hpp"
#include "roofline/hardware/gpu_info.hpp"
#include "roofline/hardware/topology.hpp"

namespace roofline::cli {

namespace {

class DeviceCommand : public Command {
 public:
  const char* name() const override { return "device"; }
  const char* summary() const override {
    return "describe the CPU and GPUs: spec sheet, theoretical peaks (datasheet or derived), GPU interconnect, "
           "number formats";
  }
  void configure(CLI::App& sub) override {
    device_opt_ = sub.add_option("--device", device_, "cpu, gpu, gpu:N or all (comma-separated)")
                      ->check([](const std::string& s) {
                        try {
                          parse_devices(s);
                          return std::string();
                        } catch (const Error& e) {
                          return std::string(e.what()) + " (" + e.hint() + ")";
                        }
                      });
    sub.add_option("--datasheet", datasheet_, "show one datasheet entry (id or name, e.g. h100-sxm5-80gb)");
    sub.add_flag("--datasheets", list_, "list the datasheet database");
    sub.add_flag("--formats", formats_, "show the number-format table (also shown under the device sheets)");
  }
  // Only showing the database or the formats describes no device: no run to keep.
  bool stores_results() const override { return show_devices(); }

  Report run(Invocation& ctx) override {
    Report r("device");
    if (show_devices()) {
      DeviceChoice choice = parse_devices(device_);
      std::vector<int> gpus = resolve_gpus(choice);  // throws when a GPU named explicitly is absent
      if (choice.cpu) {
        hw::add_cpu_sheet(r, hw::query_cpu(), hw::measure_cpu_mhz());
        ctx.cpu_device_id();
      }
      if ((choice.all_gpus || !choice.gpus.empty()) && gpus.empty()) {
        Table& t = r.add(Table("gpus", "GPUs", Table::Layout::Properties));
        t.prop("gpu", "GPU", "no GPU: " + cuda::gpu_unavailable_reason());
      }
      std::vector<hw::GpuInfo> described;
      for (int g : gpus) {
        described.push_back(hw::query_gpu(g));
        hw::add_gpu_sheet(r, described.back());
        ctx.gpu_device_id(g);
      }
      hw::add_interconnect(r, described);  // two GPUs or more
    }
    if (list_) hw::add_datasheet_list(r);
    if (!datasheet_.empty()) hw::add_datasheet(r, datasheet_);
    if (formats_ || !listing_only()) hw::add_formats(r);
    return r;
  }

 private:
  bool listing_only() const { return list_ || !datasheet_.empty() || formats_; }
  bool show_devices() const { return !listing_only() || (device_opt_ && device_opt_->count() > 0); }

  std::string device_ = "all";
  CLI::Option* device_opt_ = nullptr;
  std::string datasheet_;
  bool list_ = false, formats_ = false;
};

}  // namespace

ROOFLINE_COMMAND(DeviceCommand)

}  // namespace roofline::cli
