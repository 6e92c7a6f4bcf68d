import { streamingSuite } from './streaming.js';

streamingSuite('s3');
