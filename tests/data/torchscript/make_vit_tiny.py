"""Writes vit_tiny_traced.pt, the test suite's TorchScript file of a model nobody here wrote:
torchvision's VisionTransformer (patch embedding, class token, LayerNorm, multi-head attention,
GELU MLP) at a tiny size, traced with torch.jit.trace in training mode on the CPU, as a user would.

    /usr/bin/python3 tests/data/torchscript/make_vit_tiny.py   # Debian's python3-torchvision

Input [batch, 3, 16, 16] -> logits [batch, 10]. The trace computes the patch grid and the
attention heads' shapes from the input's size with tensors (aten::size -> prim::NumToTensor ->
aten::floor_divide / aten::mul with 0-dim integer tensor constants -> aten::Int): the shape
arithmetic runx keeps on the host (tests/unit/torchscript_test.cc).
"""
import os
import torch
import torchvision

torch.manual_seed(0)
model = torchvision.models.VisionTransformer(image_size=16, patch_size=4, num_layers=2, num_heads=2,
                                             hidden_dim=16, mlp_dim=32, num_classes=10).train()
traced = torch.jit.trace(model, torch.randn(2, 3, 16, 16), check_trace=False)
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vit_tiny_traced.pt")
torch.jit.save(traced, out)
consts = [n for n in traced.inlined_graph.nodes()
          if n.kind() == "prim::Constant" and n.output().type().kind() == "TensorType"]
print(out, os.path.getsize(out), "bytes;", len(consts), "tensor constants;",
      sum(p.numel() for p in model.parameters()), "parameters")
