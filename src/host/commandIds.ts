// Command ids, as declared in package.json `contributes.commands`.
export const COMMANDS = {
  runFile: 'attentionLens.runFile',
  runProblem: 'attentionLens.runProblem',
  showPanel: 'attentionLens.showPanel',
  insertExample: 'attentionLens.insertExample',
  setOptions: 'attentionLens.setOptions',
  exportResults: 'attentionLens.exportResults',
  toggleLiveUpdate: 'attentionLens.toggleLiveUpdate',
  showTensorAttention: 'attentionLens.showTensorAttention',
  showDebugAttention: 'attentionLens.showDebugAttention',
  openExampleNotebook: 'attentionLens.openExampleNotebook',
  runModel: 'attentionLens.runModel',
  /** A causal model writes after a text `(folder?: string | Uri, request?: GenerateCommandRequest)`: palette, config.json CodeLens, `generate=N` directive. */
  generate: 'attentionLens.generate',
  /** A vision model on a picture `(image?: Uri, folder?: string | Uri)`: the explorer's menu on an image, the CodeLens on a vision config.json. */
  runVisionOnImage: 'attentionLens.runVisionOnImage',
  /** Lets every model the worker keeps resident go (features/residentModels.ts). */
  releaseModels: 'attentionLens.releaseModels',
  openModelHead: 'attentionLens.openModelHead',
  showHeads: 'attentionLens.showHeads',
  /** Internal: the heads views of a model run `(run: number, folder: string)`. */
  showModelHeads: 'attentionLens.showModelHeads',
  /** Internal: the induction probe on a model run's model `(run?, repeat?, seed?)`. */
  runInductionProbe: 'attentionLens.runInductionProbe',
} as const;
