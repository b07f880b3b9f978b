"""A small CNN for 1x28x28 images (Fashion-MNIST's shape), as a user brings a model: a builder
function, not a TorchScript file. experiments/python-model.yaml names it:

    model: {name: python, path: experiments/models/small_cnn.py, builder: build, kwargs: {num_classes: 10}}

`runx compile experiments/python-model.yaml` makes it into TorchScript (and, on a CUDA machine with
PyTorch 2.6+, compiles its training step for compiled_step); `runx experiments/python-model.yaml`
trains both. Editing this file makes another trial: runx identifies it by its content."""
import torch
from torch import nn


class SmallCnn(nn.Module):
    def __init__(self, in_channels: int, num_classes: int, width: int):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(in_channels, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 3, padding=1), nn.BatchNorm2d(2 * width), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )
        self.head = nn.Linear(2 * width, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.flatten(self.features(x), 1))


def build(num_classes: int = 10, width: int = 32, in_channels: int = 1) -> nn.Module:
    return SmallCnn(in_channels, num_classes, width)
