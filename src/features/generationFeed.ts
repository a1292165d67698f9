// A generation's steps on their way to its heads page. The page is made as the run starts and
// may be ready only after the first steps (a new webview takes a second or more): the feed keeps
// the prompt, its attention and every step with its attention row while the run goes on, hands
// the page all of it on `attach`, then each as it comes — the page's model view and head view grow
// from them. When the run ends they are let go: the page then has the run's stack to ask.
import type { AttentionRow, GenerationStepInfo, HostToHeadsView, PromptAttention } from '../protocol';
import type { GenerationProgress } from '../worker/client';

export class GenerationFeed {
  private prompt: Extract<HostToHeadsView, { type: 'generating' }> | undefined;
  private promptAttention: PromptAttention | undefined;
  private steps: { step: GenerationStepInfo; row: AttentionRow; computedAt: number }[] = [];
  private post: ((message: HostToHeadsView) => void) | undefined;
  private ended = false;

  constructor(private readonly stopRun: () => void) {}

  receive(progress: GenerationProgress): void {
    if (progress.type === 'modelGenerating') {
      this.prompt = { type: 'generating', prompt: progress.prompt, maxNewTokens: progress.maxNewTokens };
      this.post?.(this.prompt);
    } else if (progress.type === 'modelPrompt') {
      this.promptAttention = progress.attention;
      this.post?.({ type: 'generationPrompt', attention: progress.attention });
    } else {
      const { step, row, computedAt } = progress;
      this.steps.push({ step, row, computedAt });
      this.post?.({ type: 'generationStep', step, row, computedAt });
    }
  }

  /** The page is ready: what came so far, then each as it comes. */
  attach(post: (message: HostToHeadsView) => void): void {
    this.post = post;
    if (this.prompt) post(this.prompt);
    if (this.promptAttention) post({ type: 'generationPrompt', attention: this.promptAttention });
    for (const { step, row, computedAt } of this.steps) post({ type: 'generationStep', step, row, computedAt });
  }

  detach(): void {
    this.post = undefined;
  }

  /** The run ended (done, stopped, failed or cancelled): Stop no longer reaches it, and its rows are the run's to answer. */
  end(): void {
    this.ended = true;
    this.promptAttention = undefined;
    this.steps = [];
  }

  /** The page's Stop: the generation ends after its current step, keeping what it made. */
  stop(): void {
    if (!this.ended) this.stopRun();
  }
}
