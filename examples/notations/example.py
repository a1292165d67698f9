# One problem, five notations — Python (numpy / PyTorch spellings).
# What to look at: numbers written as `5e-1`, `float('-inf')`, `-np.inf` and a torch tensor with
# a dtype are read exactly like the plain lists of the Markdown note; the result is identical.
import math

import numpy as np
import torch

# attention: name="One problem, five notations"
tokens = ["the", "cat", "sat"]

X = np.array([
    [1.0, 0.0, 1.0, 0.0],
    [0.0, 2.0, 0.0, 1.0],
    [1.0, 1.0, 5e-1, 0.0],
])

W_Q = torch.tensor([[0.5, 0], [0, 1], [1, 0], [0, -1]], dtype=torch.float64)
W_K = np.array([[1, 0], [0, 0.5], [0, 1], [1, 0]])
W_V = np.array([[1, 2], [0, 1], [-1, 0], [2, 0]])

M = np.array([[0, float('-inf'), -np.inf],
              [0, 0, -math.inf],
              [0, 0, 0]])
