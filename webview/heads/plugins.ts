// Views other modules add to the heads page (head scores, rollout, comparisons: issue 27). Each
// gets its own tab and section, the stack's info, the page's requests to the host, and a way to
// open a head as the model view does. Add a module to HEADS_PLUGINS; its messages are added to
// HostToHeadsView / HeadsViewToHost in src/protocol.ts (and to parseHeadsViewMessage).
import type { HeadsViewToHost, HostToHeadsView, StackInfo } from '../../src/protocol';
import { probePlugin } from './probe';
import { scoresPlugin } from './scores';

export interface HeadsPageContext {
  info: StackInfo;
  post(message: HeadsViewToHost): void;
  /** Opens a head as a click in the model view does. */
  openHead(layer: number, head: number): void;
}

export interface HeadsPlugin {
  /** The tab's label, and its section's id suffix (`heads-<id>`). */
  id: string;
  title: string;
  /** Called once per stack shown, with an empty section to fill. */
  mount(section: HTMLElement, context: HeadsPageContext): void;
  /** Every message from the host; return true when it was this plugin's. */
  receive?(message: HostToHeadsView): boolean;
}

export const HEADS_PLUGINS: HeadsPlugin[] = [scoresPlugin, probePlugin];
