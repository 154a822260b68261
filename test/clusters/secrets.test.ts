import { ApplicationFailure } from '@temporalio/common';
import { forgetKubeConfig, kubeConfigFor } from '../../activities/kube/client';
import { clusterSecretName } from '../../domain/cluster';
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
import { createCluster, deleteCluster } from '../../store/clusters';
import { ClusterSecretModel } from '../../store/models';
import { useMongo } from '../harness/mongo';
import { fakeKubeconfig, TEST_SECRET_KEY, useTestSecretKey } from './fixtures';

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
    await writeClusterSecret(secret, name, normalizeKubeconfig(fakeKubeconfig()).kubeconfig);
    await createCluster({
      name,
      namespace: 'default',
      displayName: name,
      tier: 'standard',
      region: '',
      kubeconfigSecret: secret,
      source: 'registered',
    });
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
    forgetKubeConfig(name);
    const err = await kubeConfigFor(name).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({
      type: 'ClusterNotFound',
      nonRetryable: true,
      message: `Cluster ${name} is not registered`,
    });
    await expect(kubeConfigFor('never-seen')).rejects.toMatchObject({ type: 'ClusterNotFound' });
  });
});
