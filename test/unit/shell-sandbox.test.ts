import {
  decideShellAvailability,
  defaultShellLimits,
  findPasswdEntry,
  parsePasswdLine,
  sandboxCommand,
  sandboxEnv,
  type ShellSandbox,
} from '../../domain/shell-sandbox';

const nobody = { name: 'nobody', uid: 65534, gid: 65534 };
const tools = { setpriv: '/usr/bin/setpriv', prlimit: '/usr/bin/prlimit', unshare: '/usr/bin/unshare' };
const facts = { enabled: true, processUid: 0, user: 'nobody', account: nobody, network: 'none' as const, tools };

describe('shell availability', () => {
  it('is available to a root worker with an unprivileged user and the tools', () => {
    expect(decideShellAvailability(facts)).toEqual({
      available: true,
      sandbox: { user: 'nobody', uid: 65534, gid: 65534, network: 'none', tools },
    });
  });

  it('is off when Foghorn is not root: it cannot switch to another user', () => {
    expect(decideShellAvailability({ ...facts, processUid: 1000 })).toEqual({
      available: false,
      reason:
        'Foghorn runs as uid 1000, not root, so it cannot run commands as the unprivileged user nobody (FOGHORN_AGENT_SHELL_USER); run the worker as root, or set FOGHORN_AGENT_SHELL=off',
    });
    // Even when the configured user is Foghorn's own: that is no separation at all.
    const self = { name: 'foghorn', uid: 1000, gid: 1000 };
    expect(decideShellAvailability({ ...facts, processUid: 1000, user: 'foghorn', account: self }).available).toBe(
      false,
    );
  });

  it('is off without Unix users, without the user, for a root user, without the tools, or when switched off', () => {
    const reason = (more: Partial<Parameters<typeof decideShellAvailability>[0]>) => {
      const result = decideShellAvailability({ ...facts, ...more });
      return result.available ? 'available' : result.reason;
    };
    expect(reason({ enabled: false })).toBe('FOGHORN_AGENT_SHELL=off');
    expect(reason({ processUid: undefined })).toMatch(/needs Linux/);
    expect(reason({ user: 'ghost', account: undefined })).toBe(
      'the shell user ghost (FOGHORN_AGENT_SHELL_USER) does not exist',
    );
    expect(reason({ user: 'root', account: { name: 'root', uid: 0, gid: 0 } })).toMatch(/uid or gid 0/);
    expect(reason({ account: { name: 'wheelie', uid: 1001, gid: 0 } })).toMatch(/uid or gid 0/);
    expect(reason({ tools: { setpriv: tools.setpriv } })).toBe('prlimit, unshare (util-linux) not found');
    // unshare is needed only for the private network.
    expect(reason({ network: 'host', tools: { setpriv: tools.setpriv, prlimit: tools.prlimit } })).toBe('available');
  });
});

describe('passwd entries', () => {
  const passwd = 'root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n';
  it('are parsed by name or uid', () => {
    expect(parsePasswdLine('nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n')).toEqual(nobody);
    expect(parsePasswdLine('broken:x:a:b')).toBeUndefined();
    expect(parsePasswdLine('')).toBeUndefined();
    expect(findPasswdEntry(passwd, 'nobody')).toEqual(nobody);
    expect(findPasswdEntry(passwd, '65534')).toEqual(nobody);
    expect(findPasswdEntry(passwd, 'ghost')).toBeUndefined();
  });
});

describe('the sandbox command line', () => {
  const sandbox: ShellSandbox = { user: 'nobody', uid: 65534, gid: 65534, network: 'none', tools };
  const limits = defaultShellLimits(30_000);
  const inner = [
    '/usr/bin/setpriv',
    '--reuid=65534',
    '--regid=65534',
    '--clear-groups',
    '--no-new-privs',
    '--inh-caps=-all',
    '--bounding-set=-all',
    '--',
    '/usr/bin/prlimit',
    '--as=1073741824',
    '--nproc=128',
    '--fsize=67108864',
    '--nofile=256',
    '--cpu=30:31',
    '--core=0',
    '--',
    '/bin/sh',
    '-c',
    'echo "$HOME"',
  ];

  it('drops to the user with limits, inside private namespaces without network', () => {
    expect(sandboxCommand(sandbox, limits, 'echo "$HOME"')).toEqual({
      file: '/usr/bin/unshare',
      args: ['--net', '--pid', '--fork', '--mount-proc', '--kill-child', '--', ...inner],
    });
  });

  it('skips the namespaces with the host network', () => {
    expect(sandboxCommand({ ...sandbox, network: 'host' }, limits, 'echo "$HOME"')).toEqual({
      file: '/usr/bin/setpriv',
      args: inner.slice(1),
    });
  });

  it('gives the command nothing but PATH, HOME and LANG, and at least one CPU second', () => {
    expect(sandboxEnv('/tmp/foghorn-shell')).toEqual({
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: '/tmp/foghorn-shell',
      LANG: 'C.UTF-8',
    });
    expect(defaultShellLimits(300).cpuSeconds).toBe(1);
  });
});
