/**
 * A readable API reference, rendered from the OpenAPI document itself (so it cannot drift):
 * every operation with its role, parameters and answers. Plain HTML, no scripts and no assets
 * from elsewhere, so it works offline and behind any proxy.
 */
interface Operation {
  summary?: string;
  description?: string;
  parameters?: { name: string; in: string; required?: boolean }[];
  requestBody?: { required?: boolean; content?: Record<string, unknown> };
  responses?: Record<string, { description?: string }>;
}

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export function renderApiReference(
  document: { info: { title: string; version: string }; paths?: object },
  openApiPath: string,
): string {
  const paths = (document.paths ?? {}) as Record<string, Record<string, Operation>>;
  const rows = Object.entries(paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => {
      const params = (op.parameters ?? []).map((p) => `${p.name} (${p.in}${p.required ? ', required' : ''})`);
      if (op.requestBody) params.push(`JSON body${op.requestBody.required ? ' (required)' : ''}`);
      const answers = Object.entries(op.responses ?? {}).map(([code, r]) => `${code} ${r.description ?? ''}`);
      return `<tr><td><code>${method.toUpperCase()}</code></td><td><code>${escape(path)}</code></td><td>${escape(op.summary ?? '')}<br><small>${escape(op.description ?? '')}</small></td><td>${params.map(escape).join('<br>')}</td><td>${answers.map(escape).join('<br>')}</td></tr>`;
    }),
  );
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escape(document.info.title)}</title>
<style>body{font:14px/1.4 system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top;text-align:left}</style>
</head><body>
<h1>${escape(document.info.title)} (${escape(document.info.version)})</h1>
<p>Machine-readable: <a href="${escape(openApiPath)}">${escape(openApiPath)}</a> (OpenAPI 3.1). Authenticate with <code>Authorization: Bearer &lt;token&gt;</code>.</p>
<table><thead><tr><th>method</th><th>path</th><th>what</th><th>parameters</th><th>answers</th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody></table>
</body></html>
`;
}
