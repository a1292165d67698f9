// A generation's steps on their way to its heads page. The page is made as the run starts and
// may be ready only after the first steps (a new webview takes a second or more): the feed keeps
// the prompt and every step's token and candidates, and the latest step's attention row, and
// hands the page all of it on `attach`, then each step as it comes. Only the latest row is kept:
// the page draws the row of the step it shows, and asks the worker for any other once the run ends.
import type { AttentionRow, GenerationStepInfo, HostToHeadsView } from '../protocol';
import type { GenerationProgress } from '../worker/client';

export class GenerationFeed {
  private prompt: Extract<HostToHeadsView, { type: 'generating' }> | undefined;
  private readonly steps: { step: GenerationStepInfo; computedAt: number }[] = [];
  private latestRow: AttentionRow | undefined;
  private post: ((message: HostToHeadsView) => void) | undefined;
  private ended = false;

  constructor(private readonly stopRun: () => void) {}

  receive(progress: GenerationProgress): void {
    if (progress.type === 'modelGenerating') {
      this.prompt = { type: 'generating', prompt: progress.prompt, maxNewTokens: progress.maxNewTokens };
      this.post?.(this.prompt);
      return;
    }
    const { step, row, computedAt } = progress;
    this.steps.push({ step, computedAt });
    this.latestRow = row;
    this.post?.({ type: 'generationStep', step, row, computedAt });
  }

  /** The page is ready: what came so far, then each step as it comes. */
  attach(post: (message: HostToHeadsView) => void): void {
    this.post = post;
    if (this.prompt) post(this.prompt);
    this.steps.forEach(({ step, computedAt }, index) => post({ type: 'generationStep', step, computedAt, ...(index === this.steps.length - 1 && this.latestRow ? { row: this.latestRow } : {}) }));
  }

  detach(): void {
    this.post = undefined;
  }

  /** The run ended (done, stopped, failed or cancelled): Stop no longer reaches it. */
  end(): void {
    this.ended = true;
  }

  /** The page's Stop: the generation ends after its current step, keeping what it made. */
  stop(): void {
    if (!this.ended) this.stopRun();
  }
}
