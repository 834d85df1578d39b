// roofline summary MODEL: a model's layers on paper (shapes, parameters, the
// exact FLOPs and bytes of each pass) beside the counts other tools and seed 001
// publish, each labelled with what it leaves out (engine/model_summary.hpp).
#include "roofline/engine/model_summary.hpp"

#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"
#include "src/cli/command.hpp"

namespace roofline::cli {

namespace {

class SummaryCommand : public Command {
 public:
  const char* name() const override { return "summary"; }
  const char* summary() const override {
    return "a model's layers on paper: shapes, parameters, FLOPs and bytes per pass, and the usual conventions";
  }
  void configure(CLI::App& sub) override {
    sub.add_option("model", model_, "simple-mlp, simple-cnn, ece408, alexnet, resnet18 or bert-base")->required();
    seq_opt_ = sub.add_option("--seq", seq_, "bert-base: tokens per sequence (a sample is a sequence)")
                   ->capture_default_str();
    sub.add_option("--batch", batch_, "batch size the costs are counted for")
        ->check(whole_number(1, 1 << 20))
        ->capture_default_str();
    sub.add_option("--precision", precision_,
                   "fp32, tf32, bf16 or fp16 (the networks: 16-bit activations halve their bytes)")
        ->capture_default_str();
  }
  // Paper figures, a function of (model, batch, precision) computed in
  // microseconds: nothing is measured, so nothing is stored (`bench --costs`
  // stores the same per-layer costs in `layers` beside a run's times).
  bool stores_results() const override { return false; }

  Report run(Invocation&) override {
    Report r("summary");
    if (seq_opt_->count() > 0 && to_lower(trim(model_)) != "bert-base")
      throw_usage("--seq is for bert-base", "drop --seq: the image models' samples are images");
    const auto s =
        engine::summarize_model(model_, batch_, engine::parse_precision(to_lower(trim(precision_))), seq_);
    engine::add_summary_tables(r, s);
    return r;
  }

 private:
  std::string model_;
  std::int64_t batch_ = 1, seq_ = 128;
  CLI::Option* seq_opt_ = nullptr;
  std::string precision_ = "fp32";
};

}  // namespace

ROOFLINE_COMMAND(SummaryCommand)

}  // namespace roofline::cli
