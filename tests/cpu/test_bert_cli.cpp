// roofline bench bert-base on the CPU: a cell measured and stored, the answer
// span of a question with a checkpoint folder (the tiny golden model and a
// vocabulary of its 120 word pieces), and bad input refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "roofline/engine/bert_bench.hpp"
#include "tests/support/cli.hpp"

using roofline::test::run_cli;
using roofline::test::TempDir;

namespace {
std::string tiny_dir() { return std::string(ROOFLINE_SOURCE_DIR) + "/tests/data/golden/bert-tiny"; }

// A checkpoint folder: the tiny golden model beside a vocab.txt of 120 pieces.
std::string checkpoint(const TempDir& dir) {
  const std::string d = dir.file("ckpt");
  std::filesystem::create_directories(d);
  for (const char* f : {"config.json", "model.safetensors"})
    std::filesystem::copy_file(tiny_dir() + "/" + f, d + "/" + f);
  std::ofstream v(d + "/vocab.txt");
  v << "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n.\n,\n?\nthe\nof\nin\nwhere\nwhat\nis\nwas\nfox\ndog\nlives\nforest\n";
  for (int i = 19; i < 120; ++i) v << "w" << i << "\n";
  return d;
}
}  // namespace

TEST(BertCli, ACpuCellIsMeasuredAndStored) {
  TempDir dir;
  const auto r = run_cli({"--db", dir.file("r.db"), "bench", "bert-base", "--device", "cpu", "--batch", "1", "--seq",
                          "16", "--steps", "2", "--warmup", "1", "--mode", "infer"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("bert-base s16"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("attention's own time"), std::string::npos) << r.out;
}

TEST(BertCli, ATrainingCellRunsTheFineTuningStep) {
  TempDir dir;
  const auto r = run_cli({"--db", dir.file("r.db"), "--json", "bench", "bert-base", "--device", "cpu", "--batch", "2",
                          "--seq", "16", "--steps", "2", "--warmup", "1", "--mode", "train", "--checkpoint",
                          tiny_dir()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"mode\": \"train\""), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\"mode\": \"infer\""), std::string::npos) << "--mode train ran inference cells too";
  EXPECT_EQ(r.out.find("\"cpu_train_ms\": null"), std::string::npos) << r.out;
}

TEST(BertCli, VariedLengthsAreTimedPaddedAndPacked) {
  TempDir dir;
  const auto r = run_cli({"--db", dir.file("r.db"), "bench", "bert-base", "--device", "cpu", "--batch", "4", "--seq",
                          "32", "--steps", "2", "--warmup", "1", "--lengths", "varied", "--checkpoint", tiny_dir()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("bert-base s32 varied "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bert-base s32 varied packed"), std::string::npos) << r.out;
  const auto lens = roofline::engine::bert_varied_lengths(32, 384);
  ASSERT_EQ(lens.size(), 32u);
  EXPECT_EQ(lens[0], 384);  // the padded length is --seq
  for (auto l : lens) {
    EXPECT_GE(l, 96);
    EXPECT_LE(l, 384);
  }
  EXPECT_NE(lens[1], lens[2]);
  const auto bad = run_cli({"bench", "mlp", "--device", "cpu", "--lengths", "varied"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--lengths"), std::string::npos) << bad.err;
}

TEST(BertCli, AQuestionGetsASpanOfItsContext) {
  TempDir dir;
  const std::string ckpt = checkpoint(dir);
  const std::string context = "the fox lives in the forest. the dog lives in w40 w41.";
  const auto r = run_cli({"--db", dir.file("r.db"), "--json", "bench", "bert-base", "--device", "cpu", "--checkpoint",
                          ckpt, "--question", "where lives the fox?", "--context", context});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto at = r.out.find("\"answer\"");
  ASSERT_NE(at, std::string::npos) << r.out;
  // Random weights answer anything, but always a span of the context.
  const auto v = r.out.find("\"value\":", at);
  ASSERT_NE(v, std::string::npos) << r.out;
  const auto q0 = r.out.find('"', v + 8), q1 = r.out.find('"', q0 + 1);
  const std::string answer = r.out.substr(q0 + 1, q1 - q0 - 1);
  EXPECT_FALSE(answer.empty()) << r.out;
  EXPECT_NE(context.find(answer), std::string::npos) << answer;
}

TEST(BertCli, BadInputIsRefused) {
  TempDir dir;
  const std::string ckpt = checkpoint(dir);
  auto fails = [&](std::vector<std::string> args, int code, const std::string& what) {
    args.insert(args.begin(), {"--db", dir.file("r.db")});
    const auto r = run_cli(args);
    EXPECT_EQ(r.exit_code, code) << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
  };
  fails({"bench", "bert-base", "--device", "cpu", "--question", "q?", "--context", "c."}, 2, "need --checkpoint");
  fails({"bench", "bert-base", "--device", "cpu", "--checkpoint", ckpt, "--question", " ", "--context", "c."}, 3,
        "question");
  fails({"bench", "bert-base", "--device", "cpu", "--seq", "600", "--batch", "1"}, 2, "to the model's 512 positions");
  fails({"bench", "resnet18", "--device", "cpu", "--seq", "128"}, 2, "are for bert-base");
  std::filesystem::remove(ckpt + "/vocab.txt");
  fails({"bench", "bert-base", "--device", "cpu", "--checkpoint", ckpt, "--question", "q?", "--context", "c."}, 3,
        "vocab.txt");
  std::ofstream(ckpt + "/config.json") << "{\"model_type\": \"gpt2\"}";
  fails({"bench", "bert-base", "--device", "cpu", "--checkpoint", ckpt, "--batch", "1", "--seq", "8"}, 3, "gpt2");
}
