import { ERRORS } from './catalogue.js';

/** docs/errors.md as generated from the catalogue (`npm run docs:errors`). */
export function renderErrorsDoc(): string {
  const rows = Object.entries(ERRORS)
    .map(([code, e]) => `| \`${code}\` | ${e.status} | ${e.message} | ${e.nextActions} |`)
    .join('\n');
  return `# Error codes

Every error answer of the API has the body \`{statusCode, error, message, nextActions}\`.
\`error\` is one of the codes below; the status follows from the code. \`message\` may be more
specific than the default shown here (it names the field, column or limit at fault), and
\`nextActions\` tells the caller what to do next. A 500 never carries internal detail: report
its \`X-Request-Id\` to the operator, whose log has the cause under that id.

This file is generated from \`src/errors/catalogue.ts\` by \`npm run docs:errors\`; a test fails
when the two differ.

| code | status | default message | next actions |
|---|---|---|---|
${rows}
`;
}
