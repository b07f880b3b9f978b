"""torchvision's classification models as a user's model.py (model: {name: python}), for the zoo
(bench/zoo.sh): build(name, **kwargs) is torchvision.models.<name>(**kwargs), with the settings a
training step needs (GoogLeNet and Inception v3 without their auxiliary heads, which return a
tuple in training)."""
import torchvision

TRAINING = {"googlenet": {"aux_logits": False, "init_weights": True},
            "inception_v3": {"aux_logits": False, "init_weights": True}}


def build(name: str = "resnet50", num_classes: int = 1000, **kwargs):
    return getattr(torchvision.models, name)(num_classes=num_classes, **{**TRAINING.get(name, {}), **kwargs})
