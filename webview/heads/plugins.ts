// Views other modules add to the heads page (head scores, rollout, comparisons: issue 27). Each
// gets its own tab and section, the stack's info, the page's requests to the host, and a way to
// open a head as the model view does. Add a module to HEADS_PLUGINS; its messages are added to
// HostToHeadsView / HeadsViewToHost in src/protocol.ts (and to parseHeadsViewMessage).
import { alignmentPlugin } from './alignment';
import { comparePlugin } from './compare';
import { expertsPlugin } from './experts';
import { picturePlugin } from './picture';
import type { HeadsPlugin } from './plugin';
import { probePlugin } from './probe';
import { scoresPlugin } from './scores';

export const HEADS_PLUGINS: HeadsPlugin[] = [alignmentPlugin, picturePlugin, scoresPlugin, probePlugin, comparePlugin, expertsPlugin];
