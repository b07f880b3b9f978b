// The gpt model: shapes, causality, tied weights, the attention paths against a reference written
// out position by position, bf16 autocast, and the samples it refuses.
#include "models/gpt.h"

#include <cmath>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "runx/compat.h"
#include "trial/build.h"

namespace runx::models {
namespace {

SampleSpec Tokens(int64_t seq_len, int64_t vocab) { return {{seq_len}, c10::kLong, {seq_len}, c10::kLong, vocab}; }

std::shared_ptr<Gpt> Tiny(int64_t vocab = 32, int64_t seq_len = 12, double dropout = 0.0) {
  torch::manual_seed(0);
  auto m = BuildModel({{"name", "gpt"}, {"n_layer", 2}, {"n_head", 2}, {"d_model", 16}, {"dropout", dropout}},
                      Tokens(seq_len, vocab));
  return std::dynamic_pointer_cast<Gpt>(m);
}

/// Causal attention computed one query at a time: softmax over the keys up to it, in double.
torch::Tensor Reference(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  const auto qd = q.to(torch::kDouble), kd = k.to(torch::kDouble), vd = v.to(torch::kDouble);
  const int64_t t = q.size(-2);
  std::vector<torch::Tensor> rows;
  for (int64_t i = 0; i < t; ++i) {
    const auto keys = kd.narrow(-2, 0, i + 1), values = vd.narrow(-2, 0, i + 1);
    const auto scores = torch::matmul(qd.narrow(-2, i, 1), keys.transpose(-2, -1)) / std::sqrt(double(q.size(-1)));
    rows.push_back(torch::matmul(torch::softmax(scores, -1), values));
  }
  return torch::cat(rows, -2);
}

TEST(Gpt, LogitsForEveryPosition) {
  auto m = Tiny();
  ASSERT_NE(m, nullptr);
  torch::NoGradGuard no_grad;
  const auto x = torch::randint(32, {3, 12}, torch::kLong);
  EXPECT_EQ(m->forward(x).sizes(), (c10::IntArrayRef{3, 12, 32}));
  EXPECT_EQ(m->forward(x.narrow(1, 0, 5)).sizes(), (c10::IntArrayRef{3, 5, 32}));  // shorter than block_size
  EXPECT_EQ(m->forward(x.to(torch::kInt)).sizes(), (c10::IntArrayRef{3, 12, 32}));
  // Embeddings V*d + block*d, per block 12 d^2 + 13 d, the final LayerNorm 2d; no separate output layer.
  const int64_t d = 16;
  EXPECT_EQ(ParameterCount(*m), 32 * d + 12 * d + 2 * (12 * d * d + 13 * d) + 2 * d);
}

TEST(Gpt, ALaterTokenDoesNotChangeEarlierLogits) {
  auto m = Tiny();
  m->eval();
  torch::NoGradGuard no_grad;
  const auto x = torch::randint(32, {2, 12}, torch::kLong);
  auto y = x.clone();
  y.select(1, 7).add_(1).remainder_(32);  // position 7 changes
  const auto a = m->forward(x), b = m->forward(y);
  EXPECT_TRUE(torch::equal(a.narrow(1, 0, 7), b.narrow(1, 0, 7)));
  EXPECT_GT((a.narrow(1, 7, 5) - b.narrow(1, 7, 5)).abs().max().item<double>(), 1e-4);
}

TEST(Gpt, TheOutputProjectionIsTheTokenEmbedding) {
  auto m = Tiny(32, 12);
  const auto params = m->named_parameters();
  ASSERT_TRUE(params.contains("tok_emb.weight"));
  EXPECT_TRUE(m->token_embedding().is_same(params["tok_emb.weight"]));
  for (const auto& p : params)  // the only [vocab, d_model] tensor: no untied output layer
    if (p.key() != "tok_emb.weight") EXPECT_NE(p.value().sizes(), (c10::IntArrayRef{32, 16})) << p.key();
  // Tokens absent from the input still get gradient: through the output projection only.
  const auto x = torch::randint(16, {2, 12}, torch::kLong);  // ids 0..15 in, 16..31 absent
  const auto y = torch::randint(32, {2, 12}, torch::kLong);
  engine::CrossEntropy(m->forward(x), y).backward();
  const auto grad = m->token_embedding().grad();
  ASSERT_TRUE(grad.defined());
  EXPECT_GT(grad.narrow(0, 16, 16).abs().sum().item<double>(), 0.0);
  // And a step moves the logits through the same tensor: scaling the embedding scales them.
  torch::NoGradGuard no_grad;
  m->eval();
  const auto before = m->forward(x);
  m->token_embedding().mul_(2.0);
  const auto after = m->forward(x);
  EXPECT_FALSE(torch::allclose(before, after));
}

TEST(Gpt, MaskedAttentionMatchesTheReference) {
  torch::manual_seed(1);
  const auto q = torch::randn({2, 3, 9, 8}), k = torch::randn({2, 3, 9, 8}), v = torch::randn({2, 3, 9, 8});
  const auto want = Reference(q, k, v);
  EXPECT_TRUE(torch::allclose(compat::MaskedCausalAttention(q, k, v).to(torch::kDouble), want, 1e-5, 1e-5));
  // The path gpt takes: the fused kernel on LibTorch >= 2.0, the masked softmax before.
  EXPECT_TRUE(torch::allclose(compat::CausalAttention(q, k, v).to(torch::kDouble), want, 1e-5, 1e-5))
      << "fused attention: " << compat::kHasFusedAttention;
  // bf16 inputs (as under autocast): bf16 out, within bf16's precision.
  const auto low = compat::CausalAttention(q.to(torch::kBFloat16), k.to(torch::kBFloat16), v.to(torch::kBFloat16));
  EXPECT_EQ(low.scalar_type(), torch::kBFloat16);
  EXPECT_LT((low.to(torch::kDouble) - want).abs().max().item<double>(), 0.05);
}

TEST(Gpt, AttentionDropoutOnlyWhenAsked) {
  torch::manual_seed(2);
  const auto q = torch::randn({1, 1, 6, 4}), k = torch::randn({1, 1, 6, 4}), v = torch::randn({1, 1, 6, 4});
  EXPECT_TRUE(torch::equal(compat::MaskedCausalAttention(q, k, v, 0.0), compat::MaskedCausalAttention(q, k, v, 0.0)));
  EXPECT_FALSE(torch::allclose(compat::MaskedCausalAttention(q, k, v, 0.5), compat::MaskedCausalAttention(q, k, v)));
  auto m = Tiny(32, 12, 0.3);
  const auto x = torch::randint(32, {2, 12}, torch::kLong);
  torch::NoGradGuard no_grad;
  m->eval();
  EXPECT_TRUE(torch::equal(m->forward(x), m->forward(x)));  // eval: no dropout
  m->train();
  EXPECT_FALSE(torch::equal(m->forward(x), m->forward(x)));
}

TEST(Gpt, TrainsUnderBf16Autocast) {
  auto m = Tiny(16, 8);
  torch::optim::AdamW opt(m->parameters(), torch::optim::AdamWOptions(1e-2));
  // A sequence the model can learn: each token is the previous plus one.
  const auto x = torch::arange(0, 8, torch::kLong).unsqueeze(0).repeat({4, 1}).add(torch::arange(4).unsqueeze(1));
  const auto y = (x + 1).remainder(16);
  double first = 0, last = 0;
  for (int step = 0; step < 40; ++step) {
    torch::Tensor logits, loss;
    {
      compat::AutocastScope autocast(c10::DeviceType::CPU, c10::kBFloat16);
      logits = m->forward(x.remainder(16));
      loss = engine::CrossEntropy(logits, y);
    }
    if (step == 0) {
      EXPECT_EQ(logits.scalar_type(), torch::kBFloat16);  // the matmuls ran in bf16
      first = loss.item<double>();
    }
    last = loss.item<double>();
    ASSERT_TRUE(std::isfinite(last)) << step;
    opt.zero_grad();
    loss.backward();
    for (const auto& p : m->parameters()) ASSERT_EQ(p.grad().scalar_type(), torch::kFloat);  // fp32 master weights
    opt.step();
  }
  EXPECT_LT(last, first - 1.0) << "first " << first << ", last " << last;
}

TEST(Gpt, RefusesWhatItCannotRead) {
  const auto err = [](const nlohmann::json& model, const SampleSpec& spec) {
    try {
      BuildModel(model, spec);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(err({{"name", "gpt"}}, SampleSpec{{3, 8, 8}, c10::kFloat, {}, c10::kLong, 10}),
            "model 'gpt' needs token ids [seq_len] (data.source: text), got Float samples of 3 dimension(s)");
  EXPECT_EQ(
      err({{"name", "mlp"}}, Tokens(16, 256)),
      "model 'mlp' reads float samples, and the data gives token ids (Long); use model 'gpt' or a TorchScript model");
  EXPECT_EQ(err({{"name", "gpt"}, {"block_size", 8}}, Tokens(16, 256)),
            "model 'gpt': block_size 8 is shorter than the data's seq_len 16");
  EXPECT_EQ(err({{"name", "gpt"}, {"d_model", 10}, {"n_head", 4}}, Tokens(16, 256)),
            "model 'gpt': d_model 10 is not a multiple of n_head 4");
  auto m = Tiny();
  EXPECT_THROW(m->forward(torch::randn({2, 12})), std::invalid_argument);
  EXPECT_THROW(m->forward(torch::zeros({2, 13}, torch::kLong)), std::invalid_argument);  // longer than block_size
}

}  // namespace
}  // namespace runx::models
