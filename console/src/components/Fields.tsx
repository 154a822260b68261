import { useId, type ReactNode } from 'react';
import type { FieldProblem } from '../http';

/** The problems the API reported for `name` (its own path or any path below it). */
export function problemsOf(problems: FieldProblem[] | undefined, name: string): string {
  return (problems ?? [])
    .filter((p) => p.path === name || p.path.startsWith(`${name}.`))
    .map((p) => (p.path === name ? p.message : `${p.path.slice(name.length + 1)}: ${p.message}`))
    .join('; ');
}

interface FieldProps {
  label: string;
  name: string;
  problems?: FieldProblem[];
  hint?: string;
  children: (props: { id: string; name: string; 'aria-invalid': boolean; 'aria-describedby'?: string }) => ReactNode;
}

/** A labelled control with its hint and the API's error for it (aria-describedby). */
export function Field({ label, name, problems, hint, children }: FieldProps) {
  const id = useId();
  const error = problemsOf(problems, name);
  const described = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(' ') || undefined;
  return (
    <div className={`field${error ? ' field-invalid' : ''}`}>
      <label htmlFor={id}>{label}</label>
      {children({ id, name, 'aria-invalid': !!error, 'aria-describedby': described })}
      {hint && (
        <small id={`${id}-hint`} className="hint">
          {hint}
        </small>
      )}
      {error && (
        <small id={`${id}-error`} className="field-error">
          {error}
        </small>
      )}
    </div>
  );
}

export function TextField(
  props: Omit<FieldProps, 'children'> & {
    value: string;
    onChange: (v: string) => void;
    type?: string;
    required?: boolean;
    placeholder?: string;
    autoComplete?: string;
  },
) {
  const { value, onChange, type = 'text', required, placeholder, autoComplete, ...field } = props;
  return (
    <Field {...field}>
      {(a) => (
        <input
          {...a}
          type={type}
          value={value}
          required={required}
          placeholder={placeholder}
          autoComplete={autoComplete}
          onChange={(e) => onChange(e.target.value)}
        />
      )}
    </Field>
  );
}

export function TextArea(
  props: Omit<FieldProps, 'children'> & {
    value: string;
    onChange: (v: string) => void;
    rows?: number;
    required?: boolean;
  },
) {
  const { value, onChange, rows = 3, required, ...field } = props;
  return (
    <Field {...field}>
      {(a) => (
        <textarea {...a} rows={rows} value={value} required={required} onChange={(e) => onChange(e.target.value)} />
      )}
    </Field>
  );
}

export function SelectField(
  props: Omit<FieldProps, 'children'> & {
    value: string;
    onChange: (v: string) => void;
    options: readonly string[];
    /** The label of the empty choice ("any"); absent = no empty choice. */
    any?: string;
  },
) {
  const { value, onChange, options, any, ...field } = props;
  return (
    <Field {...field}>
      {(a) => (
        <select {...a} value={value} onChange={(e) => onChange(e.target.value)}>
          {any !== undefined && <option value="">{any}</option>}
          {options.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}
