/**
 * The console in headless Chromium against `sluice serve` with the store on s3rver: the walk in
 * helpers/console-walk.ts.
 */
import { describeConsoleWalk } from '../helpers/console-walk.js';

describeConsoleWalk('s3');
