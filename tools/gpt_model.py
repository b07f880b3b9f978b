"""runx's gpt (runner/src/models/gpt.cc) written in PyTorch: the same module names, shapes,
initialisation and tied output weights, attention through scaled_dot_product_attention(is_causal=True),
exact GELU. Blocks are in a ModuleList here ("blocks.0"), registered flat in runx ("block0"):
compile_step.py renames them (runx_name).

Imported by compile_step.py (--model gpt, the package runx's compiled_step trains) and by the
PyTorch peer bench/peers/peer_gpt.py, so that both build the same model.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, heads, n_layer):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.attn_proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.mlp_proj = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        for l, std in ((self.qkv, 0.02), (self.attn_proj, 0.02 / math.sqrt(2 * n_layer)),
                       (self.fc, 0.02), (self.mlp_proj, 0.02 / math.sqrt(2 * n_layer))):
            nn.init.normal_(l.weight, 0.0, std); nn.init.zeros_(l.bias)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        heads = lambda y: y.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        y = F.scaled_dot_product_attention(heads(q), heads(k), heads(v), is_causal=True)
        x = x + self.attn_proj(y.transpose(1, 2).contiguous().view(b, t, d))
        return x + self.mlp_proj(F.gelu(self.fc(self.ln2(x))))


class Gpt(nn.Module):
    def __init__(self, vocab, block, n_layer, heads, d):
        super().__init__()
        self.tok_emb, self.pos_emb = nn.Embedding(vocab, d), nn.Embedding(block, d)
        nn.init.normal_(self.tok_emb.weight, 0.0, 0.02); nn.init.normal_(self.pos_emb.weight, 0.0, 0.02)
        self.blocks = nn.ModuleList(Block(d, heads, n_layer) for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(d)

    def forward(self, tokens):
        x = self.tok_emb(tokens) + self.pos_emb(torch.arange(tokens.size(1), device=tokens.device))
        for b in self.blocks:
            x = b(x)
        return F.linear(self.ln_f(x), self.tok_emb.weight)  # tied output weights
