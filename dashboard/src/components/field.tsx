// Form fields of the design system: a label, the control (the native input, select or textarea,
// drawn by base.css), and a hint under it tied by aria-describedby.
import type { ComponentChildren, InputHTMLAttributes, SelectHTMLAttributes } from 'preact';

export function Field(props: {
  id: string;
  label: ComponentChildren;
  hint?: ComponentChildren;
  children: ComponentChildren;
}) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      {props.children}
      {props.hint && (
        <span class="hint" id={`${props.id}-hint`}>
          {props.hint}
        </span>
      )}
    </div>
  );
}

export function Input(props: InputHTMLAttributes<HTMLInputElement>) {
  return <input {...props} />;
}

export function Select(props: SelectHTMLAttributes<HTMLSelectElement> & { options: Array<string | [string, string]> }) {
  const { options, ...rest } = props;
  return (
    <select {...rest}>
      {options.map((o: string | [string, string]) => {
        const [value, label] = typeof o === 'string' ? [o, o] : o;
        return (
          <option key={value} value={value}>
            {label}
          </option>
        );
      })}
    </select>
  );
}
