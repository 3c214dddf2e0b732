/**
 * The console in headless Chromium against `sluice serve` with the store on a local directory: the walk in
 * helpers/console-walk.ts, every step.
 */
import { describeConsoleWalk } from '../helpers/console-walk.js';

describeConsoleWalk('local');
