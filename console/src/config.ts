/** What the server tells the console in index.html's meta tags (api/app.ts fills them in). */
function meta(name: string): string {
  return document.querySelector<HTMLMetaElement>(`meta[name="${name}"]`)?.content.trim() ?? '';
}

export const config = {
  /** The API base path, e.g. `/api/v1`. */
  apiBase: (meta('foghorn-api-base') || '/api/v1').replace(/\/+$/, ''),
  /** The Temporal UI namespace URL, e.g. `http://localhost:8233/namespaces/default`; '' = no links. */
  temporalUi: meta('foghorn-temporal-ui').replace(/\/+$/, ''),
};

/** The Temporal UI page of a workflow (an incident's or an approval's id is its name). */
export function workflowLink(workflowId: string): string | undefined {
  return config.temporalUi ? `${config.temporalUi}/workflows/${encodeURIComponent(workflowId)}` : undefined;
}
