import type { CallbackSender } from './callbacks';
import type { Settings } from './settings';
import type { State } from './state';

/** What a Daraja API handler works with: the settings, the state and the callback sender. */
export interface Context {
  readonly settings: Settings;
  readonly state: State;
  readonly callbacks: CallbackSender;
}

/** The simulator's clock as ISO 8601. */
export const isoNow = (ctx: Context): string => ctx.settings.now().toISOString();
