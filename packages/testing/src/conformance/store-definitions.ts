import { describe, expect, it } from 'vitest';
import { deploy, type Fixture, freshNamespace } from './store-fixtures.js';

const v = (n: number) =>
  `name: versioned\ndescription: version ${n}\nnodes:\n  - { id: a, task_type: work }\n`;

/** Definition versions are immutable and deduplicated by content. */
export function definitionTests(fixture: () => Fixture): void {
  describe('definitions', () => {
    it('the same content gives back its version; new content the next number; old versions stay as they were', async () => {
      const { store } = fixture();
      const ns = freshNamespace();
      const one = await deploy(store, ns, v(1));
      const again = await store.transaction((tx) =>
        tx.deployDefinition(ns, one.name, one.hash, one.source, one.definition),
      );
      expect(again).toEqual({ record: one, created: false });
      const two = await deploy(store, ns, v(2));
      expect([one.version, two.version]).toEqual([1, 2]);
      expect(two.id).not.toBe(one.id);
      expect(await store.getDefinition(ns, 'versioned', 1)).toEqual(one);
      expect(await store.getDefinition(ns, 'versioned')).toEqual(two);
      expect(await store.getDefinitionById(one.id)).toEqual(one);
      expect(await store.getDefinition(ns, 'versioned', 3)).toBeNull();
      expect(await store.getDefinition(freshNamespace(), 'versioned')).toBeNull();
      expect((await store.listDefinitionVersions(ns, 'versioned')).map((d) => d.version)).toEqual([2, 1]);
      expect(await store.listDefinitions(ns)).toEqual([
        { name: 'versioned', latestVersion: 2, versions: 2, updatedAt: expect.any(Date) },
      ]);
    });

    it('lists the latest version of each definition whose latest version listens for an event', async () => {
      const { store } = fixture();
      const ns = freshNamespace();
      const listening = (name: string, event: string) =>
        `name: ${name}\ntriggers: [{ event: ${event} }]\nnodes:\n  - { id: a, task_type: work }\n`;
      await deploy(store, ns, listening('first', 'paid'));
      const second = await deploy(store, ns, listening('first', 'paid').replace('work', 'work2'));
      await deploy(store, ns, listening('dropped', 'paid'));
      await deploy(store, ns, v(1).replace('versioned', 'dropped'));
      await deploy(store, ns, listening('other', 'refunded'));
      const found = await store.listTriggeredDefinitions(ns, 'paid');
      expect(found.map((d) => [d.name, d.version])).toEqual([['first', 2]]);
      expect(found[0]).toEqual(second);
      expect(await store.listTriggeredDefinitions(freshNamespace(), 'paid')).toEqual([]);
      expect(await store.listTriggeredDefinitions(ns, 'unknown')).toEqual([]);
    });

    it('concurrent deploys of different content of one name take different version numbers', async () => {
      const ns = freshNamespace();
      const peers = await fixture().peers(5);
      const records = await Promise.all(peers.map((peer, i) => deploy(peer, ns, v(i))));
      expect(records.map((r) => r.version).sort()).toEqual([1, 2, 3, 4, 5]);
      expect(new Set(records.map((r) => r.id)).size).toBe(5);
    });

    it('concurrent deploys of the same content make one version', async () => {
      const ns = freshNamespace();
      const peers = await fixture().peers(5);
      const records = await Promise.all(peers.map((peer) => deploy(peer, ns, v(7))));
      expect(new Set(records.map((r) => `${r.id}/${r.version}`))).toEqual(new Set([`${records[0]!.id}/1`]));
    });
  });
}
