/**
 * An error that maps to one answer in the spec's error envelope (status, exact message,
 * details). Shared by the API and the chat gateway, which answer with the same envelope.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details = '',
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}
