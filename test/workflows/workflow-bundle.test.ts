import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { z } from '../../workflows/zod-placeholder';
import { WORKFLOW_BUNDLER_OPTIONS } from '../../worker/workflow-bundle';

/**
 * The workflow bundle leaves zod out (workflows/zod-placeholder.ts): the domain's schemas would
 * otherwise be built again for every workflow in the sandbox, most of each cached workflow's
 * heap. The bundle is the one every worker and the replay test build; the workflow suites run
 * on it, so a workflow that used a schema would fail there, with the placeholder's message.
 */
describe('the workflow bundle', () => {
  it('holds the placeholder, not zod', async () => {
    const { code } = await bundleWorkflowCode({
      workflowsPath: require.resolve('../../workflows'),
      ...WORKFLOW_BUNDLER_OPTIONS,
      logger: new DefaultLogger('ERROR'),
    });
    expect(code).toContain('zod-placeholder');
    expect(code).not.toMatch(/node_modules\/zod\//);
  }, 120_000);

  it('builds schemas as the shared placeholder and refuses to use one', () => {
    const schema = z.object({ name: z.string().min(1) }).strict();
    expect(schema).toBe(z);
    expect(() => schema.parse({ name: 'x' })).toThrow(
      'zod is not available in workflow code (parse of a schema was used): validate in the API or an activity',
    );
    expect(() => schema.shape).toThrow(/shape of a schema was used/);
  });
});
