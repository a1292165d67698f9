// The backward pass of loss = Σ dO ⊙ output (dO defaults to ones: loss = sum of the outputs),
// output being Concat(heads) · W_O (or the concat). Per head: dV = Aᵀ dO_h, dA = dO_h Vᵀ,
// dS through the softmax Jacobian, then the score function's own backward gives dQ and dK;
// the projections carry them back to dW_Q, dW_K, dW_V and to the input (and context).
import type { AttentionSpec, Gradients, HeadGradients, Matrix } from '../types';
import { addColumns, columns, filled, inDtype, matmulTransA, matmulTransB, softmaxBackward, zeros } from './kernels';
import { checkCancelled, type ForwardPass, type RunControl } from './attention';
import { requireShape } from './masks';
import { projectBackward } from './projections';
import { rotate, scoresGradient } from './variants';

export function backward(spec: AttentionSpec, pass: ForwardPass, control: RunControl): Gradients {
  const { dtype, output, concat, WO, projections } = pass;
  const dOut = spec.dO ? inDtype(spec.dO, dtype) : filled(output.rows, output.cols, 1, dtype);
  requireShape(dOut, output.rows, output.cols, 'dO');

  let dWO: Matrix | undefined;
  let dConcat = dOut;
  if (WO) {
    dWO = zeros(WO.rows, WO.cols, dtype);
    matmulTransA(dWO, concat, dOut);
    dConcat = zeros(concat.rows, concat.cols, dtype);
    matmulTransB(dConcat, dOut, WO);
  }

  const kHeads = projections.K.heads;
  const vHeads = projections.V.heads;
  const dK = kHeads.map((k) => zeros(k.rows, k.cols, dtype));
  const dV = vHeads.map((v) => zeros(v.rows, v.cols, dtype));
  const heads: HeadGradients[] = pass.heads.map((head, i) => {
    checkCancelled(control);
    const { weights: A, V, kvHead } = head;
    const dOHead = columns(dConcat, i * V.cols, V.cols);
    const dVHead = zeros(V.rows, V.cols, dtype);
    const dA = zeros(A.rows, A.cols, dtype);
    const dS = zeros(A.rows, A.cols, dtype);
    matmulTransA(dVHead, A, dOHead);
    matmulTransB(dA, dOHead, V);
    softmaxBackward(dS, A, dA);
    const { modifier, scores } = pass.internals[i];
    // dS is taken at the modified scores (the masks and ALiBi only add constants); the score
    // function wants it at the raw ones, and RoPE's rotation turns back to Q's and K's own axes.
    const dScores = modifier.scale === 1 && modifier.softcap === undefined ? dS : scoresGradient(dS, head.scaled, modifier, dtype);
    const turned = scores.backward(dScores);
    const rope = pass.rope;
    const dQ = rope ? rotate(turned.dQ, rope, pass.positions.firstQuery, dtype, -1) : turned.dQ;
    const dKHead = rope ? rotate(turned.dK, rope, 0, dtype, -1) : turned.dK;
    const grads: HeadGradients = { dQ, dK: dKHead, dV: dVHead, dA, dS };
    addColumns(dK[kvHead], grads.dK, 0);
    addColumns(dV[kvHead], grads.dV, 0);
    head.gradients = grads;
    return grads;
  });

  const input = pass.input;
  const dX = input && zeros(input.rows, input.cols, dtype);
  const dContext = pass.context && zeros(pass.context.rows, pass.context.cols, dtype);
  const dKVSource = dContext ?? dX;
  const gradients: Gradients = {
    heads,
    dWQ: projectBackward(projections.Q, heads.map((g) => g.dQ), dX, dtype),
    dWK: projectBackward(projections.K, dK, dKVSource, dtype),
    dWV: projectBackward(projections.V, dV, dKVSource, dtype),
    dWO,
  };
  // Inputs no gradient reached (precomputed Q, K and V) get none.
  if (dX && Object.values(projections).some((p) => p.source === input)) gradients.dX = dX;
  if (dContext) gradients.dContext = dContext;
  return gradients;
}
