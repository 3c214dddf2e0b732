/**
 * The console in headless Chromium against `sluice serve` with the store on s3rver: the walk in
 * helpers/console-walk.ts, the steps that read the store.
 */
import { describeConsoleWalk } from '../helpers/console-walk.js';

describeConsoleWalk('s3');
