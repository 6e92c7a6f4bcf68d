import { streamingSuite } from './streaming.js';

streamingSuite('local');
