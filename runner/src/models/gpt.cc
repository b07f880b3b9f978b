#include "models/gpt.h"

#include <cmath>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>

#include <torch/nn/init.h>
#include <torch/torch.h>

#include "runx/compat.h"

namespace runx::models {
namespace {

namespace nn = torch::nn;

/// GPT-2's initialisation: weights N(0, 0.02), biases 0; the projections back into the residual
/// stream N(0, 0.02 / sqrt(2 * n_layer)), so that the stream's variance does not grow with depth.
void InitLinear(nn::Linear& l, double std) {
  torch::NoGradGuard no_grad;
  nn::init::normal_(l->weight, 0.0, std);
  if (l->bias.defined()) nn::init::zeros_(l->bias);
}

constexpr double kInitStd = 0.02;

/// `l` applied through ATen's linear, not through nn::Linear's forward: the C++ frontend's
/// functional linear handles inputs of more than 2 dimensions as a matmul followed by `out +=
/// bias`, a separate broadcast add (in mixed precision a bf16 output plus an fp32 bias, the
/// slow dtype-casting elementwise kernel), where at::linear folds [batch, T, d] into one GEMM
/// with the bias in its epilogue and autocast casts the bias too. On the H200 the separate adds
/// cost gpt (8 layers, batch 256 x 256 tokens, bf16) 10.5 of its 51 ms a step.
torch::Tensor Apply(const nn::Linear& l, const torch::Tensor& x) { return torch::linear(x, l->weight, l->bias); }

std::string Text(int64_t v) { return std::to_string(v); }

}  // namespace

GptBlock::GptBlock(const GptOptions& o) : heads_(o.n_head), dropout_(o.dropout) {
  const int64_t d = o.d_model;
  ln1_ = register_module("ln1", nn::LayerNorm(nn::LayerNormOptions({d})));
  qkv_ = register_module("qkv", nn::Linear(d, 3 * d));
  attn_proj_ = register_module("attn_proj", nn::Linear(d, d));
  ln2_ = register_module("ln2", nn::LayerNorm(nn::LayerNormOptions({d})));
  fc_ = register_module("fc", nn::Linear(d, 4 * d));
  mlp_proj_ = register_module("mlp_proj", nn::Linear(4 * d, d));
  const double residual_std = kInitStd / std::sqrt(2.0 * static_cast<double>(o.n_layer));
  InitLinear(qkv_, kInitStd);
  InitLinear(attn_proj_, residual_std);
  InitLinear(fc_, kInitStd);
  InitLinear(mlp_proj_, residual_std);
}

torch::Tensor GptBlock::Attention(const torch::Tensor& x) {
  const int64_t b = x.size(0), t = x.size(1), d = x.size(2), hd = d / heads_;
  const auto qkv = Apply(qkv_, x).split(d, /*dim=*/2);
  // [B, T, D] -> [B, heads, T, head_dim]
  const auto heads = [&](const torch::Tensor& y) { return y.view({b, t, heads_, hd}).transpose(1, 2); };
  const double p = is_training() ? dropout_ : 0.0;
  auto y = compat::CausalAttention(heads(qkv[0]), heads(qkv[1]), heads(qkv[2]), p);
  y = y.transpose(1, 2).contiguous().view({b, t, d});
  return torch::dropout(Apply(attn_proj_, y), dropout_, is_training());
}

torch::Tensor GptBlock::forward(const torch::Tensor& x) {
  auto h = x + Attention(ln1_(x));
  return h + torch::dropout(Apply(mlp_proj_, torch::gelu(Apply(fc_, ln2_(h)))), dropout_, is_training());
}

Gpt::Gpt(const GptOptions& o) : o_(o) {
  const std::initializer_list<std::pair<const char*, int64_t>> sizes = {{"vocab_size", o.vocab_size},
                                                                        {"block_size", o.block_size},
                                                                        {"n_layer", o.n_layer},
                                                                        {"n_head", o.n_head},
                                                                        {"d_model", o.d_model}};
  for (const auto& [name, v] : sizes) {
    if (v < 1) throw std::invalid_argument("model 'gpt': " + std::string(name) + " must be positive, not " + Text(v));
  }
  if (o.d_model % o.n_head != 0)
    throw std::invalid_argument("model 'gpt': d_model " + Text(o.d_model) + " is not a multiple of n_head " +
                                Text(o.n_head));
  tok_ = register_module("tok_emb", nn::Embedding(o.vocab_size, o.d_model));
  pos_ = register_module("pos_emb", nn::Embedding(o.block_size, o.d_model));
  {
    torch::NoGradGuard no_grad;
    nn::init::normal_(tok_->weight, 0.0, kInitStd);
    nn::init::normal_(pos_->weight, 0.0, kInitStd);
  }
  for (int64_t i = 0; i < o.n_layer; ++i)
    blocks_.push_back(register_module("block" + Text(i), std::make_shared<GptBlock>(o)));
  ln_f_ = register_module("ln_f", nn::LayerNorm(nn::LayerNormOptions({o.d_model})));
}

torch::Tensor Gpt::forward(torch::Tensor tokens) {
  if (tokens.dim() != 2 || c10::isFloatingType(tokens.scalar_type()))
    throw std::invalid_argument("model 'gpt' takes integer token ids [batch, seq_len], got " +
                                std::string(c10::toString(tokens.scalar_type())) + " of " + Text(tokens.dim()) +
                                " dimension(s)");
  const int64_t t = tokens.size(1);
  if (t > o_.block_size)
    throw std::invalid_argument("model 'gpt': a sequence of " + Text(t) + " tokens is longer than its block_size " +
                                Text(o_.block_size));
  const auto positions = torch::arange(t, tokens.options().dtype(torch::kLong));
  auto x = torch::dropout(tok_(tokens) + pos_(positions), o_.dropout, is_training());
  for (auto& block : blocks_) x = block->forward(x);
  // Tied weights: the logits are the final states against every token's embedding.
  return torch::linear(ln_f_(x), tok_->weight);
}

std::shared_ptr<Model> MakeGpt(const nlohmann::json& model, const SampleSpec& input) {
  if (!input.tokens() || input.input_shape.size() != 1)
    throw std::invalid_argument("model 'gpt' needs token ids [seq_len] (data.source: text), got " +
                                std::string(c10::toString(input.input_dtype)) + " samples of " +
                                Text(static_cast<int64_t>(input.input_shape.size())) + " dimension(s)");
  GptOptions o;
  o.vocab_size = input.num_classes;
  o.block_size = model.value("block_size", input.input_shape[0]);
  if (o.block_size < input.input_shape[0])
    throw std::invalid_argument("model 'gpt': block_size " + Text(o.block_size) +
                                " is shorter than the data's seq_len " + Text(input.input_shape[0]));
  o.n_layer = model.value("n_layer", o.n_layer);
  o.n_head = model.value("n_head", o.n_head);
  o.d_model = model.value("d_model", o.d_model);
  o.dropout = model.value("dropout", o.dropout);
  return std::make_shared<Gpt>(o);
}

}  // namespace runx::models
