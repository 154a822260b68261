import { ApplicationFailure } from '@temporalio/common';
import { mkdtempSync, writeFileSync } from 'fs';
import os from 'os';
import path from 'path';
import { checkClusterHealth } from '../../activities/cluster-health';
import { kubeConfigFor } from '../../activities/kube/client';
import { ensureSecretKey } from '../../cli/services';
import { clusterSecretName, DEFAULT_CLUSTER_NAMESPACE, LOCAL_CLUSTER } from '../../domain/cluster';
import { parseConfig } from '../../config/env';
import {
  configureSecretKey,
  credentialsToKubeconfig,
  generateSecretKey,
  KubeconfigError,
  normalizeKubeconfig,
  openSecret,
  parseSecretKey,
  readClusterSecret,
  sealSecret,
  writeClusterSecret,
} from '../../store/cluster-secrets';
import { deleteCluster, ensureEnvironmentCluster, getCluster, updateClusterStatus } from '../../store/clusters';
import { ClusterSecretModel } from '../../store/models';
import { useMongo } from '../harness/mongo';
import { fakeKubeconfig, registerTestCluster, TEST_SECRET_KEY, useTestSecretKey } from './fixtures';

let mongo: Awaited<ReturnType<typeof useMongo>>;
beforeAll(async () => {
  mongo = await useMongo();
});
afterAll(() => mongo.stop());
beforeEach(() => useTestSecretKey());

const TOKEN = 'fake-token-4f9c2a7e1b3d5c6a8e0f';

describe('secret key', () => {
  it('accepts 32 bytes as base64, base64url or hex, and nothing else', () => {
    expect(parseSecretKey(Buffer.alloc(32, 1).toString('base64'))).toHaveLength(32);
    expect(parseSecretKey(Buffer.alloc(32, 1).toString('base64url'))).toHaveLength(32);
    expect(parseSecretKey('ab'.repeat(32))).toHaveLength(32);
    expect(() => parseSecretKey('too-short')).toThrow(/32 bytes/);
    expect(parseSecretKey(generateSecretKey())).toHaveLength(32);
  });
});

describe('sealing', () => {
  it('uses a fresh IV per write and opens only with the same name and key', () => {
    const a = sealSecret('s1', 'hello');
    const b = sealSecret('s1', 'hello');
    expect(a.iv).not.toBe(b.iv);
    expect(a.ciphertext).not.toBe(b.ciphertext);
    expect(Buffer.from(a.iv, 'base64')).toHaveLength(12);
    expect(openSecret('s1', a)).toBe('hello');
    // bound to its name: a document copied under another name does not open
    expect(() => openSecret('s2', a)).toThrow(/failed to decrypt/);
    // another key: refused by key id
    configureSecretKey(generateSecretKey());
    expect(() => openSecret('s1', a)).toThrow(/not configured/);
    // a retired key still opens what it sealed
    configureSecretKey(generateSecretKey(), { retiredKeys: [TEST_SECRET_KEY] });
    expect(openSecret('s1', a)).toBe('hello');
  });

  it('refuses to seal without a key', () => {
    configureSecretKey(undefined);
    expect(() => sealSecret('s', 'x')).toThrow(/FOGHORN_SECRET_KEY/);
  });
});

describe('stored secrets', () => {
  it('holds no plaintext, and a tampered document fails to decrypt without showing content', async () => {
    await writeClusterSecret('cluster-a-kubeconfig', 'a', fakeKubeconfig());
    const raw = await ClusterSecretModel.collection.findOne({ name: 'cluster-a-kubeconfig' });
    const stored = JSON.stringify(raw);
    expect(stored).not.toContain(TOKEN);
    expect(stored).not.toContain('current-context');
    expect(raw).toMatchObject({ algorithm: 'aes-256-gcm', cluster: 'a', version: 1 });
    expect((await readClusterSecret('cluster-a-kubeconfig'))?.plaintext).toContain(TOKEN);

    const ct = Buffer.from(raw!.ciphertext as string, 'base64');
    ct[0] ^= 1;
    await ClusterSecretModel.collection.updateOne(
      { name: 'cluster-a-kubeconfig' },
      { $set: { ciphertext: ct.toString('base64') } },
    );
    const err = await readClusterSecret('cluster-a-kubeconfig').catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/failed to decrypt/);
    expect((err as Error).message).not.toContain(TOKEN);
  });

  it('a rewrite bumps the version', async () => {
    await writeClusterSecret('cluster-b-kubeconfig', 'b', 'one');
    await writeClusterSecret('cluster-b-kubeconfig', 'b', 'two');
    expect(await ClusterSecretModel.collection.findOne({ name: 'cluster-b-kubeconfig' })).toMatchObject({
      version: 2,
    });
    expect((await readClusterSecret('cluster-b-kubeconfig'))?.plaintext).toBe('two');
  });
});

describe('kubeconfig checks', () => {
  it('reduces a kubeconfig to its current context', () => {
    const { kubeconfig, server } = normalizeKubeconfig(fakeKubeconfig({ server: 'https://10.1.2.3:6443' }));
    expect(server).toBe('https://10.1.2.3:6443');
    expect(kubeconfig).toContain(TOKEN);
  });

  it.each([
    ['not yaml at all: [', /does not parse/],
    [fakeKubeconfig().replace('current-context: ctx', 'current-context: nope'), /current-context/],
    [
      fakeKubeconfig().replace(
        `token: ${TOKEN}`,
        'exec: {command: /bin/sh, apiVersion: client.authentication.k8s.io/v1}',
      ),
      /exec/,
    ],
    [fakeKubeconfig().replace(`token: ${TOKEN}`, 'client-key: /etc/shadow'), /file references/],
  ])('refuses %#', (text, message) => {
    expect(() => normalizeKubeconfig(text)).toThrow(KubeconfigError);
    expect(() => normalizeKubeconfig(text)).toThrow(message);
  });

  it('takes https anywhere and plain http only to a loopback host', () => {
    for (const server of [
      'https://10.1.2.3:6443',
      'http://localhost:8080',
      'http://127.0.0.9:6443',
      'http://[::1]:6443',
    ])
      expect(normalizeKubeconfig(fakeKubeconfig({ server })).server).toBe(server);
    for (const server of ['http://10.1.2.3:6443', 'http://localhost.example.com', 'ftp://h:6443'])
      expect(() => normalizeKubeconfig(fakeKubeconfig({ server }))).toThrow(/https:\/\//);
    expect(() => normalizeKubeconfig(fakeKubeconfig({ server: 'https://admin:pw-9x@h:6443' }))).toThrow(
      /must not carry a user or password/,
    );
    expect(() => credentialsToKubeconfig({ server: 'https://admin:pw-9x@h:6443', token: TOKEN })).toThrow(
      KubeconfigError,
    );
  });

  it('refuses a proxy-url', () => {
    const text = fakeKubeconfig().replace('    server:', '    proxy-url: http://proxy.example:3128\n    server:');
    expect(() => normalizeKubeconfig(text)).toThrow(/proxy-url is not accepted/);
  });

  it('refuses a token-file in any user without reading the file', () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'kc-')), 'token');
    writeFileSync(file, 'file-content-that-must-stay-local');
    const inCurrent = fakeKubeconfig().replace(`token: ${TOKEN}`, `token-file: ${file}`);
    // a user the current context does not name is read by the parser all the same
    const inAnother = fakeKubeconfig().replace('users:\n', `users:\n- name: u2\n  user:\n    token-file: ${file}\n`);
    for (const text of [inCurrent, inAnother]) {
      const err = (() => {
        try {
          normalizeKubeconfig(text);
        } catch (e) {
          return e as Error;
        }
      })();
      expect(err).toBeInstanceOf(KubeconfigError);
      expect(err?.message).toMatch(/file references/);
      expect(err?.message).not.toContain('file-content');
    }
  });

  it('turns a token + server + PEM CA into a kubeconfig', () => {
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const { kubeconfig } = credentialsToKubeconfig({ server: 'https://h:6443', token: TOKEN, caData: pem });
    expect(kubeconfig).toContain(Buffer.from(pem).toString('base64'));
  });
});

describe('kubeConfigFor', () => {
  it('decrypts a registered cluster, follows a rewrite, and refuses unknown ones', async () => {
    const name = 'kc-one';
    const secret = clusterSecretName(name);
    await registerTestCluster(name, normalizeKubeconfig(fakeKubeconfig()).kubeconfig);
    const kc = await kubeConfigFor(name);
    expect(kc.getCurrentCluster()?.server).toBe('https://127.0.0.1:1');
    expect(kc.getCurrentUser()?.token).toBe(TOKEN);
    expect(await kubeConfigFor(name)).toBe(kc); // cached

    await writeClusterSecret(
      secret,
      name,
      normalizeKubeconfig(fakeKubeconfig({ token: 'other-token-xyz' })).kubeconfig,
    );
    expect((await kubeConfigFor(name)).getCurrentUser()?.token).toBe('other-token-xyz');

    await deleteCluster(name);
    const err = await kubeConfigFor(name).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({
      type: 'ClusterNotFound',
      nonRetryable: true,
      message: `Cluster ${name} is not registered`,
    });
    await expect(kubeConfigFor('never-seen')).rejects.toMatchObject({ type: 'ClusterNotFound' });
  });

  it('leaves `local` to another worker when this one has no environment cluster', async () => {
    // Every worker registers `local` from its own environment; one without KUBECONFIG must not
    // end the watch and health checks (ClusterNotFound) that the others can run.
    await ensureEnvironmentCluster({
      name: LOCAL_CLUSTER,
      namespace: DEFAULT_CLUSTER_NAMESPACE,
      displayName: 'local (KUBECONFIG)',
      tier: 'standard',
      region: '',
      kubeconfigSecret: 'KUBECONFIG',
      source: 'environment',
    });
    const saved = { KUBECONFIG: process.env.KUBECONFIG, KUBERNETES_SERVICE_HOST: process.env.KUBERNETES_SERVICE_HOST };
    try {
      delete process.env.KUBECONFIG;
      delete process.env.KUBERNETES_SERVICE_HOST;
      const err = await kubeConfigFor(LOCAL_CLUSTER).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApplicationFailure);
      expect(err).toMatchObject({ type: 'ClusterNotInThisWorker', nonRetryable: false });

      const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'foghorn-local-')), 'kubeconfig');
      writeFileSync(file, fakeKubeconfig(), { mode: 0o600 });
      process.env.KUBECONFIG = file;
      expect((await kubeConfigFor(LOCAL_CLUSTER)).getCurrentUser()?.token).toBe(TOKEN);
    } finally {
      for (const [k, v] of Object.entries(saved))
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      await deleteCluster(LOCAL_CLUSTER);
    }
  });
});

describe('credentials sealed with another key', () => {
  const name = 'kc-rotated';
  const oldKey = generateSecretKey();

  beforeAll(async () => {
    configureSecretKey(oldKey);
    await registerTestCluster(name, normalizeKubeconfig(fakeKubeconfig()).kubeconfig);
    // the last check saw it fine: a stale phase must not survive
    await updateClusterStatus(name, { phase: 'Connected', connected: true, message: '' });
  });

  it('kubeConfigFor fails non-retryably, naming the cluster and the key variable only', async () => {
    // beforeEach configured the test key, which did not seal this secret
    const err = await kubeConfigFor(name).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({
      type: 'ClusterCredentialsUnreadable',
      nonRetryable: true,
      message: `credentials of cluster ${name} cannot be decrypted (was FOGHORN_SECRET_KEY changed?)`,
    });
  });

  it('the health check records Unauthorized with that reason instead of failing', async () => {
    const report = await checkClusterHealth({ cluster: name });
    expect(report).toMatchObject({
      phase: 'Unauthorized',
      connected: false,
      message: expect.stringMatching(/cannot be decrypted/),
    });
    expect(report.message).not.toContain(TOKEN);
    const stored = await getCluster(name);
    expect(stored?.status).toMatchObject({
      phase: 'Unauthorized',
      connected: false,
      lastHealthCheck: expect.any(Date),
    });
    expect(stored?.status.message).toMatch(/FOGHORN_SECRET_KEY/);
  });

  it('opens again once the old key is configured as retired (FOGHORN_SECRET_RETIRED_KEYS)', async () => {
    const config = parseConfig({ FOGHORN_SECRET_KEY: TEST_SECRET_KEY, FOGHORN_SECRET_RETIRED_KEYS: ` ${oldKey}, ` });
    expect(config.FOGHORN_SECRET_RETIRED_KEYS).toEqual([oldKey]);
    await ensureSecretKey(config);
    expect((await kubeConfigFor(name)).getCurrentUser()?.token).toBe(TOKEN);
    // new writes use the current key: they open with it alone
    await writeClusterSecret('cluster-rewritten-kubeconfig', 'rewritten', 'new');
    configureSecretKey(TEST_SECRET_KEY);
    expect((await readClusterSecret('cluster-rewritten-kubeconfig'))?.plaintext).toBe('new');
  });
});
