// A generation's steps on their way to its heads page. The page is made as the run starts and
// may be ready only after the first steps (a new webview takes a second or more): until it is,
// the feed keeps the prompt, its attention and every step with its attention row, and hands the
// page all of it on `attach`; then each as it comes, the rows no longer kept here — the page holds
// them (its model view and head view grow from them), and a run's rows can be large (layers ×
// heads × the sequence's length² / 2 floats). The steps themselves stay, for a page made again.
import type { AttentionRow, GenerationStepInfo, HostToHeadsView, PromptAttention } from '../protocol';
import type { GenerationProgress } from '../worker/client';

export class GenerationFeed {
  private prompt: Extract<HostToHeadsView, { type: 'generating' }> | undefined;
  /** The prompt's attention and the steps' rows, until a page has them. */
  private promptAttention: PromptAttention | undefined;
  private readonly steps: { step: GenerationStepInfo; row?: AttentionRow; computedAt: number }[] = [];
  private post: ((message: HostToHeadsView) => void) | undefined;
  private ended = false;

  constructor(private readonly stopRun: () => void) {}

  receive(progress: GenerationProgress): void {
    if (progress.type === 'modelGenerating') {
      this.prompt = { type: 'generating', prompt: progress.prompt, maxNewTokens: progress.maxNewTokens, decoding: progress.decoding };
      this.post?.(this.prompt);
    } else if (progress.type === 'modelPrompt') {
      if (this.post) this.post({ type: 'generationPrompt', attention: progress.attention });
      else this.promptAttention = progress.attention;
    } else {
      const { step, row, computedAt } = progress;
      this.steps.push({ step, computedAt, ...(this.post ? {} : { row }) });
      this.post?.({ type: 'generationStep', step, row, computedAt });
    }
  }

  /** The page is ready: what came so far (the rows and the prompt's attention to the first page only), then each as it comes. */
  attach(post: (message: HostToHeadsView) => void): void {
    this.post = post;
    if (this.prompt) post(this.prompt);
    if (this.promptAttention) post({ type: 'generationPrompt', attention: this.promptAttention });
    this.promptAttention = undefined;
    for (const kept of this.steps) {
      const { step, row, computedAt } = kept;
      post({ type: 'generationStep', step, computedAt, ...(row ? { row } : {}) });
      delete kept.row;
    }
  }

  detach(): void {
    this.post = undefined;
  }

  /** The run ended (done, stopped, failed or cancelled): Stop no longer reaches it, and its rows are the run's to answer. */
  end(): void {
    this.ended = true;
    this.promptAttention = undefined;
    for (const kept of this.steps) delete kept.row;
  }

  /** The page's Stop: the generation ends after its current step, keeping what it made. */
  stop(): void {
    if (!this.ended) this.stopRun();
  }
}
