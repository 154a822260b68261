import { SEARCH_ATTRIBUTES as SEARCH_ATTRIBUTE_KEYS } from '../../workflows/search-attributes';
import fs from 'fs';
import path from 'path';
import { parse } from 'yaml';

/** Static checks of the container packaging; nothing here needs a Docker engine. */

type DependsOn = string[] | Record<string, { condition?: string }>;
interface Service {
  image?: string;
  build?: unknown;
  command?: string | string[];
  entrypoint?: string | string[];
  environment?: Record<string, unknown> | string[];
  depends_on?: DependsOn;
  volumes?: Array<string | { type?: string; source?: string; target?: string }>;
}
interface Compose {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

const root = path.join(__dirname, '../..');
const composeText = fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
// Compose honours YAML merge keys (`<<: *anchor`); YAML 1.2 needs them switched on explicitly.
const compose = parse(composeText, { merge: true }) as Compose;
const services = compose.services;

/** Every attribute the workflows set: the compose job must register each one. */
const SEARCH_ATTRIBUTES = SEARCH_ATTRIBUTE_KEYS.map((key) => key.name);

function dependencyNames(dependsOn: DependsOn | undefined): string[] {
  if (!dependsOn) return [];
  return Array.isArray(dependsOn) ? dependsOn : Object.keys(dependsOn);
}

function envOf(service: Service): Record<string, string> {
  const env = service.environment ?? {};
  if (Array.isArray(env)) {
    return Object.fromEntries(
      env.map((entry) => {
        const i = entry.indexOf('=');
        return i < 0 ? [entry, ''] : [entry.slice(0, i), entry.slice(i + 1)];
      }),
    );
  }
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)]));
}

function asText(value: string | string[] | undefined): string {
  return Array.isArray(value) ? value.join(' ') : (value ?? '');
}

describe('docker-compose.yml', () => {
  it('parses to a Compose document without a top-level version key', () => {
    expect(compose).toBeInstanceOf(Object);
    expect(services).toBeInstanceOf(Object);
    expect(compose).not.toHaveProperty('version');
  });

  it.each(['mongodb', 'temporal', 'temporal-ui', 'api', 'worker', 'gateway'])('defines the %s service', (name) => {
    expect(services).toHaveProperty([name]);
  });

  it.each([
    ['api', ['api']],
    ['worker', ['worker']],
    ['gateway', ['gateway', 'start']],
  ])('%s is built from the local Dockerfile and runs %j', (name, command) => {
    expect(services[name].build).toBe('.');
    expect(services[name].command).toEqual(command);
  });

  it("runs the worker as foghorn dev runs its own: with V8's own collector, two malloc arenas", () => {
    expect(services.worker.entrypoint).toBeUndefined(); // the image's: node dist/cli/main.js
    expect(envOf(services.worker).MALLOC_ARENA_MAX).toBe('2');
  });

  it('depends_on only names services that exist', () => {
    const known = new Set(Object.keys(services));
    for (const [name, service] of Object.entries(services)) {
      for (const dep of dependencyNames(service.depends_on)) {
        expect({ service: name, dependsOn: dep, exists: known.has(dep) }).toEqual({
          service: name,
          dependsOn: dep,
          exists: true,
        });
      }
    }
  });

  it('app services wait for a healthy MongoDB and for the search attributes', () => {
    for (const name of ['api', 'worker', 'gateway']) {
      expect(services[name].depends_on).toMatchObject({
        mongodb: { condition: 'service_healthy' },
        'temporal-search-attributes': { condition: 'service_completed_successfully' },
      });
    }
  });

  it('runs MongoDB as a replica set', () => {
    const command = services.mongodb.command;
    expect(Array.isArray(command) ? command : asText(command).split(/\s+/)).toContain('--replSet');
  });

  it('resolves the shared environment anchor into the api environment', () => {
    const env = envOf(services.api);
    expect(env.MONGODB_URI).toBe('mongodb://mongodb:27017/foghorn?replicaSet=rs0');
    expect(env.TEMPORAL_ADDRESS).toBe('temporal:7233');
    expect(env.FOGHORN_ADMIN_TOKEN).toBeDefined();
    expect(env.FOGHORN_API_ADDR).toBe(':8080');
    for (const name of ['worker', 'gateway']) {
      expect(envOf(services[name])).toMatchObject({
        MONGODB_URI: env.MONGODB_URI,
        TEMPORAL_ADDRESS: env.TEMPORAL_ADDRESS,
      });
    }
  });

  it('registers every Foghorn search attribute as a Keyword in the one-shot service', () => {
    const oneShot = Object.values(services).find((s) => asText(s.command).includes('operator search-attribute create'));
    expect(oneShot).toBeDefined();
    const script = asText(oneShot!.command);
    expect(script).toMatch(/--type Keyword/);
    for (const attribute of SEARCH_ATTRIBUTES) {
      expect(script).toMatch(new RegExp(`\\b${attribute}\\b`));
    }
  });

  it('declares every named volume it mounts', () => {
    const declared = new Set(Object.keys(compose.volumes ?? {}));
    for (const [name, service] of Object.entries(services)) {
      for (const volume of service.volumes ?? []) {
        const source = typeof volume === 'string' ? volume.split(':')[0] : volume.source;
        if (typeof volume !== 'string' && volume.type && volume.type !== 'volume') continue;
        // Bind mounts (paths) are not named volumes.
        if (!source || /^[./~$]/.test(source)) continue;
        expect({ service: name, volume: source, declared: declared.has(source) }).toEqual({
          service: name,
          volume: source,
          declared: true,
        });
      }
    }
  });
});

describe('Dockerfile', () => {
  const dockerfile = fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8');

  it('has an ENTRYPOINT that runs the compiled CLI', () => {
    expect(dockerfile).toMatch(/^ENTRYPOINT\s+\[\s*"node"\s*,\s*"dist\/cli\/main\.js"\s*\]/m);
  });

  it('runs as the unprivileged node user', () => {
    expect(dockerfile).toMatch(/^USER\s+node\s*$/m);
  });
});
