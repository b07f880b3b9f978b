#pragma once
// gpt: a decoder-only transformer over token ids (GPT-2's layout, as nanoGPT writes it): token and
// learned position embeddings, pre-LayerNorm blocks of causal self-attention and a GELU MLP, a
// final LayerNorm, and the output projection tied to the token embedding. Input [batch, T] integer
// token ids (T <= block_size), output logits [batch, T, vocab].
#include <cstdint>
#include <memory>
#include <vector>

#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/types.h>

#include "models/models.h"

namespace runx::models {

struct GptOptions {
  int64_t vocab_size = 256;
  int64_t block_size = 128;  ///< the longest context: rows of the position embedding
  int64_t n_layer = 4;
  int64_t n_head = 4;
  int64_t d_model = 128;  ///< a multiple of n_head
  double dropout = 0.0;   ///< after the embeddings, on attention weights, after each residual branch
};

/// One pre-LayerNorm block: x + attn(ln1(x)), then x + mlp(ln2(x)).
class GptBlock : public torch::nn::Module {
 public:
  explicit GptBlock(const GptOptions& o);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::Tensor Attention(const torch::Tensor& x);
  int64_t heads_;
  double dropout_;
  torch::nn::LayerNorm ln1_{nullptr}, ln2_{nullptr};
  torch::nn::Linear qkv_{nullptr}, attn_proj_{nullptr}, fc_{nullptr}, mlp_proj_{nullptr};
};

class Gpt : public Model {
 public:
  /// Throws std::invalid_argument when d_model is not a multiple of n_head or a size is not positive.
  explicit Gpt(const GptOptions& o);
  torch::Tensor forward(torch::Tensor tokens) override;
  const GptOptions& options() const { return o_; }
  /// The token embedding [vocab, d_model]; the output projection multiplies by this same tensor.
  const torch::Tensor& token_embedding() const { return tok_->weight; }

 private:
  GptOptions o_;
  torch::nn::Embedding tok_{nullptr}, pos_{nullptr};
  std::vector<std::shared_ptr<GptBlock>> blocks_;
  torch::nn::LayerNorm ln_f_{nullptr};
};

/// model: {name: gpt, ...} for token samples of `input` (input_shape [seq_len], vocabulary
/// num_classes): n_layer, n_head, d_model, dropout from `model`, block_size from `model` or else
/// seq_len. Throws std::invalid_argument for samples that are not token ids [seq_len] or a
/// block_size shorter than seq_len.
std::shared_ptr<Model> MakeGpt(const nlohmann::json& model, const SampleSpec& input);

}  // namespace runx::models
