import { buildWorkflowBundle } from '../harness/flow-env';

/**
 * The workflow bundle holds no zod: workflows import domain/ only, which declares plain types,
 * and the schemas live in contracts/, used by the API, the gateway, the CLI and activities.
 * In the sandbox every cached workflow evaluates the modules it imports for itself, so schemas
 * reaching the bundle would be built again for each one (most of a cached workflow's heap, when
 * domain/ still declared them). The bundle is the one every worker and the replay test build.
 */
describe('the workflow bundle', () => {
  it('holds the domain modules the workflows import, and neither zod nor contracts/', async () => {
    const { code } = await buildWorkflowBundle();
    expect(code).toMatch(/\/domain\/duration\.ts/);
    expect(code).not.toMatch(/node_modules\/zod\//);
    expect(code).not.toMatch(/\/contracts\//);
  }, 120_000);
});
