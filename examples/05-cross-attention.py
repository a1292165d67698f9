# Cross-attention: 2 decoder queries attend over 3 encoder states.
# Q comes from the decoder (X); K and V come from the encoder output (context), so the weights
# matrix is 2×3 — not square. This is the "encoder–decoder attention" of the original Transformer.
#
# What to look at: each weights row is a distribution over the three *source* words; "chat"
# should lean on "cat".
import numpy as np

# attention: name="Cross-attention" score=scaled_dot
tokens = ["le", "chat"]
key_tokens = ["the", "cat", "sat"]

X = np.array([[1.0, 0.0, 0.5],
              [0.0, 1.0, 0.5]])

context = np.array([[1.0, 0.0, 0.0],
                    [0.0, 1.0, 0.0],
                    [0.0, 0.0, 1.0]])

W_Q = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
W_K = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
W_V = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
