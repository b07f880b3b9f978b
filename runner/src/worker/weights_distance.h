#pragma once
// How far apart two trained models are, read from the weights files export writes (weights.pt: a
// TorchScript archive of the parameters and buffers). Prints nothing.
#include <string>

namespace runx::engine {

/// sqrt(sum |a - b|^2) / sqrt(sum |a - w0|^2) over the floating parameters: the distance of `b`
/// from `a` as a share of what training changed from `w0` (the initial weights) to `a`. Summed in
/// double. 0 when a and b are equal; infinite when a equals w0 and b does not. Throws
/// std::runtime_error when a file cannot be read or the three do not hold the same parameters.
double UpdateRelativeDistance(const std::string& a, const std::string& b, const std::string& w0);

}  // namespace runx::engine
