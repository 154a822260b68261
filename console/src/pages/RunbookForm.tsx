import { useState, type FormEvent } from 'react';
import { ApiError, send, type FieldProblem } from '../http';
import { SelectField, TextArea, TextField, problemsOf } from '../components/Fields';
import { Page } from '../components/Layout';
import { ErrorMessage, Loading, StatusMessage } from '../components/Messages';
import { useAction } from '../components/useAction';
import { useApi } from '../queries';
import { href } from '../router';
import type { Runbook, RunbookSpec } from '../types';
import { RUNBOOK_CATEGORIES, SEVERITIES } from '../vocabulary';

const EMPTY: RunbookSpec = {
  category: 'custom',
  description: '',
  version: '1.0.0',
  automated: true,
  approvalRequired: false,
  severity: ['high'],
  targets: { signalTypes: [], resourceKinds: [] },
  steps: [{ type: 'RestartDeployment', params: {} }],
  maxAttempts: 3,
};

/** Create (`name` absent) or edit a runbook (admins); the API's validation errors land on the fields. */
export function RunbookForm({ name }: { name?: string }) {
  const existing = useApi<Runbook>(`/runbooks/${encodeURIComponent(name ?? '')}`, {}, { live: false, enabled: !!name });
  if (name && existing.isPending) return <Loading what={name} />;
  if (name && !existing.data) return <Page title={name}>{<ErrorMessage error={existing.error} />}</Page>;
  return <Editor name={name} initial={existing.data?.spec ?? EMPTY} />;
}

const list = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

function Editor({ name, initial }: { name?: string; initial: RunbookSpec }) {
  const [newName, setNewName] = useState('');
  const [spec, setSpec] = useState(initial);
  const [signalTypes, setSignalTypes] = useState(initial.targets.signalTypes.join(', '));
  const [resourceKinds, setResourceKinds] = useState(initial.targets.resourceKinds.join(', '));
  const [steps, setSteps] = useState(JSON.stringify(initial.steps, null, 2));
  const [stepsError, setStepsError] = useState('');
  const set = <K extends keyof RunbookSpec>(k: K, v: RunbookSpec[K]) => setSpec((s) => ({ ...s, [k]: v }));

  const save = useAction(
    (body: Record<string, unknown>) =>
      name
        ? send<Runbook>('PUT', `/runbooks/${encodeURIComponent(name)}`, body)
        : send<Runbook>('POST', '/runbooks', { name: newName, ...body }),
    (r) => `Runbook ${r.metadata.name} saved (version ${r.spec.version}).`,
  );
  const problems: FieldProblem[] = save.problems;
  const unplaced =
    save.error instanceof ApiError &&
    problems.filter((p) => !FIELDS.some((f) => p.path === f || p.path.startsWith(`${f}.`))).length > 0;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    let parsed: unknown;
    try {
      parsed = JSON.parse(steps);
      setStepsError('');
    } catch (err) {
      setStepsError(`steps: not valid JSON (${(err as Error).message})`);
      return;
    }
    const { verificationWindow, ...rest } = spec;
    save.run({
      ...rest,
      ...(verificationWindow ? { verificationWindow } : {}),
      targets: { signalTypes: list(signalTypes), resourceKinds: list(resourceKinds) },
      steps: parsed,
    });
  };

  const title = name ? `Edit runbook ${name}` : 'New runbook';
  return (
    <Page title={title}>
      <form className="card form" onSubmit={submit} aria-label={title} noValidate>
        {!name && (
          <TextField
            label="Name"
            name="name"
            value={newName}
            onChange={setNewName}
            problems={problems}
            hint="a DNS label, e.g. restart-checkout"
            required
          />
        )}
        <SelectField
          label="Category"
          name="category"
          value={spec.category}
          onChange={(v) => set('category', v)}
          options={RUNBOOK_CATEGORIES}
          problems={problems}
        />
        <TextArea
          label="Description"
          name="description"
          value={spec.description}
          onChange={(v) => set('description', v)}
          problems={problems}
          required
        />
        <TextField
          label="Version"
          name="version"
          value={spec.version}
          onChange={(v) => set('version', v)}
          problems={problems}
          hint="semantic version, e.g. 1.0.0"
        />
        <fieldset className={`field${problemsOf(problems, 'severity') ? ' field-invalid' : ''}`}>
          <legend>Severities</legend>
          {SEVERITIES.map((s) => (
            <label key={s} className="inline">
              <input
                type="checkbox"
                checked={spec.severity.includes(s)}
                onChange={(e) =>
                  set('severity', e.target.checked ? [...spec.severity, s] : spec.severity.filter((x) => x !== s))
                }
              />{' '}
              {s}
            </label>
          ))}
          {problemsOf(problems, 'severity') && (
            <small className="field-error">{problemsOf(problems, 'severity')}</small>
          )}
        </fieldset>
        <label className="inline">
          <input type="checkbox" checked={spec.automated} onChange={(e) => set('automated', e.target.checked)} />{' '}
          Automated (run by Foghorn)
        </label>
        <label className="inline">
          <input
            type="checkbox"
            checked={spec.approvalRequired}
            onChange={(e) => set('approvalRequired', e.target.checked)}
          />{' '}
          Approval required
        </label>
        <TextField
          label="Signal types"
          name="targets.signalTypes"
          value={signalTypes}
          onChange={setSignalTypes}
          problems={problems}
          hint="comma-separated; empty = any"
        />
        <TextField
          label="Resource kinds"
          name="targets.resourceKinds"
          value={resourceKinds}
          onChange={setResourceKinds}
          problems={problems}
          hint="comma-separated; empty = any"
        />
        <TextField
          label="Max attempts"
          name="maxAttempts"
          type="number"
          value={String(spec.maxAttempts)}
          onChange={(v) => set('maxAttempts', Number(v))}
          problems={problems}
        />
        <TextField
          label="Verification window"
          name="verificationWindow"
          value={spec.verificationWindow ?? ''}
          onChange={(v) => set('verificationWindow', v || undefined)}
          problems={problems}
          hint="Go duration up to 30m; empty = the server's default"
        />
        <TextArea
          label="Steps (JSON)"
          name="steps"
          value={steps}
          onChange={setSteps}
          rows={10}
          problems={stepsError ? [...problems, { path: 'steps', message: stepsError }] : problems}
        />
        {unplaced ? (
          <ErrorMessage error={save.error} />
        ) : save.error ? (
          <p role="alert" className="message message-error">
            The runbook was not saved: see the fields marked below their input.
          </p>
        ) : null}
        <StatusMessage text={save.done} />
        <div className="buttons">
          <button type="submit" className="primary" disabled={save.busy}>
            Save
          </button>
          <a
            className="button"
            href={save.done ? href('runbooks', name ?? newName) : name ? href('runbooks', name) : href('runbooks')}
          >
            {save.done ? 'View runbook' : 'Cancel'}
          </a>
        </div>
      </form>
    </Page>
  );
}

const FIELDS = [
  'name',
  'category',
  'description',
  'version',
  'severity',
  'targets',
  'maxAttempts',
  'verificationWindow',
  'steps',
];
