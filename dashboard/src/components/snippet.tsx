// A block of code to paste somewhere, with its copy button.
import type { ComponentChildren } from 'preact';
import { CopyButton } from '../ui';

export function Snippet({
  title,
  code,
  note,
  label,
}: {
  title: string;
  code: string;
  note?: ComponentChildren;
  label?: string;
}) {
  return (
    <div class="stack">
      <div class="row">
        <h2>{title}</h2>
        <CopyButton text={code} label="Copy" name={`Copy ${label ?? title}`} what={title} />
      </div>
      {note && <p class="muted">{note}</p>}
      <pre class="snippet" tabIndex={0} aria-label={label ?? title}>
        {code}
      </pre>
    </div>
  );
}
