// What a view added to the heads page is given and gives: its own tab and section, the stack's
// info, the page's requests to the host, and a way to open a head as the model view does. The
// registry (plugins.ts) lists the views; the views import only this.
import type { HeadsViewToHost, HostToHeadsView, StackInfo } from '../../src/protocol';

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
  /** Whether the stack has what this view shows (default: every stack). */
  shows?(info: StackInfo): boolean;
  /** Called once per stack shown, with an empty section to fill. */
  mount(section: HTMLElement, context: HeadsPageContext): void;
  /** Every message from the host; return true when it was this plugin's. */
  receive?(message: HostToHeadsView): boolean;
}
